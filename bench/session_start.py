#!/usr/bin/env python3
"""session-start with a 5,000-entry (≈ 2 MB) memory store, as a ratio to the bare interpreter.

    python3 bench/session_start.py [--pyz dist/maestro.pyz] [--runs 40]

In a throw-away HOME: a memory store of 5,000 entries of ≈ 400 bytes spread over the global,
user, key, project and today's daily tracks of a git project, then (median wall time of N runs,
each a fresh process, run in the same loop so machine noise hits both alike):
  floor           python3 -S -E -c pass
  session-start   python3 -I -S <pyz> session-start   (the installed command shape), JSON payload on stdin
  session-start without a store, for reference.
Target (issue 5): session-start with the store ≤ 6 × floor. This prints numbers; it asserts nothing.
"""

import argparse
import datetime
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ENTRIES = 5000
ENTRY_BYTES = 400
TARGET_RATIO = 6.0


def write_track(path: str, entries) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(("\n§\n".join(entries) + "\n").encode())


def fill_store(root: str, project: str) -> int:
    per = ENTRIES // 5
    project_dir = os.path.join(root, "projects", hashlib.sha1(project.encode()).hexdigest()[:12])

    def entries(tag):
        return [f"[2024-04-01 09:00] [summary:{tag} {i}] {tag} entry {i} " + "w" * ENTRY_BYTES for i in range(per)]

    write_track(os.path.join(root, "MEMORY.md"), entries("global"))
    write_track(os.path.join(root, "USER.md"), entries("user"))
    write_track(os.path.join(project_dir, "KEY.md"),
                [f"[id:{i:08x}] " + e for i, e in enumerate(entries("key"))])
    write_track(os.path.join(project_dir, "MEMORY.md"), entries("project"))
    write_track(os.path.join(root, "daily", f"{datetime.date.today().isoformat()}.md"), entries("daily"))
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(root) for f in files)


def time_once(argv, stdin: bytes, env) -> float:
    start = time.perf_counter()
    subprocess.run(argv, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyz", default="dist/maestro.pyz")
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    python = os.path.realpath(sys.executable)
    pyz = os.path.abspath(args.pyz)
    with tempfile.TemporaryDirectory(prefix="maestro-bench-") as scratch:
        home = os.path.join(scratch, "home")
        project = os.path.join(scratch, "project")
        empty_home = os.path.join(scratch, "empty-home")
        for path in (home, project, empty_home):
            os.makedirs(path)
        subprocess.run(["git", "init", "-q", "-b", "main", project], check=True, capture_output=True)
        project = os.path.realpath(project)
        size = fill_store(os.path.join(home, ".maestro", "memory"), project)
        env = {k: v for k, v in os.environ.items() if k not in ("MAESTRO_MEMORY_DIR", "CLAUDE_ENV_FILE")}
        env["HOME"] = home
        bare_env = dict(env, HOME=empty_home)
        payload = json.dumps({"session_id": "bench", "source": "startup", "hook_event_name": "SessionStart",
                              "cwd": project}).encode()
        hook = [python, "-I", "-S", pyz, "session-start"]
        out = subprocess.run(hook, input=payload, capture_output=True, env=env)
        text = out.stdout.decode("utf-8", "replace")
        floor, full, bare = [], [], []
        for _ in range(args.runs):
            floor.append(time_once([python, "-S", "-E", "-c", "pass"], b"", env))
            full.append(time_once(hook, payload, env))
            bare.append(time_once(hook, payload, bare_env))
        floor_ms, full_ms, bare_ms = (statistics.median(s) * 1000 for s in (floor, full, bare))
        ratio = full_ms / floor_ms
        print(f"store          {ENTRIES} entries, {size / 1e6:.2f} MB; hook output {len(text)} chars, rc {out.returncode}")
        print(f"floor          python3 -S -E -c pass              {floor_ms:7.2f} ms  (1.00x)")
        print(f"session-start  no memory store                    {bare_ms:7.2f} ms  ({bare_ms / floor_ms:.2f}x)")
        print(f"session-start  5,000-entry store (≈ 2 MB)         {full_ms:7.2f} ms  ({ratio:.2f}x)  "
              f"target ≤ {TARGET_RATIO:.0f}x: {'ok' if ratio <= TARGET_RATIO else 'OVER'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
