"""Transport to the Codex companion (spec §3): every call bounded, every answer parsed strictly.

Calls are `node <companion> <args>` (or `<python> <fake>.py` under MAESTRO_COMPANION) from the
workspace root (always: the companion derives its workspace, state directory and broker from it),
with CLAUDE_PLUGIN_DATA = maestro's own data directory (codex/plugin_data.py), each in its own
process group with a deadline (MAESTRO_COMPANION_TIMEOUT_SEC, status calls also clipped to
the job's remaining budget). A timed-out call answers rc 125.
The prompt never travels as a lone argument (the companion re-splits a single argument
shell-style): it follows `--` among several arguments, or goes through `--prompt-file` when it
is too large for one argv element (or blank): a private 0600 file in ~/.maestro/prompts, never a
shared temp directory, removed after the call.
"""

import json
import os
import re
import time
from dataclasses import dataclass, field

from maestro.codex.poll_watch import PollWatch, file_size, new_preview_lines  # noqa: F401 (re-exported)
from maestro.codex.prompt_file import remove_quietly, write_prompt_file  # noqa: F401 (re-exported)
from maestro.errors import MaestroError
from maestro.util import process
from maestro.util.text import bounded

JOB_ID = re.compile(r"task-[a-z0-9][a-z0-9-]*[a-z0-9]")
TERMINAL_OK = frozenset(("completed", "done", "finished", "succeeded", "success"))
TERMINAL_CANCELLED = frozenset(("cancelled", "canceled"))
TERMINAL_FAILED = frozenset(("failed", "error", "errored"))
TERMINAL = TERMINAL_OK | TERMINAL_CANCELLED | TERMINAL_FAILED
ARGV_PROMPT_LIMIT = 100_000  # bytes; Linux caps one argv element at 128 KiB
STATUS_LOSS_LIMIT = 4
QUIET_KEEPALIVE_SEC = 60
PREVIEW_WIDTH = 160


@dataclass
class JobStatus:
    state: str  # lowercased job.status
    phase: str = ""
    elapsed: str = ""
    log_file: str = ""
    preview: list = field(default_factory=list)
    request: dict = field(default_factory=dict)
    pid: int = None  # the worker's pid while the job is active (the companion clears it at the end)
    error: str = ""  # errorMessage of a failed job
    from_file: bool = False  # read from the job's own file, not from the companion's table


def parse_status(text: str):
    """`status <job> --json` output → JobStatus, or None when it is not one well-formed object."""
    text = text.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return job_status_of(data.get("job") if isinstance(data, dict) else None)


def job_status_of(job):
    """One job record (the table's or its own `jobs/<id>.json`) → JobStatus, or None when malformed."""
    if not isinstance(job, dict) or not isinstance(job.get("status"), str):
        return None
    state = job["status"].lower()
    if not state or not state.replace("_", "").replace("-", "").isalpha():
        return None
    preview = job.get("progressPreview")
    preview = [p.strip() for p in preview if isinstance(p, str) and p.strip()][:4] if isinstance(preview, list) else []
    request = job.get("request") if isinstance(job.get("request"), dict) else {}
    return JobStatus(
        state=state,
        phase=job.get("phase") if isinstance(job.get("phase"), str) else "",
        elapsed=job.get("elapsed") if isinstance(job.get("elapsed"), str) else "",
        log_file=job.get("logFile") if isinstance(job.get("logFile"), str) else "",
        preview=preview,
        request=request,
        pid=job["pid"] if isinstance(job.get("pid"), int) and not isinstance(job.get("pid"), bool) else None,
        error=job.get("errorMessage") if isinstance(job.get("errorMessage"), str) else "",
    )


