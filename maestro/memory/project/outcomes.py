"""Outcome records: what one loop or watchdog run (or a person, by hand) learned about a task.

    projects/<h>/outcomes/<outcome-id>.json

    {"version": 1, "id", "task_id", "kind": "loop"|"watchdog"|"manual", "plan", "plan_title",
     "started_at", "ended_at", "state", "rc", "iterations",
     "verify": {"command", "last_state", "last_rc", "last_output_tail"} | null,
     "attempts": [{"n", "result", "check", "summary"}],
     "files_changed": [...], "files_named": [...], "session_id", "questions",
     "what_worked": [...], "what_didnt": [...], "notes"}

`files_named` are the repository files the plan names (what the task is about even when it changed
nothing). `attempts[].check` is the failing check's signature (`failure_signature`): the verify command and
the first line of its output that names a failure, with the volatile parts (durations, counts,
addresses, line numbers) replaced, so that the same check failing in two runs gives the same
text — that is what `memory patterns extract` counts. Times are UTC ISO-8601 with `Z`.
A task id names the work across runs: the plan file's slug plus 8 hex of its absolute path.
"""

import os
import re

from maestro.memory.project import files as project
from maestro.memory.store.errors import StoreError
from maestro.util.clock import utc_stamp

VERSION = 1
KINDS = ("loop", "watchdog", "manual")
STATES = ("VERIFIED_DONE", "DONE", "NEEDS_ANSWERS", "BLOCKED", "STUCK", "FAILED", "INTERRUPTED", "POISONED")
OPEN_STATES = ("NEEDS_ANSWERS", "BLOCKED", "STUCK", "FAILED", "INTERRUPTED", "POISONED")
TAIL_CHARS = 2000
_FAILURE_HINT = re.compile(r"\b(FAILED|FAIL|ERROR|Error|error|failed|Traceback|assert|Assertion)\b")
_VOLATILE = (
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<addr>"),
    (re.compile(r"\b(?=[0-9]*[a-f])[0-9a-f]{7,64}\b"), "<hash>"),  # a hex id has a letter; a count does not
    (re.compile(r"\d+(\.\d+)?\s*(ms|s|sec|seconds)\b"), "<time>"),
    (re.compile(r"(?<=:)\d+\b"), "<n>"),
    (re.compile(r"\b\d+\b"), "<n>"),
)


def now_utc(clock=None) -> str:
    """The record's timestamp; `clock` (tests) returns the datetime to stamp."""
    return utc_stamp(clock() if clock else None)


def task_id_for_plan(plan_path: str) -> str:
    from hashlib import sha1

    absolute = os.path.abspath(plan_path)
    stem = project.slugify(os.path.splitext(os.path.basename(absolute))[0], 40) or "plan"
    return f"{stem}-{sha1(absolute.encode('utf-8', 'surrogateescape')).hexdigest()[:8]}"


GENERIC_HEADINGS = frozenset(("plan", "task", "todo", "objective", "goal", "overview", "summary", "context",
                              "the plan", "implementation plan"))
_LABEL = re.compile(r"^(objective|goal|task|summary)\s*:\s*", re.I)


