"""`session-start`: the SessionStart hook.

Exports `MAESTRO_SESSION_ID` through `$CLAUDE_ENV_FILE` (so the adapters can attribute their
work) and tells the session which Codex model and efforts are pinned — as a setup question when
the user armed it (`~/.maestro/ask-on-start`) on a fresh start, as one status line otherwise.
Before the pin line it prints the memory snapshot (`maestro memory snapshot`) for the payload's
`cwd` and its git branch, budgeted so that the whole context stays under Claude Code's
10,000-character cap for hook strings whatever the store holds. The memory modules are imported
only when the store directory exists; an empty store prints nothing. The Project Context entries are
the newest one plus those most relevant to the branch and the open tasks (their titles and files), and
a big track file is read from its end only. After a render the section sizes (bytes only) go into the
cost ring `.maestro-memory/cost.json` (`memory health`), and the entries shown (with the project and
branch) into `.maestro-memory/recall/<session id>`, so the prompt's recall does not repeat them; a
failure there is isolated (crash note) and keeps the rendered context.
Every SessionStart (`startup`, `resume`, `clear`, `compact`, any other source) first revokes the
payload session's direct-edit grant and prunes every expired one: a grant never outlives the
conversation it was given in.
It never fails the session: every problem degrades to less context, exit 0 — a failure in the
memory part drops only the memory part (and leaves a crash note).
"""

# The snapshot is rendered by memory/store/snapshot.py; grants are revoked through direct_edit.py.

import os
import sys

from maestro.errors import Exit
from maestro.util.session import is_valid_session_id

NOT_PINNED = "(Codex default — not pinned)"
CONTEXT_CAP = 10_000  # Claude Code's cap for a hook's context string (UTF-16 code units, as JavaScript counts)
MEMORY_MARGIN = 200  # slack under the cap for the separator and any later line
MEMORY_MIN_CHARS = 600  # below this the snapshot would be noise: leave it out
PROJECT_CHARS = 2_000  # open work ("Resuming: …") and applicable patterns, ahead of the snapshot
GIT_TIMEOUT_SEC = 2.0


