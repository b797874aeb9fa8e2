"""One Write turn (spec §1.5): the plan plus the IMPLEMENTER CONTRACT, dispatched to Codex under
the caller's write lease and a companion job lock, polled to an end, classified by its RESULT line.

Shared by `loop` and `watchdog`. Return codes: 0 DONE, 10 NEEDS_ANSWERS, 11 BLOCKED (including
every companion failure after launch: no second billed attempt; `reason` "quota" when Codex
reported a usage/rate limit, with its reset time in `reset`), 4 FAILED (the implementer said
so), 3 could not start, 125 POISONED (a cancellation whose end was never observed, a worker that
died, a job stalled in the queue). A turn that launched a job stops maestro's companion broker
before it lets go of the job lock (issue 12 §1.1): no broker of maestro's outlives its work.
"""

import os
import re
from dataclasses import dataclass, field

from maestro.errors import Exit
from maestro.messages import CLEAR_JOB_LOCK, CLEAR_LEASE, PIN_MODELS

CONTRACT = """

--- IMPLEMENTER CONTRACT (always applies) ---
- You implement; the orchestrator planned. Carry out the plan above as written: no redesign, no
  extra scope, no "improvements" to neighbouring code. Touch only the files the plan names.
- Your edits land on disk for real. Stay inside the plan's file scope.
- Built-in web search is off (it hangs background jobs). The plan carries the external facts you
  need. For a version-sensitive fact it lacks you MAY use your configured MCP tools, at most 2
  lookups per run and never as a substitute for the plan; if a lookup fails, do not retry — ask
  through QUESTIONS when the fact matters, otherwise keep to the plan. When you rely on such a
  fact, say "verified via <mcp>: <fact>" in your report.
- If the plan is ambiguous, contradicts the code, or one step fails twice: STOP. Do not guess or
  improvise another approach. End with:
    RESULT: NEEDS_ANSWERS
    QUESTIONS:
    1. <what you found, what must be decided, what each answer would mean>
- The one exception: a default or scope grant written in the plan that covers the case. Apply it,
  continue, and disclose it on a line
    DEFAULT_APPLIED: <what you applied> — <the plan text that allowed it>
  (a disclosure, never a result). A default the plan does not state is a guess: stop instead.
- When you stop with NEEDS_ANSWERS or BLOCKED your thread ends; the next run starts fresh. Leave
  a capsule for it:
    CONTINUATION:
    - Completed: <finished steps and the files they touched>
    - Evidence: <the exact output or constraint that stopped you>
    - Next: <the next step for each possible answer>
- Run the verification commands the plan names — only those — and paste their real output and
  exit codes. Do not add wider suites on your own: the caller re-runs its own verification after
  you finish, and a long suite here spends a deadline that is not yours. If the named commands
  cannot prove the work, say so and ask through QUESTIONS. A claim without output is not proof.
- Finish with exactly ONE result line, then the evidence:
    RESULT: DONE            — plan carried out, verification output below
    RESULT: NEEDS_ANSWERS   — followed by a numbered QUESTIONS: block
    RESULT: BLOCKED         — missing access or credentials, or a destructive step; name it
    RESULT: FAILED          — verification failed; paste the failing output
- List every file you created or changed; leave no stray files.
- Before the first edit run `git status --short` and note what was already dirty. A dirty tree is
  normal here and never a reason to stop. Keep every existing change: do not revert, stash,
  check out or commit work that is not yours. Report the dirty paths you saw and confirm you left
  the out-of-scope ones alone.
- Keep the report under about 400 words plus verification output and any CONTINUATION capsule;
  it is read by a model reviewing your diff.
- Write the least code that works: reuse what the repository has, prefer the standard library,
  add no abstraction, dependency or setting the plan did not ask for.
"""

STALLED = {"worker-dead": "ended because its Codex worker process died",
           "queued-stall": "ended because it stayed queued past MAESTRO_QUEUED_STALL_SEC (its worker never started)"}


def _data_dir_note(transport) -> str:
    """Where maestro's companion keeps this job's files (the user's own `/codex:status` does not list it)."""
    data = (getattr(transport, "env", None) or {}).get("CLAUDE_PLUGIN_DATA")
    return f" (maestro's companion data dir: {data})" if data else ""


