"""One Read turn (spec §3, read mode): a prompt dispatched to Codex read-only under the
repository's companion job lock, polled to an end, its reply fetched.

Shared by `discuss` and `scout`. No write lease, no write probe, no poison: a read job
that must be abandoned is simply cancelled. Every turn first makes sure its task will be read-only
(codex/read_only.enforce: `--read-only` when the companion offers it, else a refusal — rc 11 with
`refused` set, nothing launched), here, so that no read verb can skip it (issue 12 §1.5). Return codes: 0 reply received · 3 could not start
(bad routing, launch failure, no job id) · 4 failed (job failed or was cancelled elsewhere,
result unreadable, or this process was interrupted — then `interrupted` is set) · 11 the job
lock is busy or unidentifiable (nothing was launched) · 124 cancelled by maestro on deadline,
idle or status loss (`cancel_reason` tells which: status loss is a lost turn, not a hang; a dead
worker or a job stalled in the queue is `worker-dead` / `queued-stall`). A turn that launched a
job stops maestro's companion broker before it lets go of the job lock (issue 12 §1.1).
"""

import os
import re
from dataclasses import dataclass, field

from maestro.errors import Exit
from maestro.messages import PIN_MODELS
from maestro.workflow.turn import CompanionTurn

OVERRIDE_MODEL = "MAESTRO_COMPANION_MODEL"
OVERRIDE_EFFORT = "MAESTRO_COMPANION_EFFORT"
_MODEL = re.compile(r"[a-zA-Z0-9._-]+")


@dataclass(frozen=True)
class ReadRouting:
    model: str
    effort: str  # the tier this turn runs at (shown to the user, written into transcripts)
    flag: str  # what `--effort` carries; '' when the companion cannot express the tier
    note: str = ""  # a `CODEX:` line to emit when the flag is omitted


def read_routing(pins, environ=None):
    """(ReadRouting, '') or (None, why not). Spec §3: model = config `model`, effort = the debate
    effort, passed as a flag only inside the wrapper's set. MAESTRO_COMPANION_MODEL and
    MAESTRO_COMPANION_EFFORT replace both — together or not at all, and only validated values."""
    from maestro.codex.pins import DEBATE_EFFORTS, WRAPPER_EFFORTS

    environ = os.environ if environ is None else environ
    has_model, has_effort = OVERRIDE_MODEL in environ, OVERRIDE_EFFORT in environ
    if has_model != has_effort:
        return None, (f"{OVERRIDE_MODEL} and {OVERRIDE_EFFORT} must be set together (read-only override); "
                      "unset both to use the pinned model")
    if has_model:
        model, effort = environ[OVERRIDE_MODEL], environ[OVERRIDE_EFFORT]
        if not _MODEL.fullmatch(model):
            return None, f"{OVERRIDE_MODEL}={model!r} is not a model name (letters, digits, . _ -)"
        if effort not in WRAPPER_EFFORTS:
            return None, f"{OVERRIDE_EFFORT}={effort!r} is not one of {', '.join(WRAPPER_EFFORTS)}"
        return ReadRouting(model, effort, effort), ""
    if not pins.complete:
        problem = f" ({pins.config_problem})" if pins.config_problem else ""
        return None, f"no Codex model/effort pinned{problem} — run: {PIN_MODELS}"
    if not _MODEL.fullmatch(pins.model):
        return None, f"the pinned model {pins.model!r} is not a model name (letters, digits, . _ -)"
    effort = pins.debate_effort
    if effort in WRAPPER_EFFORTS:
        return ReadRouting(pins.model, effort, effort), ""
    if effort in DEBATE_EFFORTS:
        return ReadRouting(pins.model, effort, "", (
            f"CODEX: companion wrapper cannot express debate effort={effort} explicitly; the pinned top-level "
            "config value governs this read-only dispatch")), ""
    return None, f"the pinned debate effort {effort!r} is not one of {', '.join(DEBATE_EFFORTS)}"


@dataclass
class ReadOutcome:
    rc: int
    job: str = ""
    result: str = ""  # the reply (stdout material)
    evidence: list = field(default_factory=list)  # stderr material
    cancel_reason: str = ""  # deadline | idle | status-lost | signal-term … when maestro cancelled the job
    interrupted: bool = False  # a signal ended the turn
    refused: str = ""  # why the companion's task would not be read-only (rc 11, nothing launched)


