#!/usr/bin/env python3
"""Hook latency as installed, as a ratio to the bare interpreter measured in the same run.

    python3 bench/hooks.py [--pyz dist/maestro.pyz] [--runs 40]

Installs the archive into a throw-away HOME, then times (median wall time of N runs, each a
fresh process fed a realistic payload):
  floor          python3 -S -E -c pass                (the bare interpreter)
  gate/inject/session-start/stop, run exactly as Claude Code runs them: `sh -c "<registered
  command>"`, and the same argv without the shell. `stop` runs with the write guard on, a 1 MB
  transcript and a git repository as cwd (its worst case: tail read + two git calls).
Target (issue 2): gate ≤ 2.5 × floor. This prints numbers; it asserts nothing.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

PAYLOADS = {
    "gate": {"session_id": "bench", "cwd": "/nonexistent-bench/repo", "hook_event_name": "PreToolUse",
             "tool_name": "Edit", "tool_input": {"file_path": "/nonexistent-bench/repo/src/app.py",
                                                 "old_string": "a", "new_string": "b"}},
    "inject": {"session_id": "bench", "hook_event_name": "UserPromptSubmit",
               "prompt": "please fix the failing test in src/app.py"},
    "session-start": {"session_id": "bench", "source": "startup", "hook_event_name": "SessionStart"},
    "stop": {"session_id": "bench", "hook_event_name": "Stop", "stop_hook_active": False},
}


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


def median_ms(argv, stdin: bytes, env, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyz", default="dist/maestro.pyz")
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    python = os.path.realpath(sys.executable)
    with tempfile.TemporaryDirectory(prefix="maestro-bench-") as home:
        env = dict(os.environ, HOME=home)
        os.makedirs(os.path.join(home, ".claude"))
        subprocess.run([python, args.pyz, "install"], env=env, check=True, capture_output=True)
        with open(os.path.join(home, ".claude", "settings.json")) as handle:
            settings = json.load(handle)
        commands = {}
        for blocks in settings["hooks"].values():
            for block in blocks:
                for hook in block["hooks"]:
                    verb = hook["command"].rpartition("maestro-managed:")[2]
                    commands[verb] = hook["command"]
        floor = median_ms([python, "-S", "-E", "-c", "pass"], b"", env, args.runs)
        print(f"floor  python3 -S -E -c pass            {floor:7.2f} ms  (1.00x)")
        payloads = dict(PAYLOADS, stop=stop_fixture(home))
        for verb, payload in payloads.items():
            data = json.dumps(payload).encode()
            command = commands[verb].split(" # ")[0]
            shell = median_ms(["sh", "-c", command], data, env, args.runs)
            direct = median_ms(command.split(), data, env, args.runs)
            print(f"{verb:<14} as installed (sh -c)       {shell:7.2f} ms  ({shell / floor:.2f}x)")
            print(f"{verb:<14} argv, no shell             {direct:7.2f} ms  ({direct / floor:.2f}x)")
        bare_pyz = median_ms([python, args.pyz, "gate"], json.dumps(PAYLOADS["gate"]).encode(), env, args.runs)
        print(f"gate           without -I -S              {bare_pyz:7.2f} ms  ({bare_pyz / floor:.2f}x)")
        extract_env = dict(env, MAESTRO_SHIV_EXTRACT="1")
        median_ms([python, "-I", "-S", args.pyz, "--version"], b"", extract_env, 1)  # first run extracts
        shiv = median_ms([python, "-I", "-S", args.pyz, "gate"], json.dumps(PAYLOADS["gate"]).encode(), extract_env, args.runs)
        print(f"gate           via shiv bootstrap (warm)  {shiv:7.2f} ms  ({shiv / floor:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
