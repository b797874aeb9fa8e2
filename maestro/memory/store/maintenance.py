"""Maintenance: archive old and overflowing entries (spec memory.md §2.9). The domain only: the
`memory maintenance` command (arguments, result lines) is maestro/commands/memory/maintenance.py.

Per-track policy (daily and reference are never archived):

    track    keepBytes  maxAgeDays
    memory   8 KiB      180
    user     8 KiB      180
    key      64 KiB     180
    project  128 KiB    180

`plan` is a pure function: (1) a dated entry whose date is before the UTC cutoff (today in UTC
minus maxAgeDays) is archived; undated entries (and unreadable dates) never age out. (2) The
survivors are walked newest (last in the file) to oldest, summing their raw UTF-8 bytes; an entry
that would take the sum past keepBytes is archived and the walk continues past it. (3) Both lists
keep file order.

A dry run (the default) reads the files without the lock, returns what would move and changes
nothing, not even the lock file. `--confirm` re-plans under `Store.transaction()` (lock,
write-block, drift guard), backs the live file up to `<file>.bak.<ms>`, appends to
`<TRACK>-archive.md` (entries already archived are not repeated) and rewrites the live file
canonically. Applying an empty list is refused; the command simply skips such tracks.

Limits: archiving on one machine only is undone by the next union sync, and MEMORY-archive.md is
not synced.
"""

import datetime
from dataclasses import dataclass, field

from maestro.memory.store import compose
from maestro.memory.store import layout
from maestro.memory.store import entry as grammar
from maestro.memory.store.errors import StoreError
from maestro.memory.store.txn import backup, check_write_block, read_entries
from maestro.util.clock import utc_today

KIB = 1024
POLICY = {  # track -> (keepBytes, maxAgeDays)
    "memory": (8 * KIB, 180),
    "user": (8 * KIB, 180),
    "key": (64 * KIB, 180),
    "project": (128 * KIB, 180),
}
TRACKS = tuple(POLICY)


@dataclass(frozen=True)
class Decision:
    entry: str
    bytes: int
    date: str  # YYYY-MM-DD, or None when undated
    reason: str  # keep: "undated" | "within-limits"; archive: "age" | "size"

    def as_dict(self) -> dict:
        return {"entry": self.entry, "bytes": self.bytes, "date": self.date, "reason": self.reason}


@dataclass(frozen=True)
class Plan:
    keep: list = field(default_factory=list)
    archive: list = field(default_factory=list)
    cutoff: str = None
    keep_bytes: int = 0
    max_age_days: int = 0

    def as_dict(self) -> dict:
        return {"cutoff": self.cutoff, "keepBytes": self.keep_bytes, "maxAgeDays": self.max_age_days,
                "keep": [d.as_dict() for d in self.keep], "archive": [d.as_dict() for d in self.archive]}


def _entry_date(entry: str):
    text = grammar.split(entry).date
    if text is None:
        return None
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        return None  # e.g. [2024-13-45]: not a day, so it cannot age out


def plan(entries, keep_bytes: int, max_age_days: int, now=None) -> Plan:
    """Pure: which entries stay and which move to the archive, each with a reason, in file order.

    `now` is a UTC datetime or date (default: the current UTC time); the cutoff is its date minus
    `max_age_days`, and an entry dated before the cutoff is archived."""
    entries = list(entries)
    cutoff = utc_today(now) - datetime.timedelta(days=max_age_days)
    reasons = [None] * len(entries)
    dates = [_entry_date(e) for e in entries]
    for i, day in enumerate(dates):
        if day is not None and day < cutoff:
            reasons[i] = "age"
    total = 0
    for i in reversed(range(len(entries))):
        if reasons[i]:
            continue
        size = len(entries[i].encode("utf-8"))
        if total + size > keep_bytes:
            reasons[i] = "size"
        else:
            total += size
    keep, archive = [], []
    for i, entry in enumerate(entries):
        day = dates[i].isoformat() if dates[i] else None
        if reasons[i]:
            archive.append(Decision(entry, len(entry.encode("utf-8")), day, reasons[i]))
        else:
            keep.append(Decision(entry, len(entry.encode("utf-8")), day, "undated" if day is None else "within-limits"))
    return Plan(keep, archive, cutoff.isoformat(), keep_bytes, max_age_days)


@dataclass(frozen=True)
class TrackResult:
    track: str
    file: str
    archive_file: str
    plan: Plan
    applied: bool = False
    backup: str = None
    canonical: bool = True  # a dry run notes drift; --confirm refuses it

    def as_dict(self) -> dict:
        return {"track": self.track, "file": self.file, "archiveFile": self.archive_file, "applied": self.applied,
                "backup": self.backup, "canonical": self.canonical, **self.plan.as_dict()}


def _policy(track: str, keep_bytes=None, max_age_days=None):
    default_keep, default_age = POLICY[track]
    keep = default_keep if keep_bytes is None else keep_bytes
    age = default_age if max_age_days is None else max_age_days
    if not isinstance(keep, int) or keep < 0 or not isinstance(age, int) or age < 0:
        raise StoreError("keepBytes and maxAgeDays must be whole numbers ≥ 0", "usage")
    return keep, age


def _is_canonical(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        return grammar.is_canonical(grammar.decode(data))
    except grammar.EntryError:
        return False


def dry_run(store, track: str, cwd: str = None, keep_bytes=None, max_age_days=None, now=None) -> TrackResult:
    """Read-only: no lock, no directory, no file is created or touched."""
    track = layout.track_name(track)
    if track not in POLICY:
        raise StoreError(f"maintenance covers {', '.join(TRACKS)} (not {track})", "usage")
    keep, age = _policy(track, keep_bytes, max_age_days)
    target = store.target(track, cwd)
    result = plan(read_entries(target.path), keep, age, now)
    return TrackResult(track, target.path, target.archive, result, canonical=_is_canonical(target.path))


def apply(store, track: str, cwd: str = None, keep_bytes=None, max_age_days=None, now=None) -> TrackResult:
    """Re-plan under the lock and move the archived entries. An empty plan is refused."""
    track = layout.track_name(track)
    if track not in POLICY:
        raise StoreError(f"maintenance covers {', '.join(TRACKS)} (not {track})", "usage")
    keep, age = _policy(track, keep_bytes, max_age_days)
    check_write_block(store.layout)
    target = store.target(track, cwd)
    with store.transaction() as tx:
        entries = tx.read(target.path)  # drift guard: a non-canonical file is backed up and refused
        result = plan(entries, keep, age, now)
        if not result.archive:
            raise StoreError(f"nothing to archive in {target.path}; nothing was written", "usage")
        archived = tx.read(target.archive)
        known = {compose.dedupe_key(e) for e in archived}
        for decision in result.archive:
            key = compose.dedupe_key(decision.entry)
            if key not in known:
                archived.append(decision.entry)
                known.add(key)
        tx.stage(target.archive, archived)  # the archive first: a crash leaves entries in both, never neither
        tx.stage(target.path, [d.entry for d in result.keep])
        with open(target.path, "rb") as handle:
            saved = backup(target.path, handle.read())
        tx.commit()
    return TrackResult(track, target.path, target.archive, result, applied=True, backup=saved)
