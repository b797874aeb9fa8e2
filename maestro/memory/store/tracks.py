"""The memory store's API: add (one or a batch), list, replace, remove, archive (spec memory.md §2.3).

An add runs, in order: write-block check → argument checks → idle guard → sanitizer → stamp → key
header (branch tag, caller's summary, `[id:]`) → summary → dedupe (ignoring `[id:]` and every
`[summary:…]`) → atomic append (see `txn`). A batch prepares every entry before it takes the lock
and stages every file before it writes one, so any failing entry leaves the store untouched and
is reported by its index. replace/remove/archive need a case-sensitive substring that hits exactly
one entry. What one entry is agrees with repair (maestro/memory/store/repair.py): content with a
line repair would cut at (a line holding only `§`, or one opening with a `[YYYY-MM-DD]` stamp after
the first) is refused, and an entry that differs from a stored one only in whitespace is a
duplicate. A file the drift guard refuses (not canonical, not UTF-8) is named with the command that
fixes it. Later parts of the store (maintenance, repair, sync, queue) write through
`Store.transaction()` too, so the lock, the drift guard and the write-block apply to them as well.
"""

import datetime
import os
from dataclasses import dataclass, field

from maestro.memory.store import compose
from maestro.memory.store import layout
from maestro.memory.store import entry as grammar
from maestro.memory.store.errors import StoreError
from maestro.memory.store.sanitize import filter_text, sanitize
from maestro.memory.store.txn import Transaction, check_write_block, read_entries
from maestro.util.tokens import token_hex


@dataclass(frozen=True)
class AddRequest:
    track: str
    text: str
    cwd: str = None
    branches: tuple = ()
    summary: str = None
    date: str = None


@dataclass(frozen=True)
class AddResult:
    track: str
    file: str
    entry: str = None  # the stored text; None for an idle no-op
    id: str = None
    duplicate: bool = False
    reason: str = None  # why a duplicate: "exists" (already stored) or "idle" (no information)


@dataclass(frozen=True)
class Change:
    action: str  # replaced | removed | archived | unchanged
    track: str
    file: str
    entry: str  # the entry now stored (replace) or the one taken out (remove, archive)
    previous: str = None  # replace: the entry it replaced
    archive: str = None


@dataclass(frozen=True)
class Listing:
    track: str
    file: str  # None when the arguments name no file (an invalid daily date)
    entries: list = field(default_factory=list)


@dataclass(frozen=True)
class _Prepared:
    target: layout.Target
    text: str
    now: datetime.datetime
    idle: bool
    branches: tuple
    summary: str


@dataclass
class _File:
    """One file an add (or batch) appends to: its entries so far, their ids and dedupe keys."""
    entries: list
    ids: set
    keys: set
    grown: bool = False


def shown(text: str, limit: int = 80) -> str:
    """A user-supplied string fit for a one-line message: secrets filtered, one line, bounded."""
    text = "".join(ch if ch.isprintable() else " " for ch in filter_text(text))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clean_text(text, what: str = "content") -> str:
    """Sanitized, storable text, or a StoreError saying why not."""
    if not isinstance(text, str):
        raise StoreError(f"{what} must be text", "invalid")
    text = grammar.trim(text)
    if not text:
        raise StoreError(f"empty {what}", "invalid")
    clean = sanitize(text)
    if clean is None:
        raise StoreError(f"{what} filtered (sensitive-only)", "sensitive")
    if not grammar.is_storable(grammar.trim(clean)):
        if grammar.DELIMITER in clean or clean.endswith("\n§"):
            raise StoreError(f"{what} contains a line holding only § (the entry delimiter)", "invalid")
        raise StoreError(f"{what} is not valid UTF-8 text", "invalid")
    cut = grammar.entry_break(grammar.trim(clean)) if what in ("content", "todo") else None  # an entry's body
    if cut:
        raise StoreError(f"{what} line {cut[0]} {cut[1]}, so it would read back as two entries; put it on the "
                         "line before or add it as an entry of its own", "invalid")
    return grammar.trim(clean)


def _with_repair_hint(exc: StoreError) -> StoreError:
    """A drift refusal names the command that clears it; nothing else changes."""
    if exc.reason != "drift":
        return exc
    from maestro.messages import MEMORY_REPAIR

    return StoreError(f"{exc.message}; to fix the file run: {MEMORY_REPAIR}", "drift")


