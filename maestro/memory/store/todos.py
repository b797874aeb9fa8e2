"""Todos in dsh-maestro-memory's format (spec memory.md §2.12): the domain under `memory todo`
(the command: maestro/commands/memory/todo.py).

Lists and their files (under the store root):

    life     TODOS-life.md            work     TODOS-work.md
    project  projects/<h>/TODOS.md    daily    daily/YYYY-MM-DD.todo.md
    archive  TODO-archive.md          (done and dropped todos moved by `todo archive`)

A file is a comment header (`<!-- … -->`, its first entry) then `§`-separated entries; each entry's
first line is its header and the rest is the text:

    [YYYY-MM-DD HH:MM] [id: 8hex] [qN]? [due: D]? [status: s] [cat: c]? [done: YYYY-MM-DD HH:MM]?
    the todo's text (sanitized)

Statuses: open, doing, done, dropped. Quadrants are Eisenhower's: q1 urgent and important, q2
important, q3 urgent, q4 neither. Entries that do not parse as todos (the header, foreign text) are
kept as they are. Every write goes through `Store.transaction()`: lock, write-block, drift guard.

The default view: open (or doing) todos that are overdue, due today, in the project list, life/work
todos in q1 or q2, and today's daily todos; ranked overdue < due today < q1 < q2 < q3 < q4 < none
(then by due date, then oldest first, then file order), at most 8; the open todos it leaves out are
counted, so `todo list` can say where they are. `--list L` shows every open todo of list L, ranked, at
most 8. `--all` lists every todo of every status.
"""

import glob
import os
import re
from dataclasses import dataclass

from maestro.memory.store import layout
from maestro.memory.store.errors import StoreError
from maestro.memory.store.tracks import Store, clean_text
from maestro.memory.store.txn import read_entries
from maestro.util.tokens import token_hex

LISTS = ("life", "work", "project", "daily")
STATUSES = ("open", "doing", "done", "dropped")
ACTIVE = ("open", "doing")
VIEW_LIMIT = 8
HEADER = ("<!-- maestro todos (dsh-maestro-memory format): each entry's first line is "
          "[created] [id: 8hex] [qN]? [due: YYYY-MM-DD]? [status: open|doing|done|dropped] [cat: c]? "
          "[done: when]?, then the text -->")
ARCHIVE_FILE = "TODO-archive.md"
_FILES = {"life": "TODOS-life.md", "work": "TODOS-work.md"}
_HEAD = re.compile(
    r"\[(?P<created>[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?)\]"
    r"[ \t]+\[id:[ \t]*(?P<id>[0-9a-fA-F]{8})\]"
    r"(?:[ \t]+\[q(?P<q>[1-4])\])?"
    r"(?:[ \t]+\[due:[ \t]*(?P<due>[0-9]{4}-[0-9]{2}-[0-9]{2})\])?"
    r"[ \t]+\[status:[ \t]*(?P<status>open|doing|done|dropped)\]"
    r"(?:[ \t]+\[cat:[ \t]*(?P<cat>[^\]\n]*)\])?"
    r"(?:[ \t]+\[done:[ \t]*(?P<done>[^\]\n]*)\])?[ \t]*", re.ASCII)
_CAT_UNSAFE = re.compile(r"[\[\]\n\r\t]")


@dataclass(frozen=True)
class Todo:
    id: str
    text: str
    created: str
    status: str = "open"
    quadrant: int = None
    due: str = None
    cat: str = None
    done: str = None
    list: str = None
    file: str = None

    def entry(self) -> str:
        head = [f"[{self.created}]", f"[id: {self.id}]"]
        if self.quadrant:
            head.append(f"[q{self.quadrant}]")
        if self.due:
            head.append(f"[due: {self.due}]")
        head.append(f"[status: {self.status}]")
        if self.cat:
            head.append(f"[cat: {self.cat}]")
        if self.done:
            head.append(f"[done: {self.done}]")
        return " ".join(head) + "\n" + self.text

    def as_dict(self) -> dict:
        return {"id": self.id, "text": self.text, "created": self.created, "status": self.status,
                "quadrant": f"q{self.quadrant}" if self.quadrant else None, "due": self.due, "cat": self.cat,
                "done": self.done, "list": self.list, "file": self.file}


