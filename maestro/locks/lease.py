"""The write lease `<git-dir>/maestro-write.lock/` (spec §2.3): one writer per worktree.

One process owns one lease interval. The lease is never stolen from a live owner or from an
owner whose identity cannot be confirmed; a dead owner's lease is reclaimed only when the global
writer list is readable and shows its job is no longer running, and maestro's own job ledger
(job_ledger.live_worker) shows no write job whose worker still runs. A cancelled write whose end was
never observed leaves the lease *poisoned* (`metadata.new`): nothing dispatches until a person
runs `loop --clear-lease`, because Codex might still be writing.

Every collaborator is handed in at construction, built before the lease, so tests can drive
every branch and nothing calls back into an object still being built: `writers()` returns the
running companion jobs as {job_id: write?} or None when unknown, `digest()` returns a tree digest
or 'unavailable', `baseline(digest)` checks the provenance baseline after acquisition,
`log_dispatch(kind, job, session, before, after)` appends a provenance record, `heartbeat` is the
`LeaseHeartbeat` the digest and the companion transport already beat (one is made when none is
given), `emit` prints a progress line, `clock`/`sleep` are time. The directory's names, its
parsed view and the heartbeat live in maestro.locks.lease_state.
"""

import os
import time

from maestro.errors import Exit
from maestro.locks import lockdir as claimlib
from maestro.locks import identity
from maestro.locks.job_ledger import describe_live, live_worker
from maestro.locks.lease_state import (  # noqa: F401 - LOCK_NAME is also read as lease.LOCK_NAME
    KNOWN_ENTRIES,
    LOCK_NAME,
    UNKNOWN,
    LeaseHeartbeat,
    LeaseState,
    fenced,
    lock_path,
)
from maestro.messages import CLEAR_LEASE
from maestro.util.clock import utc_stamp

MAX_BREAKS = 2