class ReadTurn(CompanionTurn):
    """One Read turn (the transport never lets a pending signal cut a `cancel` short)."""

    def __init__(self, *, routing, **common):
        super().__init__(**common)
        self.routing = routing

    def run(self, prompt: str) -> ReadOutcome:
        outcome = ReadOutcome(rc=Exit.USAGE)
        route = self.routing
        from maestro.codex import read_only

        outcome.refused = read_only.enforce(self.transport)  # the verdict is cached per companion file
        if outcome.refused:
            outcome.rc = Exit.BLOCKED
            return outcome
        joblock = self.joblock_factory()
        acquired = joblock.acquire()
        if acquired == Exit.FAILED:  # a signal ended the wait: nothing is held, nothing was launched
            outcome.rc, outcome.interrupted = Exit.FAILED, True
            return outcome
        if acquired != Exit.OK:
            outcome.rc = Exit.BLOCKED
            outcome.evidence.append("the companion job lock is busy or its holder cannot be identified; nothing was "
                                    "launched")
            return outcome
        keep_joblock = False
        launched = False
        try:
            if route.note:
                self.emit(route.note)
            if self.signals.stop_requested():
                outcome.rc, outcome.interrupted = Exit.FAILED, True
                return outcome
            turn_started = self.clock()
            rc, job, output = self.transport.launch(prompt, write=False, model=route.model, effort=route.flag)
            launched = rc == Exit.OK
            if rc != Exit.OK:
                outcome.evidence.append(output)
                return outcome
            if not job:
                # A job may be running that we cannot name: keep the job lock. Once this process is
                # gone the next acquirer reclaims it only when the companion lists no running job.
                keep_joblock = True
                outcome.evidence.append(f"Codex task launch succeeded but returned no job id; the job lock is kept "
                                        f"until no job runs. Output: {output[-500:]}")
                return outcome
            self.job = outcome.job = job
            if not joblock.publish_job(job):
                return self._cancel(outcome, "launch-publication-failed", rc=Exit.FAILED)
            self.emit(f"CODEX: started {job} (model={route.model} effort={route.effort}, read mode, "
                      f"max_idle={self.max_idle:g}s poll={self.poll:g}s)")
            self._verify_pin(job)
            end, detail = self.transport.wait(job, max_total=self.max_total, max_idle=self.max_idle, poll=self.poll,
                                              turn_started=turn_started)
            if end == "cancel":
                if detail == "signal":
                    outcome.interrupted = True
                    return self._cancel(outcome, self.signals.reason() or "signal-term", rc=Exit.FAILED)
                return self._cancel(outcome, detail, rc=Exit.HUNG)
            if end in ("cancelled", "failed"):
                outcome.rc = Exit.FAILED
                outcome.evidence.append(f"Codex job {job} ended in state {detail}")
                return outcome
            rc, text, evidence = self.transport.result(job, self.retry_sleep)
            if evidence:
                outcome.evidence.append(evidence.rstrip("\n"))
            if rc != Exit.OK:
                outcome.rc = Exit.FAILED
                return outcome
            outcome.rc, outcome.result = Exit.OK, text
            return outcome
        finally:
            if outcome.job:
                ended = "completed" if outcome.rc == Exit.OK else "cancelled" if outcome.cancel_reason else "failed"
                self.transport.note_end(outcome.job, ended, reason=outcome.cancel_reason)
            if launched:
                self.transport.shutdown_broker()  # still under the job lock: no other job of ours is running
            if not keep_joblock and joblock.release() != Exit.OK and outcome.rc == Exit.OK:
                outcome.evidence.append("the companion job lock changed under this turn and could not be released "
                                        "safely")
                outcome.rc = Exit.BLOCKED

    def _verify_pin(self, job: str) -> None:
        status = self.transport.status(job)
        if status is None or not status.request:
            return
        request = status.request
        model, effort = request.get("model"), request.get("effort")
        flag = self.routing.flag or None
        if model == self.routing.model and (effort == flag or (effort is None and request.get("write") is False)):
            return
        self.emit(f"CODEX: pin verification warning for {job}: requested model={self.routing.model} "
                  f"effort={self.routing.flag or 'null'}; recorded model={model} effort={effort}")

    def _cancel(self, outcome: ReadOutcome, reason: str, rc: int) -> ReadOutcome:
        """Cancel exactly this turn's job — never any other (a read turn owns no one else's work), and not
        a dead worker's: the companion's cancel kills the pid's process tree, which may be someone else's now."""
        request = "not-attempted"
        if reason != "worker-dead":
            request = "acknowledged" if self.transport.cancel(outcome.job) else "unconfirmed"
            self.emit(f"MAESTRO_POLL: cancel attempted reason={reason} job={outcome.job} log=unknown")
        source = "signal-handler" if reason.startswith("signal-") else "request"
        outcome.evidence.append(f"CANCELLATION_FACT: job={outcome.job} reason={reason} request={request} "
                                f"source={source}")
        outcome.rc, outcome.cancel_reason = rc, reason
        return outcome
