"""The companion job lock `<git-dir>/maestro-job-lock/` (spec §2.4): one Codex job per workspace.

The companion keeps its job table in an unlocked read-modify-write JSON file, so two jobs
launched into one workspace at once can clobber each other's records. Every companion job — read
or write — therefore runs under this lock, from before the `--help` probe until its result (or
cancel) is in. A holder that died is replaced only once its job is known to be terminal and
maestro's own job ledger shows no job whose worker still runs (job_ledger.live_worker: the
companion's table may have lost a running job).
Unlike the original (`kill -0` only), liveness also compares the process start time, so a
reused pid does not keep a dead holder's lock alive forever.
"""

import os
import time

from maestro.errors import Exit
from maestro.locks import lockdir as claimlib
from maestro.locks import identity
from maestro.locks.job_ledger import describe_live, live_worker
from maestro.messages import CLEAR_JOB_LOCK

LOCK_NAME = "maestro-job-lock"
RECOVER = f"Recover with: {CLEAR_JOB_LOCK}"
UNKNOWN = "unknown"


def lock_path(git_dir: str) -> str:
    return os.path.join(git_dir, LOCK_NAME)


def read_holder(lock: claimlib.LockDir):
    """(identity, metadata or None, problem)."""
    ident = lock.identity()
    try:
        record = lock.read_record("metadata")
    except (OSError, ValueError) as exc:
        return ident, None, f"malformed ({exc})"
    if record is None:
        return ident, None, ""
    if (ident is None or record.get("generation") != claimlib.LockDir.generation_of(ident)
            or not claimlib.is_token(record.get("token")) or not record.get("pid", "").isdigit()
            or record.get("class") not in ("read", "write")):
        return ident, record, "malformed or belongs to another generation"
    return ident, record, ""


def holder_alive(record: dict) -> bool:
    """identity's one judgement (a zombie has exited; a reused pid is another process). A record of
    the original Maestro has no start time: then only `running` (kill -0, not a zombie) can tell."""
    return not identity.owner_gone(record["pid"], record.get("process_start", ""))


class JobLock:
    def __init__(self, git_dir: str, job_class: str, *, job_status, emit, writers=lambda: None, session=None,
                 clock=time.time, sleep=time.sleep, wait_budget=0.0, wait_poll=1.0, init_grace=5.0,
                 should_stop=lambda: False):
        self.git_dir = git_dir
        self.lock = claimlib.LockDir(lock_path(git_dir))
        self.job_class = job_class
        self.job_status = job_status  # (job) -> 'running' | 'terminal' | None (unknown)
        self.writers = writers  # () -> {job: write?} of running jobs, or None (unknown)
        self.emit = emit
        self.session = session or identity.session_id()
        self.clock = clock
        self.sleep = sleep
        self.wait_budget = wait_budget
        self.wait_poll = wait_poll
        self.init_grace = init_grace
        self.should_stop = should_stop
        self.token = ""
        self.identity = ""
        self.metadata = {}
        self.held = False

    def _where(self):
        return f"lock: {self.lock.path}"

    def acquire(self) -> int:
        started = self.clock()
        while True:
            verdict = self._attempt()
            if verdict == "acquired":
                return Exit.OK
            if verdict == "retry":
                continue
            if verdict.startswith("wait:"):
                remaining = self.wait_budget - (self.clock() - started)
                if remaining > 0:
                    self.emit(f"MAESTRO_JOB_LOCK: waiting for {verdict[5:]} — {int(remaining)}s left before blocking "
                              f"({self._where()})")
                    self.sleep(min(self.wait_poll, remaining))
                    if self.should_stop():
                        self.emit(f"MAESTRO_JOB_LOCK: interrupted while waiting ({self._where()})")
                        return Exit.FAILED
                    continue
                self.emit(f"MAESTRO_JOB_LOCK: companion job lock is busy ({verdict[5:]}; {self._where()}). {RECOVER}")
                return Exit.BLOCKED
            self.emit(f"MAESTRO_JOB_LOCK: {verdict} ({self._where()}). {RECOVER}")
            return Exit.BLOCKED

    def _attempt(self) -> str:
        token = claimlib.new_token()
        try:
            with claimlib.claim(self.lock.parent, 0.5):
                fields = {"token": token, "generation": "", "pid": str(os.getpid()),
                          "process_start": identity.process_start(os.getpid()), "session": self.session,
                          "class": self.job_class, "start": str(int(self.clock()))}
                ident = self.lock.create(lambda generation: {"metadata": dict(fields, generation=generation)})
                if ident is not None:
                    self.token, self.identity, self.held = token, ident, True
                    self.metadata = dict(fields, generation=claimlib.LockDir.generation_of(ident))
                    return "acquired"
        except claimlib.ClaimBusy:
            return "wait:the generation claim gate"
        except OSError as exc:
            return f"could not create the companion job lock ({exc.strerror or exc})"
        ident, record, problem = read_holder(self.lock)
        if not self.lock.exists():
            return "retry"
        if ident is None:
            return "companion job lock identity is unavailable; failing closed"
        if record is None and not problem:
            if self.lock.age(self.clock()) < self.init_grace:
                return "wait:an initializing holder"
            return "companion job lock has no metadata; its holder cannot be identified"
        if problem:
            return f"companion job lock metadata is {problem}; failing closed"
        who = f"class={record['class']} job={record.get('job') or UNKNOWN} session={record.get('session') or UNKNOWN}"
        if holder_alive(record):
            return f"wait:{who}"
        job = record.get("job")
        if job:
            status = self.job_status(job)
            if status is None:
                return f"companion job lock holder died and job {job} cannot be checked ({who})"
            if status != "terminal":
                return f"wait:{who}"
        else:
            # It died before publishing a job id: a launch may or may not have happened. Only a
            # readable, empty list of running jobs proves nothing of its is still running.
            running = self.writers()
            if running is None:
                return f"companion job lock holder died before publishing a job, and running jobs cannot be listed ({who})"
            if running:
                return f"wait:{who} (a job it may have launched is still running)"
        ledger_job = live_worker(self.git_dir, write_only=False)  # the companion's table may have lost it
        if ledger_job is not None:
            return f"wait:{who} ({describe_live(ledger_job, self.git_dir)})"
        try:
            with claimlib.claim(self.lock.parent, 0.5):
                if read_holder(self.lock)[:2] != (ident, record):
                    return "retry"
                warning = self.lock.retire()
        except (claimlib.ClaimBusy, OSError):
            return "retry"
        if warning:
            self.emit(warning)
        self.emit(f"MAESTRO_JOB_LOCK: reclaimed the job lock of a dead holder ({who}); nothing of its is running")
        return "retry"

    def _fenced(self) -> bool:
        ident, record, problem = read_holder(self.lock)
        return self.held and not problem and ident == self.identity and (record or {}).get("token") == self.token

    def publish_job(self, job: str) -> bool:
        try:
            with claimlib.claim(self.lock.parent):
                if not self._fenced():
                    return False
                self.metadata = dict(self.metadata, job=job)
                self.lock.write_record("metadata", self.metadata, self.token)
                return True
        except (claimlib.ClaimBusy, OSError):
            return False

    def release(self) -> int:
        """0 released, 11 when the lock is no longer provably ours (a completed turn becomes BLOCKED)."""
        if not self.held:
            return Exit.OK
        try:
            with claimlib.claim(self.lock.parent):
                if not self._fenced():
                    self.emit(f"MAESTRO_JOB_LOCK: companion job lock changed under this process; release refused "
                              f"({self._where()}). {RECOVER}")
                    return Exit.BLOCKED
                warning = self.lock.retire()
        except (claimlib.ClaimBusy, OSError) as exc:
            self.emit(f"MAESTRO_JOB_LOCK: companion job lock release failed ({exc}; {self._where()}). {RECOVER}")
            return Exit.BLOCKED
        self.held = False
        if warning:
            self.emit(warning)
        return Exit.OK


