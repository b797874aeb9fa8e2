"""`inject`: the UserPromptSubmit hook.

1. Revokes this session's direct-edit grant first, on any prompt that is not a short
   acknowledgement (`ok`, `yes`, `proceed`…, which keeps the grant with its expiry), and only then
   decides: the grant is set again only when this prompt itself asks Claude to edit code itself
   ("edit it yourself", not negated, quoted or asked as a question). A hook that times out or dies while deciding leaves no grant behind.
   A grant lasts MAESTRO_GRANT_TTL_SEC seconds (default 7200) and ends at the next SessionStart;
   without a usable HOME there are no grants, and a directive fails closed (exit 2).
2. Answers a Codex model-setup request with the setup procedure.
3. Adds the orchestrator/implementer directive only when the prompt carries a code or design
   signal: firing on every turn would teach the model to tune it out.
4. Appends the memory write guard's fixed backlog alert while this session's guard state says so
   (a failure there only drops the alert), and, once, how this session's last loop/watchdog ended.
5. Adds a "Relevant memory" block: the stored entries most relevant to the prompt that session-start
   did not show; nothing for a short acknowledgement, nothing on failure ([memory] recall = false in
   ~/.maestro/config.toml turns it off).
A malformed payload revokes every grant and rejects the prompt (exit 2): a grant that cannot be
tied to a trustworthy prompt must not survive it.
"""

# The grant decision is directive.opens_gate; the backlog alert reads the write guard's state
# (memory/store/write_guard.py) with one open of a small file and no json/tomllib import.

import sys

from maestro.errors import Exit
from maestro import direct_edit as flags
from maestro.util.fastjson import PayloadError
from maestro.util.session import is_valid_session_id


class _Revoke(Exception):
    """Fail closed: revoke all grants, exit 2 with this reason."""


def _apply_grant(session_id: str, prompt: str) -> None:
    from maestro.hooks import directive

    if directive.is_short_approval(prompt.strip()):  # at most 8 characters: cannot stall
        return
    try:
        planted = flags.clear_flag(session_id)
    except OSError:
        raise _Revoke("could not revoke direct-edit authorization") from None
    if directive.opens_gate(prompt):
        if planted:  # a symlink or other trap stood where the grant goes
            raise _Revoke("could not create a safe authorization marker")
        try:
            flags.set_flag(session_id)
        except OSError:
            raise _Revoke("could not create a safe authorization marker") from None


def context_for(prompt: str) -> str:
    from maestro.hooks import directive
    from maestro.hooks import guidance as messages

    if directive.asks_model_setup(prompt):
        return messages.MODEL_SETUP
    if directive.has_work_signal(prompt):
        return messages.LOOP_DIRECTIVE
    return ""


def backlog_alert(session_id: str) -> str:
    """The write guard's backlog alert while the session's state says alert, else ''. Isolated."""
    try:
        from maestro import paths
        from maestro.memory.store import write_guard as guard

        if guard.alert_due(paths.memory_dir(), session_id):
            from maestro.hooks import guidance as messages

            return messages.BACKLOG_ALERT
    except Exception as exc:  # noqa: BLE001 - the alert is advisory: never fail the prompt for it
        from maestro import crash

        crash.record("inject:backlog", exc)
    return ""


def run_notice(session_id: str) -> str:
    """How this session's last loop/watchdog ended, the first prompt after its end (locks/run_notes.py),
    else ''. One lstat when there is none: the notice module is imported only when a notice exists."""
    import os

    from maestro import paths

    if not os.path.lexists(os.path.join(paths.maestro_dir(), "notices", f"{session_id}.notice")):
        return ""
    try:
        from maestro.locks import run_notes

        return run_notes.take_notice(session_id)
    except Exception as exc:  # noqa: BLE001 - advisory, like the backlog alert
        from maestro import crash

        crash.record("inject:notice", exc)
        return ""


def recall_block(payload: dict) -> str:
    """The "Relevant memory" block (maestro/hooks/recall.py), or ''. Imported here, inside the guard: a
    broken recall module must cost the prompt its block, never reject the prompt."""
    try:
        from maestro.hooks import directive

        if directive.is_short_approval(payload["prompt"].strip()):
            return ""  # never a block for an acknowledgement: not even recall's import
        from maestro.hooks import recall

        return recall.block(payload)
    except Exception as exc:  # noqa: BLE001 - advisory, like the backlog alert
        from maestro import crash

        crash.record("inject:recall", exc)
        return ""


def run(payload) -> str:
    if not isinstance(payload, dict) or not is_valid_session_id(payload.get("session_id")):
        raise _Revoke("invalid hook payload")
    prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        raise _Revoke("invalid hook payload")
    # unstripped: the indentation of the first line tells indented code from an instruction
    _apply_grant(payload["session_id"], prompt)
    return context_for(prompt)


def main(argv) -> int:
    if argv:
        from maestro.hooks.hook_help import hook_help

        return hook_help("inject", __doc__, argv)
    try:
        from maestro.util.fastjson import parse, read_stdin

        try:
            payload = parse(read_stdin())
        except PayloadError:
            raise _Revoke("invalid hook JSON") from None
        context = run(payload)
        context += backlog_alert(payload["session_id"])
        context += run_notice(payload["session_id"])
        context += recall_block(payload)  # after the grant is decided: recall never touches it
    except _Revoke as reason:
        return _fail_closed(str(reason))
    except Exception as exc:  # noqa: BLE001 - unexpected: revoke and leave a crash note
        from maestro import crash

        crash.record("inject", exc)
        return _fail_closed("internal error")
    if context:
        sys.stdout.write(context)
        sys.stdout.flush()
    return Exit.OK


def _fail_closed(reason: str) -> int:
    flags.clear_all_flags()
    sys.stderr.write(f"ORCHESTRATOR INJECT: {reason}; direct-edit authorization revoked.\n")
    return Exit.HOOK_BLOCK
