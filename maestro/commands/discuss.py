"""`discuss`: a bounded, read-only debate between Claude and Codex, kept in a private transcript.

    maestro discuss --new "<topic>" [SLUG]
    maestro discuss --turn FILE [SLUG] [MAX_IDLE=300] [POLL=20]
    maestro discuss --list [--all]
    maestro discuss --show SLUG

`--new` starts `~/.maestro/discussions/<workspace>-<slug>.md` (SLUG defaults to `main`).
`--turn` appends FILE as Claude's next turn, sends the whole transcript plus the DISCUSSION
DOCTRINE to Codex as a read-only job, appends the reply and prints it. A turn that never got its
reply (interrupted, crashed, failed) is rolled back by the next `--turn`. `--list` shows this
workspace's discussions (`--all`: every workspace's), `--show` prints one transcript.
Exit: 0 CONTINUE / CONVERGED / ESCALATE (the reply's last marker line) · 5 ESCALATE (turn cap,
MAESTRO_MAX_ROUNDS=6) · 3 FAILED to start · 4 FAILED (reply lost after MAESTRO_DISCUSSION_RETRIES
retries) or INTERRUPTED · 11 BLOCKED (companion job lock busy, or its
read tasks would not be read-only) · 124 HUNG (job stalled;
cancelled). Last line: `MAESTRO_FINAL: DISCUSSION <STATE> rc=<n>`.
"""

import os
import re
import sys

from maestro import knobs
from maestro.workflow import transcripts
from maestro.commands.entry import adapter_main, positive_seconds
from maestro.messages import MAESTRO, STATUS
from maestro.util.clock import utc_stamp
from maestro.errors import Exit, UsageError
from maestro.util import progress

SCOPE = "DISCUSSION"
HOOK = f"{MAESTRO} discuss"

DOCTRINE = """

--- DISCUSSION DOCTRINE (always applies) ---
You are one side of a design debate with another model (the orchestrator), as an equal. No user is
reading along. Everything said so far is in the transcript above; you remember nothing else.
- Your first line is your stance, exactly one of:
    STANCE: AGREE | STANCE: PUSHBACK | STANCE: ALTERNATIVE | STANCE: REFRAME
- Before you argue against a position, restate its strongest form in one line. Then go after the
  assumption it most depends on, not the one easiest to knock over.
- If the question is the wrong question, take STANCE: REFRAME and pose the one that should be asked.
- Say which single risk should settle the matter and what evidence would make you change sides.
- Do not invent disagreement: when the design holds, AGREE and name the one assumption most likely
  to fail. Do not invent agreement either: when it is wrong, say so and show where.
- When you are chasing a bug, arguments do not win — evidence does. Ask for the output, log line or
  code that separates the competing explanations, and name the experiment that would decide it.
- You can read the repository but not change it. Back claims with the code as it actually is.
- Built-in web search is off (it stalls background jobs). Your configured MCP tools may be used for
  at most 2 lookups in this turn.
- When the choice is the human's to make, finish with one line:
    ESCALATE: <the fork, both options, and what you recommend>
- When the two of you have settled the design, finish with one line:
    CONVERGED: <the agreed design and the alternatives you rejected>
- Keep the reply under about 300 words.
"""

_STANCE = re.compile(r"STANCE:\s*(AGREE|PUSHBACK|ALTERNATIVE|REFRAME)\b")
STATE_LINES = {
    "CONVERGED": "DISCUSSION_STATE: CONVERGED — extract the agreed design into the plan's Decisions section",
    "ESCALATE": "DISCUSSION_STATE: ESCALATE — relay the fork verbatim to the user before continuing",
    "CONTINUE": "DISCUSSION_STATE: CONTINUE — write your next turn and re-run --turn",
}


def _slug(value: str) -> str:
    if not transcripts.SLUG.fullmatch(value):
        raise UsageError(f"slug may only contain [a-zA-Z0-9_-]: {value!r}")
    return value



def _bounds():
    """(max rounds, retries, retry sleep); an invalid value stops the turn before anything is touched."""
    values = []
    for knob in (knobs.max_rounds(), knobs.discussion_retries(), knobs.discussion_retry_sleep()):
        if knob.warning:
            raise UsageError(knob.warning)
        values.append(int(knob.value))
    return values