class Store:
    def __init__(self, root: str = None, clock=None, lock_timeout: float = None):
        self.layout = layout.Layout(root) if root else layout.Layout.default()
        self.clock = clock or datetime.datetime.now
        self.lock_timeout = lock_timeout
        self._projects = {}

    @property
    def root(self) -> str:
        return self.layout.root

    def transaction(self) -> Transaction:
        return Transaction(self.layout, self.lock_timeout)

    def target(self, track: str, cwd: str = None, date: str = None, now=None) -> layout.Target:
        track = layout.track_name(track)
        project = None
        if track in layout.PROJECT_TRACKS:
            key = os.path.realpath(cwd or os.getcwd())
            if key not in self._projects:
                self._projects[key] = layout.project_root(key)
            project = self._projects[key]
        if track == "daily" and date is None:
            date = (now or self.clock()).date().isoformat()
        return self.layout.target(track, project, date)

    # --- adds ------------------------------------------------------------------------------

    def add(self, track: str, text: str, cwd: str = None, branches=(), summary: str = None,
            date: str = None) -> AddResult:
        return self._adds([AddRequest(track, text, cwd, tuple(branches or ()), summary, date)], indexed=False)[0]

    def batch(self, requests) -> list:
        """All or nothing; a failure names the 0-based index of the entry that failed."""
        return self._adds(list(requests), indexed=True)

    def _adds(self, requests, indexed: bool) -> list:
        check_write_block(self.layout)
        prepared = [self._at(i, indexed, self._prepare, request) for i, request in enumerate(requests)]
        try:
            with self.transaction() as tx:
                files = {}  # path -> _File: each file read, indexed and staged once per batch, not once per entry
                results = [self._at(i, indexed, self._add, tx, item, files) for i, item in enumerate(prepared)]
                for path, file in files.items():
                    if file.grown:
                        tx.stage(path, file.entries)
                tx.commit()
        except StoreError as exc:
            raise _with_repair_hint(exc) from None
        self._note_write([r.track for r in results if not r.duplicate])
        return results

    def _note_write(self, tracks) -> None:
        """Tell the write guard (maestro/memory/store/write_guard.py) that this session really wrote a daily or
        project entry. Failure-isolated: the add is committed and must not fail over telemetry."""
        if not any(track in ("daily", "project") for track in tracks):
            return
        try:
            from maestro.memory.store import write_guard as guard

            guard.note_write(self.root, tracks)
        except Exception as exc:  # noqa: BLE001 - never fail a committed add
            from maestro import crash

            crash.record("memory:guard-note-write", exc)

    @staticmethod
    def _at(index: int, indexed: bool, func, *args):
        try:
            return func(*args)
        except StoreError as exc:
            if indexed:
                raise StoreError(f"entry {index}: {exc.message}", exc.reason) from None
            raise

    def _prepare(self, request: AddRequest) -> _Prepared:
        track = layout.track_name(request.track)
        branches = tuple(name.strip() for name in request.branches if name.strip())
        if branches and track != "key":
            raise StoreError(f"branches apply to the key track only (not {track})", "usage")
        for name in branches:
            if not compose.BRANCH_NAME.fullmatch(name):
                raise StoreError(f"invalid branch name {shown(name)!r}", "usage")
        if request.date is not None and track != "daily":
            raise StoreError(f"--date applies to the daily track only (not {track})", "usage")
        if not isinstance(request.text, str) or not grammar.trim(request.text):
            raise StoreError("empty content", "invalid")
        now = self.clock()
        target = self.target(track, request.cwd, request.date, now)
        text = grammar.trim(request.text)
        if compose.is_idle(text):
            return _Prepared(target, text, now, True, branches, None)
        summary = clean_text(request.summary, "summary") if request.summary is not None else None
        return _Prepared(target, clean_text(text), now, False, branches, summary)

    def _add(self, tx: Transaction, item: _Prepared, files: dict) -> AddResult:
        target = item.target
        if item.idle:
            return AddResult(target.track, target.path, duplicate=True, reason="idle")
        file = files.get(target.path)
        if file is None:
            entries = tx.read(target.path)
            file = files[target.path] = _File(entries, {grammar.entry_id(e) for e in entries} - {None},
                                              {compose.same_entry_key(e) for e in entries})
        new_id = token_hex(4)
        while new_id in file.ids:
            new_id = token_hex(4)
        stored = compose.compose(target.track, item.text, item.now, new_id, item.branches, item.summary)
        key = compose.same_entry_key(stored)
        if key in file.keys:
            return AddResult(target.track, target.path, duplicate=True, reason="exists")
        stored_id = grammar.entry_id(stored)
        if stored_id in file.ids:
            raise StoreError(f"id {stored_id} is already used by another entry in {target.path}", "conflict")
        if not grammar.is_storable(stored):  # what tx.stage checks, said for this entry (the batch stages once)
            raise StoreError(f"refusing to write {target.path}: an entry would not read back as itself", "invalid")
        file.entries.append(stored)
        if stored_id is not None:
            file.ids.add(stored_id)
        file.keys.add(key)
        file.grown = True
        return AddResult(target.track, target.path, stored, stored_id)

    # --- reads -----------------------------------------------------------------------------

    def list(self, track: str, cwd: str = None, branch: str = None, archived: bool = False,
             date: str = None) -> Listing:
        track = layout.track_name(track)
        if branch and track != "key":
            raise StoreError(f"--branch applies to the key track only (not {track})", "usage")
        if date is not None and track != "daily":
            raise StoreError(f"--date applies to the daily track only (not {track})", "usage")
        if date is not None:
            try:
                layout.check_date(date)
            except StoreError:
                return Listing(track, None, [])  # the traversal guard: an invalid date lists nothing
        target = self.target(track, cwd, date)
        path = target.archive if archived else target.path
        if path is None:
            raise StoreError(f"the {track} track has no archive", "usage")
        entries = read_entries(path)
        if branch:
            entries = [e for e in entries if grammar.branches(e) is None or branch in grammar.branches(e)]
        return Listing(track, path, entries)

    # --- edits by unique match -------------------------------------------------------------

    def replace(self, track: str, match: str, text: str, cwd: str = None, date: str = None,
                summary: str = None) -> Change:
        new_text = clean_text(text)
        new_summary = clean_text(summary, "summary") if summary is not None else None

        def edit(tx, target, entries, index):
            old = entries[index]
            new = compose.replacement(old, new_text, new_summary, target.daily)
            if new == old:
                return Change("unchanged", target.track, target.path, old, old)
            others = entries[:index] + entries[index + 1:]
            if any(compose.same_entry_key(e) == compose.same_entry_key(new) for e in others):
                raise StoreError("the replacement would duplicate another entry; nothing was changed", "conflict")
            new_id = grammar.entry_id(new)
            if new_id and new_id in {grammar.entry_id(e) for e in others}:
                raise StoreError(f"id {new_id} is already used by another entry; nothing was changed", "conflict")
            tx.stage(target.path, entries[:index] + [new] + entries[index + 1:])
            return Change("replaced", target.track, target.path, new, old)

        return self._edit(track, match, cwd, date, edit)

    def remove(self, track: str, match: str, cwd: str = None, date: str = None) -> Change:
        def edit(tx, target, entries, index):
            tx.stage(target.path, entries[:index] + entries[index + 1:])
            return Change("removed", target.track, target.path, entries[index])

        return self._edit(track, match, cwd, date, edit)

    def archive(self, track: str, match: str, cwd: str = None) -> Change:
        """Append to `<TRACK>-archive.md` first, then take the entry out of the live file."""
        if layout.track_name(track) not in ("memory", "user", "project", "key"):
            raise StoreError(f"the {layout.track_name(track)} track has no archive", "usage")

        def edit(tx, target, entries, index):
            moved = entries[index]
            archived = tx.read(target.archive)
            if compose.dedupe_key(moved) not in {compose.dedupe_key(e) for e in archived}:
                tx.stage(target.archive, archived + [moved])
            tx.stage(target.path, entries[:index] + entries[index + 1:])
            return Change("archived", target.track, target.path, moved, archive=target.archive)

        return self._edit(track, match, cwd, None, edit)

    def _edit(self, track, match, cwd, date, edit) -> Change:
        check_write_block(self.layout)
        track = layout.track_name(track)
        if date is not None and track != "daily":
            raise StoreError(f"--date applies to the daily track only (not {track})", "usage")
        if not isinstance(match, str) or not match:
            raise StoreError("empty --match", "usage")
        target = self.target(track, cwd, date)
        try:
            with self.transaction() as tx:
                entries = tx.read(target.path)
                hits = [i for i, e in enumerate(entries) if match in e]
                if not hits:
                    raise StoreError(f'no match for "{shown(match)}" in {target.path}; nothing was changed',
                                     "no_match")
                if len(hits) > 1:
                    raise StoreError(f'ambiguous match for "{shown(match)}" ({len(hits)} hits); nothing was changed',
                                     "ambiguous")
                change = edit(tx, target, entries, hits[0])
                tx.commit()
        except StoreError as exc:
            raise _with_repair_hint(exc) from None
        return change
