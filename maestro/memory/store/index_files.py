"""Which track files memory search reads, and the search documents (rank.Doc) of one file's bytes.

Shared by the SQLite index (index.py) and the no-index path of search (search.py), so both serve
exactly the same documents: one per entry, keyed `<file relative to the memory dir>#<seq>`.

    MEMORY.md USER.md daily/YYYY-MM-DD.md                      global tracks (project '')
    projects/<h>/MEMORY.md KEY.md REFERENCE.md                  the project tracks of project <h>
    *-archive.md                                                only when archived entries are asked for

A document's text is the entry's body (its header tokens — id, stamp, git, branch, summary — are
not searched); its date is the stamp as written, a daily `[HH:MM]` completed with the file's day; its
branches are the names of its `[branch:…]` tag (() when it has none: every branch).
"""

import os

from maestro.memory.store.analyze import terms as analyze
from maestro.memory.store.rank import Doc
from maestro.util import days
from maestro.util.record import record

_GLOBAL = (("memory", "MEMORY.md", "MEMORY-archive.md"), ("user", "USER.md", "USER-archive.md"))
_PROJECT = (("project", "MEMORY.md", "MEMORY-archive.md"), ("key", "KEY.md", "KEY-archive.md"),
            ("reference", "REFERENCE.md", None))


class TrackFile(record("TrackFile", "rel track project", module=__name__)):
    """One file search reads: `rel` relative to the memory dir ('/'-separated), its track, its
    project key ('' for a global track)."""

    __slots__ = ()


def wanted(root: str, project: str = "", tracks=(), archived: bool = False) -> list:
    """The track files of a search: the global tracks, plus project `project`'s when given, narrowed
    to `tracks` (canonical names) when any; archives only with `archived`. Files that do not exist
    are listed too (except daily files, found by listing their directory): a vanished file must
    drop out of the index."""
    chosen = set(tracks)
    out = []

    def add(base_rel, table, key):
        for track, live, archive in table:
            if chosen and track not in chosen:
                continue
            out.append(TrackFile(base_rel + live, track, key))
            if archived and archive:
                out.append(TrackFile(base_rel + archive, track, key))

    add("", _GLOBAL, "")
    if not chosen or "daily" in chosen:
        try:
            names = sorted(os.listdir(os.path.join(root, "daily")))
        except OSError:
            names = []
        make = tuple.__new__  # TrackFile(...) without its keyword handling: a year of files on every recall
        out += [make(TrackFile, ("daily/" + name, "daily", "")) for name in daily_names(names)]
    if project:
        add(f"projects/{project}/", _PROJECT, project)
    return out


_DAYS = tuple(f"{number:02d}" for number in range(1, 32))


def daily_names(names) -> list:
    """The names, in order, that are 'YYYY-MM-DD.md' for a real day (layout.check_date's rule; a
    .todo.md or a stray name is not a daily file): each month checked once (days.month_length), then
    each name by a set lookup — a daily dir of a year's files is listed on every recall."""
    months, out = {}, []
    for name in names:
        if len(name) != 13 or name[10:] != ".md" or name[7] != "-":
            continue
        valid = months.get(name[:7])
        if valid is None:
            valid = months[name[:7]] = frozenset(_DAYS[:days.month_length(name[:7])])
        if name[8:10] in valid:
            out.append(name)
    return out


def in_scope(rel: str, project: str) -> bool:
    """Whether an indexed file belongs to the global tracks or to project `project` (a file of
    this scope that is no longer listed by `wanted` has vanished)."""
    if "/" not in rel or rel.startswith("daily/"):
        return True
    return bool(project) and rel.startswith(f"projects/{project}/")


def track_file(root: str, path: str):
    """The TrackFile of an absolute path under `root`, or None when search never reads it (todos,
    the queue, backups, state files)."""
    rel = os.path.relpath(path, root)
    if rel.startswith(".."):
        return None
    rel = rel.replace(os.sep, "/")
    parts = rel.split("/")
    if len(parts) == 1:
        table, key = _GLOBAL, ""
    elif len(parts) == 2 and parts[0] == "daily":
        return TrackFile(rel, "daily", "") if parts[1].endswith(".md") and days.is_day(parts[1][:-3]) else None
    elif len(parts) == 3 and parts[0] == "projects":
        table, key = _PROJECT, parts[1]
    else:
        return None
    for track, live, archive in table:
        if parts[-1] in (live, archive):
            return TrackFile(rel, track, key)
    return None


def entries_of(data) -> list:
    """A file's entries, read leniently as listing reads them (undecodable bytes become U+FFFD)."""
    from maestro.memory.store import entry as grammar  # parsing only (a refresh): `re` for the hooks otherwise

    return grammar.parse_entries(data.decode("utf-8", "replace")) if data else []


def header_of(item: TrackFile, entry: str) -> tuple:
    """(text, id, date, branches) of one entry: what a document shows, and the branches its
    `[branch:a,b]` tag scopes it to (() = every branch), which recall filters by as the snapshot does."""
    daily = item.track == "daily"
    from maestro.memory.store import entry as grammar

    parts = grammar.split(entry, daily)
    stamp = parts.stamp_text or ""
    if daily and stamp and ":" in stamp[:3]:
        stamp = f"{item.rel[len('daily/'):-3]} {stamp}"
    return grammar.trim(parts.body) or entry, parts.entry_id or "", stamp, parts.branches or ()


def doc_of(item: TrackFile, seq: int, head: tuple) -> Doc:
    text, entry_id, date, branches = head
    return Doc(f"{item.rel}#{seq}", item.track, entry_id, date, item.rel, text, tuple(analyze(text)), seq,
               item.project, branches)


def docs_of(item: TrackFile, data) -> list:
    """The documents of one file's bytes."""
    return [doc_of(item, seq, header_of(item, entry)) for seq, entry in enumerate(entries_of(data))]


def read(root: str, rel: str):
    """A file's bytes, or None when it is absent or unreadable (search never fails over one file)."""
    try:
        with open(os.path.join(root, rel), "rb") as handle:
            return handle.read()
    except OSError:
        return None