def _private_dir() -> None:
    try:
        transcripts.ensure_dir()
    except transcripts.TranscriptError as exc:
        raise UsageError(str(exc)) from None


def _fail(message: str, state: str = "FAILED", rc: int = Exit.USAGE) -> int:
    sys.stderr.write(message.rstrip("\n") + "\n")
    return progress.final(SCOPE, state, rc)


# -- --new / --list / --show ------------------------------------------------------------------
def new(argv) -> int:
    if not argv or len(argv) > 2:
        raise UsageError('usage: discuss --new "<topic>" [SLUG]')
    topic, slug = argv[0], _slug(argv[1] if len(argv) > 1 else "main")
    if not topic.strip():
        raise UsageError("the topic is empty")
    _private_dir()
    path = transcripts.transcript_path(slug)
    try:
        transcripts.create(path, topic)
    except transcripts.TranscriptError as exc:
        return _fail(f"DISCUSSION_ERROR: {exc}")
    except OSError as exc:
        return _fail(f"DISCUSSION_ERROR: could not create the transcript at {path} ({exc.strerror or exc})")
    sys.stdout.write(f"DISCUSSION: started '{' '.join(topic.split())}' → {path}\n"
                     f"Write your opening position to a file, then: {HOOK} --turn <file> {slug}\n")
    return progress.final(SCOPE, "CONTINUE", Exit.OK)


def listing(argv) -> int:
    if argv not in ([], ["--all"]):
        raise UsageError("usage: discuss --list [--all]")
    found = transcripts.entries("" if argv else None)
    where = "every workspace" if argv else transcripts.workspace_root()
    sys.stdout.write(f"DISCUSSIONS: {len(found)} in {where}\n")
    for entry in found:
        state = entry.state
        turns = f"turns={state.turns}" if isinstance(state, transcripts.State) else "turns=?"
        updated = utc_stamp(entry.updated)
        sys.stdout.write(f"{entry.slug}  {turns}  {entry.outcome}  {updated}  {entry.topic}\n  {entry.path}\n")
    if found and not argv:
        sys.stdout.write(f"Read one with: {HOOK} --show <slug>\n")
    return progress.final(SCOPE, "LISTED", Exit.OK)


def show(argv) -> int:
    if len(argv) != 1:
        raise UsageError("usage: discuss --show SLUG")
    path = transcripts.transcript_path(_slug(argv[0]))
    try:
        data = transcripts.read_bytes(path)
    except OSError:
        return _fail(f"DISCUSSION_ERROR: no transcript {argv[0]!r} for this workspace ({path}); see: {HOOK} --list")
    sys.stdout.flush()
    if hasattr(sys.stdout, "buffer"):
        sys.stdout.buffer.write(data)
    else:
        sys.stdout.write(data.decode("utf-8", "replace"))
    sys.stdout.flush()
    try:
        state = transcripts.read_state(path)
        progress.emit(f"DISCUSSION: {path} turns={state.turns} awaiting_reply={int(state.awaiting)}")
    except transcripts.TranscriptError as exc:
        progress.emit(f"DISCUSSION_WARN: {exc}")
    return progress.final(SCOPE, "SHOWN", Exit.OK)