class WriteLease:
    def __init__(self, git_dir: str, *, writers, digest, emit, log_dispatch=None, session=None,
                 clock=time.time, sleep=time.sleep, wait_budget=0.0, wait_poll=5.0,
                 heartbeat_interval=20.0, heartbeat_stale=90.0, init_grace=5.0, baseline=None,
                 should_stop=lambda: False, heartbeat=None, release_writers=None):
        self.git_dir = git_dir
        self.lock = claimlib.LockDir(lock_path(git_dir))
        self.writers = writers
        # Release is the clean-up a stop request asks for: its liveness check must not be cut short by
        # that request (an unknown answer retains the lease and turns INTERRUPTED into BLOCKED).
        self.release_writers = release_writers or writers
        self.digest = digest
        self.emit = emit
        self.log_dispatch = log_dispatch  # (kind, job, session, before, after) -> None
        self.baseline = baseline  # (digest) -> None: provenance baseline check after acquisition
        self.session = session or identity.session_id()
        self.clock = clock
        self.sleep = sleep
        self.wait_budget = wait_budget
        self.wait_poll = wait_poll
        self.heartbeat = heartbeat or LeaseHeartbeat(git_dir, interval=heartbeat_interval, clock=clock)
        self.heartbeat_stale = heartbeat_stale
        self.init_grace = init_grace
        self.should_stop = should_stop
        self.token = ""
        self.identity = ""
        self.metadata = {}
        self.acquired = False
        self.retained = ""  # why release() must keep the lease although no poison is on disk ('' = it may release)
        self.waiting_on = ""  # what keeps a dead owner's lease besides its owner (a live ledger worker), for messages

    # -- helpers -----------------------------------------------------------------------------
    def _where(self) -> str:
        return f"lock: {self.lock.path}"

    def _wait_summary(self, started: float) -> str:
        return f"wait_budget={self.wait_budget:g}s wait_elapsed={int(self.clock() - started)}s"

    def _fenced(self) -> bool:
        """Is the lock on disk still exactly the one this process acquired?"""
        return self.acquired and fenced(self.lock, self.token, self.identity)

    def _publish(self, fields: dict) -> None:
        self.lock.write_record("metadata", fields, self.token)
        self.metadata = dict(fields)

    # -- acquisition ---------------------------------------------------------------------------
    def acquire(self) -> int:
        started = self.clock()
        breaks = 0
        last_progress = None
        init_waits = 0
        while True:
            created = self._try_create()
            if created is not None:
                return created
            state = LeaseState(self.lock, self.clock)
            if not self.lock.exists():
                continue  # retired between our mkdir and our look: try again
            verdict = self._judge(state, started)
            if verdict == "initializing":
                if init_waits < 3 and state.age < self.init_grace:
                    init_waits += 1
                    self.sleep(min(1.0, max(self.init_grace - state.age, 0.01)))
                    continue
                self.emit(f"MAESTRO_LOCK: write dispatch blocked by an initializing owner (job=unknown "
                          f"session=unknown pid=unknown held=unknown; {self._wait_summary(started)}; {self._where()}). "
                          f"If it stays that way, recover with: {CLEAR_LEASE}")
                return Exit.BLOCKED
            if verdict == "reclaim":
                if breaks >= MAX_BREAKS:
                    self.emit(f"MAESTRO_LOCK: write dispatch blocked by a competing acquirer (job=unknown session=unknown "
                              f"pid=unknown held=unknown; {self._wait_summary(started)}; {self._where()})")
                    return Exit.BLOCKED
                breaks += 1
                if self._reclaim(state) is None:
                    return Exit.BLOCKED
                continue
            if verdict == "wait":
                remaining = self.wait_budget - (self.clock() - started)
                if remaining > 0 and self.wait_poll > 0:
                    now = self.clock()
                    if last_progress is None or now - last_progress >= 30:
                        last_progress = now
                        self.emit(f"MAESTRO_LOCK: waiting for the write lease held by job={state.owner('job_id')} "
                                  f"session={state.owner('session_id')} — {int(remaining)}s left before blocking "
                                  f"({self._where()}); arrival order is not guaranteed")
                    self.sleep(min(self.wait_poll, remaining))
                    if self.should_stop():
                        self.emit(f"MAESTRO_LOCK: interrupted while waiting for the write lease; the owner's lease "
                                  f"is untouched ({self._where()})")
                        return Exit.FAILED
                    continue
                self.emit(self._held_message(state, started) + self.waiting_on)
                return Exit.BLOCKED
            self.emit(verdict)  # a final blocking message
            return Exit.BLOCKED

    def _try_create(self):
        token = claimlib.new_token()
        now = self.clock()
        start = identity.process_start(os.getpid())
        fields = {
            "token": token, "generation": "", "pid": str(os.getpid()), "process_start": start, "job_id": UNKNOWN,
            "session_id": self.session, "started_at": utc_stamp(now), "started_epoch": str(int(now)),
            "digest_before": "unavailable",
        }
        try:
            with self._claim():
                new_identity = self.lock.create(lambda generation: {"metadata": dict(fields, generation=generation)})
                if new_identity is None:
                    return None
                self.token, self.identity, self.acquired = token, new_identity, True
                self.heartbeat.arm(token, new_identity)
                self.metadata = dict(fields, generation=claimlib.LockDir.generation_of(new_identity))
        except claimlib.ClaimBusy:
            return None
        except OSError as exc:
            self.emit(f"MAESTRO_LOCK: could not create write lock at {self.lock.path} ({exc.strerror or exc})")
            return Exit.USAGE
        if start == identity.UNAVAILABLE:
            self.emit(f"MAESTRO_LOCK: process start identity unavailable for pid={os.getpid()}; lease recorded "
                      "without it (stale-owner recovery will fail closed)")
        before = self.digest()
        if before == "unavailable":
            self.emit(f"MAESTRO_LOCK: repository digest could not be recorded; lease retains digest_before=unavailable "
                      f"({self._where()})")
        elif self._fenced():
            with self._claim():
                self._publish(dict(self.metadata, digest_before=before))
        if self.baseline is not None:
            self.baseline(before)
        self.heartbeat.beat(force=True)
        return Exit.OK

    def _held_message(self, state: LeaseState, started: float) -> str:
        held = f"{int(state.age)}s"
        started_epoch = state.owner("started_epoch", "")
        if started_epoch.isdigit():
            held = f"{max(0, int(self.clock()) - int(started_epoch))}s"
        beat = state.heartbeat_epoch()
        note = ""
        if beat is not None and self.heartbeat_stale:
            age = max(0, int(self.clock()) - beat)
            note = (f"; heartbeat is stale (last tick {age}s ago) — the owner may be wedged; check `status` and, if no "
                    f"Codex job is writing, recover with: {CLEAR_LEASE}" if age > self.heartbeat_stale
                    else f"; heartbeat is fresh (last tick {age}s ago)")
        return (f"MAESTRO_LOCK: write dispatch blocked; held by job={state.owner('job_id')} "
                f"session={state.owner('session_id')} pid={state.owner('pid')} for {held} (lease_age={held}; "
                f"{self._wait_summary(started)}; {self._where()}){note}")

    def _judge(self, state: LeaseState, started: float) -> str:
        """'wait', 'reclaim', 'initializing', or a final blocking message."""
        self.waiting_on = ""
        if state.poisoned and not state.problem:
            poison = state.poison
            return (f"MAESTRO_LOCK: write dispatch blocked; quiescence is unconfirmed for "
                    f"job={poison.get('unconfirmed_job') or UNKNOWN} session={poison.get('session_id') or UNKNOWN} "
                    f"reason={poison.get('unconfirmed_reason') or UNKNOWN} ({self._where()}). Clear it once no Codex "
                    f"job is writing: {CLEAR_LEASE}")
        if state.identity is None:
            return (f"MAESTRO_LOCK: write lease generation identity is unavailable; failing closed ({self._where()}). "
                    f"If no maestro or Codex job is writing, recover with: {CLEAR_LEASE}")
        if state.problem:
            return (f"MAESTRO_LOCK: write lease metadata is malformed or belongs to another generation; owner cannot "
                    f"be identified; failing closed ({self._where()}). If no Codex job is writing, recover with: "
                    f"{CLEAR_LEASE}")
        if state.metadata is None:
            return "initializing"
        owner = identity.owner_state(int(state.owner("pid", "0")), state.owner("process_start", ""))
        if owner == identity.ALIVE_CONFIRMED:
            return "wait"
        if owner == identity.ALIVE_UNCONFIRMED:
            return self._held_message(state, started) + " (identity unconfirmed; failing closed)"
        writers = self.writers()
        job = state.owner("job_id")
        who = f"job={job} session={state.owner('session_id')} pid={state.owner('pid')}"
        if writers is None:
            return (f"MAESTRO_LOCK: dispatcher is gone but job liveness could not be determined; write lock retained "
                    f"({who}, {self._where()})")
        if job != UNKNOWN and job in writers:
            return "wait" if self.wait_budget > 0 else (
                f"MAESTRO_LOCK: write dispatch blocked; lease retained because orphaned job={job} "
                f"session={state.owner('session_id')} is still running ({self._wait_summary(started)}; {self._where()})")
        if job == UNKNOWN and any(writers.values()):
            return "wait" if self.wait_budget > 0 else (
                f"MAESTRO_LOCK: write dispatch blocked; lease retained because an unidentified write-capable job is "
                f"still running (session={state.owner('session_id')}; {self._wait_summary(started)}; {self._where()})")
        ledger_job = live_worker(self.git_dir)  # the companion's table may have lost a job that still writes
        if ledger_job is not None:
            self.waiting_on = f"; lease retained because {describe_live(ledger_job, self.git_dir)}"
            return "wait" if self.wait_budget > 0 else (
                f"MAESTRO_LOCK: write dispatch blocked; lease retained because {describe_live(ledger_job, self.git_dir)} "
                f"({who}; {self._wait_summary(started)}; {self._where()})")
        return "reclaim"

    def _reclaim(self, seen: LeaseState):
        """Retire a dead owner's lease (under the claim, after re-verifying it is the same lease)."""
        try:
            with self._claim():
                again = LeaseState(self.lock, self.clock)
                if again.identity != seen.identity or again.metadata != seen.metadata or again.poisoned:
                    return True  # it changed under us: look again
                after = self.digest()
                before = seen.owner("digest_before", "unavailable")
                if before.startswith("tree-v3:") and after.startswith("tree-v3:") and before != after:
                    self.emit(f"PROVENANCE: ADOPTED UNOBSERVED INTERVAL — the dead owner's job={seen.owner('job_id')} "
                              f"changed the tree (before={before}, after={after}); author unknown")
                if self.log_dispatch is not None:
                    self.log_dispatch("orphan-adopted", seen.owner("job_id"), seen.owner("session_id"), before, after)
                warning = self.lock.retire()
        except claimlib.ClaimBusy:
            return True
        except OSError as exc:
            self.emit(f"MAESTRO_LOCK: could not retire the stale write lock ({exc.strerror or exc}); {self._where()}")
            return None
        if warning:
            self.emit(warning)
        self.emit(f"MAESTRO_LOCK: broke stale write lock held by job={seen.owner('job_id')} "
                  f"session={seen.owner('session_id')} pid={seen.owner('pid')}")
        return True

    # -- while holding -------------------------------------------------------------------------
    def guard(self) -> bool:
        """Ownership + not poisoned: checked right before every dispatch."""
        if not self._fenced():
            return False
        try:
            return self.lock.read_record("metadata.new") is None
        except (OSError, ValueError):
            return False

    def publish_job(self, job: str) -> bool:
        try:
            with self._claim():
                if not self.guard():
                    self.emit("MAESTRO_LOCK: this lease is no longer held by this process; job update skipped")
                    return False
                self._publish(dict(self.metadata, job_id=job))
                return True
        except (claimlib.ClaimBusy, OSError):
            self.emit(f"MAESTRO_LOCK: this lease changed while publishing job={job}; job update rejected")
            return False

    def _claim(self, timeout: float = 2.0):
        return claimlib.claim(self.lock.parent, timeout)

    def stage_poison(self, job: str, reason: str) -> bool:
        """Mark quiescence unconfirmed BEFORE any cancel is sent (spec §1.5). True when staged."""
        try:
            with self._claim():
                if not self._fenced():
                    self.emit("MAESTRO_LOCK: this lease is no longer held by this process; poison not staged")
                    return False
                staged = dict(self.metadata, quiescence="unconfirmed", unconfirmed_job=job or UNKNOWN,
                              unconfirmed_reason=reason)
                self.lock.write_record("metadata.new", staged, self.token)
                return True
        except (claimlib.ClaimBusy, OSError) as exc:
            self.emit(f"MAESTRO_LOCK: poison could not be staged ({exc}); retaining fail-closed state")
            return False

    def promote_poison(self) -> bool:
        try:
            with self._claim():
                if self.lock.identity() != self.identity:
                    return False
                self.lock.rename("metadata.new", "metadata")
                return True
        except (claimlib.ClaimBusy, OSError):
            return False

    def retain(self, reason: str) -> None:
        """Keep the lease at release although no poison could be written: a job may still be writing
        (e.g. poison staging failed before its cancel). Recovery is `loop --clear-lease` once nothing writes."""
        self.retained = reason

    # -- release -------------------------------------------------------------------------------
    def release(self) -> int:
        """0 released, 11 retained (poisoned, retained by `retain`, job still running, unknown state, or not ours)."""
        if not self.acquired:
            return Exit.OK
        where = self._where()
        if self.retained:
            self.emit(f"MAESTRO_LOCK: write lease retained because {self.retained} ({where}). Once no Codex job is "
                      f"writing, recover with: {CLEAR_LEASE}")
            return Exit.BLOCKED
        if self.lock.identity() != self.identity:
            self.emit("MAESTRO_LOCK: lease generation changed before release; releasing nothing")
            return Exit.BLOCKED
        state = LeaseState(self.lock, self.clock)
        if state.problem or (state.metadata or {}).get("token") != self.token:
            self.emit("MAESTRO_LOCK: this lease is no longer held by this process; releasing nothing")
            return Exit.BLOCKED
        job = state.owner("job_id")
        if state.poisoned:
            poison = state.poison
            self.emit(f"MAESTRO_LOCK: write lease retained because quiescence was never confirmed "
                      f"(job={poison.get('unconfirmed_job') or job} session={state.owner('session_id')} "
                      f"reason={poison.get('unconfirmed_reason') or UNKNOWN}, {where})")
            return Exit.BLOCKED
        if job != UNKNOWN:
            writers = self.release_writers()
            if writers is None:
                self.emit(f"MAESTRO_LOCK: job liveness could not be determined; write lease retained (job={job} "
                          f"session={state.owner('session_id')}, {where})")
                return Exit.BLOCKED
            if job in writers:
                self.emit(f"MAESTRO_LOCK: write lease retained because job {job} session={state.owner('session_id')} "
                          f"is still running; a later dispatch will resolve it ({where})")
                return Exit.BLOCKED
        after = self.digest()
        try:
            with self._claim():
                again = LeaseState(self.lock, self.clock)
                if again.identity != self.identity or (again.metadata or {}).get("token") != self.token:
                    self.emit("MAESTRO_LOCK: lease token changed during release; retaining the lock")
                    return Exit.BLOCKED
                if again.poisoned:
                    self.emit(f"MAESTRO_LOCK: write lease retained because cancellation poison arrived during release ({where})")
                    return Exit.BLOCKED
                unknown = [name for name in self.lock.entries()
                           if name not in KNOWN_ENTRIES and ".tmp." not in name]
                if unknown:
                    self.emit(f"MAESTRO_LOCK: write lease retained because its directory contains an unrecognized "
                              f"entry ({unknown[0]})")
                    return Exit.BLOCKED
                if self.log_dispatch is not None and job != UNKNOWN:
                    self.log_dispatch("dispatch", job, state.owner("session_id"),
                                      state.owner("digest_before", "unavailable"), after)
                warning = self.lock.retire()
        except (claimlib.ClaimBusy, OSError) as exc:
            self.emit(f"MAESTRO_LOCK: lease release failed ({exc}); retaining the lock")
            return Exit.BLOCKED
        self.acquired = False
        self.heartbeat.disarm()
        if warning:
            self.emit(warning)
        return Exit.OK