def plan_title(text: str, limit: int = 120) -> str:
    """The first Markdown heading that says something (not a bare "Plan"/"Task"…), else the first
    other line with a leading "Objective:"-style label dropped; one line and bounded."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    headings = [line.lstrip("#").strip() for line in lines if line.startswith("#")]
    title = next((h for h in headings if h and h.casefold().rstrip(":") not in GENERIC_HEADINGS), None)
    if title is None:
        body = next((line for line in lines if not line.startswith("#")), None)
        title = _LABEL.sub("", body) if body else (headings[0] if headings else "")
    title = "".join(ch if ch.isprintable() else " " for ch in title or "(untitled plan)")
    return title if len(title) <= limit else title[: limit - 1] + "…"


def tail(text: str, limit: int = TAIL_CHARS) -> str:
    """The sanitized end of `text`: filtered before it is cut, so a secret whose label falls
    outside the window (`…ssword: hunter2`) cannot slip through."""
    from maestro.memory.store.sanitize import filter_text

    text = filter_text(text)
    return text if len(text) <= limit else "…" + text[-(limit - 1):]


def failure_signature(command: str, output: str) -> str:
    """`<command> :: <first failure line, normalised>`; the last non-empty line when none names a
    failure; '' when there is no output at all."""
    from maestro.memory.store.sanitize import filter_text

    command = " ".join(filter_text(command).split())[:120]
    lines = [line.strip() for line in filter_text(output).splitlines() if line.strip()]
    if not lines:
        return f"{command} :: (no output)"
    line = next((candidate for candidate in lines if _FAILURE_HINT.search(candidate)), lines[-1])
    for pattern, replacement in _VOLATILE:
        line = pattern.sub(replacement, line)
    line = " ".join(line.split())[:160]
    return f"{command} :: {line}"


def new_id(kind: str, task_id: str, started_at: str) -> str:
    stamp = started_at.replace("-", "").replace(":", "")
    suffix = os.urandom(2).hex()
    return project.check_id(f"{stamp}-{kind}-{task_id}"[: project.ID_MAX - 5] + f"-{suffix}", "outcome id")


def validate(record) -> dict:
    """A record as read from disk or built by hand: the fields every reader relies on."""
    if not isinstance(record, dict) or record.get("version") != VERSION:
        raise StoreError("outcome record has an unsupported schema", "malformed")
    project.check_id(record.get("id"), "outcome id")
    project.check_id(record.get("task_id"), "task id")
    if record.get("kind") not in KINDS or record.get("state") not in STATES:
        raise StoreError(f"outcome {record.get('id')}: unknown kind or state", "malformed")
    for field in ("attempts", "files_changed", "what_worked", "what_didnt"):
        if not isinstance(record.get(field, []), list):
            raise StoreError(f"outcome {record.get('id')}: {field} must be a list", "malformed")
    return record


def _sanitized(value):
    """Every string in a record goes through the memory sanitizer: an outcome quotes plans, verify
    output and Codex's questions, any of which may hold a secret."""
    from maestro.memory.store.sanitize import filter_text

    if isinstance(value, str):
        return filter_text(value)
    if isinstance(value, list):
        return [_sanitized(item) for item in value]
    if isinstance(value, dict):
        return {key: _sanitized(item) for key, item in value.items()}
    return value


def record(*, kind, task_id, state, started_at, ended_at=None, rc=None, plan=None, title=None, iterations=0,
           verify=None, attempts=(), files_changed=(), session_id=None, questions=None, what_worked=(),
           what_didnt=(), notes="", files_named=()) -> dict:
    ended_at = ended_at or now_utc()
    title, verify, attempts, questions = _sanitized(title), _sanitized(verify), _sanitized(list(attempts)), _sanitized(questions)
    what_worked, what_didnt, notes = _sanitized(list(what_worked)), _sanitized(list(what_didnt)), _sanitized(notes)
    return validate({
        "version": VERSION, "id": new_id(kind, task_id, started_at), "task_id": task_id, "kind": kind,
        "plan": plan, "plan_title": title or "(untitled)", "started_at": started_at, "ended_at": ended_at,
        "state": state, "rc": rc, "iterations": iterations, "verify": verify, "attempts": list(attempts),
        "files_changed": sorted(set(files_changed)), "files_named": sorted(set(files_named)),
        "session_id": session_id, "questions": questions,
        "what_worked": list(what_worked), "what_didnt": list(what_didnt), "notes": notes,
    })


def save(memory: "project.ProjectMemory", value: dict) -> str:
    validate(value)
    path = os.path.join(memory.outcomes, value["id"] + ".json")
    project.write_json(path, value)
    return path


def load_all(memory: "project.ProjectMemory", errors=None) -> list:
    """Every valid outcome of the project, oldest first (by started_at, then id). Invalid files are
    skipped and named in `errors` (a list) when given: one bad file never hides the others."""
    try:
        names = sorted(name for name in os.listdir(memory.outcomes) if name.endswith(".json"))
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        path = os.path.join(memory.outcomes, name)
        try:
            value = validate(project.read_json(path))
            if value["id"] + ".json" != name:
                raise StoreError(f"{name}: id does not match the file name", "malformed")
            found.append(value)
        except StoreError as exc:
            if errors is not None:
                errors.append(f"{path}: {exc.message}")
    return sorted(found, key=lambda item: (str(item.get("started_at")), item["id"]))
