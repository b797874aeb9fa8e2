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

Steps 2 and 3 read lines the way `entry.entry_break` does, and step 5's key is `add`'s dedupe
key (maestro/memory/store/tracks.py): `add` refuses text with such a line and reports an entry
differing only in whitespace as a duplicate, so what `add` stored, repair leaves alone.

Files covered: MEMORY.md, USER.md, TODOS-life.md, TODOS-work.md, daily/*.md and
projects/*/{MEMORY,KEY,TODOS}.md. Archives and REFERENCE.md are only recoded (below), never split
or deduped.

A file that is not UTF-8 (one bad byte hides nothing: the snapshot shows it with U+FFFD and names
it) is `recoded`: decoded with U+FFFD for each undecodable byte, then planned like any other (an
archive or REFERENCE.md: only re-serialised). The boot-time repair leaves such a file alone (the
change loses the original bytes, so it waits for a person's `--confirm`); `memory repair` plans it.

A dry run (the default) writes nothing. `--confirm` rewrites each changed file under
`Store.transaction()` (lock, write-block) after copying its original bytes to `<file>.bak.<ms>`
next to it. The first confirmed run, and `repair_once_if_flag_missing`, write
`.maestro-memory/delimiter-repaired-v3` holding `{at, report}`; with that flag present the
boot-time repair does not run again.
"""

import dataclasses
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
ROOT_RECODE_ONLY = ("MEMORY-archive.md", "USER-archive.md")
PROJECT_RECODE_ONLY = ("MEMORY-archive.md", "KEY-archive.md", "REFERENCE.md")

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
        if grammar.is_stray_delimiter(line):
            out.append("\n".join(current))
            current = []
            continue
        if current and grammar.opens_entry(line):
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


def plan_repair(text: str) -> RepairPlan:
    """Pure and idempotent: plan_repair(serialize(plan_repair(t).entries)).changed is False."""
    pieces = grammar.parse_entries(text)
    split_entries = [e for piece in pieces for e in _split_piece(piece)]
    relocated_entries = [_relocate(e) for e in split_entries]
    relocated = sum(1 for a, b in zip(split_entries, relocated_entries) if a != b)
    seen, kept = set(), []
    for entry in relocated_entries:
        key = compose.same_entry_key(entry)
        if key in seen:
            continue
        seen.add(key)
        kept.append(entry)
    changed = bool(grammar.trim(text)) and grammar.serialize_entries(kept) != text
    return RepairPlan(kept, len(pieces), len(kept), len(split_entries) - len(pieces),
                      len(relocated_entries) - len(kept), relocated, changed)


# --- the store's files ---------------------------------------------------------------------


def covered_files(root: str, recode_only: bool = False) -> list:
    """Every existing file repair plans (`recode_only`: the archives and REFERENCE.md, which it
    only recodes), in a stable order."""
    found = [os.path.join(root, name) for name in (ROOT_RECODE_ONLY if recode_only else ROOT_FILES)]
    daily = os.path.join(root, "daily")
    if os.path.isdir(daily) and not recode_only:
        found += [os.path.join(daily, n) for n in sorted(os.listdir(daily)) if n.endswith(".md")]
    projects = os.path.join(root, "projects")
    if os.path.isdir(projects):
        for name in sorted(os.listdir(projects)):
            found += [os.path.join(projects, name, f) for f in (PROJECT_RECODE_ONLY if recode_only else PROJECT_FILES)]
    return [p for p in found if os.path.isfile(p) and not os.path.islink(p)]


def recode_plan(data: bytes, split: bool = True) -> RepairPlan:
    """The plan for bytes that are not UTF-8: each undecodable byte becomes U+FFFD, then the text
    is planned as usual (`split` False: only parsed and re-serialised). Always `changed`."""
    text = bytes(data).decode("utf-8", "replace")
    if split:
        return dataclasses.replace(plan_repair(text), changed=True)
    entries = grammar.parse_entries(text)
    return RepairPlan(entries, len(entries), len(entries), 0, 0, 0, True)


@dataclass
class FileReport:
    file: str
    plan: RepairPlan = None
    backup: str = None
    error: str = None  # why the file was left alone (unreadable; not UTF-8 at boot)
    recoded: str = None  # why its bytes were decoded with U+FFFD ("not UTF-8 (byte N)")

    @property
    def changed(self) -> bool:
        return bool(self.plan and self.plan.changed)

    def as_dict(self) -> dict:
        return {"file": self.file, "backup": self.backup, "error": self.error, "recoded": self.recoded,
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


def _inspect(path: str, recode: bool = True, split: bool = True) -> tuple:
    """(report, original bytes): a plan, or an error for a file repair must not touch. A file
    that is not UTF-8 gets a recode plan when `recode`, else an error; with `split` False a
    UTF-8 file is left alone (the archives and REFERENCE.md are only recoded)."""
    try:
        data = _read(path)
        text = grammar.decode(data)
    except FileNotFoundError:
        return FileReport(path), None
    except OSError as exc:
        return FileReport(path, error=f"cannot read: {exc.strerror}"), None
    except grammar.EntryError as exc:
        if not recode:
            return FileReport(path, error=exc.message), None
        return FileReport(path, recode_plan(data, split), recoded=exc.message), data
    return FileReport(path, plan_repair(text) if split else None), data


def _inspect_all(root: str, recode: bool) -> list:
    """(report, original bytes) of every covered file, then of every recode-only one that is damaged."""
    items = [_inspect(path, recode) for path in covered_files(root)]
    if recode:
        items += [item for item in (_inspect(path, True, split=False) for path in covered_files(root, True))
                  if item[0].recoded or item[0].error]
    return items


def flag_path(store) -> str:
    return os.path.join(store.layout.meta_dir, FLAG_NAME)


def _write_flag(store, report: Report, now) -> str:
    path = flag_path(store)
    stamp = (now or datetime.datetime.now(datetime.UTC)).isoformat()
    data = json.dumps({"at": stamp, "report": report.as_dict()}, ensure_ascii=False, indent=2) + "\n"
    write_atomic(path, data.encode("utf-8"), 0o600)
    return path


def repair(store, confirm: bool = False, now=None, recode: bool = True) -> Report:
    """Plan every covered file; with `confirm`, back up and rewrite the changed ones and write
    the flag if it is missing. A dry run writes nothing at all. `recode` False leaves a file that
    is not UTF-8 alone (reported as an error)."""
    if not confirm:
        return Report([item for item, _data in _inspect_all(store.root, recode)])
    check_write_block(store.layout)
    report = Report(applied=True)
    with store.transaction() as tx:
        for item, original in _inspect_all(store.root, recode):  # re-read under the lock
            path = item.file
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
    """For session start (maestro/hooks/session_start.py): run a confirmed repair once, when the
    versioned flag is absent, leaving a file that is not UTF-8 for a person's `memory repair`. Returns None when the flag is present, else the Report; never raises a StoreError
    (a refused run, e.g. write-blocked, returns it in `{"error": …}` and leaves the flag absent
    so the next session tries again)."""
    from maestro.memory.store.tracks import Store

    store = Store(root)
    if os.path.exists(flag_path(store)):
        return None
    try:
        return repair(store, confirm=True, now=now, recode=False)
    except (StoreError, OSError) as exc:
        return {"error": getattr(exc, "message", None) or str(exc)}
