"""`status --watch [SECONDS]`: follow this worktree's write lease until it is free, then print the final status.

Each round (every SECONDS, default 2) reads the lease like `status` does, plus what the run holding it
says about itself (locks/run_notes: loop or watchdog, plan, iteration i/n, phase) and, from maestro's
job ledger, its Codex job's phase (queued, running …) and the last line of its log; one line:

    lease HELD by job=task-ab12 (running) · loop fix-auth.md 2/4 codex · 3m12s · last: Running command: pytest -q

On a terminal the line is redrawn in place; otherwise (a pipe, a log file) a plain timestamped line
is printed each time something but the elapsed time changed. Watching ends when the lease is free —
or when it needs recovery (POISONED, orphaned, unidentifiable: it will not free itself) — with
`status`'s own report of the final state and its exit code; Ctrl-C stops watching the same way.
Local files only, like `status`. `sleep` and `clock` are seams for the tests (no real waiting).
"""

import math
import os
import sys
import time

from maestro.errors import UsageError
from maestro.locks import run_notes

DEFAULT_SECONDS = 2.0
MIN_SECONDS, MAX_SECONDS = 0.2, 3600.0
CLEAR = "\x1b[H\x1b[2J"
LOG_TAIL = 8192
WIDTH = 120

sleep = time.sleep
clock = time.time


def interval(value) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if not MIN_SECONDS <= seconds <= MAX_SECONDS:
        raise UsageError(f"maestro status: --watch takes SECONDS between {MIN_SECONDS:g} and {MAX_SECONDS:g}, "
                         f"not {value!r} (see --help)")
    return seconds


def _printable(text: str, width: int = WIDTH) -> str:
    text = "".join(ch for ch in text if ch.isprintable()).strip()
    return text if len(text) <= width else text[:width - 1] + "…"


def job_view(git_dir: str, job: str):
    """(the job's phase as maestro's job ledger last saw it, the last line of its log); '' for what is unknown."""
    try:
        from maestro.locks.job_ledger import JobLedger

        entry = JobLedger(git_dir).read(job) or {}
        phase = _printable(str(entry.get("state") or ""), 24)
        log_file = entry.get("log_file") or ""
        if not log_file:
            return phase, ""
        fd = os.open(log_file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            size = os.fstat(fd).st_size
            os.lseek(fd, max(0, size - LOG_TAIL), os.SEEK_SET)
            tail = os.read(fd, LOG_TAIL).decode("utf-8", "replace")
        finally:
            os.close(fd)
    except (OSError, ValueError, ImportError, AttributeError):
        return "", ""
    lines = [line for line in tail.splitlines() if line.strip()]
    return phase, (_printable(lines[-1]) if lines else "")


def _elapsed(seconds) -> str:
    if seconds is None:
        return "?"
    seconds = max(0, int(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def round_line(git_dir: str, lease: dict):
    """(what changed — everything but the elapsed time —, the line to show)."""
    job = lease.get("job") or "unknown"
    run = run_notes.read_run(git_dir)
    if run is not None and run["pid"] != str(lease.get("pid")):
        run = None  # a note left by an earlier run
    phase, progress = job_view(git_dir, job) if job != "unknown" else ("", "")
    parts = [f"lease {str(lease['state']).upper()} by job={_printable(job, 48)}" + (f" ({phase})" if phase else "")]
    if run is not None:
        steps = f" {run['iteration']}/{run['max']}" if run["kind"] == "loop" else ""
        parts.append(_printable(f"{run['kind']} {run['plan']}{steps} {run['phase']}"))
    key = tuple(parts) + (progress,)
    parts.append(_elapsed(lease.get("held_seconds")))
    if progress:
        parts.append(f"last: {progress}")
    return key, " · ".join(parts)


def watch(value, git_dir: str, lease_report, final, json_output: bool = False) -> int:
    """Redraw until the lease is free or needs recovery; then `final()` (status's report) gives the rc."""
    if json_output:
        raise UsageError("maestro status: --watch draws lines; it cannot be combined with --json (see --help)")
    seconds = interval(value)
    tty = sys.stdout.isatty()
    shown = None
    try:
        while True:
            now = clock()
            lease = lease_report(git_dir, now)
            if lease["state"] == "absent" or "recovery" in lease:
                break
            key, line = round_line(git_dir, lease)
            if tty:
                sys.stdout.write(f"{CLEAR}{line}\n(watching every {seconds:g}s until the lease is free — Ctrl-C "
                                 "stops)\n")
            elif key != shown:
                sys.stdout.write(f"{time.strftime('%H:%M:%S', time.localtime(now))} {line}\n")
            shown = key
            sys.stdout.flush()
            sleep(seconds)
    except KeyboardInterrupt:
        sys.stdout.write("status --watch: stopped watching\n")
    if tty and shown is not None:
        sys.stdout.write(CLEAR)
    sys.stdout.flush()
    return final()