_RESULT_LINE = re.compile(r"RESULT:\s*(DONE|NEEDS_ANSWERS|BLOCKED|FAILED)(?:\s*[^\w\s].*)?\s*")
STATE_RC = {"DONE": Exit.OK, "NEEDS_ANSWERS": Exit.NEEDS_ANSWERS, "BLOCKED": Exit.BLOCKED, "FAILED": Exit.FAILED}


def result_state(text: str) -> str:
    """The last valid RESULT record (spec §1.5, with #9's punctuation-led reason), or ''."""
    state = ""
    for line in text.splitlines():
        match = _RESULT_LINE.fullmatch(line)
        if match:
            state = match.group(1)
    return state


@dataclass
class TurnOutcome:
    rc: int
    job: str = ""
    result: str = ""  # the job's result text (stdout material)
    evidence: list = field(default_factory=list)  # stderr material
    state: str = ""  # DONE/NEEDS_ANSWERS/BLOCKED/FAILED, or '' when no valid record
    started: bool = False  # a job was launched (the loop counts an attempt)
    reason: str = ""  # why a BLOCKED turn is blocked when it is not the plan's fault: "quota"
    reset: str = ""  # when the usage limit resets, as Codex said it ("at 3:45 PM"), or ''


def write_routing(pins):
    """(model, effort flag or '', note, error). Spec §3: max/ultra only when equal to the config effort."""
    from maestro.codex.pins import WRAPPER_EFFORTS

    if not pins.complete:
        return "", "", "", f"no Codex model/effort pinned — run: {PIN_MODELS}"
    if pins.impl_model_invalid:  # never fall back silently to another model than the one pinned
        return "", "", "", f"~/.codex/maestro-impl-model does not hold a valid model name — re-pin with: {PIN_MODELS}"
    model = pins.impl_model or pins.model
    effort = pins.impl_effort
    if effort in WRAPPER_EFFORTS:
        return model, effort, "", ""
    if effort in ("max", "ultra") and effort == pins.debate_effort:
        note = (f"CODEX: companion cannot express implementation effort={effort} as a flag; the pinned top-level "
                "config value is the same tier and governs this write dispatch")
        return model, "", note, ""
    return "", "", "", (f"implementation effort {effort!r} cannot be dispatched (max/ultra only when the debate "
                        f"effort is the same value; else one of {', '.join(WRAPPER_EFFORTS)})")


class CompanionTurn:
    """What every companion turn carries: its job lock, transport, budgets and clock."""

    def __init__(self, *, joblock_factory, transport, emit, signals, max_idle, poll, max_total, clock,
                 retry_sleep=3.0):
        self.joblock_factory = joblock_factory
        self.transport = transport
        self.emit = emit
        self.signals = signals
        self.max_idle = max_idle
        self.poll = poll
        self.max_total = max_total
        self.clock = clock
        self.retry_sleep = retry_sleep
        self.job = ""


