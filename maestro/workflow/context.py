"""Everything a write adapter needs, wired from the environment: scope, companion transport,
write lease, job-lock factory, provenance hooks and validated knobs. One place, so `loop`,
`watchdog` and `status` agree on paths and budgets.

The object graph is built bottom-up, each part from parts that already exist: the lease's
heartbeat first, then the companion transport that beats it during every call, then the run's
provenance (tree digests, baseline, dispatch log) that beats it while hashing, and last the lease
that is handed all of them. Nothing is wired by assigning to an object after it is built."""

import functools
import os
import time

from maestro import knobs, messages
from maestro.util import git as gitscope
from maestro.util import progress
from maestro.util import signals as signal_state
from maestro.errors import Exit, MaestroError


def repository(scope: str, purpose: str):
    """(scope root, per-worktree git dir), or MaestroError rc 3 outside git."""
    root = gitscope.scope_root()
    if root is None:
        raise MaestroError(f"{scope}_ERROR: not inside a git repository; {purpose}", Exit.USAGE)
    return root, gitscope.git_dir(root)


# The user's own broker, as the plugin's hooks export it to the session: inherited, these would send
# maestro's task calls to the user's broker (and its SessionEnd) instead of maestro's own.
USER_BROKER_VARS = ("CODEX_COMPANION_APP_SERVER_ENDPOINT", "CODEX_COMPANION_APP_SERVER_PID_FILE",
                    "CODEX_COMPANION_APP_SERVER_LOG_FILE")


def companion_env(data: str) -> dict:
    """The environment of maestro's companion calls: CLAUDE_PLUGIN_DATA = maestro's data directory `data`,
    without the user's broker variables."""
    env = {key: value for key, value in os.environ.items() if key not in USER_BROKER_VARS}
    env["CLAUDE_PLUGIN_DATA"] = data
    return env


def companion_transport(scope: str, emit, should_stop=None, pause=None, tick=None, root=None, git_dir=None):
    """A bounded Transport to the discovered companion, or MaestroError rc 3 when there is none.
    `tick` (the write lease's heartbeat) runs while each companion call is waited on.

    Every call runs in the workspace root `root` (default: this repository's) with
    CLAUDE_PLUGIN_DATA = maestro's private data directory for that root (codex/plugin_data.py),
    so the user's own Claude session never shares a job table or a broker with maestro; the jobs
    it launches are recorded in the job ledger under `git_dir` (locks/job_ledger.py)."""
    from maestro.codex import plugin_data
    from maestro.codex.companion import Transport
    from maestro.codex.discovery import find_companion
    from maestro.locks.job_ledger import JobJournal

    companion = find_companion()
    if companion is None:
        raise MaestroError(
            f"{scope}_ERROR: no Codex companion found (install the Codex plugin in Claude Code: "
            f"{messages.CODEX_PLUGIN}; or set MAESTRO_COMPANION)", Exit.USAGE)
    if root is None:
        root, git_dir = repository(scope, "Codex jobs run in the repository's workspace")
    data = plugin_data.ensure_data_dir(root)
    stall = knobs.queued_stall()
    if stall.warning:
        emit(stall.warning)
    user_data = os.environ.get("CLAUDE_PLUGIN_DATA", "")  # the user's session's own, when it exported one
    journal = JobJournal(git_dir, root=root, data_dir=data, emit=emit, queued_stall=stall.value,
                         session=os.environ.get("CODEX_COMPANION_SESSION_ID", ""))
    return Transport(companion.argv(), cwd=root, emit=emit, call_timeout=knobs.companion_timeout().value,
                     should_stop=should_stop, pause=pause, tick=tick,
                     env=companion_env(data), journal=journal,
                     job_record=functools.partial(plugin_data.job_record, data, root),
                     user_data="" if user_data == data else user_data)