def parse(entry: str, list_name: str = None, path: str = None):
    """The todo an entry holds, or None (the comment header, foreign text)."""
    first, _, rest = entry.partition("\n")
    match = _HEAD.fullmatch(first)
    if not match or not rest.strip():
        return None
    g = match.groupdict()
    return Todo(g["id"].lower(), rest, g["created"], g["status"], int(g["q"]) if g["q"] else None, g["due"],
                (g["cat"] or "").strip() or None, (g["done"] or "").strip() or None, list_name, path)


def quadrant(value) -> int:
    if value is None:
        return None
    text = str(value).strip().lower()
    text = text[1:] if text.startswith("q") else text
    if text not in ("1", "2", "3", "4"):
        raise StoreError(f"invalid quadrant {str(value)[:20]!r} (q1 urgent+important, q2 important, q3 urgent, "
                         "q4 neither)", "usage")
    return int(text)


def due_date(value):
    if value is None:
        return None
    try:
        return layout.check_date(value)
    except StoreError as exc:
        raise StoreError(f"invalid due date: {exc.message.removeprefix('invalid date ')}", "usage") from None


def category(value):
    if value is None:
        return None
    text = clean_text(value, "category")
    text = " ".join(_CAT_UNSAFE.sub(" ", text).split())[:40]
    return text or None


def _today(now) -> str:
    return now.date().isoformat()


def rank(todo: Todo, today: str) -> tuple:
    """Sort key: overdue < due today < q1…q4 < none; then due date, then oldest first."""
    if todo.due and todo.due < today:
        tier = 0
    elif todo.due == today:
        tier = 1
    elif todo.quadrant:
        tier = 1 + todo.quadrant
    else:
        tier = 6
    return (todo.status not in ACTIVE, tier, todo.due or "9999-99-99", todo.created)  # ties: file order


def in_default_view(todo: Todo, today: str) -> bool:
    if todo.status not in ACTIVE:
        return False
    if todo.due and todo.due <= today:
        return True
    if todo.list == "project":
        return True
    if todo.list in ("life", "work") and todo.quadrant in (1, 2):
        return True
    return todo.list == "daily" and todo.file and os.path.basename(todo.file) == f"{today}.todo.md"


def default_view(todos, today: str, limit: int = VIEW_LIMIT):
    """(the ranked view, at most `limit`; how many more qualified)."""
    chosen = sorted((t for t in todos if in_default_view(t, today)), key=lambda t: rank(t, today))
    return chosen[:limit], max(0, len(chosen) - limit)


@dataclass(frozen=True)
class View:
    """What `todo list` shows: `shown` (ranked, at most the limit), `more` (qualified but over the
    limit) and `left_out`: the open todos the default view does not qualify (a plain work todo with
    no due date or quadrant, say), so a todo just added is never silently missing from the list."""

    shown: list
    more: int
    left_out: list


def list_view(todos, today: str, list_name: str = None, limit: int = VIEW_LIMIT) -> View:
    """The default view over every list; with `list_name`, every open (or doing) todo of that list,
    ranked: a user who names a list asks for its todos, not for the ones urgent enough to rank."""
    if list_name:
        chosen = sorted((t for t in todos if t.list == list_name and t.status in ACTIVE), key=lambda t: rank(t, today))
        return View(chosen[:limit], max(0, len(chosen) - limit), [])
    shown, more = default_view(todos, today, limit)
    left_out = [t for t in todos if t.status in ACTIVE and not in_default_view(t, today)]
    return View(shown, more, left_out)


