"""Generation-fenced lock directories (spec §2.2), shared by the write lease and the job lock.

A lock is a directory created with `mkdir` while holding a non-blocking `flock` on
`<parent>/maestro-generation-claim.lock` (a permanent file: unlinking it would split waiters
across inodes). The directory holds `generation` (32 lowercase hex); its identity is
`<dev>:<inode>:<generation>`, so a lock that was retired and re-created is a different lock even
at the same path. Records (`metadata`, `heartbeat`) carry `token=` and `generation=` lines; an
owner acts only on records whose identity, token and generation all match its own (fencing).
Every mutation claims the gate, re-verifies, acts, and releases. Retiring renames the
directory to `<lock>.reclaim.<nonce>` first, so no reader ever sees a half-deleted lock.
"""

import errno
import os
import shutil
import stat
import time

from maestro.util import atomic
from maestro.util.tokens import token_hex

CLAIM_FILE = "maestro-generation-claim.lock"
_HEX = frozenset("0123456789abcdef")
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz_")


ClaimBusy = atomic.LockBusy  # another process holds the claim gate (or the flock in question)
flock_file = atomic.flock_file


def new_token() -> str:
    return token_hex(16)


def is_token(value) -> bool:
    return isinstance(value, str) and len(value) == 32 and all(ch in _HEX for ch in value)


def claim(parent: str, timeout: float = 2.0, sleep=time.sleep):
    """The generation claim gate of the lock directories under `parent`."""
    return flock_file(os.path.join(parent, CLAIM_FILE), timeout, sleep)


def parse_record(text: str):
    """`key=value` lines → dict; None when any line is malformed or a key repeats (fail closed)."""
    fields = {}
    for line in text.split("\n"):
        if not line:
            continue
        key, sep, value = line.partition("=")
        if not sep or not key or not all(ch in _KEY_CHARS for ch in key) or key in fields:
            return None
        fields[key] = value
    return fields


def format_record(fields: dict) -> bytes:
    return "".join(f"{key}={value}\n" for key, value in fields.items()).encode()


class LockDir:
    def __init__(self, path: str):
        self.path = path
        self.parent = os.path.dirname(path)

    # -- reading ---------------------------------------------------------------------------
    def exists(self) -> bool:
        return os.path.lexists(self.path)

    def identity(self):
        """`<dev>:<inode>:<generation>` or None (absent, not a real directory, no generation)."""
        try:
            st = os.lstat(self.path)
            if not stat.S_ISDIR(st.st_mode):
                return None
            generation = self.read_text("generation", 64).strip("\n")
        except OSError:
            return None
        if not is_token(generation):
            return None
        return f"{st.st_dev}:{st.st_ino}:{generation}"

    @staticmethod
    def generation_of(identity: str) -> str:
        return identity.rsplit(":", 1)[-1]

    def read_text(self, name: str, limit: int = 65536) -> str:
        fd = os.open(os.path.join(self.path, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EINVAL, f"{name} is not a regular file")
            return os.read(fd, limit).decode("utf-8", "replace")
        finally:
            os.close(fd)

    def read_record(self, name: str):
        """The record's fields; None when absent; {} … never: malformed ⇒ raises ValueError."""
        try:
            text = self.read_text(name)
        except FileNotFoundError:
            return None
        fields = parse_record(text)
        if fields is None:
            raise ValueError(f"{name} is malformed")
        return fields

    def entries(self):
        try:
            return sorted(os.listdir(self.path))
        except OSError:
            return []

    def age(self, now: float) -> float:
        try:
            return max(0.0, now - os.lstat(self.path).st_mtime)
        except OSError:
            return 0.0

    # -- writing (callers hold the claim) --------------------------------------------------
    def create(self, records=None):
        """Create the lock with its generation and first records in one step; return the new
        identity, or None when the path already exists.

        The directory is assembled under a private name and renamed into place, so no process
        (and no crash) can ever leave a lock without its generation or its first metadata —
        the original's mkdir-then-write left such locks, which nothing could identify or clear.
        Callers hold the claim, so no other maestro is mid-creation at this path.
        `records(generation)` returns {name: fields} to write before publication."""
        if os.path.lexists(self.path):
            return None
        generation = new_token()
        staging = f"{self.path}.init.{generation}"
        os.mkdir(staging, 0o700)
        try:
            self._write_in(staging, f"generation.tmp.{generation}", "generation", (generation + "\n").encode())
            for name, fields in (records(generation) if records else {}).items():
                self._write_in(staging, f"{name}.tmp.{generation}", name, format_record(fields))
            try:
                os.rename(staging, self.path)
            except OSError as exc:
                if exc.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR):
                    return None
                raise
        finally:
            if os.path.lexists(staging):
                shutil.rmtree(staging, ignore_errors=True)
        return self.identity()

    @staticmethod
    def _write_in(directory: str, tmp_name: str, name: str, data: bytes) -> None:
        tmp = os.path.join(directory, tmp_name)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, os.path.join(directory, name))

    def _write(self, tmp_name: str, name: str, data: bytes) -> None:
        self._write_in(self.path, tmp_name, name, data)

    def write_record(self, name: str, fields: dict, token: str) -> None:
        tmp = f"{name}.tmp.{token}"
        try:
            os.unlink(os.path.join(self.path, tmp))
        except FileNotFoundError:
            pass
        self._write(tmp, name, format_record(fields))

    def rename(self, source: str, target: str) -> None:
        os.replace(os.path.join(self.path, source), os.path.join(self.path, target))

    def retire(self) -> str:
        """Move the lock aside, then delete it. Returns a warning ('' when fully cleaned)."""
        aside = f"{self.path}.reclaim.{token_hex(6)}"
        os.rename(self.path, aside)
        try:
            shutil.rmtree(aside)
        except OSError as exc:
            return f"MAESTRO_LOCK_CLEANUP: could not remove {aside}: {exc.strerror or exc}"
        return ""
