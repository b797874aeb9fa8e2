"""Sync: a project's memory shared between machines through git (spec memory.md §2.11; §4 42–44;
the user's guide is docs/memory-sync.md). The domain only: the `memory sync` command (arguments, result
lines, the conflict envelope) is maestro/commands/memory/sync.py.

    memory sync [--remote URL] [--project-id ID] [--cwd P] [--json]
    memory sync --resolve local|remote|both [--id ID] [--cwd P] [--json]

Opt-in per checkout: the first `--remote URL` creates the private work area
`<store>/.maestro-memory/sync/<local hash>/` (sync_git); without one, sync makes no git call and exits 3.
The remote holds branch `maestro-memory/<key>` with `projects/<key>/{KEY.md, MEMORY.md, KEY-archive.md,
TODOS.md}`, `<key>` named from the project's identity (sync_identity: its root commit, else its
`origin` URL, else `--project-id`), so every clone of the project meets there whatever its path.

One sync, up to `PUSH_ATTEMPTS` rounds of: fetch the branch (no lock held); under `Store.transaction()`
(lock, write-block, drift guard) merge each file three-way against what was last agreed (sync_merge,
the base kept in sync_state) and write the result locally; then, when it differs from the remote,
commit it on top of the fetched tip and push without force. A push refused because another sync won
the race fetches and merges again; after the last attempt it says in one line to run sync again.

A one-sided edit, deletion or addition travels silently; only an entry changed on both sides since the
last agreement is a conflict: the merge (local side kept for it) is still written locally, the
conflicts are recorded in the state, nothing is pushed, and the sync exits 4. `--resolve` settles
recorded conflicts without any git call, by moving the entry's base to the remote version it saw (and,
for `remote`, taking that version), so the next sync on this machine pushes the choice and every other
machine takes it as a one-sided change — one round, no new conflict:

  - `local`  keeps this machine's version (or its deletion);
  - `remote` takes the other version (or its deletion);
  - `both`   keeps this machine's version under the entry's id and adds the other one once under a
             fresh id (a deletion on either side keeps the surviving version; entries without an id that
             differ only in their summary keep the local one).
"""

import os
import re

from maestro.memory.store import compose
from maestro.memory.store import entry as grammar
from maestro.memory.store import layout
from maestro.memory.store import sync_git
from maestro.memory.store import sync_identity
from maestro.memory.store.errors import StoreError
from maestro.memory.store.sync_git import SyncError, branch_name, redact  # noqa: F401 - the command's names
from maestro.memory.store.sync_merge import (  # noqa: F401 - UNKNOWN, todo_id: the tests' names
    TODO_FILE, UNKNOWN, id_reader, keyed, merge, todo_id, version, versions)
from maestro.memory.store.sync_state import (
    is_legacy, load_state, migrate, peek, project_state, save_state, unmet, url_digest)
from maestro.memory.store.txn import check_write_block
from maestro.util.tokens import token_hex

FILES = ("KEY.md", "MEMORY.md", "KEY-archive.md", TODO_FILE)
RESOLUTIONS = ("local", "remote", "both")
PUSH_ATTEMPTS = 3


def _locate(store, cwd):
    project = layout.project_root(cwd)
    return project, layout.project_hash(project), store.layout.project_dir(project)


def _work_dir(lay, h: str) -> str:
    return os.path.join(lay.meta_dir, "sync", h)


def _identity(lay, project: str, h: str, project_id):
    """`--project-id`, else the identity pinned at the first sync, else the repository's own."""
    if project_id is not None:
        return sync_identity.explicit(project_id)
    pinned = (peek(lay, h) or {}).get("identity")
    return (pinned and sync_identity.from_text(pinned, h)) or sync_identity.discover(project, h)


