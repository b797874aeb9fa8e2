"""Atomic file publication: temp file in the same directory + fsync + os.replace + dir fsync.

Readers see the old bytes or the new bytes, never a torn file, and a crash leaves at most a
`.<name>.maestro-tmp-<pid>` file that the next writer ignores (`sweep_stale_temps` removes one
whose writer is gone).
"""

import errno
import os
import stat
import time


def fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on directories; the rename is still atomic
    finally:
        os.close(fd)


TEMP_INFIX = ".maestro-tmp-"  # `.<name>.maestro-tmp-<pid>`: write_atomic's temp file for <name>


def write_all(fd: int, data: bytes, durable: bool = True) -> None:
    """Every byte of `data` to `fd` (os.write may write less than asked), then fsync unless not durable."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    if durable:
        os.fsync(fd)


def write_atomic(path: str, data: bytes, mode: int = 0o600, durable: bool = True) -> None:
    """Replace `path` with `data`; the file ends with exactly `mode` permission bits.
    `durable=False` skips the fsyncs (telemetry that may be lost, never state)."""
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f".{os.path.basename(path)}{TEMP_INFIX}{os.getpid()}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        os.unlink(tmp)  # a leftover from a crashed process with our (reused) pid
    except FileNotFoundError:
        pass
    fd = os.open(tmp, flags, mode)
    try:
        try:
            os.fchmod(fd, mode)
            write_all(fd, data, durable)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        fsync_dir(directory)


class NotPrivate(OSError):
    """A path that cannot be made a private directory of ours; `problem` says why ("is a symlink", …)."""

    def __init__(self, path: str, problem: str):
        super().__init__(f"not a private directory: {path}")
        self.path, self.problem = path, problem


def ensure_private_dir(path: str) -> None:
    """Create `path` (and parents) with mode 0700; close one of ours that is open to 0700; refuse
    (NotPrivate) a symlink, a non-directory or a directory another user owns."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        parent = os.path.dirname(path)
        if parent and parent != path:
            make_dirs(parent, 0o700)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise NotPrivate(path, "is a symlink")
    if not stat.S_ISDIR(st.st_mode):
        raise NotPrivate(path, "is not a directory")
    if st.st_uid != os.geteuid():
        raise NotPrivate(path, f"is owned by another user (uid {st.st_uid})")
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path, 0o700)


def make_private_dirs(path: str) -> None:
    """Create `path` and any missing parents 0700 (os.makedirs gives the mode to the leaf only)."""
    make_dirs(path, 0o700)


def make_dirs(path: str, mode: int) -> None:
    """Create `path` and any missing parents with `mode`, which the umask can only narrow (a
    permissive umask never makes them group- or other-writable). os.makedirs gives `mode` to the
    leaf only and 0777 & ~umask to every parent it creates."""
    missing = []
    while not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, mode)
        except FileExistsError:
            pass


def sweep_stale_temps(path: str) -> int:
    """Remove the temp files an interrupted `write_atomic(path, …)` left beside `path`: ours (same
    owner), regular files, named `.<name>.maestro-tmp-<pid>` with a pid no longer running. Returns
    how many went; never raises (a leftover is clutter, not a reason to fail)."""
    directory, prefix = os.path.dirname(os.path.abspath(path)), f".{os.path.basename(path)}{TEMP_INFIX}"
    removed = 0
    try:
        names = [name for name in os.listdir(directory) if name.startswith(prefix)]
    except OSError:
        return 0
    for name in names:
        pid = name[len(prefix):]
        if not pid.isdigit() or _pid_running(int(pid)):
            continue
        candidate = os.path.join(directory, name)
        try:
            st = os.lstat(candidate)
            if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid():
                os.unlink(candidate)
                removed += 1
        except OSError:
            pass
    return removed


def _pid_running(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this process is not writing it now: a leftover from a crashed one with our pid
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:
        return True  # alive, another user's
    return pid > 0


class NotRegular(Exception):
    """`read_regular` found something it must not read: its `reason` says what."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def read_regular(path: str, limit: int):
    """The bytes of the regular file at `path` (at most `limit`), None when it is absent. A symlink,
    a directory, a FIFO or device, or a larger file raises NotRegular — the file is opened
    non-blocking and without following links, so a FIFO planted in a state directory never hangs a
    hook. Other OS errors propagate."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(path):
            raise NotRegular("a symlink, not a regular file") from None
        if exc.errno == errno.EISDIR:
            raise NotRegular("a directory") from None
        if exc.errno == errno.ENXIO:
            raise NotRegular("not a regular file") from None
        raise
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise NotRegular("a directory")
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular("not a regular file")
        chunks, size = [], 0
        while size <= limit and st.st_size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit or st.st_size > limit:
            raise NotRegular(f"larger than {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


class LockBusy(Exception):
    """The flock stayed held by another process for the whole wait."""


class flock_file:  # noqa: N801 - used as a function: `with flock_file(path, timeout):`
    """Hold an exclusive `flock` on the permanent file `path` (created 0600, never unlinked, so all
    waiters share one inode). The kernel drops it when the holder dies. LockBusy after `timeout`.
    A class, not a contextlib.contextmanager: the hooks import this module, and contextlib (with
    functools and collections) costs them a few milliseconds."""

    def __init__(self, path: str, timeout: float, sleep=time.sleep, poll: float = 0.01):
        self.path, self.timeout, self.sleep, self.poll = path, timeout, sleep, poll
        self.fd = None

    def __enter__(self):
        import fcntl

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            deadline = time.monotonic() + self.timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                        raise
                    if time.monotonic() >= deadline:
                        raise LockBusy(self.path) from None
                    self.sleep(self.poll)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd
        return None

    def __exit__(self, *exc_info):
        import fcntl

        fd, self.fd = self.fd, None
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
        return False
