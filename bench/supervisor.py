#!/usr/bin/env python3
"""Supervisor cost while a Codex job runs, and how fast a finished job is noticed.

    python3 bench/supervisor.py [--pyz dist/maestro.pyz] [--job-seconds 12] [--poll 2]

Runs `watchdog` in a throw-away git repo against the fake companion (tests/fixtures), whose job
finishes after --job-seconds. Reports:
  supervisor CPU  — the maestro process's own user+system time while the job ran, as % of one
                    core (target ≤ 1 %); the companion calls it spawns are reported separately.
  detection       — from the job's completion to the `result` call that collects it
                    (target ≤ poll interval + 100 ms).
Prints numbers; asserts nothing.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAKE = ROOT / "tests" / "fixtures" / "fake_companion.py"
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int):
    """(own user+system, reaped children's user+system) in seconds, from /proc."""
    with open(f"/proc/{pid}/stat", "rb") as handle:
        fields = handle.read().rsplit(b")", 1)[1].split()
    utime, stime, cutime, cstime = (int(fields[i]) for i in (11, 12, 13, 14))
    return (utime + stime) / TICK, (cutime + cstime) / TICK


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyz", default=str(ROOT / "dist" / "maestro.pyz"))
    parser.add_argument("--job-seconds", type=float, default=12)
    parser.add_argument("--poll", type=float, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="maestro-bench-sup-") as tmp:
        home, repo = Path(tmp, "home"), Path(tmp, "repo")
        (home / ".codex").mkdir(parents=True)
        (home / ".codex" / "config.toml").write_text('model = "gpt-bench"\nmodel_reasoning_effort = "high"\n')
        repo.mkdir()
        for command in (["init", "-q"], ["config", "user.email", "b@b"], ["config", "user.name", "b"]):
            subprocess.run(["git", *command], cwd=repo, check=True)
        (repo / "f.txt").write_text("x\n")
        subprocess.run(["git", "add", "."], cwd=repo, check=True)
        subprocess.run(["git", "commit", "-qm", "i"], cwd=repo, check=True)
        knobs = Path(tmp, "knobs.json")
        knobs.write_text(json.dumps({"turn_seconds": args.job_seconds, "log_growth_bytes": 32}))
        calls = Path(tmp, "calls.jsonl")
        env = dict(os.environ, HOME=str(home), MAESTRO_COMPANION=str(FAKE), FAKE_COMPANION_KNOBS=str(knobs),
                   FAKE_COMPANION_STATE=str(Path(tmp, "state")), FAKE_COMPANION_CALL_LOG=str(calls))
        proc = subprocess.Popen([sys.executable, "-I", "-S", args.pyz, "watchdog", "bench plan", "300", str(args.poll)],
                                cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        while not calls.exists() or b'"task"' not in calls.read_bytes():
            time.sleep(0.01)
        launched = time.time()
        start_cpu = cpu_seconds(proc.pid)
        time.sleep(max(0.5, args.job_seconds - 1))  # sample inside the job, before it finishes
        end_cpu = cpu_seconds(proc.pid)
        sampled = time.time() - launched
        proc.communicate(timeout=args.job_seconds + 60)
        entries = [json.loads(line) for line in calls.read_text().splitlines()]
    task_time = next(e["time"] for e in entries if e["argv"][:1] == ["task"])
    result_time = next(e["time"] for e in entries if e["argv"][:1] == ["result"])
    statuses = sum(1 for e in entries if e["argv"][:1] == ["status"])
    own = end_cpu[0] - start_cpu[0]
    children = end_cpu[1] - start_cpu[1]
    detection = result_time - (task_time + args.job_seconds)
    print(f"job {args.job_seconds:g}s, poll {args.poll:g}s, sampled {sampled:.1f}s of it, {statuses} status calls")
    print(f"supervisor CPU  {own * 1000:7.1f} ms = {100 * own / sampled:5.2f} % of one core (target <= 1 %)")
    print(f"companion calls {children * 1000:7.1f} ms = {100 * children / sampled:5.2f} % of one core (spawned processes)")
    print(f"detection       {detection * 1000:7.1f} ms after completion (target <= poll + 100 ms = "
          f"{args.poll * 1000 + 100:.0f} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
