"""Sync: two-machine sync of a project's memory through git (spec memory.md §2.11; §4 42–44). The
domain only: the `memory sync` command (arguments, result lines, the conflict envelope) is
maestro/commands/memory/sync.py.

    memory sync [--remote URL] [--cwd P] [--json]
    memory sync --resolve local|remote|both [--id ID] [--cwd P] [--json]

Opt-in per project: the first `--remote URL` creates a private git work area
`<store>/.maestro-memory/sync/<h>/` (a plain repository, 0700, whose `origin` is URL; later syncs
reuse it, `--remote` again changes it). Without one, sync makes no git calls and exits 3. The remote
holds branch `maestro-memory/<h>` with `projects/<h>/{KEY.md, MEMORY.md, KEY-archive.md, TODOS.md}`.
The project's todo list `TODOS.md` syncs the same way; its entries carry their id after the
date (`[YYYY-MM-DD HH:MM] [id: 8hex] …`, maestro/memory/store/todos.py), so ids are read per file.

One sync: fetch the branch (no lock held), then under `Store.transaction()` (lock, write-block,
drift guard) merge each file, union by id, against the last-sync id set kept per project in
`.maestro-memory/sync-state.json` (written atomically):

  - an id on one side only is kept, except a remote-only id that is in the last-sync set: the
    entry was deleted here, so that is a conflict `deletedLocal` and it is not re-added;
  - the same id with the same body (ignoring `[id:]` and `[summary:]`) is kept once; with
    different bodies it is a conflict `modifiedBoth` and the local entry is kept;
  - entries without an id (the project track's, which `add` gives none) are matched by body only:
    a remote one is appended unless an entry with the same body is already there; they carry no
    deletion tracking (a deletion of one is undone by the next sync with a peer that still has it).

The merge result is written locally even when there are conflicts; the conflicts are recorded in
the state file, the last-sync set is left unchanged and the push is refused (exit 4, "conflicts
exist, resolve first"). Without conflicts the merged files are committed and pushed, then the
last-sync set becomes the pushed ids. A local-only id that was in the last-sync set (deleted on the
other machine) is kept and pushed back, so the other machine then sees a `deletedLocal` conflict:
nothing is dropped silently. `--resolve` settles recorded conflicts without any git call:
`local` keeps the local state (the next push overrides the remote), `remote` takes the remote entry
(re-adds it for `deletedLocal`), `both` keeps the local state and re-adds the remote entry under a
fresh id. Every git call is bounded (maestro.util.process.run), never prompts
(GIT_TERMINAL_PROMPT=0), and every output line has credentials in URLs redacted
(`https://user:****@host/...`). The URL itself is kept only in the work area's git config.
"""

import json
import os
import re
import secrets

from maestro.util.atomic import write_atomic
from maestro.util import process
from maestro.util.git import git_env
from maestro.memory.store import compose
from maestro.memory.store import layout
from maestro.memory.store import entry as grammar
from maestro.memory.store.errors import StoreError
from maestro.memory.store.txn import check_write_block, make_private_dirs

FILES = ("KEY.md", "MEMORY.md", "KEY-archive.md", "TODOS.md")
TODO_FILE = "TODOS.md"


def todo_id(entry: str):
    from maestro.memory.store import todos

    todo = todos.parse(entry)
    return todo.id if todo else None


def id_reader(name: str):
    """How a file's entries name their id: the memory grammar's `[id:]`, or a todo's."""
    return todo_id if name == TODO_FILE else grammar.entry_id


def with_new_id(name: str, entry: str, old: str, new: str) -> str:
    if name != TODO_FILE:
        return grammar.with_parts(entry, id=grammar.token("id", new))
    first, sep, rest = entry.partition("\n")
    return re.sub(r"\[id:[ \t]*" + re.escape(old) + r"\]", f"[id: {new}]", first, count=1, flags=re.I) + sep + rest
STATE_VERSION = 1
LOCAL_TIMEOUT_SEC = 30
NETWORK_TIMEOUT_SEC = 120
RESOLUTIONS = ("local", "remote", "both")
_URL_CREDS = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)([^/@\s:]*)(:[^/@\s]*)?@")


def redact(text: str) -> str:
    """`scheme://user:pass@host` → `scheme://user:****@host`; a lone user part (often a token) → `****@`."""

    def sub(match):
        scheme, user, password = match.group(1), match.group(2), match.group(3)
        if password is not None:
            return f"{scheme}{user}:****@"
        if scheme.lower().startswith("ssh"):
            return match.group(0)
        return f"{scheme}****@"

    return _URL_CREDS.sub(sub, text)