class WriteTurn(CompanionTurn):
    """One Write turn. `lease` is the caller's WriteLease; `transport` a companion Transport."""

    def __init__(self, *, lease, pins, checkpoint=None, **common):
        super().__init__(**common)
        self.lease = lease
        self.pins = pins
        self.checkpoint = checkpoint  # (plan) -> a Pending checkpoint or None (maestro.provenance.checkpoint)

    def run(self, plan: str) -> TurnOutcome:
        outcome = TurnOutcome(rc=Exit.USAGE)
        routing = self._routing(outcome)
        if routing is None:
            return outcome
        joblock = self._lock_job(outcome)
        if joblock is None:
            return outcome
        keep_joblock = False
        try:
            if not self._ready_to_launch(outcome, routing):
                return outcome
            # the tree before this write, taken only once the lease's guard confirmed we still hold it
            pending = self.checkpoint(plan) if self.checkpoint is not None else None
            turn_started = self.clock()
            model, effort, _ = routing
            rc, job, output = self.transport.launch(plan + CONTRACT, write=True, model=model, effort=effort)
            if rc != Exit.OK:
                outcome.evidence.append(f"LOOP_ERROR: {output}")
                return outcome
            outcome.started = True
            if not job:
                if pending is not None:
                    pending.name(job)
                keep_joblock = True  # a job may exist that we cannot name: keep both locks
                return self._unnamed_job(outcome, output)
            self.job = outcome.job = job
            return self._follow(outcome, joblock, routing, turn_started, pending)
        finally:
            if outcome.started:
                self.transport.shutdown_broker()  # still under the job lock: no other job of ours is running
            if (not keep_joblock and joblock.release() != Exit.OK
                    and outcome.rc in (Exit.OK, Exit.NEEDS_ANSWERS, Exit.FAILED)):
                outcome.evidence.append("WATCHDOG_BLOCKED: the companion job lock could not be released safely")
                outcome.rc = Exit.BLOCKED

    def _routing(self, outcome: TurnOutcome):
        """(model, effort, note) for this write, or None with the refusal in `outcome` (rc 3)."""
        if os.environ.get("MAESTRO_COMPANION_MODEL") or os.environ.get("MAESTRO_COMPANION_EFFORT"):
            # The override is for read-only turns; a write on another model than the pinned
            # implementation model must be an explicit re-pin, never a leftover variable.
            outcome.evidence.append("WATCHDOG_ERROR: MAESTRO_COMPANION_MODEL/MAESTRO_COMPANION_EFFORT override "
                                    "read-only turns only; unset them for a write dispatch (or re-pin with "
                                    "model-select)")
            return None
        model, effort, note, error = write_routing(self.pins)
        if error:
            outcome.evidence.append(f"WATCHDOG_ERROR: {error}")
            return None
        return model, effort, note

    def _lock_job(self, outcome: TurnOutcome):
        """The acquired write job lock, or None with rc 4 (interrupted) or 11 (busy) in `outcome`."""
        joblock = self.joblock_factory("write")
        locked = joblock.acquire()
        if locked == Exit.FAILED:
            outcome.rc = Exit.FAILED  # interrupted while waiting: nothing was launched
            return None
        if locked != Exit.OK:
            outcome.rc = Exit.BLOCKED
            outcome.evidence.append("WATCHDOG_BLOCKED: the companion job lock is busy or unidentifiable")
            return None
        return joblock

    def _ready_to_launch(self, outcome: TurnOutcome, routing) -> bool:
        """The last checks before a billed launch: the companion still takes --write, the lease is
        still ours and unpoisoned, and no stop was requested."""
        refusal = self.transport.write_probe()
        if refusal:
            outcome.evidence.append(f"WATCHDOG_ERROR: {refusal}")
            return False
        note = routing[2]
        if note:
            self.emit(note)
        if not self.lease.guard():
            outcome.rc = Exit.BLOCKED
            outcome.evidence.append("WATCHDOG_BLOCKED: the write lease is no longer held or is poisoned; "
                                    "nothing was dispatched")
            return False
        if self.signals.stop_requested():
            outcome.rc = Exit.FAILED
            return False
        return True

    def _unnamed_job(self, outcome: TurnOutcome, output: str) -> TurnOutcome:
        """A launch that printed no job id may still have started one that nobody can name or cancel:
        poison the lease and keep it and the job lock (the caller keeps that one), rc 125. When even
        the poison cannot be written, the lease is kept in memory so that release() leaves it on disk."""
        if self.lease.stage_poison("unknown", "launch-publication-failed"):
            self.lease.promote_poison()
        else:
            self.lease.retain("a job launched without a job id may still be running and its poison could not be "
                              "staged")
            self.emit("MAESTRO_LOCK: could not stage poison for job=unknown reason=launch-publication-failed; the job "
                      "was not cancelled and may still be running (log=unknown). Recover only after no Codex job is "
                      f"writing: {CLEAR_LEASE}")
        outcome.rc = Exit.POISONED
        outcome.evidence += ["IMPLEMENTER_STATE: COMPANION_FAILURE",
                             f"WATCHDOG_POISONED: the companion launched without a job id; quiescence "
                             f"unconfirmed. Output: {output[-500:]}",
                             "WATCHDOG_POISONED: the write lease and the companion job lock are retained. Check "
                             f"`status`; once no Codex job is writing, recover with: {CLEAR_LEASE} (then "
                             f"{CLEAR_JOB_LOCK} if the job lock is still held)"]
        return outcome

    def _follow(self, outcome: TurnOutcome, joblock, routing, turn_started: float, pending=None) -> TurnOutcome:
        """Publish the launched job, name its checkpoint, poll it to an end, and classify that end."""
        job = outcome.job
        model, effort, _ = routing
        published = self.lease.publish_job(job) and joblock.publish_job(job)
        if pending is not None:  # after publication: another run asking who holds the lease learns the job at once
            pending.name(job)
        if not published:
            return self._cancel(outcome, "launch-publication-failed", joblock)
        self.emit(f"WATCHDOG: started {job} (model={model} effort={effort or self.pins.impl_effort}, write mode, "
                  f"max_idle={self.max_idle:g}s poll={self.poll:g}s)")
        self._verify_pin(job, model, effort)
        end, detail = self.transport.wait(job, max_total=self.max_total, max_idle=self.max_idle, poll=self.poll,
                                          turn_started=turn_started)
        if end == "cancel":
            reason = self.signals.reason() if detail == "signal" else detail
            return self._cancel(outcome, reason, joblock)
        if end == "cancelled":
            self.lease.stage_poison(job, "cancelled-observed")
            self.lease.promote_poison()
            self.emit(f"MAESTRO_POLL: companion reported job={job} state=cancelled; write lease poisoned and no "
                      "replacement will start")
            outcome.evidence.append(f"CANCELLATION_FACT: job={job} reason=cancelled-observed request=not-needed "
                                    "source=observed")
            return self._poisoned(outcome)
        return self._classify_result(outcome, end, detail)

    def _classify_result(self, outcome: TurnOutcome, end: str, detail: str) -> TurnOutcome:
        """Read the ended job's result and map its RESULT record to the turn's rc."""
        job = outcome.job
        rc, text, evidence = self.transport.result(job, self.retry_sleep)
        if evidence:
            outcome.evidence.append(evidence.rstrip("\n"))
        outcome.result = text
        if (end == "failed" or rc != Exit.OK or not result_state(text)) and self._usage_limit(outcome):
            return outcome
        if end == "failed" or rc != Exit.OK:
            outcome.evidence.append(f"job {job} ended in state {detail}" if end == "failed" else
                                    f"job {job} returned an empty or failed result twice")
            return self._companion_failure(outcome)
        outcome.state = result_state(text)
        if not outcome.state:
            return self._companion_failure(outcome)
        outcome.rc = STATE_RC[outcome.state]
        self.transport.note_end(job, "completed", result=outcome.state)
        return outcome

    def _usage_limit(self, outcome: TurnOutcome) -> bool:
        """A job that ended on a usage/rate/quota limit: BLOCKED with reason quota, no attempt counted.
        Only Codex's own failure text says so (the job's errorMessage, the companion's `Codex error:` log
        lines: codex/quota.py), never the result text nor the summary: a plan or a reply may discuss rate limits."""
        from maestro.codex import quota

        status = self.transport.last_status.get(outcome.job)
        hit, reset = quota.limit_hit("\n".join((status.error if status else "",
                                                quota.log_errors(self.transport.log_file(outcome.job)))))
        if not hit:
            return False
        outcome.rc, outcome.reason, outcome.reset = Exit.BLOCKED, "quota", reset
        outcome.evidence.append(f"WATCHDOG_BLOCKED: reason=quota job={outcome.job} — Codex reported a usage, rate or "
                                f"quota limit{f' (resets {reset})' if reset else ''}; this is not a failure of the "
                                "plan and no implementation attempt was counted. Run again once the limit resets.")
        self.transport.note_end(outcome.job, "quota", reason="quota", reset=reset)
        return True

    def _verify_pin(self, job: str, model: str, effort: str) -> None:
        status = self.transport.status(job)
        if status is None or not status.request:
            return
        recorded_model = status.request.get("model")
        recorded_effort = status.request.get("effort")
        if recorded_model != model or recorded_effort != (effort or None):
            self.emit(f"CODEX: pin verification warning for {job}: requested model={model} effort={effort or 'null'}; "
                      f"recorded model={recorded_model} effort={recorded_effort}")

    def _companion_failure(self, outcome: TurnOutcome) -> TurnOutcome:
        self.transport.note_end(outcome.job, "failed")
        outcome.rc = Exit.BLOCKED
        outcome.evidence += ["IMPLEMENTER_STATE: COMPANION_FAILURE",
                             f"WATCHDOG_BLOCKED: job={outcome.job} ended without a valid RESULT record (or its result "
                             "could not be read); no further attempt was billed"]
        return outcome

    def _poisoned(self, outcome: TurnOutcome) -> TurnOutcome:
        outcome.rc = Exit.POISONED
        outcome.result = "RESULT: BLOCKED\n"
        outcome.evidence.append(f"WATCHDOG_POISONED: job={outcome.job or 'unknown'} ended without confirmed quiescence; "
                                "the write lease is retained. Check `status`, then recover with: "
                                f"{CLEAR_LEASE}{_data_dir_note(self.transport)}")
        return outcome

    def _log_of(self, job: str) -> str:
        """The job's log path: as its status last named it, else asked for once (a pending signal cuts the
        question short), else 'unknown'."""
        if self.transport.log_file(job) == "unknown" and job != "unknown":
            self.transport.status(job, timeout=10.0)
        return self.transport.log_file(job)

    def _cancel(self, outcome: TurnOutcome, reason: str, joblock) -> TurnOutcome:
        """Stage poison first, then cancel (spec §1.5/§3; not a dead worker); a live turn's peers are cancelled too."""
        job = outcome.job or "unknown"
        staged = self.lease.stage_poison(job, reason)
        request = "not-attempted"
        # A dead worker is not cancelled: the companion's cancel kills the pid's process tree, and that
        # pid may already be someone else's. The lease is poisoned anyway, and the broker's shutdown
        # after the turn interrupts a patch it may still be applying.
        if staged and outcome.job and reason != "worker-dead":
            request = "acknowledged" if self.transport.cancel(job) else "unconfirmed"
            self.emit(f"MAESTRO_POLL: cancel attempted reason={reason} job={job} log={self.transport.log_file(job)}")
            if reason.startswith("signal-"):
                for other, write in sorted((self.transport.global_writers(interruptible=False) or {}).items()):
                    if write and other != job:
                        self.transport.cancel(other)
                        self.emit(f"MAESTRO_POLL: cancel attempted reason={reason} job={other} "
                                  f"log={self.transport.log_file(other)}")
        elif not staged:
            # Nothing on disk says this job may still write: keep the lease by hand, and tell the
            # person everything needed to find the job and recover once it has stopped.
            self.lease.retain(f"cancellation poison for job={job} could not be staged and the job was not cancelled")
            self.emit(f"MAESTRO_LOCK: could not stage cancellation poison for job={job} reason={reason}; the job was "
                      f"not cancelled and may still be running (log={self._log_of(job)}). The write lease is kept. "
                      f"Recover only after no Codex job is writing: {CLEAR_LEASE}")
        if staged:
            self.lease.promote_poison()
        if reason == "deadline":
            self.emit(f"MAESTRO_RECOVERY: UNREPORTED_PARTIAL job={job} reason=deadline; the tree may hold partial "
                      "edits; review `git status` before clearing the lease")
        source = "signal-handler" if reason.startswith("signal-") else "request"
        outcome.evidence.append(f"CANCELLATION_FACT: job={job} reason={reason} request={request} source={source}")
        outcome.evidence.append(f"MAESTRO_CANCEL: job={job} reason={reason} request={request}")
        if reason in STALLED:
            outcome.evidence.append(f"WATCHDOG_POISONED: job={job} {STALLED[reason]}; the lease is poisoned as for "
                                    "any unconfirmed write (the broker may still have been applying a patch)")
        self.transport.note_end(outcome.job, "poisoned", reason=reason)
        return self._poisoned(outcome)
