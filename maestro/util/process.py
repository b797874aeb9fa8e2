"""Bounded execution of a child in its own process group (spec §1.0, §3).

Every child runs in a new session/process group, and every way out of `run` (normal exit with
any code, timeout, interruption, an exception) ends that whole group the same way (TERM → grace
→ KILL) before the result is returned, so nothing it spawned into the group (`cmd &`) outlives
the call. A descendant that calls setsid()/setpgid() itself has left the group and is out of
reach: no process-group kill can find it (out of scope, as for the original Maestro). Output
goes to unnamed temp files, never pipes, so a chatty child cannot deadlock the supervisor.
`tick` is called about once per `tick_interval` while the child runs (heartbeats),
`should_stop` is polled at the same rate (signals). The wait for the child sleeps on a pidfd where
Linux has one: `Popen.wait(timeout)` polls with sleeps that double up to 50 ms, which made a 2 ms git
call cost 6–7 ms (every digest and provenance step makes several).
"""

import os
import select
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass

TIMEOUT_RC = 124


@dataclass
class Completed:
    rc: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    interrupted: bool = False

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", "replace")

    @property
    def err_text(self) -> str:
        return self.stderr.decode("utf-8", "replace")


def kill_group(pgid: int, sig: int) -> bool:
    """Signal a whole process group; False when nothing was left to signal."""
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _group_alive(pgid: int) -> bool:
    return kill_group(pgid, 0) and not _only_zombies_left(pgid)


def _only_zombies_left(pgid: int) -> bool:
    """True when every process still in the group is a zombie: dead, waiting for its new parent to
    reap it. A child that its own parent never reaped (git's `sh -c upload-pack` of a failed fetch)
    passes to init, and an init that reaps lazily (a container's) kept each such call waiting for
    hundreds of milliseconds although nothing there could run again. Linux only (/proc); elsewhere,
    or when /proc cannot be read, the group counts as alive (the bounded wait goes on as before)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return False
    seen = False
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
            state, _ppid, group = stat[stat.rindex(b")") + 2:].split(None, 3)[:3]
        except (OSError, ValueError):
            continue
        if int(group) == pgid:
            if state != b"Z":
                return False
            seen = True
    return seen


def terminate_group(proc: subprocess.Popen, grace: float) -> None:
    """End the whole group: TERM, wait up to `grace` for it to empty, KILL whatever is left,
    reap the leader, then wait (bounded) until the group is gone.

    Called on every path, a clean exit included: a leader that already exited may have left
    children in the group (`sleep 60 & echo ok`), and they get the same TERM-first chance to
    clean up as on a timeout. Costs nothing when the group is already empty (TERM finds no one).
    A killed member that its new parent has not reaped yet still counts as present, hence the
    bounded waits rather than open-ended ones.
    """
    pgid = proc.pid
    kill_group(pgid, signal.SIGTERM)
    if _wait_gone(proc, pgid, grace):
        return
    kill_group(pgid, signal.SIGKILL)
    try:
        proc.wait(timeout=max(grace, 1.0))
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL cannot be ignored
        pass
    _wait_gone(proc, pgid, max(grace, 1.0))


def _wait_gone(proc: subprocess.Popen, pgid: int, seconds: float) -> bool:
    """True once the leader is reaped and nothing is left in its group, within `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        if proc.poll() is not None and not _group_alive(pgid):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def _exit_watch(proc: subprocess.Popen):
    """A descriptor that becomes readable when proc exits (Linux pidfd), or None where there is none
    (another OS, an old kernel, a sandbox that forbids it, no descriptor left): then `_exited_within` polls."""
    try:
        return os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        return None


def _exited_within(proc: subprocess.Popen, seconds: float, watch) -> bool:
    """Wait up to `seconds` for proc to exit (and reap it); True when it has."""
    if watch is None:
        try:
            proc.wait(timeout=seconds)
            return True
        except subprocess.TimeoutExpired:
            return False
    if select.select([watch], [], [], max(seconds, 0))[0]:
        proc.wait()  # it has exited: this only reaps it
        return True
    return proc.poll() is not None


def run(
    argv,
    *,
    timeout: float,
    cwd=None,
    env=None,
    stdin_data: bytes = None,
    tick=None,
    tick_interval: float = 1.0,
    should_stop=None,
    grace: float = 2.0,
    clock=time.monotonic,
) -> Completed:
    """Run argv to completion or until `timeout` seconds (then rc 124, timed_out=True)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as inp:
        if stdin_data:
            inp.write(stdin_data)
            inp.seek(0)
        try:
            proc = subprocess.Popen(
                argv, cwd=cwd, env=env, stdin=inp, stdout=out, stderr=err, start_new_session=True, close_fds=True
            )
        except OSError as exc:
            return Completed(127, b"", f"{argv[0]}: {exc.strerror or exc}\n".encode())
        deadline = clock() + timeout
        timed_out = interrupted = False
        watch = _exit_watch(proc)
        try:
            while True:
                remaining = deadline - clock()
                if remaining <= 0:
                    timed_out = True
                    break
                if _exited_within(proc, min(tick_interval, remaining), watch):
                    break
                if tick is not None:
                    tick()
                if should_stop is not None and should_stop():
                    interrupted = True
                    break
        finally:
            if watch is not None:
                os.close(watch)
            terminate_group(proc, grace)  # every path: what the leader left in its group ends too
        out.seek(0)
        err.seek(0)
        rc = TIMEOUT_RC if timed_out else proc.returncode
        if rc is not None and rc < 0:
            rc = 128 - rc
        return Completed(rc, out.read(), err.read(), timed_out, interrupted)
