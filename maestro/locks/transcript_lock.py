"""The transcript lock `<T>.lock/` (spec §2.6): one `--turn` per transcript at a time, no waiting.

The directory holds `metadata` (`token`, `pid`, `process_start`, and `generation` as in every
maestro lock) and is published whole through `claim.LockDir`, so it never exists without its
owner record. A lock whose owner is provably gone — no such pid, or the pid now belongs to a
process that started at another time — is retired and taken over; anything else (a live
owner, an owner that cannot be identified) is busy. Every judgement that leads to a removal is
repeated under the directory's generation claim, so two reclaimers cannot both succeed, and a
lock left by the original Maestro (same record, no `generation`) is reclaimed the same way.
"""

import os

from maestro.locks import lockdir as claimlib
from maestro.locks import identity


class TranscriptLock:
    def __init__(self, transcript: str, emit):
        self.lock = claimlib.LockDir(transcript + ".lock")
        self.emit = emit
        self.token = ""
        self.identity = ""

    @property
    def path(self) -> str:
        return self.lock.path

    def _snapshot(self):
        """(dev, inode, metadata text) of the lock as it is now, or None when it is absent."""
        try:
            st = os.lstat(self.lock.path)
            text = self.lock.read_text("metadata", 4096)
        except FileNotFoundError:
            return None if not os.path.lexists(self.lock.path) else (0, 0, "")
        except OSError:
            return (0, 0, "")
        return (st.st_dev, st.st_ino, text)

    def _verdict(self, snapshot) -> str:
        """'' when the owner is provably dead, else why the lock is busy."""
        fields = claimlib.parse_record(snapshot[2]) if snapshot[2] else None
        if not fields or not fields.get("token") or not fields.get("pid", "").isdigit():
            return (f"the transcript lock has no usable owner record, so its owner cannot be disproved; if no turn is "
                    f"running, remove {self.lock.path}")
        pid = int(fields["pid"])
        state = identity.owner_state(pid, fields.get("process_start", ""))
        if state != identity.DEAD:
            return f"another turn is in progress (pid={pid})"
        return ""

    def acquire(self) -> str:
        """'' when held, else why not (the caller fails with rc 3; a turn never waits)."""
        for _ in range(3):
            token = claimlib.new_token()
            fields = {"token": token, "pid": str(os.getpid()), "process_start": identity.process_start(os.getpid())}
            try:
                with claimlib.claim(self.lock.parent, 0.5):
                    ident = self.lock.create(
                        lambda generation, fields=fields: {"metadata": dict(fields, generation=generation)})
            except claimlib.ClaimBusy:
                return "another process is taking the transcript lock right now"
            except OSError as exc:
                return f"could not create the transcript lock ({exc.strerror or exc})"
            if ident is not None:
                self.token, self.identity = token, ident
                return ""
            snapshot = self._snapshot()
            if snapshot is None:
                continue  # released between our attempt and our look
            busy = self._verdict(snapshot)
            if busy:
                return busy
            try:
                with claimlib.claim(self.lock.parent, 0.5):
                    if self._snapshot() != snapshot:
                        continue
                    warning = self.lock.retire()
            except (claimlib.ClaimBusy, OSError):
                return "the transcript lock changed while its dead owner's lock was being reclaimed"
            if warning:
                self.emit(warning)
            self.emit(f"DISCUSSION: reclaimed stale transcript lock {self.lock.path}")
        return "the transcript lock keeps changing hands"

    def release(self) -> None:
        if not self.token:
            return
        try:
            with claimlib.claim(self.lock.parent):
                record = self.lock.read_record("metadata") if self.lock.identity() == self.identity else None
                if record is None or record.get("token") != self.token:
                    self.emit(f"DISCUSSION_WARN: the transcript lock changed under this turn; left it alone "
                              f"({self.lock.path})")
                    return
                warning = self.lock.retire()
        except (claimlib.ClaimBusy, OSError, ValueError) as exc:
            self.emit(f"DISCUSSION_WARN: could not release the transcript lock {self.lock.path} ({exc})")
            return
        finally:
            self.token = ""
        if warning:
            self.emit(warning)