class RunProvenance:
    """The provenance the write lease consults during one run, bound to this worktree: the tree
    digest it records (keeping the per-path records of the first and the latest observed digest, so
    that the run's outcome can name the files changed in between), the baseline check after
    acquisition, and the dispatch log."""

    def __init__(self, root: str, git_dir: str, session: str, *, emit, tick, should_stop):
        self.root = root
        self.git_dir = git_dir
        self.session = session
        self.emit = emit
        self.tick = tick  # the lease's heartbeat, kept going while a big tree is hashed
        self.should_stop = should_stop
        self.first_entries = self.last_entries = None

    def digest(self) -> str:
        from maestro.provenance import digest as provenance

        entries = {}
        value = provenance.digest_or_unavailable(self.root, emit=self.emit, tick=self.tick,
                                                 should_stop=self.should_stop, entries=entries)
        if provenance.is_observed(value):
            if self.first_entries is None:
                self.first_entries = entries
            self.last_entries = entries
        return value

    def files_changed(self):
        """Paths whose digest record differs between the first and the latest digest of this run
        (None when fewer than two digests were observed)."""
        if self.first_entries is None or self.last_entries is self.first_entries:
            return None
        before, after = self.first_entries, self.last_entries
        return sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))

    def log_dispatch(self, kind, job, session, before, after) -> None:
        from maestro.provenance import log as provenance_log

        provenance_log.log_dispatch(self.git_dir, kind, job, session, before, after)

    def baseline(self, digest: str) -> None:
        from maestro.provenance import log as provenance_log

        provenance_log.baseline_check(self.root, self.git_dir, digest, self.session, emit=self.emit)


def _writers_unknown():
    return None


class WriteContext:
    def __init__(self, scope: str, *, need_companion: bool = True):
        from maestro.locks import identity
        from maestro.locks.lease import WriteLease
        from maestro.locks.lease_state import LeaseHeartbeat

        self.emit = progress.emit
        for knob in (knobs.lock_wait(), knobs.lock_wait_poll(), knobs.heartbeat_interval(), knobs.heartbeat_stale(),
                     knobs.companion_timeout(), knobs.max_dispatch(write=True), knobs.verify_timeout()):
            if knob.warning:
                self.emit(knob.warning)
        self.root, self.git_dir = repository(scope, "maestro dispatches writes only in git")
        self.signals = signal_state
        self.heartbeat = LeaseHeartbeat(self.git_dir, interval=knobs.heartbeat_interval().value)
        self.transport = None
        if need_companion:
            self.transport = companion_transport(scope, self.emit, signal_state.stop_requested, signal_state.pause,
                                                 tick=self.heartbeat.beat, root=self.root, git_dir=self.git_dir)
        self.session = identity.session_id()
        self.provenance = RunProvenance(self.root, self.git_dir, self.session, emit=self.emit,
                                        tick=self.heartbeat.beat, should_stop=signal_state.stop_requested)
        from maestro.provenance.checkpoint import Checkpointer

        self.checkpoints = Checkpointer(self.root, self.git_dir, self.session, emit=self.emit,
                                        files_changed=self.provenance.files_changed)
        self.lease = WriteLease(
            self.git_dir, writers=self.transport.global_writers if self.transport is not None else _writers_unknown,
            release_writers=(functools.partial(self.transport.global_writers, interruptible=False)
                             if self.transport is not None else _writers_unknown),
            digest=self.provenance.digest, emit=self.emit, log_dispatch=self.provenance.log_dispatch,
            baseline=self.provenance.baseline, session=self.session, heartbeat=self.heartbeat,
            wait_budget=knobs.lock_wait().value, wait_poll=knobs.lock_wait_poll().value,
            heartbeat_stale=knobs.heartbeat_stale().value, init_grace=knobs.initializing_grace().value,
            should_stop=signal_state.stop_requested, sleep=signal_state.pause,
        )

    def writers(self):
        return self.transport.global_writers() if self.transport is not None else None

    def files_changed(self):
        """Paths changed between the first and the latest tree digest of this run (or None)."""
        return self.provenance.files_changed()

    def joblock(self, job_class: str):
        from maestro.locks.joblock import JobLock

        return JobLock(
            self.git_dir, job_class, job_status=self.transport.job_status, emit=self.emit, writers=self.writers,
            session=self.session, wait_budget=knobs.lock_wait().value,
            wait_poll=knobs.lock_wait_poll(for_job_lock=True).value, init_grace=knobs.initializing_grace().value,
            should_stop=self.signals.stop_requested, sleep=self.signals.pause,
        )

    def write_turn(self, max_idle: float, poll: float):
        from maestro.workflow.turn import WriteTurn
        from maestro.codex.pins import read_pins

        return WriteTurn(
            lease=self.lease, joblock_factory=self.joblock, transport=self.transport, pins=read_pins(), emit=self.emit,
            signals=self.signals, max_idle=max_idle, poll=poll, max_total=knobs.max_dispatch(write=True).value,
            clock=time.monotonic, retry_sleep=knobs.retry_sleep().value, checkpoint=self.checkpoints.take,
        )
