"""The store's write lock: `fcntl.flock` on a permanent file, released by the kernel when its holder
dies however it dies, so there is nothing stale to detect or break.

The flock itself is `maestro.locks.lockdir.flock_file` (a permanent 0600 file, O_NOFOLLOW, never
unlinked, so all waiters share one inode); this module adds the bounded wait's knob
(`MAESTRO_MEMORY_LOCK_TIMEOUT_SEC`, default 5 s) and its clear "busy" error, reentrancy per thread,
and the holder's pid, written into the file once won, for that error message only.

A dsh-maestro-memory writer sharing the store (`MAESTRO_MEMORY_DIR=~/.dsh/memories`) locks a
directory by creating `.maestro.lock` holding `{pid, at}`. While holding our lock we also wait
for such a file to go away when its pid is alive (or it is unreadable and under 10 s old); one
with a dead pid is ignored, as dsh itself would reclaim it. We never create or delete it.
"""

import json
import os
import threading
import time

from maestro import knobs
from maestro.locks import lockdir as claim
from maestro.memory.store.errors import StoreError

DEFAULT_TIMEOUT_SEC = 5.0
LEGACY_LOCK = ".maestro.lock"
LEGACY_STALE_SEC = 10.0
POLL_SEC = 0.002  # a hand-over costs at most this much idle lock time; 20 busy writers stay cheap
_held = {}  # (lock path, pid, thread) -> depth: reentrant per thread (a second flock would self-deadlock)


def timeout_seconds() -> float:
    return knobs.seconds("MAESTRO_MEMORY_LOCK_TIMEOUT_SEC", DEFAULT_TIMEOUT_SEC, minimum=0,
                         prefix="MAESTRO_MEMORY").value


class StoreLock:
    def __init__(self, path: str, timeout: float = None, clock=time.monotonic, sleep=time.sleep):
        self.path = path
        self.timeout = timeout_seconds() if timeout is None else timeout
        self.clock, self.sleep = clock, sleep
        self.deadline = None
        self._hold = None

    def _key(self):
        return (self.path, os.getpid(), threading.get_ident())

    def __enter__(self):
        if _held.get(self._key()):
            _held[self._key()] += 1
            return self
        self.deadline = self.clock() + self.timeout
        hold = claim.flock_file(self.path, self.timeout, sleep=self.sleep, poll=POLL_SEC)
        try:
            hold.__enter__()
        except claim.ClaimBusy:
            raise StoreError(self._busy_message(), "busy") from None
        except OSError as exc:
            raise StoreError(f"cannot lock {self.path}: {exc.strerror}; nothing was written", "io") from None
        self._hold = hold
        _held[self._key()] = 1
        self._note_holder()
        return self

    def __exit__(self, *exc):
        _held[self._key()] -= 1
        if self._hold is not None:
            del _held[self._key()]
            hold, self._hold = self._hold, None
            hold.__exit__(None, None, None)  # releases the flock
        return False

    def _note_holder(self) -> None:
        """Write our pid into the lock file (read only by a waiter's busy message)."""
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError:
            pass
        finally:
            os.close(fd)

    def _busy_message(self) -> str:
        try:
            with open(self.path, "rb") as handle:
                holder = handle.read(32).decode("ascii", "replace").strip()
        except OSError:
            holder = ""
        who = f"pid {holder}" if holder.isdigit() else "another writer"
        return (f"memory store is busy: {who} has held {self.path} for over {self.timeout:g}s "
                "(MAESTRO_MEMORY_LOCK_TIMEOUT_SEC); nothing was written")

    def respect_legacy(self, directory: str) -> None:
        """Wait (within our deadline) while a live dsh writer holds `directory`/.maestro.lock."""
        path = os.path.join(directory, LEGACY_LOCK)
        deadline = self.deadline if self.deadline is not None else self.clock() + self.timeout
        delay = 0.001
        while True:
            holder = legacy_holder(path)
            if holder is None:
                return
            if self.clock() >= deadline:
                raise StoreError(f"memory store is busy: a dsh-maestro-memory writer ({holder}) holds {path} "
                                 f"for over {self.timeout:g}s; nothing was written", "busy")
            self.sleep(delay)
            delay = min(delay * 2, 0.025)


def legacy_holder(path: str, now=time.time):
    """A description of the live holder of a dsh `.maestro.lock`, or None when it does not count."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(4096)
            age = now() - os.fstat(handle.fileno()).st_mtime
    except OSError:
        return None
    try:
        pid = json.loads(raw.decode("utf-8")).get("pid")
    except (ValueError, AttributeError):
        pid = None
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None if age > LEGACY_STALE_SEC else "unreadable lock file"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, another user's
    except (OSError, OverflowError):
        return None
    return f"pid {pid}"
