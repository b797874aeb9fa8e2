"""Process identity: is the process that wrote a lock still the same process?

A pid alone is not an identity (pids are reused), so locks record `process_start` in the
original Maestro's format — `LC_ALL=C TZ=UTC0 ps -o lstart= -p PID`, e.g.
`Sun Nov 29 19:40:17 2026` — or `unavailable`. On Linux it is computed from /proc (no `ps`
process per check); elsewhere `ps` is asked. One-second resolution, as in the original.

`owner_state` is the one judgement every lock, `status` and the statusline share (a zombie has
exited; a reused pid is another process). This module stays cheap to import — no `re`, no
`subprocess` at module level — because the statusline (a hot path) imports it; the statusline
passes `ask_ps=False` so it never spawns `ps`. All /proc reading goes through `read_proc`
(one seam, which tests replace with a fake /proc).
"""

import os
import time

UNAVAILABLE = "unavailable"
_SESSION_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def session_id() -> str:
    """MAESTRO_SESSION_ID if valid, else `unknown` (attribution only)."""
    value = os.environ.get("MAESTRO_SESSION_ID", "")
    return value if 0 < len(value) <= 64 and _SESSION_CHARS.issuperset(value) else "unknown"


def read_proc(name: str) -> bytes:
    """The bytes of /proc/<name> (`stat`, `<pid>/stat`, `<pid>/status`); OSError when unreadable."""
    with open(f"/proc/{name}", "rb") as handle:
        return handle.read()


def _boot_time():
    for line in read_proc("stat").splitlines():
        if line.startswith(b"btime "):
            return int(line.split()[1])
    return None


def _lstart(epoch: float) -> str:
    return time.strftime("%a %b %e %H:%M:%S %Y", time.gmtime(int(epoch)))


def _stat_fields(pid: int) -> list:
    """The fields of /proc/<pid>/stat after the command name (the state first): one read serves both
    the zombie check and the start time. OSError/ValueError when unreadable."""
    stat = read_proc(f"{pid}/stat")
    return stat[stat.rindex(b")") + 2 :].split()


def _threads(pid: int) -> int:
    """`Threads:` of /proc/<pid>/status; 0 when it cannot be read (then nothing proves a thread still runs)."""
    try:
        for line in read_proc(f"{pid}/status").splitlines():
            if line.startswith(b"Threads:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _exited(pid: int, fields: list) -> bool:
    """A zombie has exited: `kill -0` still finds it until someone reaps it (a detached worker's new
    parent may never). But /proc shows `Z` for the thread-group leader as soon as the *main thread*
    exits, while its other threads may still run (and write): only a zombie with at most one thread
    left (the zombie leader itself) has exited."""
    return bool(fields) and fields[0] in (b"Z", b"X") and _threads(pid) <= 1


def _linux_start(pid: int, fields: list):
    start_ticks = int(fields[19])  # field 22 overall: starttime since boot, in clock ticks
    boot = _boot_time()
    return None if boot is None else _lstart(boot + start_ticks / os.sysconf("SC_CLK_TCK"))


def _ps_start(pid: int) -> str:
    import subprocess  # only where /proc cannot answer: keeps the module cheap for the statusline

    try:
        result = subprocess.run(
            ["ps", "-o", "lstart=", "-p", str(pid)], capture_output=True, text=True, timeout=5,
            env=dict(os.environ, LC_ALL="C", TZ="UTC0"),
        )
    except (OSError, subprocess.TimeoutExpired):
        return UNAVAILABLE
    text = " ".join(result.stdout.split())
    return text if result.returncode == 0 and text else UNAVAILABLE


def _view(pid: int, ask_ps: bool):
    """(exited?, start time or UNAVAILABLE) of a pid `kill -0` finds, from one read of /proc/<pid>/stat."""
    try:
        fields = _stat_fields(pid)
        gone = _exited(pid, fields)
        start = _linux_start(pid, fields)
        if start is not None or gone:
            return gone, start or UNAVAILABLE
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return False, UNAVAILABLE  # Linux and no such process (it went since `kill -0`)
    except (OSError, ValueError, IndexError):
        pass
    return False, _ps_start(pid) if ask_ps else UNAVAILABLE


def process_start(pid: int, *, ask_ps: bool = True) -> str:
    return _view(pid, ask_ps)[1]


def pid_alive(pid: int) -> bool:
    """`kill -0`: a zombie still counts. Locks judge with `owner_state`/`running` instead."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # OverflowError: a pid no process can have
        return False
    except PermissionError:
        return True
    return True


def exited(pid: int) -> bool:
    """The pid names a zombie with no thread left running (see `_exited`)."""
    try:
        return _exited(pid, _stat_fields(pid))
    except (OSError, ValueError, IndexError):
        return False


def running(pid: int) -> bool:
    """The pid names a process that has not exited (alive and not a zombie)."""
    return pid_alive(pid) and not exited(pid)


ALIVE_CONFIRMED = "alive"  # same pid, same start time
ALIVE_UNCONFIRMED = "unconfirmed"  # pid alive, start time unknown on one side
DEAD = "dead"  # no such pid, an exited (zombie) process, or the pid was reused (start time differs)


def owner_state(pid: int, recorded_start: str, *, ask_ps: bool = True) -> str:
    if not pid_alive(pid):
        return DEAD
    gone, current = _view(pid, ask_ps)
    if gone:
        return DEAD
    if current == UNAVAILABLE or recorded_start == UNAVAILABLE or not recorded_start:
        return ALIVE_UNCONFIRMED
    return ALIVE_CONFIRMED if same_start(current, recorded_start) else DEAD


START_JITTER_SEC = 1
_MONTHS = {name: number for number, name in enumerate(
    "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), start=1)}


def _start_epoch(text: str):
    """Seconds of an lstart text ('Sun Nov 29 19:40:17 2026', UTC), or None when it is not one."""
    from maestro.util import days

    parts = text.split()
    if len(parts) != 5 or parts[1] not in _MONTHS or not parts[2].isdigit():
        return None
    day = days.ordinal(f"{parts[4]}-{_MONTHS[parts[1]]:02d}-{int(parts[2]):02d}")
    clock = parts[3].split(":")
    if day is None or len(clock) != 3 or not all(part.isascii() and part.isdigit() for part in clock):
        return None
    return day * 86400 + int(clock[0]) * 3600 + int(clock[1]) * 60 + int(clock[2])


def same_start(current: str, recorded: str) -> bool:
    """Whether two start times name the same process start. ps pads single-digit days with a space
    (compared whitespace-insensitively); and the start is the boot time plus the ticks since boot, where
    the kernel's boot time (/proc/stat btime, what ps uses too) moves by a second when the wall clock is
    corrected (a VM's clock sync): within START_JITTER_SEC is the same start. A pid reused that close to
    its first owner's start would need the pid space to wrap within that second."""
    if current.split() == recorded.split():
        return True
    first, second = _start_epoch(current), _start_epoch(recorded)
    return first is not None and second is not None and abs(first - second) <= START_JITTER_SEC


def owner_gone(pid, recorded_start: str = "", *, ask_ps: bool = True) -> bool:
    """A lock record's owner is DEAD by `owner_state` (a pid as text from a record: anything but a
    positive number is gone). One judgement for the job lock, `status` and the statusline."""
    if isinstance(pid, str):
        pid = int(pid) if pid.isascii() and pid.isdigit() else 0
    elif not isinstance(pid, int) or isinstance(pid, bool):
        pid = 0
    recorded = recorded_start if isinstance(recorded_start, str) else ""
    return pid <= 0 or owner_state(pid, recorded, ask_ps=ask_ps) == DEAD
