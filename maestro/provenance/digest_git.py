"""How the tree digest runs git: `posix_spawn` and two pipes instead of maestro.util.process.

Why its own runner: the warm digest is on the write path twice per dispatch and should cost about
what `git status` does (issue 13), and importing maestro.util.process (subprocess, tempfile,
dataclasses) cost the `digest` verb ~25 ms of CPU, about as much as listing a 20k-file tree. The
contract is util.process.run's: the child runs in its own session, `tick` and `should_stop` are
polled every `tick_interval`, a timeout gives rc 124 with `timed_out`, a stop `interrupted`, and
on every way out the child's whole process group ends (a clean exit finds it empty: one killpg;
anything else is handed to util.process's own TERM → grace → KILL, imported only then). Output is
read from pipes as it comes (both at once: a chatty child cannot block on a full pipe). Where the
platform lacks what this needs (posix_spawn with setsid), util.process.run runs the command.
"""

import os
import select
import time

TIMEOUT_RC = 124
DROPPED_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX")


def git_env() -> dict:
    """maestro.util.git.git_env(drop=DROPPED_ENV), without importing that module (it imports
    subprocess): C locale, no optional locks, never pointed at another repository."""
    env = {key: value for key, value in os.environ.items() if key not in DROPPED_ENV}
    env.update(LC_ALL="C", GIT_OPTIONAL_LOCKS="0")
    return env


class Completed:
    """util.process.Completed's shape: rc, stdout, stderr, timed_out, interrupted, err_text."""
    __slots__ = ("rc", "stdout", "stderr", "timed_out", "interrupted")

    def __init__(self, rc, stdout=b"", stderr=b"", timed_out=False, interrupted=False):
        self.rc, self.stdout, self.stderr, self.timed_out, self.interrupted = rc, stdout, stderr, timed_out, interrupted

    @property
    def err_text(self) -> str:
        return self.stderr.decode("utf-8", "replace")


class _Child:
    """The two methods util.process.terminate_group asks of a Popen, for a child spawned here."""

    def __init__(self, pid: int):
        self.pid, self.returncode = pid, None

    def poll(self):
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # SIGCHLD ignored (inherited across exec): the kernel reaped it
                self.returncode = 0  # its status is lost; subprocess.Popen says 0 here too
                return self.returncode
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                import subprocess

                raise subprocess.TimeoutExpired(self.pid, timeout)
            time.sleep(0.005)
        return self.returncode


def run(args, *, cwd: bytes, env: dict, timeout: float, tick=None, tick_interval: float = 0.005,
        should_stop=None, grace: float = 2.0) -> Completed:
    """`git -C cwd <args>` to completion or until `timeout` seconds (util.process.run's contract)."""
    if not hasattr(os, "posix_spawnp") or not hasattr(os, "pidfd_open"):
        return _fallback(args, cwd, env, timeout, tick, tick_interval, should_stop, grace)
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    try:
        pid = os.posix_spawnp("git", ["git", "-C", cwd, *args], env, setsid=True, file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, out_write, 1),
            (os.POSIX_SPAWN_DUP2, err_write, 2)])
    except NotImplementedError:  # no setsid in this libc's posix_spawn
        for fd in (out_read, out_write, err_read, err_write):
            os.close(fd)
        return _fallback(args, cwd, env, timeout, tick, tick_interval, should_stop, grace)
    except OSError as exc:
        for fd in (out_read, out_write, err_read, err_write):
            os.close(fd)
        return Completed(127, b"", f"git: {exc.strerror or exc}\n".encode())
    os.close(out_write)
    os.close(err_write)
    child, chunks, open_fds = _Child(pid), {out_read: [], err_read: []}, [out_read, err_read]
    deadline, timed_out, interrupted, clean = time.monotonic() + timeout, False, False, False
    try:
        try:
            exited = os.pidfd_open(pid)
        except OSError:
            exited = None
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = True
                    break
                watched = open_fds + ([exited] if exited is not None else [])
                ready = select.select(watched, [], [], min(tick_interval, remaining))[0] if watched else ()
                if not watched:
                    time.sleep(min(tick_interval, remaining))
                for fd in ready:
                    if fd in chunks:
                        data = os.read(fd, 1 << 16)
                        if data:
                            chunks[fd].append(data)
                        else:  # end of file: this pipe is done (closed here, not leaked)
                            open_fds.remove(fd)
                            os.close(fd)
                # The leader's exit ends the wait, not the pipes' end: a child it left behind (`cmd &`)
                # may hold them open; it is ended with the group below.
                if (exited is None or exited in ready or not open_fds) and child.poll() is not None:
                    _drain(open_fds, chunks)
                    clean = True
                    break
                if tick is not None:
                    tick()
                if should_stop is not None and should_stop():
                    interrupted = True
                    break
        finally:
            if exited is not None:
                os.close(exited)
    finally:
        for fd in open_fds:
            os.close(fd)
        _end_group(child, clean, grace)
    rc = TIMEOUT_RC if timed_out else child.returncode
    if rc is not None and rc < 0:
        rc = 128 - rc
    return Completed(rc, b"".join(chunks[out_read]), b"".join(chunks[err_read]), timed_out, interrupted)


def _drain(fds: list, chunks: dict) -> None:
    """What is already in the pipes, without waiting for writers that are still alive."""
    for fd in fds:
        os.set_blocking(fd, False)
        try:
            while True:
                data = os.read(fd, 1 << 16)
                if not data:
                    break
                chunks[fd].append(data)
        except BlockingIOError:
            pass


def _end_group(child: _Child, clean: bool, grace: float) -> None:
    """What the child left in its group ends too; a clean exit usually leaves no one."""
    if clean:
        try:
            os.killpg(child.pid, 0)
        except (ProcessLookupError, PermissionError):
            return  # the group is gone: nothing to end
    from maestro.util import process  # only now: a timeout, a stop, or a child that left processes behind

    process.terminate_group(child, grace)


def _fallback(args, cwd, env, timeout, tick, tick_interval, should_stop, grace):
    from maestro.util import process

    return process.run(["git", *args], timeout=timeout, cwd=cwd, env=env, tick=tick, tick_interval=tick_interval,
                       should_stop=should_stop, grace=grace)
