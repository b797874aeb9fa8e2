"""Has a process ended? For the tests that prove a child's background processes do not outlive it.

A process killed after its parent died is re-parented and stays a zombie until its new parent
reaps it (in a container that may be never), so "ended" means gone or a zombie, read from
/proc/<pid>/stat (Linux; elsewhere `kill -0`). Always a bounded poll, never sleep-and-hope.
"""

import os
import time


def ended(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True
    except OSError:
        try:
            os.kill(pid, 0)
            return False
        except ProcessLookupError:
            return True


def gone(pid: int, timeout: float = 10.0) -> bool:
    """True once `pid` has ended, polled for at most `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not ended(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def dead_pid() -> int:
    """The pid of a process that has ended and been reaped (a cheap one: `true`)."""
    import subprocess

    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid
