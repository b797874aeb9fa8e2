#!/usr/bin/env python3
"""Hook latency as installed, as a ratio to the bare interpreter measured in the same run.

    python3 bench/hooks.py [--pyz dist/maestro.pyz] [--runs 40]

Installs the archive into a throw-away HOME, then times (median wall time of N runs, each a
fresh process fed a realistic payload; the measurements are interleaved round by round so that
every row sees the same machine load as the floor):
  floor          python3 -S -E -c pass       (the bare interpreter the hooks are registered with)
  gate (Edit)    a source Edit, run exactly as Claude Code runs it: `sh -c "<registered command>"`
  gate (Bash)    a test command with a pipe and a heredoc, likewise
  inject/session-start/stop, as installed, and each gate payload as plain argv without the shell.
  `stop` runs with the write guard on, a 1 MB transcript and a git repository as cwd (its worst
  case: tail read + two git calls).
  statusline     the statusLine command (issue 12 §2), as `install --statusline` registers it, in a
                 git repository whose write lease is held by a running loop (a live lease record and
                 that run's status: its worst common case — lease, run status, job lock and session
                 alerts all read), and as plain argv.
Target (issue 14): both gate rows ≤ 2.5 × floor; statusline ≤ 2 × floor (issue 12). This prints
numbers; it asserts nothing.
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

TARGET_RATIO = 2.5
BENCH_REPO = "/nonexistent-bench/repo"
TEST_COMMAND = "cat <<'EOF' | python3 -m pytest -q tests/ 2>&1 | tail -5\nx\nEOF"
PAYLOADS = {
    "gate (Edit)": {"session_id": "bench", "cwd": BENCH_REPO, "hook_event_name": "PreToolUse", "tool_name": "Edit",
                    "tool_input": {"file_path": BENCH_REPO + "/src/app.py", "old_string": "a", "new_string": "b"}},
    "gate (Bash)": {"session_id": "bench", "cwd": BENCH_REPO, "hook_event_name": "PreToolUse", "tool_name": "Bash",
                    "tool_input": {"command": TEST_COMMAND, "description": "run the tests"}},
    "inject": {"session_id": "bench", "hook_event_name": "UserPromptSubmit",
               "prompt": "please fix the failing test in src/app.py"},
    "session-start": {"session_id": "bench", "source": "startup", "hook_event_name": "SessionStart"},
    "stop": {"session_id": "bench", "hook_event_name": "Stop", "stop_hook_active": False},
}
TARGETED = ("gate (Edit)", "gate (Bash)")
TARGETS = {"statusline": 2.0}  # rows with a target of their own


def stop_fixture(home: str) -> dict:
    """A git repository, a ~1 MB transcript ending in a tool-using turn, and the guard switched on."""
    repo = os.path.join(home, "repo")
    os.makedirs(repo)
    subprocess.run(["git", "init", "-q", repo], check=True)
    transcript = os.path.join(home, "transcript.jsonl")
    with open(transcript, "w") as handle:
        for n in range(1500):
            handle.write(json.dumps({"type": "user", "uuid": f"p{n}", "message": {"role": "user",
                                                                                  "content": "x" * 300}}) + "\n")
            handle.write(json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "text", "text": "y" * 300}, {"type": "tool_use", "id": f"t{n}", "name": "Bash",
                                                      "input": {"command": "ls"}}]}}) + "\n")
    os.makedirs(os.path.join(home, ".maestro"), exist_ok=True)
    with open(os.path.join(home, ".maestro", "config.toml"), "w") as handle:
        handle.write("[memory]\nwrite_guard = true\nthreshold = 2\n")
    return dict(PAYLOADS["stop"], cwd=repo, transcript_path=transcript)


def statusline_fixture(home: str) -> str:
    """A git repository whose write lease is held by a live process (this one) running a loop, with that
    run's status beside it — what the status bar reads most of an unattended hour. Returns its path."""
    repo = os.path.join(home, "statusline-repo")
    os.makedirs(repo)
    subprocess.run(["git", "init", "-q", repo], check=True)
    git_dir = os.path.join(repo, ".git")
    lock = os.path.join(git_dir, "maestro-write.lock")
    os.makedirs(lock)
    generation = "0123456789abcdef0123456789abcdef"
    records = {
        "generation": f"{generation}\n",
        "metadata": "".join(f"{key}={value}\n" for key, value in {
            "token": "f" * 32, "generation": generation, "pid": os.getpid(), "process_start": "unavailable",
            "job_id": "task-bench1", "session_id": "bench", "started_epoch": int(time.time()) - 192}.items()),
    }
    run_status = "".join(f"{key}={value}\n" for key, value in {
        "kind": "loop", "plan": "bench-plan.md", "iteration": 2, "max": 4, "phase": "codex", "pid": os.getpid(),
        "updated": int(time.time())}.items())
    files = {os.path.join(lock, name): text for name, text in records.items()}
    files[os.path.join(git_dir, "maestro-run.status")] = run_status
    for path, text in files.items():
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as handle:
            handle.write(text)
    return repo


