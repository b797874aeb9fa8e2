"""maestro's own job ledger `<git-dir>/maestro-jobs/` (issue 12 §1.2–3): what maestro launched.

The companion's job table is an unlocked read-modify-write file that loses concurrent jobs and
answers "No job found" for a job still running, and its SessionEnd hook deletes a session's jobs
from it. So `status`, `loop --clear-lease` and recovery never depend on that table alone: every
job maestro launches gets one small JSON file here (directory 0700, files 0600, atomic writes):
id, kind (read/write), companion session, worker pid and that process's start time (first seen
alive, so a reused pid is told apart), log path, lease generation, launch time, the companion
data directory and workspace it ran in, and how it ended.

`JobJournal` is what one run's companion transport reports to (launch, each poll, the end). At
every poll it also judges the job's worker (issue 12 §1.3): a worker pid that is gone, or now
belongs to another process (start time changed), on two polls in a row ends the wait as
`worker-dead` (a live worker whose start time cannot be read is not dead; a pid is stored only with
a confirmed start time, so a reused pid is never mistaken for the worker later); a job still
`queued` — its phase too, and no log growth — after MAESTRO_QUEUED_STALL_SEC ends it as `queued-stall`.
"""

import json
import os
import re
import time

from maestro.locks import identity
from maestro.util.atomic import NotPrivate, NotRegular, ensure_private_dir, read_regular, write_atomic
from maestro.util.clock import utc_stamp

LEDGER_NAME = "maestro-jobs"
KEEP = 50  # newest entries kept; older ones are pruned at each launch
ENTRY_LIMIT = 65536
DEAD_POLLS = 2  # a worker seen gone on this many polls in a row is dead (one could race its job's end)
_JOB = re.compile(r"[a-z][a-z0-9-]{0,127}")
ACTIVE_STATES = ("launched", "queued", "running")
# A job in one of these may still have a worker writing: a poisoned one's end was never confirmed.
UNFINISHED_STATES = ACTIVE_STATES + ("poisoned",)


def ledger_dir(git_dir: str) -> str:
    return os.path.join(git_dir, LEDGER_NAME)


class JobLedger:
    def __init__(self, git_dir: str, clock=time.time):
        self.dir = ledger_dir(git_dir)
        self.clock = clock

    def path(self, job: str) -> str:
        return os.path.join(self.dir, f"{job}.json")

    def read(self, job: str):
        """The job's entry, or None (unknown id, absent, unreadable, a symlink or not an object)."""
        if not _JOB.fullmatch(job or ""):
            return None
        try:
            raw = read_regular(self.path(job), ENTRY_LIMIT)
            value = json.loads(raw) if raw is not None else None
        except (NotRegular, OSError, ValueError):
            return None
        return value if isinstance(value, dict) and value.get("id") == job else None

    def entries(self) -> list:
        """Every readable entry, newest launch first."""
        try:
            names = os.listdir(self.dir)
        except OSError:
            return []
        found = [self.read(name[:-5]) for name in names if name.endswith(".json") and not name.startswith(".")]
        return sorted((e for e in found if e), key=lambda e: e.get("launched_epoch") or 0, reverse=True)

    def active(self) -> list:
        """Entries whose end maestro never saw."""
        return [e for e in self.entries() if e.get("state") in ACTIVE_STATES]

    def write(self, entry: dict) -> bool:
        """Store `entry` (atomically, 0600, in a private directory). False when it could not be written."""
        if not _JOB.fullmatch(entry.get("id") or ""):
            return False
        try:
            ensure_private_dir(self.dir)
            write_atomic(self.path(entry["id"]), (json.dumps(entry, indent=1, sort_keys=True) + "\n").encode("utf-8"),
                         durable=False)
        except (NotPrivate, OSError):
            return False
        return True

    def update(self, job: str, **fields) -> bool:
        entry = self.read(job)
        if entry is None:
            return False
        entry.update(fields, updated_at=utc_stamp(self.clock()))
        return self.write(entry)

    def prune(self) -> None:
        """Drop entries beyond the newest KEEP, but never an unfinished one: it is what recovery
        (`live_worker`) and `status` consult about a worker that may still be writing."""
        for stale in self.entries()[KEEP:]:
            if stale.get("state") in UNFINISHED_STATES:
                continue
            try:
                os.unlink(self.path(stale["id"]))
            except OSError:
                pass


def lease_generation(git_dir: str) -> str:
    """The write lease's current generation ('' when there is none): which lease a write job ran under."""
    from maestro.locks import lockdir
    from maestro.locks.lease_state import lock_path

    ident = lockdir.LockDir(lock_path(git_dir)).identity()
    return lockdir.LockDir.generation_of(ident) if ident else ""