def branch_name(h: str) -> str:
    return f"maestro-memory/{h}"


class SyncError(StoreError):
    pass


# --- state -----------------------------------------------------------------------------------


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
    data = (json.dumps(state, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode("utf-8")
    write_atomic(state_path(lay), data, 0o600)


def project_state(state: dict, h: str) -> dict:
    entry = state["projects"].setdefault(h, {})
    entry.setdefault("lastSync", {})
    entry.setdefault("conflicts", [])
    entry.setdefault("overrides", {})
    return entry


# --- merge (pure) ----------------------------------------------------------------------------


def merge(local: list, remote: list, last_ids, overrides=(), id_of=grammar.entry_id) -> tuple:
    """(merged entries, conflicts, added count) for one file. `overrides`: ids whose local state
    (present or absent) wins without a conflict, set by `--resolve local|both`."""
    last_ids, overrides = set(last_ids), set(overrides)
    local_by_id = {id_of(e): e for e in local if id_of(e)}
    merged, conflicts, added = list(local), [], 0
    keys = {compose.dedupe_key(e) for e in merged}
    for entry in remote:
        eid = id_of(entry)
        if eid is None:
            if compose.dedupe_key(entry) not in keys:
                merged.append(entry)
                keys.add(compose.dedupe_key(entry))
                added += 1
            continue
        if eid in overrides:
            continue
        mine = local_by_id.get(eid)
        if mine is not None:
            if compose.dedupe_key(mine) != compose.dedupe_key(entry):
                conflicts.append({"id": eid, "kind": "modifiedBoth", "local": mine, "remote": entry})
            continue
        if eid in last_ids:
            conflicts.append({"id": eid, "kind": "deletedLocal", "local": None, "remote": entry})
            continue
        merged.append(entry)
        keys.add(compose.dedupe_key(entry))
        local_by_id[eid] = entry
        added += 1
    return merged, conflicts, added


# --- git -------------------------------------------------------------------------------------


class Git:
    def __init__(self, work: str):
        self.work = work

    def __call__(self, *args, timeout=LOCAL_TIMEOUT_SEC, check=True):
        env = git_env(drop=("GIT_INDEX_FILE",), GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="", SSH_ASKPASS="",
                      GCM_INTERACTIVE="never")
        env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
        argv = ["git", "-c", "user.name=maestro", "-c", "user.email=maestro@localhost",
                "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", *args]
        done = process.run(argv, timeout=timeout, cwd=self.work, env=env)
        if check and done.rc != 0:
            lines = done.err_text.strip().splitlines()
            why = "timed out" if done.timed_out else redact(lines[-1] if lines else f"rc {done.rc}")
            raise SyncError(f"git {args[0]} failed: {why}", "io")
        return done


def _work_dir(lay, h: str) -> str:
    return os.path.join(lay.meta_dir, "sync", h)


def _open_work(lay, h: str, remote: str):
    """The work area's Git, creating or re-pointing it when `remote` is given; None when not enabled."""
    work = _work_dir(lay, h)
    exists = os.path.isfile(os.path.join(work, ".git", "config"))
    if not exists and not remote:
        return None
    make_private_dirs(work)
    git = Git(work)
    if not exists:
        git("init", "-q", "-b", branch_name(h))
        git("remote", "add", "origin", remote)
    elif remote:
        git("remote", "set-url", "origin", remote)
    return git


def _remote_url(git) -> str:
    return git("remote", "get-url", "origin").text.strip()


def _fetch(git, h: str):
    """The remote branch's commit, or None when the remote has no such branch yet."""
    ref = f"refs/heads/{branch_name(h)}"
    listed = git("ls-remote", "origin", ref, timeout=NETWORK_TIMEOUT_SEC).text.strip()
    if not listed:
        return None
    git("fetch", "-q", "--no-tags", "origin", f"+{ref}:refs/remotes/origin/sync", timeout=NETWORK_TIMEOUT_SEC)
    tip = git("rev-parse", "refs/remotes/origin/sync").text.strip()
    git("reset", "-q", "--hard", tip)
    return tip


def _read_remote(git, h: str) -> dict:
    out = {}
    for name in FILES:
        path = os.path.join(git.work, "projects", h, name)
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            data = b""
        out[name] = grammar.parse_entries(data.decode("utf-8", "replace"))
    return out


# --- sync and resolve ----------------------------------------------------------------------


def _locate(store, cwd):
    project = layout.project_root(cwd)
    return project, layout.project_hash(project), store.layout.project_dir(project)


def sync(store, cwd=None, remote=None) -> dict:
    """One pull + push. Returns a result dict; raises SyncError("conflict") after writing the merge
    when conflicts exist (the dict is attached as `.result`)."""
    lay = store.layout
    check_write_block(lay)
    project, h, pdir = _locate(store, cwd)
    git = _open_work(lay, h, remote)
    if git is None:
        raise StoreError(f"sync is not enabled for {project}: pass --remote URL once", "usage")
    url = redact(_remote_url(git))
    tip = _fetch(git, h)
    remote_files = _read_remote(git, h) if tip else {name: [] for name in FILES}

    files, conflicts = {}, []
    with store.transaction() as tx:
        state = load_state(lay)
        ps = project_state(state, h)
        for name in FILES:
            path = os.path.join(pdir, name)
            local = tx.read(path)
            merged, found, added = merge(local, remote_files[name], ps["lastSync"].get(name, ()),
                                         ps["overrides"].get(name, ()), id_reader(name))
            if merged != local:
                tx.stage(path, merged)
            files[name] = {"merged": merged, "local": len(local), "remote": len(remote_files[name]), "added": added}
            conflicts += [dict(c, file=name) for c in found]
        tx.commit()
        ps["conflicts"] = conflicts
        save_state(lay, state)

    result = {"project": project, "hash": h, "remote": url, "branch": branch_name(h),
              "files": {n: {k: v for k, v in f.items() if k != "merged"} for n, f in files.items()},
              "conflicts": conflicts, "pushed": None}
    if conflicts:
        err = SyncError(f"conflicts exist, resolve first ({len(conflicts)}; maestro memory sync --resolve "
                        "local|remote|both [--id ID]); the merge was written locally, nothing was pushed", "conflict")
        err.result = result
        raise err

    for name, info in files.items():
        path = os.path.join(git.work, "projects", h, name)
        make_private_dirs(os.path.dirname(path))
        write_atomic(path, grammar.serialize_entries(info["merged"]).encode("utf-8"), 0o600)
    git("add", "-A", "projects")
    if git("status", "--porcelain").text.strip():
        git("commit", "-q", "-m", f"maestro memory sync {h}")
        git("push", "-q", "origin", f"HEAD:refs/heads/{branch_name(h)}", timeout=NETWORK_TIMEOUT_SEC)
        result["pushed"] = git("rev-parse", "--short", "HEAD").text.strip()

    with store.transaction():
        state = load_state(lay)
        ps = project_state(state, h)
        ps["lastSync"] = {name: sorted({id_reader(name)(e) for e in info["merged"]} - {None})
                          for name, info in files.items()}
        ps["overrides"] = {}
        ps["conflicts"] = []
        save_state(lay, state)
    return result


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
        todo = [c for c in ps["conflicts"] if only_id is None or c["id"] == only_id.lower()]
        if only_id is not None and not todo:
            raise StoreError(f"no recorded conflict with id {only_id}", "usage")
        for c in todo:
            path = os.path.join(pdir, c["file"])
            entries = tx.read(path)
            id_of = id_reader(c["file"])
            index = next((i for i, e in enumerate(entries) if id_of(e) == c["id"]), None)
            if how == "remote":
                if index is None:
                    entries.append(c["remote"])
                else:
                    entries[index] = c["remote"]
            else:
                ps["overrides"].setdefault(c["file"], [])
                if c["id"] not in ps["overrides"][c["file"]]:
                    ps["overrides"][c["file"]].append(c["id"])
                if how == "both":
                    ids = {id_of(e) for e in entries}
                    new_id = secrets.token_hex(4)
                    while new_id in ids:
                        new_id = secrets.token_hex(4)
                    copy = with_new_id(c["file"], c["remote"], c["id"], new_id)
                    if compose.dedupe_key(copy) not in {compose.dedupe_key(e) for e in entries}:
                        entries.append(copy)
            tx.stage(path, entries)
        tx.commit()
        ps["conflicts"] = [c for c in ps["conflicts"] if c not in todo]
        save_state(lay, state)
    return todo
