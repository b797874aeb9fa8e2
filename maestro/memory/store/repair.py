"""Repair: rewrite drifted files in canonical form (spec memory.md §2.10, repair v3). The domain
only: the `memory repair` command (arguments, result lines) is maestro/commands/memory/repair.py.

`plan_repair(text)` is pure and idempotent:
  1. parse the file (split on `\\n§\\n`, trim, drop empty pieces);
  2. split on a stray `§`: a line holding only `§` (give or take whitespace) ends an entry;
  3. split glued entries: a line that starts with an optional `[id:8hex]` followed by a
     `[YYYY-MM-DD…]` stamp begins a new entry (a date in the middle of a line does not);
  4. move a trailing `[summary:…]` into the header when the header has none (`relocated`);
  5. dedupe on the entry without its `[id:]`, every `[summary:…]` tag and extra whitespace; the
     first occurrence wins.
It reports before/after/split/deduped/relocated/changed; `changed` also covers a file whose
entries survive but whose bytes are not canonical (a missing trailing newline, `\\r\\n` …).

Files covered: MEMORY.md, USER.md, TODOS-life.md, TODOS-work.md, daily/*.md and
projects/*/{MEMORY,KEY,TODOS}.md. Archives and REFERENCE.md are not repaired; a file that is not
UTF-8 is reported and left alone.

A dry run (the default) writes nothing. `--confirm` rewrites each changed file under
`Store.transaction()` (lock, write-block) after copying it to `<file>.bak.<ms>`. The first
confirmed run, and `repair_once_if_flag_missing`, write `.maestro-memory/delimiter-repaired-v3`
holding `{at, report}`; with that flag present the boot-time repair does not run again.
"""

import datetime
import json
import os
import re
from dataclasses import dataclass, field

from maestro.util.atomic import write_atomic
from maestro.memory.store import compose
from maestro.memory.store import entry as grammar
from maestro.memory.store.errors import StoreError
from maestro.memory.store.txn import backup, check_write_block

FLAG_NAME = "delimiter-repaired-v3"
ROOT_FILES = ("MEMORY.md", "USER.md", "TODOS-life.md", "TODOS-work.md")
PROJECT_FILES = ("MEMORY.md", "KEY.md", "TODOS.md")

_WS_RUN = re.compile(f"{grammar.WS}+")
_STRAY = re.compile(rf"{grammar.WS}*§{grammar.WS}*")
_ENTRY_START = re.compile(
    rf"(?:\[id:{grammar.WS}*[0-9a-f]{{8}}\]{grammar.WS}*)?\[[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}[^\]\n]*\]",
    re.ASCII | re.IGNORECASE)
_TRAILING_SUMMARY = re.compile(rf"{grammar.WS}*\[summary:([^\]\n]*)\]{grammar.WS}*\Z")


@dataclass(frozen=True)
class RepairPlan:
    entries: list
    before: int
    after: int
    split: int
    deduped: int
    relocated: int
    changed: bool

    def as_dict(self) -> dict:
        return {"before": self.before, "after": self.after, "split": self.split, "deduped": self.deduped,
                "relocated": self.relocated, "changed": self.changed}


def _split_piece(piece: str):
    """One parsed piece → its entries: cut at stray `§` lines and at lines opening a dated entry."""
    out, current = [], []
    for line in piece.split("\n"):
        if _STRAY.fullmatch(line):
            out.append("\n".join(current))
            current = []
            continue
        if current and _ENTRY_START.match(line):
            out.append("\n".join(current))
            current = []
        current.append(line)
    out.append("\n".join(current))
    return [e for e in (grammar.trim(x) for x in out) if e]


def _relocate(entry: str):
    parts = grammar.split(entry)
    if parts.summary:
        return entry
    trailing = _TRAILING_SUMMARY.search(parts.body)
    if not trailing or not grammar.trim(parts.body[: trailing.start()]):
        return entry
    body = grammar.trim(parts.body[: trailing.start()])
    moved = grammar.render(parts._replace(body=body, summary=grammar.token("summary", trailing.group(1))))
    return moved if grammar.is_storable(moved) else entry


def dedupe_key(entry: str) -> str:
    return _WS_RUN.sub(" ", compose.dedupe_key(entry))


