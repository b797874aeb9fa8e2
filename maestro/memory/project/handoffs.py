"""Handoffs: unfinished work, written where it stops and surfaced at the next session start.

    projects/<h>/handoffs/<task-id>.json        one per open task (loop/watchdog terminal states)
    projects/<h>/handoffs/session-<sid>.json    the Stop hook's note for a session that ended a turn
                                                with work still open (a dispatch running, open tasks)

    {"version": 1, "task_id", "kind": "loop"|"watchdog"|"session", "title", "plan", "state",
     "iterations", "next_command", "questions", "doing", "files", "outcome", "session_id", "updated_at"}

A task that ends VERIFIED_DONE/DONE has its handoff removed: nothing is left to resume. Handoffs hold
session state, never code; every text field is sanitized and bounded. Reading is forgiving (a bad
file is skipped, never fatal: this runs inside the SessionStart hook) and strict about ids: the file
name must be `<valid task id>.json` and match the record's task_id, so `../x` never names a file.
"""

import os

from maestro.memory.project import files as project
from maestro.messages import LOOP_CLEAR_LEASE
from maestro.util.text import one_line

VERSION = 1
FIELD_LIMIT = 2000
LINE_LIMIT = 300
MAX_LINES = 5


def _clean(value, limit: int = FIELD_LIMIT):
    if value is None:
        return None
    from maestro.memory.store.sanitize import filter_text

    text = filter_text(str(value))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def path_for(memory: "project.ProjectMemory", task_id: str) -> str:
    return os.path.join(memory.handoffs, project.check_id(task_id, "task id") + ".json")


def write(memory, *, task_id, kind, title, state, next_command, plan=None, iterations=None, questions=None,
          doing=None, files=(), outcome=None, session_id=None, updated_at=None) -> str:
    from maestro.memory.project.outcomes import now_utc

    value = {
        "version": VERSION, "task_id": project.check_id(task_id, "task id"), "kind": kind,
        "title": _clean(title, 200), "plan": plan, "state": state, "iterations": iterations,
        "next_command": _clean(next_command, 500), "questions": _clean(questions), "doing": _clean(doing, 500),
        "files": sorted({f for f in files if isinstance(f, str)})[:50], "outcome": outcome, "session_id": session_id,
        "updated_at": updated_at or now_utc(),
    }
    path = path_for(memory, task_id)
    project.write_json(path, value)
    return path


def remove(memory, task_id: str) -> bool:
    try:
        os.unlink(path_for(memory, task_id))
        return True
    except FileNotFoundError:
        return False


def load_open(memory) -> list:
    """The valid handoffs whose state is still open, newest first. Skips anything malformed."""
    from maestro.memory.project.outcomes import OPEN_STATES

    try:
        names = os.listdir(memory.handoffs)
    except OSError:
        return []
    found = []
    for name in names:
        task_id = name[:-5] if name.endswith(".json") else ""
        if not project.is_valid_id(task_id):
            continue
        path = os.path.join(memory.handoffs, name)
        try:
            if os.path.islink(path):
                continue  # only files maestro wrote: a link may point anywhere
            value = project.read_json(path)
        except Exception:  # noqa: BLE001 - one bad file must not hide the others or fail the hook
            continue
        if (not isinstance(value, dict) or value.get("version") != VERSION or value.get("task_id") != task_id
                or (value.get("kind") != "session" and value.get("state") not in OPEN_STATES)):
            continue
        found.append(_normalised(value))
    return sorted(found, key=lambda item: str(item.get("updated_at")), reverse=True)


def _normalised(value: dict) -> dict:
    """A record from disk with every field the readers use in its expected type (a hand-edited
    file may hold anything): text fields str or None, files a list of str, iterations int or None."""
    out = dict(value)
    for field in ("title", "plan", "state", "next_command", "questions", "doing", "updated_at"):
        if out.get(field) is not None and not isinstance(out[field], str):
            out[field] = None
    files = out.get("files")
    out["files"] = [f for f in files if isinstance(f, str)] if isinstance(files, list) else []
    iterations = out.get("iterations")
    out["iterations"] = iterations if isinstance(iterations, int) and not isinstance(iterations, bool) else None
    return out


def _clause(state: str, plan: str, kind: str, task_id: str):
    """What to do about the task before dispatching it again (None: nothing, just re-run)."""
    if state == "NEEDS_ANSWERS":
        if kind != "watchdog" and plan:  # the loop appends the questions to the plan
            return f"answer QUESTIONS in {plan}"
        return f"answer the QUESTIONS (maestro memory outcome list --task {task_id})"
    if state == "STUCK":
        return f"re-plan or debate the root cause (attempt history in {plan})"
    if state in ("BLOCKED", "POISONED"):
        return "check `maestro status` and resolve the blocker"
    return None


