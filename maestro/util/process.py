"""Bounded execution of a child in its own process group (spec §1.0, §3).

Every child runs in a new session/process group, and every way out of `run` (normal exit with
any code, timeout, interruption, an exception) ends that whole group the same way (TERM → grace
→ KILL) before the result is returned, so nothing it spawned into the group (`cmd &`) outlives
the call. A descendant that calls setsid()/setpgid() itself has left the group and is out of
reach: no process-group kill can find it (out of scope, as for the original Maestro). Output
goes to unnamed temp files, never pipes, so a chatty child cannot deadlock the supervisor.
`tick` is called about once per `tick_interval` while the child runs (heartbeats),
`should_stop` is polled at the same rate (signals).
"""

import os
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
    return kill_group(pgid, 0)


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
        try:
            while True:
                remaining = deadline - clock()
                if remaining <= 0:
                    timed_out = True
                    break
                try:
                    proc.wait(timeout=min(tick_interval, remaining))
                    break
                except subprocess.TimeoutExpired:
                    pass
                if tick is not None:
                    tick()
                if should_stop is not None and should_stop():
                    interrupted = True
                    break
        finally:
            terminate_group(proc, grace)  # every path: what the leader left in its group ends too
        out.seek(0)
        err.seek(0)
        rc = TIMEOUT_RC if timed_out else proc.returncode
        if rc is not None and rc < 0:
            rc = 128 - rc
        return Completed(rc, out.read(), err.read(), timed_out, interrupted)