def export_session_id(payload: dict) -> None:
    env_file = os.environ.get("CLAUDE_ENV_FILE")
    session_id = payload.get("session_id")
    if not env_file or not is_valid_session_id(session_id):
        return
    # The id alphabet needs no shell quoting, so the line cannot inject anything.
    try:
        fd = os.open(env_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:  # a symlinked or unwritable env file is refused, not a crash
        sys.stderr.write(f"maestro session-start: not exporting MAESTRO_SESSION_ID to {env_file}: "
                         f"{exc.strerror or exc}\n")
        return
    try:
        os.write(fd, f"export MAESTRO_SESSION_ID={session_id}\n".encode())
    finally:
        os.close(fd)


def clear_grants(payload: dict) -> None:
    """Revoke this session's direct-edit grant, whatever the start's source, and prune every
    expired grant. Creates nothing; raises OSError only for an entry it cannot remove."""
    from maestro import direct_edit as flags

    session_id = payload.get("session_id")
    try:
        if is_valid_session_id(session_id):
            flags.clear_flag(session_id)
    finally:
        flags.prune_expired()  # even when this session's entry could not be removed


def _shown(value: str, limit: int = 100) -> str:
    """A value as displayed: one line and bounded, so hostile pin files cannot push the hook
    output past Claude Code's 10,000-character cap or split the status line."""
    text = "".join(ch if ch.isprintable() else "?" for ch in value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def pin_context(pins, armed: bool, source: str) -> str:
    from maestro.hooks.guidance import MAESTRO, MODEL_PICKS

    model = _shown(pins.model or NOT_PINNED)
    debate = _shown(pins.debate_effort or NOT_PINNED)
    impl_effort = _shown(pins.impl_effort)
    impl_model = _shown(pins.impl_model) if pins.impl_model else model
    problem = f"Note: {_shown(pins.config_problem, 4500)}.\n" if pins.config_problem else ""
    if armed and source != "resume":
        keep = (
            "complete; if the user declines or skips, preserve it and proceed.\n"
            if pins.complete
            else "NOT complete: tell the user maestro cannot dispatch Codex until values are selected, "
            "and do not report setup as done.\n"
        )
        return (
            "MAESTRO SESSION SETUP — the user asked to choose the Codex model and per-role reasoning effort "
            "before work starts.\n"
            + problem
            + f"Show the current pins first:  {MAESTRO} model-select --show\n"
            "Then ask with the AskUserQuestion tool (an interactive picker, not a prose question):\n"
            f"  1) Debate model — current: {model}.\n"
            f"  2) Debate/design effort — current: {debate}.\n"
            f"  3) Implementation effort — current: {impl_effort}.\n"
            f"  4) Implementation model — current: {impl_model}.\n"
            + MODEL_PICKS
            + f"Apply the picks:  {MAESTRO} model-select <model> <debate-effort> <impl-effort> <impl-model>\n"
            "and confirm all four values in one line. \"Keep current\" is a valid answer only when the pin is "
            + keep
        )
    scout = _shown("/".join(pins.scout)) if pins.scout else "unpinned"
    inherited = "" if pins.impl_model else " (inherited)"
    tail = "." if armed else f" — or turn on the session-start setup question: {MAESTRO} model-select --ask-on-start on."
    return (
        problem
        + f"Maestro: Codex pin is model={model}, debate-effort={debate}, impl-effort={impl_effort}, "
        f"impl-model={impl_model}{inherited}, scout={scout}. Say \"codex model\" to change it before starting work"
        + tail
        + "\n"
    )


def build_context(payload: dict) -> str:
    from maestro import paths
    from maestro.codex.pins import read_pins

    armed = os.path.exists(paths.ask_on_start_flag())
    source = payload.get("source")
    return pin_context(read_pins(), armed, source if isinstance(source, str) else "startup")


def memory_context(payload: dict, pin_text: str) -> str:
    """The snapshot for the payload's cwd, ending in a blank line, or '' (no store, nothing stored,
    no room). Reads the track files only; a shown render is recorded in the cost ring."""
    from maestro import paths

    root = paths.memory_dir()
    if not os.path.isdir(root):
        return ""
    from maestro.util.text import utf16_len  # only once there is a store: no store, no import

    budget = CONTEXT_CAP - utf16_len(pin_text) - MEMORY_MARGIN
    if budget < MEMORY_MIN_CHARS:
        return ""
    repair_once(root)
    from maestro.memory.store import layout, snapshot

    cwd = payload.get("cwd")
    project = branch = None
    if isinstance(cwd, str) and cwd and os.path.isabs(cwd) and os.path.isdir(cwd):
        project, branch = layout.locate(cwd, GIT_TIMEOUT_SEC)
    items = open_handoffs(root, project) if project else None  # read once: the work block and the focus
    work = project_work(root, project, items) if project else ""
    budget -= utf16_len(work)
    if budget < MEMORY_MIN_CHARS:
        return work
    session_id = payload.get("session_id")
    session_id = session_id if is_valid_session_id(session_id) else None
    result = snapshot.render(root, project=project, branch=branch, session_id=session_id, max_chars=budget - 1,
                             focus=project_focus(root, project, branch, items) if project else "",
                             count_dropped=False)  # the cost ring records bytes only
    shown = () if result.empty or not result.text else result.shown
    if session_id and shown:  # an empty snapshot: an empty store, nothing for recall to find either
        record_shown(root, session_id, project, branch, shown)
    if result.empty or not result.text:
        return work
    record_cost(root, result)
    return work + result.text + "\n"


REPAIR_FLAG = os.path.join(".maestro-memory", "delimiter-repaired-v3")  # maestro/memory/store/repair.py FLAG_NAME


def repair_once(root: str) -> None:
    """The versioned delimiter repair (maestro/memory/store/repair.py) runs once per store: when its flag
    is missing and there is something to repair. One stat otherwise. Isolated: a refused repair
    (write-blocked, busy) leaves the flag missing, so the next session tries again; a failure
    leaves a crash note; the snapshot renders either way."""
    if os.path.exists(os.path.join(root, REPAIR_FLAG)):
        return
    try:
        if not any(name != ".maestro-memory" for name in os.listdir(root)):
            return  # an empty store: nothing to repair, nothing to record
        from maestro.memory.store import repair

        repair.repair_once_if_flag_missing(root)
    except Exception as exc:  # noqa: BLE001 - the context must survive
        from maestro import crash

        crash.record("session-start:memory-repair", exc)


def open_handoffs(root: str, project: str):
    """The project's open handoffs, read once for project_work and project_focus: [] without a handoffs
    directory (and no import), None when reading them failed (crash note; both parts then do without)."""
    from maestro.memory.store.layout import Layout

    if not os.path.isdir(os.path.join(Layout(root).project_dir(project), "handoffs")):
        return []
    try:
        from maestro.memory.project import context as project_context

        return project_context.open_items(root, project)
    except Exception as exc:  # noqa: BLE001 - the snapshot must survive
        from maestro import crash

        crash.record("session-start:project-handoffs", exc)
        return None


def project_work(root: str, project: str, items=None) -> str:
    """Open work and the patterns that apply to it (maestro/memory/project/context.py), at most
    PROJECT_CHARS; '' when the project has no handoffs and no patterns. `items`: open_handoffs'
    answer (None: read here). Failure-isolated: the snapshot still renders when this part breaks."""
    from maestro.memory.store.layout import Layout

    directory = Layout(root).project_dir(project)
    if not (os.path.isdir(os.path.join(directory, "handoffs")) or os.path.isfile(os.path.join(directory, "patterns.json"))):
        return ""
    try:
        from maestro.memory.project import context as project_context

        return project_context.render(root, project, PROJECT_CHARS, GIT_TIMEOUT_SEC, items)
    except Exception as exc:  # noqa: BLE001 - the snapshot must survive a broken project part
        from maestro import crash

        crash.record("session-start:project-work", exc)
        return ""


def project_focus(root: str, project: str, branch, items=()) -> str:
    """The branch and the open tasks `items` (open_handoffs' answer; maestro/memory/project/context.py
    `focus`): what the snapshot's Project Context is chosen by. Without open tasks, the branch alone
    (and no import). Isolated: '' (the newest entries, as before) when it or reading the tasks broke."""
    if items is None:
        return ""
    if not items:
        return branch or ""
    try:
        from maestro.memory.project import context as project_context

        return project_context.focus(root, project, branch, items)
    except Exception as exc:  # noqa: BLE001 - the snapshot must survive
        from maestro import crash

        crash.record("session-start:project-focus", exc)
        return ""


def record_shown(root: str, session_id: str, project, branch, shown) -> None:
    """What this start showed, for inject's recall (maestro/hooks/recall.py), with the project and branch
    it found. Isolated: a failure leaves a crash note; recall then only may repeat an entry."""
    try:
        from maestro.hooks import recall
        from maestro.memory.store import entry as grammar

        keys = []
        for section, text in shown:
            parts = grammar.split(text, section == "recentDaily")
            keys.append(recall.shown_key(parts.entry_id or "", grammar.trim(parts.body) or text))
        recall.write_record(root, session_id, project or "", branch or "", keys)
    except Exception as exc:  # noqa: BLE001 - the rendered context must survive
        from maestro import crash

        crash.record("session-start:recall-record", exc)


def record_cost(root: str, result) -> None:
    """Add this render's section sizes to the cost ring (maestro/memory/store/health.py). Isolated: a
    failure here leaves a crash note and never drops the context already rendered."""
    try:
        from maestro.memory.store import health

        health.record(root, health.sample(result))
    except Exception as exc:  # noqa: BLE001 - the rendered context must survive
        from maestro import crash

        crash.record("session-start:memory-cost", exc)


def _payload() -> dict:
    from maestro.util.fastjson import PayloadError, read_object

    try:
        return read_object()
    except PayloadError:
        return {}


def main(argv) -> int:
    if argv:
        from maestro.hooks.hook_help import hook_help

        return hook_help("session-start", __doc__, argv, failure_code=Exit.OK)
    payload, context, memory = {}, "", ""
    for step in ("payload", "grants", "export", "context", "memory"):
        try:
            if step == "payload":
                payload = _payload()
            elif step == "grants":
                clear_grants(payload)
            elif step == "export":
                export_session_id(payload)
            elif step == "context":
                context = build_context(payload)
            else:
                memory = memory_context(payload, context)
        except Exception as exc:  # noqa: BLE001 - never fail the session; leave a crash note
            from maestro import crash

            crash.record(f"session-start:{step}", exc)
    if memory or context:
        sys.stdout.write(memory + context)
        sys.stdout.flush()
    return Exit.OK
