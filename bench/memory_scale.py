#!/usr/bin/env python3
"""The memory store at 20,000 entries: recall, search and session-start against the bare interpreter.

    python3 bench/memory_scale.py [--pyz dist/maestro.pyz] [--runs 20] [--entries 20000] [--batch 10000]

In a throw-away HOME, a generated store of `--entries` entries (≈ 500 bytes each, ≈ 10 MB) spread over
every track (global, user, the project's key, timeline and reference, a year of daily files, and the
archives), written directly as files for speed; then one `memory search` builds the index, so every
timed run is a warm one. Medians of N fresh processes, timed round-robin so that machine noise hits
every row alike (as bench/hooks.py does). Every row runs the argv maestro registers, taken from the
archive itself (maestro/install/settings.py run_argv for the hooks: `python3 -I -S -c LAUNCHER <pyz>
<verb>`; maestro/install/launcher.py argv for a command: what the `maestro` launcher execs):
  floor                 python3 -S -E -c pass
  inject (no recall)    the inject hook on the same prompt with `[memory] recall = false` (a second HOME
                        holding only that config): the hook's base, next to recall's cost
  inject (ack)          the inject hook on a short acknowledgement (`ok`), recall on: no block, no search
  inject (recall)       the inject hook on a prompt that recalls
  memory search         the launcher's argv + memory search … --cwd <project>
  session-start         the session-start hook, in the project
and once: `memory batch` of `--batch` entries into one fresh store (wall time).
Targets (issue 11 §5): inject ≤ 3×, memory search ≤ 6×, session-start ≤ 4× the floor, batch ≤ 10 s;
goal (not a target: it does not fail the run): inject without recall ≤ 2.2×.
Prints the ratios; exits 1 when a target is missed, and when the warm-up search failed or the timed inject
prints no "Relevant memory" block (then recall was not what was measured).
"""

import argparse
import datetime
import hashlib
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

TARGETS = {"inject (recall)": 3.0, "memory search": 6.0, "session-start": 4.0}
GOALS = {"inject (no recall)": 2.2}
BATCH_TARGET_SEC = 10.0
ENTRY_BYTES = 500
SEED = 11
PROMPT = "why does the sqlite index rebuild fail after the sync merge on the release branch?"
SEARCH = ["sqlite", "index", "rebuild", "sync"]
RECALL_TITLE = "Relevant memory ("  # maestro/hooks/recall.py TITLE: an inject run without it timed no recall

WORDS = ("index sqlite rebuild merge sync branch release commit test fixture flaky timeout lock flock writer "
         "reader cache stale digest lease companion codex plan verify loop gate hook inject session start "
         "snapshot budget track entry archive daily project decision bug fix regression crash note trace "
         "parser lexer heredoc quote escape path symlink owner permission atomic rename fsync journal wal "
         "transaction rollback schema migration version upgrade install launcher manifest settings payload "
         "prompt recall search rank score stem stopword phrase proximity recency weight neighbour feedback "
         "benchmark median ratio floor interpreter import startup latency memory disk inode mtime size "
         "worker queue approve reject suggestion todo due quadrant pattern avoid skill promote outcome "
         "alice bob carol dave review reviewer pull request issue milestone deadline design api seam").split()
FILES = ("maestro/hooks/inject.py", "maestro/memory/store/index.py", "maestro/memory/store/sync.py",
         "maestro/commands/loop.py", "tests/hooks/test_inject.py", "bench/hooks.py", "docs/memory.md")


FUNCTION_WORDS = "the a to of and in is it that for on with was this not we be at by from or after".split()
SYLLABLES = "ka lo mi ne ru sa ti vo ze pa qu de fi go hu ja".split()


def vocabulary() -> tuple:
    """(words, cumulative weights): function words first, then the coding words, then 6,000 made-up words,
    weighted 1/rank (Zipf), so a word's document frequency spreads as in real text instead of every
    entry holding every common word."""
    made = [a + b + c for a in SYLLABLES for b in SYLLABLES for c in SYLLABLES][:6000]
    words = FUNCTION_WORDS + WORDS + made
    total, cumulative = 0.0, []
    for rank in range(len(words)):
        total += 1.0 / (rank + 1)
        cumulative.append(total)
    return words, cumulative


VOCABULARY = vocabulary()


def sentence(rng: random.Random, size: int) -> str:
    words, length = [], 0
    vocab, weights = VOCABULARY
    while length < size:
        word = rng.choices(vocab, cum_weights=weights)[0] if rng.random() > 0.02 else rng.choice(FILES)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)