def next_step(state: str, plan: str, verify: str = None, kind: str = "loop", task_id: str = None, *,
              worktree: str = None, worktree_dir: str = None) -> str:
    """The command to run next, with every argument shell-quoted (an agent may run it as is). A run in an
    isolated worktree (`worktree` NAME, `worktree_dir` when not the default place) continues there."""
    place = ""
    if worktree:  # the watchdog takes NAME only as --worktree=NAME (a bare word there is the plan)
        place = (f" --worktree={_quote(worktree)}" if kind == "watchdog" else f" --worktree {_quote(worktree)}") + \
            (f" --worktree-dir {_quote(worktree_dir)}" if worktree_dir else "")
    if kind == "watchdog":
        rerun = f"maestro watchdog{place} --file {_quote(plan)}" if plan else f"maestro watchdog{place} \"<the plan>\""
    else:
        rerun = f"maestro loop{place} --plan {_quote(plan)}" + (f" --verify {_quote(verify)}" if verify else "")
    clause = _clause(state, plan, kind, task_id)
    return f"{clause}, then run: {rerun}" if clause else f"run again: {rerun}"


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def resume_line(value: dict) -> str:
    """One line per open item: `Resuming: <task> — <STATE> after N iterations; <next step>`."""
    if value.get("kind") == "session":
        line = (f"Last session stopped with work open: {one_line(value.get('doing') or '(unknown)', 120)} — "
                f"{one_line(value.get('state'), 80)}; next: {one_line(value.get('next_command'), 160)}")
        return one_line(line, LINE_LIMIT)
    iterations = value.get("iterations")
    after = f" after {iterations} iteration{'s' if iterations != 1 else ''}" if isinstance(iterations, int) else ""
    step = short_step(value.get("state"), value.get("plan"), value.get("kind"), value.get("task_id")) \
        or value.get("next_command") or ""
    line = f"Resuming: {one_line(value.get('title'), 100)} — {value.get('state')}{after}; {one_line(step, 200)}"
    return one_line(line, LINE_LIMIT)


def short_step(state: str, plan: str, kind: str = "loop", task_id: str = None):
    """The next step as one short clause for the resume line (the handoff keeps the full command)."""
    if not plan:
        return None
    clause = _clause(state, plan, kind, task_id)
    again = f"re-run the {kind if kind == 'watchdog' else 'loop'} on {plan}"
    if state in ("NEEDS_ANSWERS", "STUCK"):
        return clause
    return f"{clause}, then {again}" if clause else again


def resume_lines(memory, limit: int = MAX_LINES, items: list = None) -> list:
    """The open tasks, then the newest session; `items` are the open handoffs when the caller already read them."""
    items = load_open(memory) if items is None else items
    tasks = [item for item in items if item.get("kind") != "session"]
    sessions = [item for item in items if item.get("kind") == "session"]
    lines = [resume_line(item) for item in tasks[:limit]]
    if len(tasks) > limit:
        lines.append(f"(+{len(tasks) - limit} more open task(s): maestro memory outcome list)")
    if sessions:
        lines.append(resume_line(sessions[0]))
    return lines


def session_task_id(session_id: str) -> str:
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in session_id)[:40]
    return project.check_id(f"session-{safe}", "task id")


def from_stop(payload: dict, root: str = None, last_prompt=None) -> str:
    """The Stop hook's handoff: when this session ends a turn with work still open in its project
    (a write lease held in the worktree — a dispatch running or left behind — or open task
    handoffs), record what it was doing and the next step; otherwise clear the session's note.
    Returns the action taken ('written', 'cleared', or '' when there was nothing to look at).
    `last_prompt(transcript_path)` gives "what was being done" (the turn's prompt)."""
    from maestro.util.session import is_valid_session_id

    cwd, session_id = payload.get("cwd"), payload.get("session_id")
    if ("agent_id" in payload or not is_valid_session_id(session_id) or not isinstance(cwd, str)
            or not os.path.isabs(cwd) or not os.path.isdir(cwd)):
        return ""
    from maestro.util import git as gitscope

    directory = os.path.realpath(cwd)
    try:  # one git call for both: the Stop hook runs at the end of every turn
        top, git_dir = gitscope.git(["rev-parse", "--show-toplevel", "--absolute-git-dir"], directory).splitlines()
        top = os.path.realpath(top)  # = layout.project_root(cwd)
        lease_held = os.path.isdir(os.path.join(git_dir, "maestro-write.lock"))
    except (gitscope.GitError, ValueError):  # not a repository: the project is the directory itself
        top, lease_held = directory, False
    memory = project.ProjectMemory(top, root)
    task_id = session_task_id(session_id)
    open_tasks = [item for item in load_open(memory) if item.get("kind") != "session"]
    if not lease_held and not open_tasks:
        return "cleared" if remove(memory, task_id) else ""
    doing = last_prompt(payload.get("transcript_path")) if last_prompt else None
    if lease_held:
        state = "a write dispatch holds the lease in this worktree (running, or left behind)"
        step = f"maestro status (then wait for it, or maestro {LOOP_CLEAR_LEASE} if it is dead)"
    else:
        titles = ", ".join(f"{one_line(item.get('title'), 60)} ({item.get('state')})" for item in open_tasks[:3])
        state = f"{len(open_tasks)} open task(s): {titles}"
        step = open_tasks[0].get("next_command") or "maestro memory outcome list"
    questions = "\n".join(item["questions"] for item in open_tasks
                          if item.get("state") == "NEEDS_ANSWERS" and isinstance(item.get("questions"), str))
    write(memory, task_id=task_id, kind="session", title=f"session {session_id}", state=state, next_command=step,
          questions=questions or None, doing=doing, files=[f for item in open_tasks for f in item.get("files") or ()],
          session_id=session_id)
    for name in os.listdir(memory.handoffs):  # the project's open work has one session note: the latest
        if name.startswith("session-") and name != task_id + ".json":
            try:
                os.unlink(os.path.join(memory.handoffs, name))
            except OSError:
                pass
    return "written"