class Todos:
    def __init__(self, store: Store = None):
        self.store = store or Store()

    @property
    def root(self) -> str:
        return self.store.root

    def path(self, list_name: str, cwd: str = None, date: str = None) -> str:
        if list_name in _FILES:
            return os.path.join(self.root, _FILES[list_name])
        if list_name == "project":
            return os.path.join(self.store.target("project", cwd).path.rsplit(os.sep, 1)[0], "TODOS.md")
        if list_name == "daily":
            day = layout.check_date(date) if date is not None else _today(self.store.clock())
            return os.path.join(self.store.layout.daily_dir, f"{day}.todo.md")
        raise StoreError(f"unknown todo list '{str(list_name)[:20]}' (lists: {', '.join(LISTS)})", "usage")

    def today(self) -> str:
        """Today by the store's clock, YYYY-MM-DD: the day the default view ranks against."""
        return _today(self.store.clock())

    @property
    def archive_path(self) -> str:
        return os.path.join(self.root, ARCHIVE_FILE)

    def files(self, cwd: str = None) -> list:
        """(list, path) for every todo file there is to read: life, work, the project's, each daily."""
        out = [("life", self.path("life")), ("work", self.path("work"))]
        try:
            out.append(("project", self.path("project", cwd)))
        except StoreError:
            pass  # no project directory: no project list
        for path in sorted(glob.glob(os.path.join(glob.escape(self.store.layout.daily_dir), "*.todo.md"))):
            try:
                layout.check_date(os.path.basename(path)[: -len(".todo.md")])
            except StoreError:
                continue
            out.append(("daily", path))
        return out

    def all(self, cwd: str = None) -> list:
        todos = []
        for list_name, path in self.files(cwd):
            todos += [t for t in (parse(e, list_name, path) for e in read_entries(path)) if t]
        return todos

    # --- writes ----------------------------------------------------------------------------

    def add(self, text, list_name: str = "work", due=None, quadrant_=None, cat=None, cwd: str = None,
            date: str = None):
        """(the todo stored, duplicate?). An open todo with the same text in the same list is a duplicate."""
        if list_name not in LISTS:
            raise StoreError(f"unknown todo list '{str(list_name)[:20]}' (lists: {', '.join(LISTS)})", "usage")
        if date is not None and list_name != "daily":
            raise StoreError("--date applies to the daily list only", "usage")
        due, q, cat = due_date(due), quadrant(quadrant_), category(cat)
        body = clean_text(text, "todo")
        path = self.path(list_name, cwd, date)
        now = self.store.clock()
        with self.store.transaction() as tx:
            entries = tx.read(path)
            todos = [t for t in (parse(e) for e in entries) if t]
            for todo in todos:
                if todo.status in ACTIVE and " ".join(todo.text.split()) == " ".join(body.split()):
                    return Todo(**{**todo.__dict__, "list": list_name, "file": path}), True
            ids = {t.id for t in self.all(cwd)}
            new_id = token_hex(4)
            while new_id in ids:
                new_id = token_hex(4)
            todo = Todo(new_id, body, f"{now:%Y-%m-%d %H:%M}", "open", q, due, cat, None, list_name, path)
            if not entries:
                entries = [HEADER]
            tx.stage(path, entries + [todo.entry()])
            tx.commit()
        return todo, False

    def _find(self, todo_id: str, cwd: str = None):
        wanted = str(todo_id).strip().lower()
        if not re.fullmatch(r"[0-9a-f]{4,8}", wanted):
            raise StoreError(f"invalid todo id {str(todo_id)[:20]!r} (8 hex digits, or a unique prefix)", "usage")
        hits = [t for t in self.all(cwd) if t.id.startswith(wanted)]
        if not hits:
            raise StoreError(f"no todo with id {wanted}", "no_match")
        if len({t.id for t in hits}) > 1:
            raise StoreError(f"ambiguous todo id {wanted} ({len(hits)} todos)", "ambiguous")
        return hits[0]

    def set_status(self, todo_id: str, status: str, cwd: str = None) -> Todo:
        if status not in STATUSES:
            raise StoreError(f"invalid status {status!r} ({', '.join(STATUSES)})", "usage")
        found = self._find(todo_id, cwd)
        now = self.store.clock()
        with self.store.transaction() as tx:
            entries = tx.read(found.file)
            for index, entry in enumerate(entries):
                todo = parse(entry, found.list, found.file)
                if todo and todo.id == found.id:
                    break
            else:
                raise StoreError(f"no todo with id {found.id} (changed meanwhile)", "no_match")
            done = f"{now:%Y-%m-%d %H:%M}" if status in ("done", "dropped") else None
            new = Todo(**{**todo.__dict__, "status": status, "done": done})
            tx.stage(found.file, entries[:index] + [new.entry()] + entries[index + 1:])
            tx.commit()
        return new

    def archive(self, cwd: str = None) -> list:
        """Move every done and dropped todo to TODO-archive.md (the archive is written first)."""
        moved = []
        with self.store.transaction() as tx:
            archived = tx.read(self.archive_path)
            for _list_name, path in self.files(cwd):
                entries = tx.read(path)
                keep = []
                for entry in entries:
                    todo = parse(entry)
                    if todo and todo.status not in ACTIVE:
                        moved.append(todo)
                        if entry not in archived:
                            archived.append(entry)
                    else:
                        keep.append(entry)
                if len(keep) != len(entries):
                    if not archived or archived[0] != HEADER:
                        archived = [HEADER] + [e for e in archived if e != HEADER]
                    tx.stage(self.archive_path, archived)
                    tx.stage(path, keep)
            tx.commit()
        return moved