def _fetch(git, ident, h: str, lay) -> tuple:
    """(tip to build on or None, {name: entries}, {name: bytes or None}, read from the old branch?). The
    branch of an older maestro (`maestro-memory/<local hash>`) is read once: by a checkout not migrated
    yet, when the project's branch does not exist (the push then starts the new branch from it)."""
    saved = peek(lay, h)
    legacy = ident.key != h and saved is not None and unmet(saved)
    if legacy:
        present = sync_git.listed_branches(git, ident.key, h)
        source = ident.key if ident.key in present else h if h in present else None
        tip, data = sync_git.fetch(git, source, FILES) if source else (None, dict.fromkeys(FILES))
    else:
        source = ident.key
        tip, data = sync_git.fetch(git, source, FILES)
        source = source if tip else None
    parsed = {name: grammar.parse_entries(data[name].decode("utf-8", "replace")) if data[name] else []
              for name in FILES}
    return (tip if source == ident.key else None), parsed, data, source not in (None, ident.key)


def _merge(store, git, ident, h: str, pdir: str, url: str, fetched) -> tuple:
    """Merge every file under the store lock, write it, record the base; (merges, conflicts, migrated)."""
    tip, remote_files, _data, from_old = fetched
    lay = store.layout
    with store.transaction() as tx:
        state = load_state(lay)
        ps = project_state(state, h)
        migrated = unmet(ps)
        if is_legacy(ps):
            migrate(ps, sync_git.work_tree_files(git, h, FILES), id_reader)
        moved = not migrated and (ps.get("identity") != ident.text or ps.get("remote") != url_digest(url))
        if moved or (tip is None and not from_old):
            ps["base"] = {}  # another project, another remote, or a branch that is gone: nothing is agreed
        ps.update(identity=ident.text, remote=url_digest(url))
        merges, conflicts = {}, []
        for name in FILES:
            path = os.path.join(pdir, name)
            local = tx.read(path)
            merged = merge(local, remote_files[name], ps["base"].get(name, {}), id_reader(name))
            if merged.entries != local:
                tx.stage(path, merged.entries)
            merges[name] = (merged, len(local), len(remote_files[name]))
            conflicts += [dict(c, file=name) for c in merged.conflicts]
            ps["base"][name] = merged.agreed
        tx.commit()
        ps["conflicts"] = conflicts
        save_state(lay, state)
    return merges, conflicts, migrated


def sync(store, cwd=None, remote=None, project_id=None, before_push=None) -> dict:
    """One sync (see the module docstring). Returns a result dict; raises SyncError("conflict") after
    writing the merge when conflicts exist (the dict is attached as `.result`). `before_push(attempt)`,
    when given, runs between the merge and the push (the tests' seam for a racing sync)."""
    lay = store.layout
    check_write_block(lay)
    if project_id is not None:
        sync_identity.check_project_id(project_id)
    project, h, pdir = _locate(store, cwd)
    git = sync_git.open_work(_work_dir(lay, h), remote)
    if git is None:
        raise StoreError(f"sync is not enabled for {project}: pass --remote URL once", "usage")
    url = sync_git.remote_url(git)
    ident = _identity(lay, project, h, project_id)
    result = {"project": project, "hash": h, "remote": redact(url), "branch": branch_name(ident.key),
              "identity": ident.kind, "projectKey": ident.key, "conflicts": [], "pushed": None, "migrated": False}
    for attempt in range(1, PUSH_ATTEMPTS + 1):
        fetched = _fetch(git, ident, h, lay)
        merges, conflicts, migrated = _merge(store, git, ident, h, pdir, url, fetched)
        result["migrated"] = result["migrated"] or migrated
        result.update(attempts=attempt, conflicts=conflicts, files={
            name: {"local": n_local, "remote": n_remote, "added": m.added, "updated": m.updated,
                   "removed": m.removed} for name, (m, n_local, n_remote) in merges.items()})
        if conflicts:
            err = SyncError(f"conflicts exist, resolve first ({len(conflicts)}; maestro memory sync --resolve "
                            "local|remote|both [--id ID]); the merge was written locally, nothing was pushed",
                            "conflict")
            err.result = result
            raise err
        tip, _remote, data, from_old = fetched
        out = {name: sync_git.serialized(m.entries) for name, (m, _l, _r) in merges.items()}
        changed = {name: blob for name, blob in out.items() if blob != (data[name] or b"") or (from_old and blob)}
        if changed:
            if before_push is not None:
                before_push(attempt)
            try:
                result["pushed"] = sync_git.push(git, ident.key, tip, changed)[:12]
            except sync_git.Rejected:
                if attempt < PUSH_ATTEMPTS:
                    continue
                raise SyncError(f"another machine pushed to {branch_name(ident.key)} during each of "
                                f"{PUSH_ATTEMPTS} attempts; this machine's merge is kept locally; run "
                                "`maestro memory sync` again", "busy") from None
        _agree(store, h, {name: m.entries for name, (m, _l, _r) in merges.items()})
        return result
    raise AssertionError("unreachable")  # pragma: no cover


