"""Project memory: what maestro learns about one project, kept beside its memory tracks.

    projects/<h>/codemaps/<repo_id>/<slug>.md       codemaps (maestro/memory/project/codemap.py)
    projects/<h>/outcomes/<outcome-id>.json         one record per loop/watchdog run (outcomes.py)
    projects/<h>/patterns.json                      patterns and things to avoid (patterns.py)
    projects/<h>/candidate-skills/<slug>/           candidate-skill.md + observations.jsonl
    projects/<h>/handoffs/<task-id>.json            unfinished work, surfaced at session start
    projects/<h>/tasks/<task-id>/                   per-task artefacts (codemap-audit.json)

`<h>` is the project hash of maestro/memory/store/layout.py. Every id that becomes a path component
(repo id, slug, task id, outcome id) goes through `check_id` first: ids come from command lines,
files and hook payloads, and none of them may leave the directory it names a file in.

What patterns.py, skills.py and learn.py all need lives here, below them, so that none of the three
imports another to get it: the project's learning lock (`locked`) and the text cleaner (`clean`).
"""

import json
import os
import re

from maestro.util import atomic
from maestro.memory.store.errors import StoreError
from maestro.memory.store.layout import Layout, project_root

ID_MAX = 64
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*", re.ASCII)


def is_valid_id(value) -> bool:
    """A non-empty, bounded token of letters, digits, `.`, `_`, `-`; no separators, no `..`."""
    return (isinstance(value, str) and 0 < len(value) <= ID_MAX and _ID.fullmatch(value) is not None
            and ".." not in value)


def check_id(value, what: str = "id") -> str:
    if not is_valid_id(value):
        shown = value if isinstance(value, str) else type(value).__name__
        raise StoreError(f"invalid {what} {shown[:80]!r} (1–{ID_MAX} of A-Z a-z 0-9 . _ -, starting with a "
                         "letter or digit; no path separators or '..')", "usage")
    return value


def slugify(text: str, limit: int = 40) -> str:
    """stage-harness's slug rule: lowercase, drop non-word characters other than space and `-`,
    spaces and `_` become `-`, runs of `-` collapse, trimmed, cut to `limit` ('' when nothing is left)."""
    text = re.sub(r"[^\w\s-]", "", text.lower(), flags=re.ASCII)
    text = re.sub(r"[\s_]+", "-", text)
    text = re.sub(r"-{2,}", "-", text).strip("-")
    return text[:limit].strip("-")


class ProjectMemory:
    """The project-memory directories of one project root (paths only; nothing is created here)."""

    def __init__(self, root: str, memory_root: str = None):
        self.project = root
        self.dir = Layout(memory_root).project_dir(root) if memory_root else Layout.default().project_dir(root)

    @classmethod
    def for_cwd(cls, cwd: str = None, memory_root: str = None) -> "ProjectMemory":
        return cls(project_root(cwd), memory_root)

    def sub(self, *parts: str) -> str:
        return os.path.join(self.dir, *parts)

    @property
    def codemaps(self) -> str:
        return self.sub("codemaps")

    @property
    def outcomes(self) -> str:
        return self.sub("outcomes")

    @property
    def patterns_file(self) -> str:
        return self.sub("patterns.json")

    @property
    def candidate_skills(self) -> str:
        return self.sub("candidate-skills")

    @property
    def handoffs(self) -> str:
        return self.sub("handoffs")

    def task_dir(self, task_id: str) -> str:
        return self.sub("tasks", check_id(task_id, "task id"))


def write_json(path: str, value) -> None:
    """Publish one JSON document atomically (0600, private parent directories)."""
    atomic.make_private_dirs(os.path.dirname(path))
    data = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False) + "\n"
    atomic.write_atomic(path, data.encode("utf-8"))


MAX_JSON_BYTES = 4 << 20


def read_json(path: str):
    """The parsed document, None when absent; a present but unreadable, oversized or malformed
    file — or anything but a regular file (a FIFO would block the SessionStart hook; a link may
    point anywhere) — raises StoreError (fails closed: the caller never overwrites what it could
    not read)."""
    try:
        data = atomic.read_regular(path, MAX_JSON_BYTES)
    except atomic.NotRegular as exc:
        raise StoreError(f"{path} is {exc.reason}", "malformed") from None
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}", "io") from None
    if data is None:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise StoreError(f"{path} is not valid JSON; fix or remove it", "malformed") from None


def locked(memory):
    """The project's learning lock (patterns.json and candidate skills), bounded like the store's."""
    import contextlib

    from maestro.memory.store.lock import timeout_seconds

    @contextlib.contextmanager
    def hold():
        atomic.make_private_dirs(memory.dir)
        try:
            with atomic.flock_file(os.path.join(memory.dir, ".patterns.lock"), timeout_seconds()):
                yield
        except atomic.LockBusy:
            raise StoreError("the project's patterns lock is held by another writer; try again", "busy") from None

    return hold()


def clean(text: str, what: str, limit: int = 300) -> str:
    """`text` on one line, through the memory sanitizer, cut to `limit`; empty or secret-only text is refused."""
    from maestro.memory.store.sanitize import sanitize

    text = " ".join((text or "").split())
    if not text:
        raise StoreError(f"{what} is empty", "invalid")
    safe = sanitize(text)
    if safe is None:
        raise StoreError(f"content filtered (sensitive-only): {what}", "sensitive")
    return safe[:limit]