# -- --turn -----------------------------------------------------------------------------------
def turn(argv) -> int:
    if not argv or len(argv) > 4:
        raise UsageError("usage: discuss --turn FILE [SLUG] [MAX_IDLE] [POLL]")
    turn_file = argv[0]
    slug = _slug(argv[1] if len(argv) > 1 else "main")
    max_idle = positive_seconds("MAX_IDLE", argv[2]) if len(argv) > 2 else 300.0
    poll = positive_seconds("POLL", argv[3]) if len(argv) > 3 else 20.0
    max_rounds, retries, retry_sleep = _bounds()
    _private_dir()
    path = transcripts.transcript_path(slug)
    if not os.path.isfile(path):
        raise UsageError(f'no transcript at {path} — start one with: {HOOK} --new "<topic>" {slug}')
    try:
        text = transcripts.read_bytes(turn_file)
    except OSError as exc:
        raise UsageError(f"cannot read the turn file {turn_file}: {exc.strerror or exc}") from None
    if not text.strip():
        raise UsageError(f"the turn file is empty: {turn_file}")

    from maestro.workflow.read_context import ReadContext
    from maestro.workflow.read_turn import read_routing
    from maestro.locks.transcript_lock import TranscriptLock
    from maestro.codex.pins import read_pins

    routing, error = read_routing(read_pins())
    if error:
        return _fail(f"DISCUSSION_ERROR: {error}")
    ctx = ReadContext(SCOPE)
    ctx.signals.install()
    lock = TranscriptLock(path, ctx.emit)
    busy = lock.acquire()
    if busy:
        return _fail(f"DISCUSSION_ERROR: {busy} (transcript {path}; lock {lock.path})")
    try:
        return Turn(ctx, path, routing, max_idle, poll, max_rounds, retries, retry_sleep).run(text)
    finally:
        lock.release()