def _agree(store, h: str, pushed: dict) -> None:
    """After a push (or when nothing needed one): what was pushed is what both sides agree on."""
    with store.transaction():
        state = load_state(store.layout)
        ps = project_state(state, h)
        ps["base"] = {name: versions(entries, id_reader(name)) for name, entries in pushed.items()}
        ps["lastSync"] = {name: sorted({id_reader(name)(e) for e in entries} - {None})
                          for name, entries in pushed.items()}
        ps["conflicts"] = []
        save_state(store.layout, state)


def _fresh_id(name: str, entries) -> str:
    taken = set(keyed(entries, id_reader(name)))
    new_id = token_hex(4)
    while new_id in taken:
        new_id = token_hex(4)
    return new_id


def _with_new_id(name: str, entry: str, old: str, new: str) -> str:
    if name != TODO_FILE:
        return grammar.with_parts(entry, id=grammar.token("id", new))
    first, sep, rest = entry.partition("\n")
    return re.sub(r"\[id:[ \t]*" + re.escape(old) + r"\]", f"[id: {new}]", first, count=1, flags=re.I) + sep + rest


def _settle(name: str, entries: list, conflict: dict, how: str, base: dict) -> list:
    """One conflict settled in `entries` (returned); `base` moves to the remote version it saw."""
    key, mine, theirs = conflict["id"], conflict["local"], conflict["remote"]
    if theirs is None:
        base.pop(key, None)
    else:
        base[key] = version(theirs)
    current = keyed(entries, id_reader(name)).get(key)
    if how == "both" and (mine is None or theirs is None):
        how = "remote" if mine is None else "local"
    if how == "remote":
        kept = [e for e in entries if e is not current]
        if theirs is None:
            return kept
        if current is None:
            return kept + [theirs]
        return [theirs if e is current else e for e in entries]
    if how == "both" and id_reader(name)(theirs):
        copy = _with_new_id(name, theirs, id_reader(name)(theirs), _fresh_id(name, entries))
        if compose.dedupe_key(copy) not in {compose.dedupe_key(e) for e in entries}:
            return entries + [copy]
    return entries


def resolve(store, how: str, cwd=None, only_id=None) -> list:
    """Settle recorded conflicts (all, or the one with `only_id`); no git call. Returns those settled."""
    if how not in RESOLUTIONS:
        raise StoreError(f"--resolve takes local, remote or both (not {how!r})", "usage")
    lay = store.layout
    check_write_block(lay)
    _project, h, pdir = _locate(store, cwd)
    with store.transaction() as tx:
        state = load_state(lay)
        ps = project_state(state, h)
        if is_legacy(ps):
            migrate(ps, sync_git.work_tree_files(sync_git.Git(_work_dir(lay, h)), h, FILES), id_reader)
        todo = [c for c in ps["conflicts"] if only_id is None or c["id"] == only_id.lower()]
        if only_id is not None and not todo:
            raise StoreError(f"no recorded conflict with id {only_id}", "usage")
        for c in todo:
            path = os.path.join(pdir, c["file"])
            base = ps["base"].setdefault(c["file"], {})
            tx.stage(path, _settle(c["file"], tx.read(path), c, how, base))
        tx.commit()
        ps["conflicts"] = [c for c in ps["conflicts"] if c not in todo]
        save_state(lay, state)
    return todo
