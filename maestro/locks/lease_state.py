"""What a write lease directory says, read without changing it (spec §2.3): its names, a parsed
view of its records (`LeaseState`, shared by the lease, `loop --clear-lease` and `status`), the
fencing test, and the heartbeat that keeps a held lease looking alive.

The heartbeat is its own object so that it can be built before the lease: the long-running
collaborators the lease is handed (the tree digest, the companion transport) keep it beating
without holding a reference to a lease that does not exist yet. The lease arms it when it
acquires an interval and disarms it when it releases one.
"""

import os
import time

from maestro.locks import lockdir as claimlib

LOCK_NAME = "maestro-write.lock"
KNOWN_ENTRIES = ("generation", "metadata", "metadata.new", "heartbeat")
UNKNOWN = "unknown"


def lock_path(git_dir: str) -> str:
    return os.path.join(git_dir, LOCK_NAME)


def fenced(lock: claimlib.LockDir, token: str, identity: str) -> bool:
    """Is the lock on disk still exactly the interval identified by (token, identity)?"""
    if lock.identity() != identity:
        return False
    try:
        record = lock.read_record("metadata")
    except (OSError, ValueError):
        return False
    return bool(record) and record.get("token") == token and record.get(
        "generation") == claimlib.LockDir.generation_of(identity)


class LeaseState:
    """A parsed view of a lease directory; `problem` says why it cannot be trusted."""

    def __init__(self, lock: claimlib.LockDir, clock):
        self.identity = lock.identity()
        self.metadata = self.staged = self.heartbeat = None
        self.problem = ""
        try:
            self.metadata = lock.read_record("metadata")
            self.staged = lock.read_record("metadata.new")
            self.heartbeat = lock.read_record("heartbeat")
        except (OSError, ValueError) as exc:
            self.problem = f"malformed ({exc})"
        self.age = lock.age(clock())
        if self.identity and not self.problem:
            generation = claimlib.LockDir.generation_of(self.identity)
            for record in (self.metadata, self.staged):
                if record is not None and (
                    record.get("generation") != generation
                    or not claimlib.is_token(record.get("token"))
                    or not record.get("pid", "").isdigit()
                ):
                    self.problem = "malformed or belongs to another generation"

    @property
    def poisoned(self) -> bool:
        return self.staged is not None or (self.metadata or {}).get("quiescence") == "unconfirmed"

    @property
    def poison(self) -> dict:
        return self.staged if self.staged is not None else (self.metadata or {})

    def owner(self, key: str, default: str = UNKNOWN) -> str:
        value = (self.metadata or self.staged or {}).get(key)
        return value if value else default

    def heartbeat_epoch(self):
        """The newest liveness sign: max(started_epoch, matching heartbeat epoch)."""
        started = self.owner("started_epoch", "")
        best = int(started) if started.isdigit() else None
        beat = self.heartbeat or {}
        if (
            beat.get("token") == self.owner("token", "")
            and self.identity
            and beat.get("generation") == claimlib.LockDir.generation_of(self.identity)
            and beat.get("epoch", "").isdigit()
        ):
            best = max(best or 0, int(beat["epoch"]))
        return best


class LeaseHeartbeat:
    """`<lock>/heartbeat`: written at most every `interval` seconds (or when forced) while armed
    with a held interval, and only while that interval is still the one on disk. A missed beat
    only makes the lease look older; it is never fatal."""

    def __init__(self, git_dir: str, *, interval: float = 20.0, clock=time.time):
        self.lock = claimlib.LockDir(lock_path(git_dir))
        self.interval = interval
        self.clock = clock
        self._holder = None  # (token, identity) of the held interval, while armed
        self._last_beat = 0.0

    def arm(self, token: str, identity: str) -> None:
        self._holder = (token, identity)

    def disarm(self) -> None:
        self._holder = None

    def beat(self, force: bool = False) -> None:
        now = self.clock()
        holder = self._holder
        if holder is None or (not force and now - self._last_beat < self.interval):
            return
        self._last_beat = now
        token, identity = holder
        try:
            with claimlib.claim(self.lock.parent, 0.2):
                if fenced(self.lock, token, identity):
                    self.lock.write_record("heartbeat", {
                        "token": token, "generation": claimlib.LockDir.generation_of(identity),
                        "epoch": str(int(now))}, token)
        except (claimlib.ClaimBusy, OSError):
            pass  # a missed beat only makes the lease look older; never fatal