def entries(rng: random.Random, count: int, tag: str, start: datetime.datetime, key: bool = False) -> list:
    out = []
    for n in range(count):
        when = start + datetime.timedelta(minutes=37 * n)
        head = f"[id:{rng.getrandbits(32):08x}] " if key else ""
        body = sentence(rng, ENTRY_BYTES - 60)
        out.append(f"{head}[{when:%Y-%m-%d %H:%M}] [summary:{tag} {n} {body[:40]}] {body}")
    return out


def write_track(path: str, items) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(("\n§\n".join(items) + "\n").encode())


def fill_store(root: str, project: str, total: int) -> int:
    """`total` entries over every track; returns the store's size in bytes."""
    rng = random.Random(SEED)
    project_dir = os.path.join(root, "projects", hashlib.sha1(project.encode()).hexdigest()[:12])
    start = datetime.datetime(2025, 1, 1, 9, 0)
    share = {"MEMORY.md": 0.12, "USER.md": 0.06, "MEMORY-archive.md": 0.06, "key": 0.10, "key-archive": 0.04,
             "project": 0.22, "project-archive": 0.08, "daily": 0.32}
    counts = {name: int(total * part) for name, part in share.items()}
    counts["daily"] += total - sum(counts.values())
    write_track(os.path.join(root, "MEMORY.md"), entries(rng, counts["MEMORY.md"], "global", start))
    write_track(os.path.join(root, "USER.md"), entries(rng, counts["USER.md"], "user", start))
    write_track(os.path.join(root, "MEMORY-archive.md"), entries(rng, counts["MEMORY-archive.md"], "old", start))
    write_track(os.path.join(project_dir, "KEY.md"), entries(rng, counts["key"], "key", start, key=True))
    write_track(os.path.join(project_dir, "KEY-archive.md"), entries(rng, counts["key-archive"], "key", start, True))
    write_track(os.path.join(project_dir, "MEMORY.md"), entries(rng, counts["project"], "project", start))
    write_track(os.path.join(project_dir, "MEMORY-archive.md"), entries(rng, counts["project-archive"], "p", start))
    with open(os.path.join(project_dir, "REFERENCE.md"), "w") as handle:
        handle.write(sentence(rng, 4000) + "\n")
    today = datetime.date.today()
    days = 365
    per_day = max(counts["daily"] // days, 1)
    left = counts["daily"]
    for n in range(days):
        if left <= 0:
            break
        day = today - datetime.timedelta(days=days - 1 - n)
        count = per_day if n < days - 1 else left
        stamp = datetime.datetime.combine(day, datetime.time(8, 0))
        write_track(os.path.join(root, "daily", f"{day.isoformat()}.md"), entries(rng, min(count, left), "day", stamp))
        left -= count
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(root) for f in files)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_once(argv, stdin: bytes, env) -> tuple:
    """(wall, CPU) seconds of one run: on a loaded machine the CPU time is the steadier figure."""
    start, cpu = time.perf_counter(), children_cpu()
    subprocess.run(argv, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start, children_cpu() - cpu


def interleaved_medians_ms(rows: dict, runs: int) -> tuple:
    """({row: median wall ms}, {row: median CPU ms}); rows are name -> (argv, stdin bytes, env)."""
    samples = {name: [] for name in rows}
    for _ in range(runs):
        for name, (argv, stdin, env) in rows.items():
            samples[name].append(time_once(argv, stdin, env))
    return ({name: statistics.median(wall for wall, _ in values) * 1000 for name, values in samples.items()},
            {name: statistics.median(cpu for _, cpu in values) * 1000 for name, values in samples.items()})


def registered_argv(python: str, pyz: str) -> tuple:
    """(hook argv for a verb, the launcher's argv) exactly as the archive's own install builds them."""
    sys.path.insert(0, os.path.join(pyz, "site-packages"))
    try:
        from maestro.install import launcher, settings
    finally:
        sys.path.remove(os.path.join(pyz, "site-packages"))
    # an archive older than launcher.argv: its launcher ran the archive as a script (launcher.legacy_script)
    command = launcher.argv(python, pyz) if hasattr(launcher, "argv") else [python, "-I", "-S", pyz]
    return (lambda verb: settings.run_argv(python, pyz, verb)), command


def batch_seconds(command: list, scratch: str, count: int, project: str) -> float:
    """`memory batch` of `count` project-timeline entries into one fresh store, wall time."""
    home = os.path.join(scratch, "batch-home")
    os.makedirs(home)
    rng = random.Random(SEED + 1)
    items = [{"track": "project", "cwd": project, "text": f"batch entry {n}: {sentence(rng, 300)}"}
             for n in range(count)]
    source = os.path.join(scratch, "batch.json")
    with open(source, "w") as handle:
        json.dump(items, handle)
    env = dict(os.environ, HOME=home)
    env.pop("MAESTRO_MEMORY_DIR", None)
    start, cpu = time.perf_counter(), children_cpu()
    done = subprocess.run(command + ["memory", "batch", source], capture_output=True, env=env)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stderr.decode("utf-8", "replace")[-2000:])
        return float("inf"), 0.0
    return seconds, children_cpu() - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyz", default="dist/maestro.pyz")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--entries", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--keep", help="build the store in this directory and keep it (for profiling)")
    args = parser.parse_args()
    python = os.path.realpath(sys.executable)
    pyz = os.path.abspath(args.pyz)
    with tempfile.TemporaryDirectory(prefix="maestro-bench-") as scratch:
        scratch = args.keep or scratch
        home, project = os.path.join(scratch, "home"), os.path.join(scratch, "project")
        for path in (home, project):
            os.makedirs(path, exist_ok=True)
        subprocess.run(["git", "init", "-q", "-b", "release", project], check=True, capture_output=True)
        project = os.path.realpath(project)
        size = fill_store(os.path.join(home, ".maestro", "memory"), project, args.entries)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MAESTRO_", "CLAUDE_"))}
        env["HOME"] = home
        hook, command = registered_argv(python, pyz)
        search = command + ["memory", "search", *SEARCH, "--cwd", project]
        no_recall = dict(env, HOME=os.path.join(scratch, "home-no-recall"))
        os.makedirs(os.path.join(no_recall["HOME"], ".maestro"), exist_ok=True)
        with open(os.path.join(no_recall["HOME"], ".maestro", "config.toml"), "w") as handle:
            handle.write("[memory]\nrecall = false\n")
        warm = subprocess.run(search, capture_output=True, env=env)  # builds the index once
        inject = json.dumps({"session_id": "bench", "hook_event_name": "UserPromptSubmit", "cwd": project,
                             "prompt": PROMPT}).encode()
        ack = json.dumps({"session_id": "bench", "hook_event_name": "UserPromptSubmit", "cwd": project,
                          "prompt": "ok"}).encode()
        start = json.dumps({"session_id": "bench", "source": "startup", "hook_event_name": "SessionStart",
                            "cwd": project}).encode()
        # (session-start, timed after inject in each round, rewrites the session's record: every timed inject
        # recalls against what one start showed, not against what earlier rounds' blocks showed)
        shown = subprocess.run(hook("inject"), input=inject, capture_output=True, env=env)
        rows = {"floor": ([python, "-S", "-E", "-c", "pass"], b"", env),
                "inject (no recall)": (hook("inject"), inject, no_recall), "inject (ack)": (hook("inject"), ack, env),
                "inject (recall)": (hook("inject"), inject, env),
                "memory search": (search, b"", env), "session-start": (hook("session-start"), start, env)}
        ms, cpu_ms = interleaved_medians_ms(rows, args.runs)
        batch, batch_cpu = batch_seconds(command, scratch, args.batch, project) if args.batch else (0.0, 0.0)
        floor, missed = ms["floor"], []
        print(f"store              {args.entries} entries, {size / 1e6:.2f} MB; search rc {warm.returncode} "
              f"({len(warm.stdout.splitlines())} lines); inject printed {len(shown.stdout)} bytes")
        for name, value in ms.items():
            ratio = value / floor
            verdict = ""
            if name in TARGETS:
                ok = ratio <= TARGETS[name]
                verdict = f"  target ≤ {TARGETS[name]:g}x: {'ok' if ok else 'OVER'}"
                missed += [] if ok else [name]
            elif name in GOALS:
                verdict = f"  goal ≤ {GOALS[name]:g}x: {'ok' if ratio <= GOALS[name] else 'over'}"
            print(f"{name:<18} {value:8.2f} ms  ({ratio:5.2f}x)  CPU {cpu_ms[name]:7.2f} ms{verdict}")
        if args.batch:
            ok = batch <= BATCH_TARGET_SEC
            missed += [] if ok else ["memory batch"]
            print(f"{'memory batch':<18} {batch:8.2f} s   ({args.batch} entries, CPU {batch_cpu:.2f} s)  "
                  f"target ≤ {BATCH_TARGET_SEC:g} s: "
                  f"{'ok' if ok else 'OVER'}")
        if warm.returncode != 0:
            missed.append(f"the warm-up memory search (rc {warm.returncode}: no index, so recall was not measured)")
        if RECALL_TITLE.encode() not in shown.stdout:
            missed.append("inject printed no Relevant memory block (recall off or broken: not measured)")
        if missed:
            print(f"MISSED: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
