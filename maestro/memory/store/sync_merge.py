"""The pure three-way merge of one synced file (maestro/memory/store/sync.py runs it; no I/O here).

Every entry has a key: its id (`[id:]`, or a todo's `[id: …]`), else — the project track's entries,
which `add` gives no id, and a todo file's comment header — `body-<16 hex>` of its body (the entry
without its id and summaries, `compose.dedupe_key`: what makes two entries the same). A later entry
of one side with a key already seen is keyed by its body, and one whose body is also seen is the same
entry twice: it is kept once. The version of an entry is the sha256 of its whole text.

`base` is, per key, the version both sides last agreed on (the sync state keeps it). Per key:

  - the same version on both sides: kept;
  - local still the base version (or absent from both it and the base): the remote side wins —
    a remote edit, deletion or addition is taken;
  - remote still the base version: the local side wins (a local edit, deletion or addition, to push);
  - both changed, differently: a conflict (`modifiedBoth`; `deletedLocal`: deleted here, changed
    there; `deletedRemote`: changed here, deleted there); the local side is kept until it is resolved.

So for an entry without an id an edit is the old body deleted and a new one added, and a deletion
travels when the body was in the last-synced set and is gone on one side. `UNKNOWN` is a base version
nothing matches (a migrated state that could not recover what was agreed): any difference is a conflict.

Order: the local entries in their order, then the remote-only ones in the remote's; when this side
already held exactly the remote's entries it takes the remote's order, so stores that have nothing
left to exchange end byte-identical (one more sync on each after the last push).
"""

import hashlib
from dataclasses import dataclass, field

from maestro.memory.store import compose
from maestro.memory.store import entry as grammar

TODO_FILE = "TODOS.md"
UNKNOWN = "?"


def todo_id(entry: str):
    from maestro.memory.store import todos

    todo = todos.parse(entry)
    return todo.id if todo else None


def id_reader(name: str):
    """How a file's entries name their id: the memory grammar's `[id:]`, or a todo's."""
    return todo_id if name == TODO_FILE else grammar.entry_id


def version(entry: str) -> str:
    return hashlib.sha256(entry.encode("utf-8", "surrogateescape")).hexdigest()


def body_key(entry: str) -> str:
    return "body-" + version(compose.dedupe_key(entry))[:16]


def keyed(entries, id_of=grammar.entry_id) -> dict:
    """key -> entry, in file order (see the module docstring for the keys)."""
    out, bodies = {}, set()
    for entry in entries:
        eid, body = id_of(entry), body_key(entry)
        if eid and eid.lower() not in out:
            out[eid.lower()] = entry
        elif body not in bodies:
            out[body] = entry
        bodies.add(body)
    return out


def versions(entries, id_of=grammar.entry_id) -> dict:
    """key -> version: what the sync state records as agreed once these entries are on both sides."""
    return {key: version(entry) for key, entry in keyed(entries, id_of).items()}


@dataclass
class Merged:
    entries: list
    conflicts: list = field(default_factory=list)
    agreed: dict = field(default_factory=dict)  # key -> version both sides now hold (the base until a push)
    added: int = 0  # remote additions taken
    updated: int = 0  # remote edits taken
    removed: int = 0  # remote deletions taken


def merge(local, remote, base, id_of=grammar.entry_id) -> Merged:
    """Three-way merge of one file's entries: `local`, `remote` lists, `base` key -> version."""
    mine, theirs = keyed(local, id_of), keyed(remote, id_of)
    out, result = {}, Merged([])
    for key in list(mine) + [k for k in theirs if k not in mine]:
        ours, other = mine.get(key), theirs.get(key)
        was = base.get(key)
        ours_v = version(ours) if ours is not None else None
        other_v = version(other) if other is not None else None
        if ours_v == other_v:
            out[key] = ours
            result.agreed[key] = ours_v
        elif ours_v == was:
            if other is None:
                result.removed += 1
            else:
                out[key] = other
                result.agreed[key] = other_v
                if ours is None:
                    result.added += 1
                else:
                    result.updated += 1
        else:
            if other_v != was:
                kind = "modifiedBoth" if ours is not None and other is not None else (
                    "deletedLocal" if ours is None else "deletedRemote")
                result.conflicts.append({"id": key, "kind": kind, "local": ours, "remote": other})
            if ours is not None:
                out[key] = ours
            if was is not None:
                result.agreed[key] = was
    same = sorted(map(version, mine.values())) == sorted(map(version, theirs.values()))
    result.entries = list(theirs.values() if same else out.values())
    return result