def registered_commands(home: str) -> dict:
    """verb -> (full command as registered, its plain argv)."""
    with open(os.path.join(home, ".claude", "settings.json")) as handle:
        settings = json.load(handle)
    commands = {}
    for blocks in settings["hooks"].values():
        for block in blocks:
            for hook in block["hooks"]:
                head, _, verb = hook["command"].rpartition(" # maestro-managed:")
                words = shlex.split(head)
                # the guarded shape `[ -x PY ] && [ -f PYZ ] && <run> || …`, or an older bare one
                run = words[10:words.index("||")] if words[0] == "[" else words
                commands[verb] = (hook["command"], run)
    return commands


def once(argv, stdin: bytes, env) -> float:
    start = time.perf_counter()
    subprocess.run(argv, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def interleaved_medians_ms(rows: dict, env, runs: int) -> dict:
    """name -> median ms; rows are name -> (argv, stdin bytes, env or None), timed round-robin."""
    samples = {name: [] for name in rows}
    for _ in range(runs):
        for name, (argv, stdin, row_env) in rows.items():
            samples[name].append(once(argv, stdin, row_env or env))
    return {name: statistics.median(values) * 1000 for name, values in samples.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyz", default="dist/maestro.pyz")
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="maestro-bench-") as home:
        env = dict(os.environ, HOME=home)
        os.makedirs(os.path.join(home, ".claude"))
        subprocess.run([sys.executable, args.pyz, "install", "--statusline"], env=env, check=True, capture_output=True)
        commands = registered_commands(home)
        python, pyz = commands["gate"][1][0], commands["gate"][1][-2]
        payloads = dict(PAYLOADS, stop=stop_fixture(home))
        rows = {"floor": ([python, "-S", "-E", "-c", "pass"], b"", None)}
        for name, payload in payloads.items():
            verb = name.split()[0]
            data = json.dumps(payload).encode()
            rows[name] = (["sh", "-c", commands[verb][0]], data, None)
            if verb == "gate":
                rows[f"{name} argv"] = (commands[verb][1], data, None)
        edit = json.dumps(PAYLOADS["gate (Edit)"]).encode()
        held = statusline_fixture(home)
        statusline = {"session_id": "bench", "cwd": held, "workspace": {"current_dir": held}}
        with open(os.path.join(home, ".claude", "settings.json")) as handle:
            registered = json.load(handle)["statusLine"]["command"]
        rows["statusline"] = (["sh", "-c", registered], json.dumps(statusline).encode(), None)
        rows["statusline argv"] = (commands["gate"][1][:-1] + ["statusline"], json.dumps(statusline).encode(), None)
        rows["gate (Edit) runpy"] = ([python, "-I", "-S", pyz, "gate"], edit, None)
        rows["gate (Edit) no -I -S"] = ([python, pyz, "gate"], edit, None)
        extract_env = dict(env, MAESTRO_SHIV_EXTRACT="1")
        once([python, "-I", "-S", pyz, "--version"], b"", extract_env)  # the first run extracts
        rows["gate (Edit) shiv"] = ([python, "-I", "-S", pyz, "gate"], edit, extract_env)

        ms = interleaved_medians_ms(rows, env, args.runs)
        floor = ms["floor"]
        labels = {
            "floor": "python3 -S -E -c pass",
            "gate (Edit) runpy": "pyz as a script (runpy)",
            "gate (Edit) no -I -S": "without -I -S",
            "gate (Edit) shiv": "via shiv bootstrap (warm)",
        }
        print(f"interpreter    {python}")
        for name, value in ms.items():
            if name in labels:
                label = f"{name.split()[0]:<14} {labels[name]}"
            elif name.endswith(" argv"):
                label = f"{name[:-5]:<14} argv, no shell"
            else:
                label = f"{name:<14} as installed (sh -c)"
            verdict = ""
            if name in TARGETED or name in TARGETS:
                target = TARGETS.get(name, TARGET_RATIO)
                verdict = f"  target ≤ {target}x: {'ok' if value / floor <= target else 'OVER'}"
            print(f"{label:<44} {value:7.2f} ms  ({value / floor:.2f}x){verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