def plan_repair(text: str) -> RepairPlan:
    """Pure and idempotent: plan_repair(serialize(plan_repair(t).entries)).changed is False."""
    pieces = grammar.parse_entries(text)
    split_entries = [e for piece in pieces for e in _split_piece(piece)]
    relocated_entries = [_relocate(e) for e in split_entries]
    relocated = sum(1 for a, b in zip(split_entries, relocated_entries) if a != b)
    seen, kept = set(), []
    for entry in relocated_entries:
        key = dedupe_key(entry)
        if key in seen:
            continue
        seen.add(key)
        kept.append(entry)
    changed = bool(grammar.trim(text)) and grammar.serialize_entries(kept) != text
    return RepairPlan(kept, len(pieces), len(kept), len(split_entries) - len(pieces),
                      len(relocated_entries) - len(kept), relocated, changed)


# --- the store's files ---------------------------------------------------------------------


def covered_files(root: str) -> list:
    """Every existing file repair looks at, in a stable order."""
    found = [os.path.join(root, name) for name in ROOT_FILES]
    daily = os.path.join(root, "daily")
    if os.path.isdir(daily):
        found += [os.path.join(daily, n) for n in sorted(os.listdir(daily)) if n.endswith(".md")]
    projects = os.path.join(root, "projects")
    if os.path.isdir(projects):
        for name in sorted(os.listdir(projects)):
            found += [os.path.join(projects, name, f) for f in PROJECT_FILES]
    return [p for p in found if os.path.isfile(p) and not os.path.islink(p)]


@dataclass
class FileReport:
    file: str
    plan: RepairPlan = None
    backup: str = None
    error: str = None  # why the file was left alone (not UTF-8, unreadable)

    @property
    def changed(self) -> bool:
        return bool(self.plan and self.plan.changed)

    def as_dict(self) -> dict:
        return {"file": self.file, "backup": self.backup, "error": self.error,
                **(self.plan.as_dict() if self.plan else {"changed": False})}


@dataclass
class Report:
    files: list = field(default_factory=list)
    applied: bool = False
    flag: str = None  # the flag file, when this run wrote it

    @property
    def changed(self) -> int:
        return sum(1 for f in self.files if f.changed)

    def as_dict(self) -> dict:
        return {"dryRun": not self.applied, "changed": self.changed, "flag": self.flag,
                "files": [f.as_dict() for f in self.files]}


def _read(path: str):
    with open(path, "rb") as handle:
        return handle.read()


def _inspect(path: str) -> tuple:
    """(report, original bytes): a plan, or an error for a file repair must not touch."""
    try:
        data = _read(path)
        text = grammar.decode(data)
    except FileNotFoundError:
        return FileReport(path), None
    except OSError as exc:
        return FileReport(path, error=f"cannot read: {exc.strerror}"), None
    except grammar.EntryError as exc:
        return FileReport(path, error=exc.message), None
    return FileReport(path, plan_repair(text)), data


def flag_path(store) -> str:
    return os.path.join(store.layout.meta_dir, FLAG_NAME)


def _write_flag(store, report: Report, now) -> str:
    path = flag_path(store)
    stamp = (now or datetime.datetime.now(datetime.UTC)).isoformat()
    data = json.dumps({"at": stamp, "report": report.as_dict()}, ensure_ascii=False, indent=2) + "\n"
    write_atomic(path, data.encode("utf-8"), 0o600)
    return path


def repair(store, confirm: bool = False, now=None) -> Report:
    """Plan every covered file; with `confirm`, back up and rewrite the changed ones and write
    the flag if it is missing. A dry run writes nothing at all."""
    if not confirm:
        return Report([_inspect(path)[0] for path in covered_files(store.root)])
    check_write_block(store.layout)
    report = Report(applied=True)
    with store.transaction() as tx:
        for path in covered_files(store.root):
            item, original = _inspect(path)  # re-read under the lock
            report.files.append(item)
            if not item.changed:
                continue
            tx.adopt(path, original, item.plan.entries)  # the one writer allowed past the drift guard
            tx.stage(path, item.plan.entries)
            item.backup = backup(path, original)
        tx.commit()
        if not os.path.exists(flag_path(store)):
            report.flag = _write_flag(store, report, now)
    return report


def repair_once_if_flag_missing(root: str = None, now=None):
    """For session start (not wired yet): run a confirmed repair once, when the versioned flag is
    absent. Returns None when the flag is present, else the Report; never raises a StoreError
    (a refused run, e.g. write-blocked, returns it in `{"error": …}` and leaves the flag absent
    so the next session tries again)."""
    from maestro.memory.store.tracks import Store

    store = Store(root)
    if os.path.exists(flag_path(store)):
        return None
    try:
        return repair(store, confirm=True, now=now)
    except (StoreError, OSError) as exc:
        return {"error": getattr(exc, "message", None) or str(exc)}
