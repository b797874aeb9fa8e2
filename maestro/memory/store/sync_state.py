"""The sync state `<store>/.maestro-memory/sync-state.json` (written atomically, 0600) and its migration
from the first format (maestro/memory/store/sync.py uses it; the domain only, no I/O but the file).

    {"version": 2, "projects": {"<local hash>": {
        "identity": "root:<sha>",            the project identity pinned at the first sync (sync_identity)
        "remote": "<16 hex>",                a digest of the remote URL the base was agreed with
        "base": {"KEY.md": {"<key>": "<sha256>", ...}, ...},   per file, what was last agreed (sync_merge)
        "lastSync": {"KEY.md": ["<id>", ...], ...},            the ids of the last push (for older readers)
        "conflicts": [{"file", "id", "kind", "local", "remote"}, ...]}}}

Projects stay keyed by the checkout's local storage hash: two checkouts of one project on one machine
are two replicas of it, each with its own files, work area and base.

Version 1 kept only `lastSync` (ids) and `overrides` (ids a `--resolve local|both` let win). Migrating
one project (on its first sync or `--resolve` after the upgrade) takes each such id's version from the
files that version's sync left in the work area (`sync/<hash>/projects/<hash>/`, what it last pushed,
or the remote as fetched when it stopped on conflicts): a `local` resolution then still wins, and an
id it cannot find there, or one still in conflict, gets `UNKNOWN`, so any difference on it is a conflict
rather than a guess. Nothing else is dropped: the recorded conflicts stay recorded.
"""

import hashlib
import json
import os

from maestro.util.atomic import write_atomic
from maestro.memory.store import entry as grammar
from maestro.memory.store.errors import StoreError
from maestro.memory.store.sync_identity import normalise_url
from maestro.memory.store.sync_merge import UNKNOWN, versions
from maestro.memory.store.txn import make_private_dirs

STATE_VERSION = 2


def state_path(lay) -> str:
    return os.path.join(lay.meta_dir, "sync-state.json")


def load_state(lay) -> dict:
    try:
        with open(state_path(lay), "rb") as handle:
            value = json.loads(handle.read().decode("utf-8"))
    except FileNotFoundError:
        return {"version": STATE_VERSION, "projects": {}}
    except (OSError, ValueError) as exc:
        raise StoreError(f"cannot read {state_path(lay)}: {exc}; fix or remove it", "malformed") from None
    if not isinstance(value, dict) or not isinstance(value.get("projects"), dict):
        raise StoreError(f"{state_path(lay)} is malformed; fix or remove it", "malformed")
    return value


def save_state(lay, state: dict) -> None:
    make_private_dirs(lay.meta_dir)
    state["version"] = STATE_VERSION
    data = (json.dumps(state, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode("utf-8")
    write_atomic(state_path(lay), data, 0o600)


def project_state(state: dict, h: str) -> dict:
    entry = state["projects"].setdefault(h, {})
    if not _well_formed(entry):
        raise StoreError(f"the sync state of project {h} is malformed; fix or remove the sync state", "malformed")
    entry.setdefault("conflicts", [])
    return entry


def peek(lay, h: str):
    """The project's saved state (checked), or None when it never synced; read without the store lock."""
    state = load_state(lay)
    return project_state(state, h) if h in state["projects"] else None


def _well_formed(entry) -> bool:
    if not isinstance(entry, dict):
        return False
    base = entry.get("base", {})
    shapes = (("lastSync", dict), ("overrides", dict), ("conflicts", list))
    return (isinstance(base, dict) and all(isinstance(v, dict) for v in base.values())
            and all(isinstance(entry.get(name, kind()), kind) for name, kind in shapes))


def is_legacy(ps: dict) -> bool:
    """A project synced by the first format (ids only), not migrated yet."""
    return "base" not in ps and "lastSync" in ps


def unmet(ps: dict) -> bool:
    """A first-format project whose state may be migrated (by --resolve) but that has not synced since."""
    return "identity" not in ps and "lastSync" in ps


def migrate(ps: dict, old_files: dict, id_reader) -> None:
    """Version 1 → 2 for one project; `old_files` {name: bytes or None}: the work area's last-synced files."""
    conflicted = {(c.get("file"), c.get("id")) for c in ps.get("conflicts", ()) if isinstance(c, dict)}
    base = {}
    for name, data in old_files.items():
        ids = set(ps.get("lastSync", {}).get(name, ())) | set(ps.get("overrides", {}).get(name, ()))
        if not ids:
            continue
        known = versions(grammar.parse_entries(data.decode("utf-8", "replace")), id_reader(name)) if data else {}
        base[name] = {i: UNKNOWN if (name, i) in conflicted else known.get(i, UNKNOWN) for i in ids}
    ps["base"] = base
    ps.pop("overrides", None)


def url_digest(url: str) -> str:
    """Which remote the base was agreed with: its normalised URL, so a rotated token in it is the same remote."""
    return hashlib.sha256(normalise_url(url).encode("utf-8", "surrogateescape")).hexdigest()[:16]