class Turn:
    """One `--turn`, holding the transcript lock."""

    def __init__(self, ctx, path, routing, max_idle, poll, max_rounds, retries, retry_sleep):
        self.ctx = ctx
        self.path = path
        self.routing = routing
        self.max_idle = max_idle
        self.poll = poll
        self.max_rounds = max_rounds
        self.retries = retries
        self.retry_sleep = retry_sleep

    def run(self, text: bytes) -> int:
        try:
            state = transcripts.read_state(self.path)
            data = transcripts.read_bytes(self.path)
            if state.awaiting:
                state, data = self._roll_back(state, data)
        except transcripts.TranscriptError as exc:
            return _fail(f"DISCUSSION_ERROR: {exc}")
        except OSError as exc:
            return _fail(f"DISCUSSION_ERROR: cannot read the transcript {self.path} ({exc.strerror or exc})")
        if state.turns >= self.max_rounds:
            return _fail(f"DISCUSSION_CAP: {self.max_rounds} turns exhausted. Do not re-run: either state the design "
                         "with the assumption it rests on and move on to planning, or ESCALATE the exact fork (both "
                         "options and the case for each) to the user.", "ESCALATE", Exit.CAP)
        number, before = state.turns + 1, len(data)
        data += f"\n### Claude (turn {number})\n\n".encode() + text + (b"" if text.endswith(b"\n") else b"\n")
        try:
            # The sidecar first: should we die before the transcript is written, rolling back is a no-op.
            transcripts.write_state(self.path, transcripts.State(number, True, before))
            transcripts.replace(self.path, data)
        except OSError as exc:
            return _fail(f"DISCUSSION_ERROR: could not persist Claude's turn ({exc.strerror or exc})")
        rc, outcome = self._ask(data.decode("utf-8", "replace") + DOCTRINE)
        if rc is not None:
            return rc
        reply = outcome.result.rstrip("\n")
        data += (f"\n### Codex (turn {number} · model={self.routing.model} effort={self.routing.effort})\n\n"
                 f"{reply}\n").encode()
        try:
            transcripts.replace(self.path, data)
            transcripts.write_state(self.path, transcripts.State(number, False, before))
        except OSError as exc:
            sys.stdout.write(reply + "\n")
            return _fail(f"DISCUSSION_ERROR: the reply above arrived but could not be saved ({exc.strerror or exc}); "
                         f"the turn stays pending in {self.path}")
        sys.stdout.write(reply + "\n")
        sys.stdout.flush()
        if outcome.rc == Exit.BLOCKED:  # the reply is real, but the job lock was not ours to release
            return _fail("DISCUSSION_BLOCKED: the reply was saved, but the companion job lock changed under this "
                         f"turn. Check: {STATUS}", "BLOCKED", Exit.BLOCKED)
        marker = transcripts.last_marker(reply) or "CONTINUE"
        self.ctx.emit(STATE_LINES[marker])
        first = next((line for line in reply.splitlines() if line.strip()), "")
        if not _STANCE.match(first.strip()):
            sys.stderr.write("DISCUSSION_WARN: reply opened without a STANCE line — weigh it accordingly\n")
        return progress.final(SCOPE, marker, Exit.OK)

    def _ask(self, prompt: str):
        """(None, outcome with a reply) or (final rc, None). Lost replies are retried; a turn that could
        not start, a hang, a busy job lock and a signal are not."""
        saved = f"Your turn is saved in {self.path}; the next --turn resends it."
        attempts = self.retries + 1
        for attempt in range(1, attempts + 1):
            outcome = self.ctx.read_turn(self.routing, self.max_idle, self.poll).run(prompt)
            for line in outcome.evidence:
                sys.stderr.write(line.rstrip("\n") + "\n")
            sys.stderr.flush()
            if outcome.rc in (Exit.OK, Exit.BLOCKED) and outcome.result.strip():
                return None, outcome  # a reply in hand is kept, even when a signal arrived just after it
            if outcome.refused:  # the task would not be read-only (workflow/read_turn): nothing was launched
                return _fail(f"DISCUSSION_BLOCKED: {outcome.refused}. {saved}", "BLOCKED", Exit.BLOCKED), None
            if outcome.interrupted or self.ctx.signals.stop_requested():
                job = (f"job {outcome.job}" + (" cancelled" if outcome.cancel_reason else "")) if outcome.job else \
                    "no job was started"
                return _fail(f"DISCUSSION_INTERRUPTED: {self.ctx.signals.reason() or 'signal'}; {job}. {saved}",
                             "INTERRUPTED", 4), None
            if outcome.rc == Exit.USAGE:
                return _fail(f"DISCUSSION_ERROR: the companion turn could not start. {saved}"), None
            if outcome.rc == Exit.BLOCKED and not outcome.result.strip():
                return _fail(f"DISCUSSION_BLOCKED: the companion job lock is busy (another Codex job runs in this "
                             f"repository). {saved}", "BLOCKED", Exit.BLOCKED), None
            if outcome.rc == Exit.HUNG and outcome.cancel_reason != "status-lost":
                return _fail(f"DISCUSSION_HUNG: job {outcome.job or 'unknown'} stalled ({outcome.cancel_reason}); "
                             f"cancelled. {saved}", "HUNG", Exit.HUNG), None
            if attempt == attempts:
                break
            left = attempts - attempt
            sys.stderr.write(f"DISCUSSION_RETRY: attempt {attempt} failed; retrying in {self.retry_sleep}s "
                             f"({left} {'retry' if left == 1 else 'retries'} left)\n")
            sys.stderr.flush()
            self.ctx.signals.pause(self.retry_sleep)
            if self.ctx.signals.stop_requested():
                return _fail(f"DISCUSSION_INTERRUPTED: {self.ctx.signals.reason()} while waiting to retry. {saved}",
                             "INTERRUPTED", 4), None
        return _fail(f"DISCUSSION_FAILED: no reply after {attempts} attempt(s). {saved}", "FAILED", Exit.FAILED), None

    def _roll_back(self, state, data):
        if state.rollback > len(data):
            raise transcripts.TranscriptError(f"transcript state is malformed: rollback_bytes={state.rollback} is "
                                              f"past the end of {self.path} ({len(data)} bytes)")
        data = data[:state.rollback]
        transcripts.replace(self.path, data)
        state = transcripts.State(state.turns - 1, False, 0)
        transcripts.write_state(self.path, state)
        self.ctx.emit(f"DISCUSSION: rolled back turn {state.turns + 1}, which never got its reply")
        return state, data


def _run(argv) -> int:
    if not argv:
        raise UsageError('usage: discuss --new "<topic>" [SLUG] | --turn FILE [SLUG] [MAX_IDLE] [POLL] '
                         '| --list [--all] | --show SLUG')
    mode, rest = argv[0], argv[1:]
    handlers = {"--new": new, "--turn": turn, "--list": listing, "--show": show}
    if mode not in handlers:
        raise UsageError(f"unknown argument: {mode} (expected --new, --turn, --list or --show)")
    return handlers[mode](rest)


def main(argv) -> int:
    return adapter_main(SCOPE, "discuss", __doc__, argv, _run)