def parse_writers(text: str):
    """`status --all --json` → {job_id: write?} of running jobs, or None when unknown."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    running = data.get("running") if isinstance(data, dict) else None
    if not isinstance(running, list):
        return None
    writers = {}
    for job in running:
        if not isinstance(job, dict):
            return None
        job_id, write = job.get("id"), job.get("write")
        if not isinstance(job_id, str) or not JOB_ID.fullmatch(job_id) or not isinstance(write, bool):
            return None
        writers[job_id] = write
    return writers


class Transport:
    def __init__(self, argv_prefix: list, *, cwd: str, emit, call_timeout: float = 120.0, tick=None,
                 should_stop=None, clock=time.monotonic, sleep=time.sleep, pause=None, env=None, journal=None,
                 job_record=None, user_data=""):
        self.prefix = list(argv_prefix)
        self.cwd = cwd
        self.emit = emit
        self.call_timeout = call_timeout
        self.tick = tick
        self.should_stop = should_stop
        self.clock = clock
        self.sleep = sleep
        self.pause = pause or sleep  # a sleep that a signal may cut short
        self.env = env
        self.journal = journal  # the job ledger's reporter (locks/job_ledger.JobJournal), or None
        self.job_record = job_record  # job -> its own `jobs/<id>.json` record, read directly (or None)
        self.user_data = user_data  # the user's own CLAUDE_PLUGIN_DATA ('' if none): its table is asked for writers too
        self.log_files = {}  # job -> the log path its last good status named (cancel notes print it)
        self.last_status = {}  # job -> its last JobStatus (a failed job's errorMessage is read from it)
        self.not_in_table = set()  # jobs whose last status call failed or answered nothing (the table lost them?)
        self.read_only_flag = False  # pass --read-only on read tasks (codex/read_only decides from --help)

    def call(self, args, timeout: float = None, env=None, interruptible: bool = None) -> process.Completed:
        limit = self.call_timeout if timeout is None else max(1.0, min(timeout, self.call_timeout))
        # A signal cuts short a status/result/help call, never a launch (an interrupted `task`
        # could start a job whose id we never learn) nor a cancel (the cleanup a signal asks for).
        if interruptible is None:
            interruptible = args[:1] not in (["task"], ["cancel"])
        result = process.run(
            [*self.prefix, *args], timeout=limit, cwd=self.cwd, env=env or self.env, tick=self.tick,
            tick_interval=min(0.25, limit), should_stop=self.should_stop if interruptible else None,
        )
        if result.timed_out:
            self.emit(f"MAESTRO_COMPANION: timed out after {limit:g}s ({' '.join(args[:2])})")
            result.rc = 125
        return result

    # -- probes and launch -------------------------------------------------------------------
    def write_probe(self) -> str:
        """'' when write dispatch may proceed; else why not (spec §3: flag drift)."""
        from maestro.codex.read_only import task_line

        result = self.call(["--help"])
        line = task_line(result.text + "\n" + result.err_text)
        if not line or "--write" in line:
            return ""
        return (f"companion describes its task subcommand without --write — the plugin may have renamed "
                f"the flag. Refusing to dispatch a write job blind; update maestro or pin the previous "
                f"plugin version. ({line})")

    def launch(self, prompt: str, *, write: bool, model: str, effort: str):
        """(rc, job id or '', output). rc 0 launched, 3 could not start (a prompt file that could
        not be written privately included: nothing was launched)."""
        args = ["task", "--background"]
        if write:
            args.append("--write")
        elif self.read_only_flag:
            args.append("--read-only")
        args += ["--model", model]
        if effort:
            args += ["--effort", effort]
        data = prompt.encode("utf-8")
        prompt_file = None
        if len(data) > ARGV_PROMPT_LIMIT or not prompt.strip():
            try:
                prompt_file = write_prompt_file(data)
            except (MaestroError, OSError) as exc:
                return 3, "", f"could not write the prompt file: {getattr(exc, 'message', None) or exc}"
            args += ["--prompt-file", prompt_file]
        else:
            args += ["--", prompt]
        try:
            result = self.call(args)
        finally:
            if prompt_file:
                remove_quietly(prompt_file)  # also after a failed or timed-out call
        output = (result.text + result.err_text).strip()
        if result.rc != 0:
            return 3, "", f"could not start Codex job (exit {result.rc}). Output: {output[-2000:]}"
        match = JOB_ID.search(result.text) or JOB_ID.search(result.err_text)
        if match and self.journal is not None:
            self.journal.launched(match.group(0), write=write)
        return 0, (match.group(0) if match else ""), output

    def status(self, job: str, timeout: float = None):
        result = self.call(["status", job, "--json"], timeout=timeout)
        self.not_in_table.discard(job)
        if result.rc != 0 or not result.text.strip():
            # Whatever its wording ("No job found", a cwd mix-up, a reworded release), the table did not
            # give this job: its own file may still say more.
            self.not_in_table.add(job)
            return None
        return self._remember(job, parse_status(result.text))

    def _remember(self, job: str, status):  # what the last good status said about `job`
        if status is not None:
            self.last_status[job] = status
            if status.log_file:
                self.log_files[job] = status.log_file
        return status

    def own_file_status(self, job: str):
        """The job's status from its own `jobs/<id>.json` (the table lost it, or never had it), or None."""
        status = job_status_of(self.job_record(job)) if self.job_record is not None else None
        if status is not None:
            status.from_file = True
        return self._remember(job, status)

    def note_end(self, job: str, state: str, **fields) -> None:
        """Tell the job ledger how the job ended for maestro."""
        if self.journal is not None and job:
            self.journal.ended(job, state, **({"log_file": self.log_files[job]} if job in self.log_files else {}),
                               **fields)

    def shutdown_broker(self) -> bool:
        """Stop maestro's companion broker for this workspace (codex/plugin_data.py). A transport without an
        environment of its own runs in the user's CLAUDE_PLUGIN_DATA: that broker is the user's, never stopped."""
        from maestro.codex import plugin_data

        if self.env is None:
            return True
        return plugin_data.shutdown_broker(self.prefix, root=self.cwd, env=self.env, emit=self.emit)

    def log_file(self, job: str) -> str:
        """The job's log path as its companion last reported it, or 'unknown'."""
        return self.log_files.get(job) or "unknown"

    def global_writers(self, interruptible: bool = True):
        """Running jobs in maestro's table and in the user's own (CLAUDE_PLUGIN_DATA exported by the user's
        session: a /codex:rescue --write job there writes into this worktree too); None when one is unreadable."""
        base = self.env if self.env is not None else os.environ
        tables = [base] + ([dict(base, CLAUDE_PLUGIN_DATA=self.user_data)] if self.user_data else [])
        found = {}
        for env in tables:
            result = self.call(["status", "--all", "--json"], env=dict(env, CODEX_COMPANION_SESSION_ID=""),
                               interruptible=interruptible)
            writers = parse_writers(result.text) if result.rc == 0 else None
            if writers is None:
                return None
            found.update(writers)
        return found

    def job_status(self, job: str):
        """'running' | 'terminal' | None, for lock reclamation."""
        status = self.status(job)
        if status is None:
            return None
        return "terminal" if status.state in TERMINAL else "running"

    def cancel(self, job: str) -> bool:
        return self.call(["cancel", job]).rc == 0

    def result(self, job: str, retry_sleep: float = 3.0):
        """(rc, text, evidence). One retry after a failed/blank answer; then rc 4 + transport tails."""
        answer = self.call(["result", job])
        if answer.rc != 0 or not answer.text.strip():
            self.sleep(retry_sleep)
            answer = self.call(["result", job])
        if answer.rc != 0 or not answer.text.strip():
            stored = self._stored_result(job) if self._lost_from_table(job) else ""
            if stored:
                return 0, stored, ""
            evidence = (
                f"MAESTRO_COMPANION_RESULT_TRANSPORT: job={job} rc={answer.rc}; final transport tails follow "
                f"(8192 bytes per stream)\n--- result transport stdout ---\n"
                f"{answer.stdout[-8192:].decode('utf-8', 'replace')}\n--- result transport stderr ---\n"
                f"{answer.stderr[-8192:].decode('utf-8', 'replace')}\n--- end result transport evidence ---\n"
            )
            return 4, "", evidence
        return 0, answer.text, ""

    def _lost_from_table(self, job: str) -> bool:
        """The companion's table no longer answers for `job`: its last status call (or one asked now) failed or
        came back empty, whatever the wording. A result call failing for a job the table still lists is a result
        transport failure (rc 4 with evidence), not a reason to trust the job file over the table."""
        if job in self.not_in_table:
            return True
        return self.status(job, timeout=10.0) is None and job in self.not_in_table

    def _stored_result(self, job: str) -> str:
        """A finished job's final message from its own file, when the companion's table lost the job."""
        from maestro.codex.plugin_data import stored_result
        raw = stored_result(self.job_record(job) if self.job_record is not None else None)
        if raw:
            self.emit(f"MAESTRO_POLL: job={job} is missing from the companion's table; its result was read from its "
                      "own job file")
        return raw

    # -- polling -----------------------------------------------------------------------------
    def wait(self, job: str, *, max_total: float, max_idle: float, poll: float, turn_started: float):
        """Poll until the job ends. Returns ('completed'|'failed'|'cancelled', state) or
        ('cancel', reason) when the caller must cancel: deadline, idle, status-lost, signal."""
        watch = PollWatch(midpoint=max(max_total / 2, 1))
        first = True
        while True:
            now = self.clock()
            if not first and self._pause_between_polls(watch, now - turn_started, now, max_total, max_idle, poll):
                return "cancel", "signal"
            first = False
            if self.tick is not None:
                self.tick()
            if self.should_stop is not None and self.should_stop():
                return "cancel", "signal"
            total = self.clock() - turn_started
            status = self.status(job, timeout=max(1.0, max_total - total))
            if status is None and job in self.not_in_table:
                status = self.own_file_status(job)
                if status is not None and not watch.from_file:
                    watch.from_file = True
                    self.emit(f"MAESTRO_POLL: job={job} is missing from the companion's job table; following its own "
                              "job file instead of declaring it lost")
            total = self.clock() - turn_started
            if status is None:
                end = self._status_lost(watch, job, total, max_total)
            else:
                end = self._observe(watch, job, status, total, max_total, max_idle)
            if end is not None:
                return end

    def _pause_between_polls(self, watch, total: float, now: float, max_total: float, max_idle: float,
                             poll: float) -> bool:
        """Sleep until the next poll (never past the deadline or the idle limit); True on a stop request."""
        sleep_for = min(poll, max(0.0, max_total - total))
        if watch.last_activity is not None:
            sleep_for = min(sleep_for, max(0.0, max_idle - (now - watch.last_activity)))
        self.pause(sleep_for)
        if self.should_stop is not None and self.should_stop():
            return True
        watch.quiet += poll
        return False

    def _status_lost(self, watch, job: str, total: float, max_total: float):
        """An unreadable status: fail closed at the deadline or after STATUS_LOSS_LIMIT in a row."""
        watch.losses += 1
        if total >= max_total:
            self.emit(f"MAESTRO_POLL: hard deadline reached while companion status was unreachable for {job}; "
                      "cancelling and failing closed")
            return "cancel", "deadline"
        if watch.losses >= STATUS_LOSS_LIMIT:
            self.emit(f"MAESTRO_POLL: companion status malformed or unreachable {watch.losses}x in a row for {job}; "
                      "cancelling and failing closed")
            return "cancel", "status-lost"
        return None

    def _observe(self, watch, job: str, status: JobStatus, total: float, max_total: float, max_idle: float):
        """Show a good status's progress; the wait's end when it is terminal, over budget or idle, else None."""
        watch.losses = 0
        if watch.last_activity is None:
            watch.last_activity = self.clock()  # idle time counts from the first good status
        watch.log_file = watch.log_file or status.log_file
        size = file_size(watch.log_file)
        emitted = self._show_progress(watch, job, status, size)
        if status.state in TERMINAL_OK:
            return "completed", status.state
        if status.state in TERMINAL_CANCELLED:
            return "cancelled", status.state
        if status.state in TERMINAL_FAILED:
            return "failed", status.state
        if not watch.warned and total >= watch.midpoint:
            self.emit(f"MAESTRO_BUDGET: job={job} crossed the normal budget and remains active; continuing to the "
                      f"{max_total:g}s hard ceiling. Activity is not proof of completion.")
            watch.warned = True
        if self.journal is not None:
            problem = self.journal.observe(job, status.state, status.pid, status.log_file, phase=status.phase,
                                           progressed=0 <= watch.last_size < size)
            if problem:
                return "cancel", problem
        if size > watch.last_size or emitted:  # log growth (or visible progress) is the only liveness sign
            watch.last_activity = self.clock()
            watch.last_size = max(watch.last_size, size)
        if total >= max_total:
            return "cancel", "deadline"
        if self.clock() - watch.last_activity >= max_idle:
            return "cancel", "idle"
        return None

    def _show_progress(self, watch, job: str, status: JobStatus, size: int) -> bool:
        """Emit a new phase and new preview lines (or a keepalive after a quiet minute); True when
        something new was shown."""
        emitted = False
        if status.phase and status.phase != watch.last_phase:
            self.emit(f"CODEX: job={job} phase={status.phase} elapsed={status.elapsed or 'unknown'}")
            emitted = True
        watch.last_phase = status.phase or watch.last_phase
        for line in new_preview_lines(watch.last_preview, status.preview):
            self.emit(f"CODEX: job={job} {bounded(line, PREVIEW_WIDTH)}")
            emitted = True
        watch.last_preview = status.preview
        if emitted:
            watch.quiet = 0.0
        elif watch.quiet >= QUIET_KEEPALIVE_SEC:
            self.emit(f"CODEX-ALIVE: job={job} elapsed={status.elapsed or 'unknown'} "
                      f"log_growth={max(0, size - watch.keepalive_size)}B")
            watch.keepalive_size = size
            watch.quiet = 0.0
        return emitted
