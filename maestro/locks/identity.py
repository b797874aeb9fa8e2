"""Process identity: is the process that wrote a lock still the same process?

A pid alone is not an identity (pids are reused), so locks record `process_start` in the
original Maestro's format — `LC_ALL=C TZ=UTC0 ps -o lstart= -p PID`, e.g.
`Sun Nov 29 19:40:17 2026` — or `unavailable`. On Linux it is computed from /proc (no `ps`
process per check); elsewhere `ps` is asked. One-second resolution, as in the original.
"""

import os
import re
import subprocess
import time

UNAVAILABLE = "unavailable"
_SESSION_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")


def session_id() -> str:
    """MAESTRO_SESSION_ID if valid, else `unknown` (attribution only)."""
    value = os.environ.get("MAESTRO_SESSION_ID", "")
    return value if _SESSION_RE.fullmatch(value) else "unknown"


def _boot_time():
    with open("/proc/stat", "rb") as handle:
        for line in handle:
            if line.startswith(b"btime "):
                return int(line.split()[1])
    return None


def _lstart(epoch: float) -> str:
    return time.strftime("%a %b %e %H:%M:%S %Y", time.gmtime(int(epoch)))


def process_start(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        fields = stat[stat.rindex(b")") + 2 :].split()
        start_ticks = int(fields[19])  # field 22 overall: starttime since boot, in clock ticks
        boot = _boot_time()
        if boot is not None:
            return _lstart(boot + start_ticks / os.sysconf("SC_CLK_TCK"))
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return UNAVAILABLE  # Linux and no such process
    except (OSError, ValueError, IndexError):
        pass
    try:
        result = subprocess.run(
            ["ps", "-o", "lstart=", "-p", str(pid)], capture_output=True, text=True, timeout=5,
            env=dict(os.environ, LC_ALL="C", TZ="UTC0"),
        )
    except (OSError, subprocess.TimeoutExpired):
        return UNAVAILABLE
    text = " ".join(result.stdout.split())
    return text if result.returncode == 0 and text else UNAVAILABLE


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


ALIVE_CONFIRMED = "alive"  # same pid, same start time
ALIVE_UNCONFIRMED = "unconfirmed"  # pid alive, start time unknown on one side
DEAD = "dead"  # no such pid, or the pid was reused (start time differs)


def owner_state(pid: int, recorded_start: str) -> str:
    if not pid_alive(pid):
        return DEAD
    current = process_start(pid)
    if current == UNAVAILABLE or recorded_start == UNAVAILABLE or not recorded_start:
        return ALIVE_UNCONFIRMED
    # ps pads single-digit days with a space; compare whitespace-insensitively.
    return ALIVE_CONFIRMED if current.split() == recorded_start.split() else DEAD