def worker_state(entry: dict) -> str:
    """identity.DEAD / ALIVE_CONFIRMED / ALIVE_UNCONFIRMED for an entry's worker, or '' when none is known."""
    pid = entry.get("worker_pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return ""
    return identity.owner_state(pid, entry.get("worker_start") or "")


def live_worker(git_dir: str, *, write_only: bool = True, ledger=None):
    """The newest unfinished ledger entry (of a write job, unless `write_only` is False) whose worker
    still runs, or None. Every lock recovery and `--clear-lease` asks this before it retires a lock,
    so none depends on the companion's job table alone (issue 12 §1.2).

    Only an entry that recorded its worker's start time counts (the journal stores a pid only with a
    confirmed one): without it a reused pid would block recovery forever. An entry that ended as
    worker-dead was already seen dead: a live process under its pid now is someone else's. A worker
    alive under the recorded pid whose start time cannot be read now fails closed, as a lock owner does."""
    for entry in (ledger or JobLedger(git_dir)).entries():
        if entry.get("state") not in UNFINISHED_STATES or entry.get("reason") == "worker-dead":
            continue
        if write_only and entry.get("kind") != "write":
            continue
        recorded = entry.get("worker_start")
        if not isinstance(recorded, str) or not recorded.strip() or recorded == identity.UNAVAILABLE:
            continue
        if worker_state(entry) in (identity.ALIVE_CONFIRMED, identity.ALIVE_UNCONFIRMED):
            return entry
    return None


def describe_live(entry: dict, git_dir: str) -> str:
    """How a refusal names a live ledger worker: the job, its pid, and where to look (the entry's file,
    which a person may remove once sure the process is not Codex's)."""
    return (f"maestro's job ledger shows {entry.get('kind') or 'unknown'} job={entry['id']} whose Codex worker "
            f"(pid {entry.get('worker_pid')}) is still running, even if the companion's job table no longer lists it "
            f"(log {entry.get('log_file') or 'unknown'}; companion data dir {entry.get('data_dir') or 'unknown'}; "
            f"ledger entry {JobLedger(git_dir).path(entry['id'])})")


def _restarted(current: str, recorded: str) -> bool:
    """The pid's process started at another time than the one first seen: a reused pid."""
    return current != identity.UNAVAILABLE and not identity.same_start(current, recorded)


class JobJournal:
    """One run's reporter into the ledger, and the judge of its jobs' workers (see the module doc)."""

    def __init__(self, git_dir: str, *, root: str, data_dir: str, emit, queued_stall: float, session: str = "",
                 clock=time.monotonic, wall=time.time, process_start=identity.process_start, alive=identity.running):
        self.git_dir = git_dir
        self.ledger = JobLedger(git_dir, wall)
        self.root, self.data_dir, self.emit = root, data_dir, emit
        self.queued_stall = queued_stall
        self.session = session
        self.clock, self.wall = clock, wall
        self.process_start = process_start
        self.alive = alive  # the pid names a process that has not exited (a zombie has)
        self.watch = {}  # job -> what the polls have seen of it

    def launched(self, job: str, *, write: bool) -> None:
        now = self.wall()
        entry = {"id": job, "kind": "write" if write else "read", "companion_session": self.session,
                 "worker_pid": None, "worker_start": "", "log_file": "",
                 "lease_generation": lease_generation(self.git_dir) if write else "",
                 "launched_at": utc_stamp(now), "launched_epoch": int(now), "updated_at": utc_stamp(now),
                 "data_dir": self.data_dir, "root": self.root, "state": "launched", "reason": ""}
        if not self.ledger.write(entry):
            self.emit(f"MAESTRO_LEDGER: could not record job={job} in {self.ledger.dir}; status will rely on the "
                      "companion's table for it")
        self.ledger.prune()

    def observe(self, job: str, state: str, pid, log_file: str = "", *, phase: str = "",
                progressed: bool = False) -> str:
        """'' while the job looks alive; 'worker-dead' or 'queued-stall' (after telling why) when not.
        `progressed`: the job's log grew (or it showed new progress) since the last poll."""
        seen = self.watch.setdefault(job, {"pid": None, "start": "", "dead": 0, "queued_since": None,
                                           "state": "", "log": ""})
        changes = {}
        if state != seen["state"] and state in ("queued", "running"):
            seen["state"] = changes["state"] = state
        if log_file and log_file != seen["log"]:
            seen["log"] = changes["log_file"] = log_file
        # The launcher may write `queued` after its worker's `running`, and progress never fixes the
        # status: a job whose phase moved on, or whose log grows, runs whatever its status says.
        if state == "queued" and phase in ("", "queued") and not progressed:
            if seen["queued_since"] is None:
                seen["queued_since"] = self.clock()
            elif self.clock() - seen["queued_since"] >= self.queued_stall:
                self.emit(f"MAESTRO_POLL: job={job} is still queued after {self.queued_stall:g}s "
                          "(MAESTRO_QUEUED_STALL_SEC); its worker never started — treating it as stalled")
                return self._end(job, "queued-stall", changes)
        else:
            seen["queued_since"] = None
        problem = self._judge_worker(job, seen, pid, changes)
        if changes:
            self.ledger.update(job, **changes)
        return problem

    def _judge_worker(self, job: str, seen: dict, pid, changes: dict) -> str:
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
            seen["dead"] = 0
            return ""
        if not self.alive(pid):
            seen["dead"] += 1  # gone (or a zombie); one sighting could race the job's own end
        elif pid != seen["pid"]:
            seen["dead"] = 0
            start = self.process_start(pid)
            if start != identity.UNAVAILABLE:  # only a confirmed start time tells a later reuse of the pid apart
                seen.update(pid=pid, start=start)
                changes.update(worker_pid=pid, worker_start=start)
        elif _restarted(self.process_start(pid), seen["start"]):
            seen["dead"] += 1  # the pid now names a process started at another time
        else:
            seen["dead"] = 0  # alive; an unreadable start time is not a death (as identity.owner_state)
        if seen["dead"] < DEAD_POLLS:
            return ""
        self.emit(f"MAESTRO_POLL: the Codex worker of job={job} (pid {pid}) died: the process is gone or its pid now "
                  f"belongs to another process, while the companion still reports the job {seen['state'] or 'active'}"
                  "; ending the wait now instead of after --max-idle")
        return self._end(job, "worker-dead", changes)

    def _end(self, job: str, reason: str, changes: dict) -> str:
        self.ended(job, "abandoned", reason=reason, **changes)
        changes.clear()
        return reason

    def ended(self, job: str, state: str, **fields) -> None:
        """Record how the job ended for maestro (completed/failed/cancelled/abandoned/quota …)."""
        self.ledger.update(job, state=state, **fields)