def clear(git_dir: str, *, job_status, writers, emit, clock=time.time, init_grace=5.0) -> int:
    """`loop --clear-job-lock`: 0 cleared/absent, 11 refused."""
    lock = claimlib.LockDir(lock_path(git_dir))
    where = f"lock: {lock.path}"
    if not lock.exists():
        emit(f"MAESTRO_JOB_LOCK: there is no companion job lock to clear at {lock.path}")
        return Exit.OK
    ident, record, problem = read_holder(lock)
    if ident is None and (lock.age(clock()) < init_grace or not _no_writers(writers, emit, where)):
        emit(f"MAESTRO_JOB_LOCK: refusing to clear — the job lock identity is unavailable ({where})")
        return Exit.BLOCKED
    who = "class=unknown job=unknown session=unknown"
    if record is not None and not problem:
        who = f"class={record['class']} job={record.get('job') or UNKNOWN} session={record.get('session') or UNKNOWN}"
        if holder_alive(record):
            emit(f"MAESTRO_JOB_LOCK: refusing to clear — holder pid={record['pid']} is alive ({who}, {where})")
            return Exit.BLOCKED
        job = record.get("job")
        status = job_status(job) if job else None
        if status == "running":
            emit(f"MAESTRO_JOB_LOCK: refusing to clear — job {job} is still running ({who}, {where})")
            return Exit.BLOCKED
        if status is None and not _no_writers(writers, emit, where):
            return Exit.BLOCKED
    else:
        if lock.age(clock()) < init_grace:
            emit(f"MAESTRO_JOB_LOCK: refusing to clear — the job lock is new and may still be initializing ({where})")
            return Exit.BLOCKED
        if not _no_writers(writers, emit, where):
            return Exit.BLOCKED
    ledger_job = live_worker(git_dir, write_only=False)
    if ledger_job is not None:
        emit(f"MAESTRO_JOB_LOCK: refusing to clear — {describe_live(ledger_job, git_dir)}; clear once it has ended "
             f"({who}, {where})")
        return Exit.BLOCKED
    try:
        with claimlib.claim(lock.parent):
            if read_holder(lock)[:2] != (ident, record):
                emit(f"MAESTRO_JOB_LOCK: refusing to clear — the job lock changed while clearing ({where})")
                return Exit.BLOCKED
            warning = lock.retire()
    except (claimlib.ClaimBusy, OSError) as exc:
        emit(f"MAESTRO_JOB_LOCK: refusing to clear — could not claim the job lock ({exc}; {where})")
        return Exit.BLOCKED
    if warning:
        emit(warning)
    emit(f"MAESTRO_JOB_LOCK: cleared companion job lock ({who})")
    return Exit.OK


def _no_writers(writers, emit, where) -> bool:
    running = writers()
    if running is None:
        emit(f"MAESTRO_JOB_LOCK: refusing to clear — the global Codex job list is unavailable ({where})")
        return False
    if running:
        emit(f"MAESTRO_JOB_LOCK: refusing to clear — Codex job(s) still running: {', '.join(sorted(running))} ({where})")
        return False
    return True
