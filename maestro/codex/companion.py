"""Transport to the Codex companion (spec §3): every call bounded, every answer parsed strictly.

Calls are `node <companion> <args>` (or `<python> <fake>.py` under MAESTRO_COMPANION) from the
caller's cwd, each in its own process group with a deadline (MAESTRO_COMPANION_TIMEOUT_SEC,
status calls also clipped to the job's remaining budget). A timed-out call answers rc 125.
The prompt never travels as a lone argument (the companion re-splits a single argument
shell-style): it follows `--` among several arguments, or goes through `--prompt-file` when it
is too large for one argv element (or blank): a private 0600 file in ~/.maestro/prompts, never a
shared temp directory, removed after the call.
"""

import json
import os
import re
import tempfile
import time
from dataclasses import dataclass, field

from maestro import paths
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


def parse_status(text: str):
    """`status <job> --json` output → JobStatus, or None when it is not one well-formed object."""
    text = text.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    job = data.get("job") if isinstance(data, dict) else None
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


def write_prompt_file(data: bytes) -> str:
    """A new file holding `data` in the private prompts directory (`paths.private_prompts_dir`):
    created exclusively (O_EXCL, no symlink followed) under a random name, mode 0600, so nothing
    planted there is written through or reused. The caller removes it after the call."""
    fd, path = tempfile.mkstemp(prefix="maestro-prompt.", suffix=".md", dir=paths.private_prompts_dir())
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    except BaseException:
        _remove(path)
        raise
    return path


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def new_preview_lines(previous: list, current: list) -> list:
    """Lines of `current` not already shown: drop the longest prefix that continues `previous`."""
    for overlap in range(min(len(previous), len(current)), 0, -1):
        if previous[-overlap:] == current[:overlap]:
            return current[overlap:]
    return current


class Transport:
    def __init__(self, argv_prefix: list, *, cwd: str, emit, call_timeout: float = 120.0, tick=None,
                 should_stop=None, clock=time.monotonic, sleep=time.sleep, pause=None, env=None):
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
        self.log_files = {}  # job -> the log path its last good status named (cancel notes print it)

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
        result = self.call(["--help"])
        for line in (result.text + "\n" + result.err_text).splitlines():
            if re.search(r"\btask\b", line):
                if "--write" in line:
                    return ""
                return (f"companion describes its task subcommand without --write — the plugin may have renamed "
                        f"the flag. Refusing to dispatch a write job blind; update maestro or pin the previous "
                        f"plugin version. ({line.strip()})")
        return ""

    def launch(self, prompt: str, *, write: bool, model: str, effort: str):
        """(rc, job id or '', output). rc 0 launched, 3 could not start (a prompt file that could
        not be written privately included: nothing was launched)."""
        args = ["task", "--background"]
        if write:
            args.append("--write")
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
                _remove(prompt_file)  # also after a failed or timed-out call
        output = (result.text + result.err_text).strip()
        if result.rc != 0:
            return 3, "", f"could not start Codex job (exit {result.rc}). Output: {output[-2000:]}"
        match = JOB_ID.search(result.text) or JOB_ID.search(result.err_text)
        return 0, (match.group(0) if match else ""), output

    def status(self, job: str, timeout: float = None):
        result = self.call(["status", job, "--json"], timeout=timeout)
        if result.rc != 0 or not result.text.strip():
            return None
        status = parse_status(result.text)
        if status is not None and status.log_file:
            self.log_files[job] = status.log_file
        return status

    def log_file(self, job: str) -> str:
        """The job's log path as its companion last reported it, or 'unknown'."""
        return self.log_files.get(job) or "unknown"

    def global_writers(self, interruptible: bool = True):
        env = dict(self.env if self.env is not None else os.environ, CODEX_COMPANION_SESSION_ID="")
        result = self.call(["status", "--all", "--json"], env=env, interruptible=interruptible)
        if result.rc != 0:
            return None
        return parse_writers(result.text)

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
            evidence = (
                f"MAESTRO_COMPANION_RESULT_TRANSPORT: job={job} rc={answer.rc}; final transport tails follow "
                f"(8192 bytes per stream)\n--- result transport stdout ---\n"
                f"{answer.stdout[-8192:].decode('utf-8', 'replace')}\n--- result transport stderr ---\n"
                f"{answer.stderr[-8192:].decode('utf-8', 'replace')}\n--- end result transport evidence ---\n"
            )
            return 4, "", evidence
        return 0, answer.text, ""

    # -- polling -----------------------------------------------------------------------------
    def wait(self, job: str, *, max_total: float, max_idle: float, poll: float, turn_started: float):
        """Poll until the job ends. Returns ('completed'|'failed'|'cancelled', state) or
        ('cancel', reason) when the caller must cancel: deadline, idle, status-lost, signal."""
        watch = _Watch(midpoint=max(max_total / 2, 1))
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
        size = _size(watch.log_file)
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


@dataclass
class _Watch:
    """What one `Transport.wait` remembers between polls."""

    midpoint: float  # past it, the budget warning is shown once
    log_file: str = ""
    last_size: int = -1
    last_activity: float = None  # when the job last showed a sign of life (None before the first good status)
    losses: int = 0  # status answers lost in a row
    last_phase: str = None
    last_preview: list = field(default_factory=list)
    quiet: float = 0.0  # seconds polled without showing anything
    keepalive_size: int = 0
    warned: bool = False


def _size(path: str) -> int:
    if not path:
        return 0
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
