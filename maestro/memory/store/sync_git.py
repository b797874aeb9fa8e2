"""The git side of `memory sync` (maestro/memory/store/sync.py): the private work area, reading the
remote branch, pushing a new commit on it. Every git call is bounded (maestro.util.process.run), never
prompts (GIT_TERMINAL_PROMPT=0, no askpass, ssh in batch mode), runs no hooks and signs nothing; every
line it may print has credentials in URLs redacted (`https://user:****@host/...`).

The work area `<store>/.maestro-memory/sync/<local hash>/` is a plain repository (0700) whose `origin`
is the remote URL; the URL is kept only in its git config. Its work tree is not used (a store synced by
an older maestro left its last-synced files there; the migration reads them once). Commits are built
with `git fast-import` on top of the fetched tip and pushed without force, so a push that lost a race
is refused by the remote and reported as `Rejected`, never overwrites.
"""

import os
import re
import time

from maestro.util import process
from maestro.util.git import git_env
from maestro.memory.store import entry as grammar
from maestro.memory.store.errors import StoreError
from maestro.memory.store.txn import make_private_dirs

LOCAL_TIMEOUT_SEC = 30
NETWORK_TIMEOUT_SEC = 120
FETCHED = "refs/remotes/origin/sync"
OUTGOING = "refs/heads/maestro-sync-out"
_URL_CREDS = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)([^/@\s:]*)(:[^/@\s]*)?@")
_RACE = ("[rejected]", "non-fast-forward", "fetch first", "cannot lock ref", "failed to update ref")


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


def branch_name(key: str) -> str:
    return f"maestro-memory/{key}"


class SyncError(StoreError):
    pass


class Rejected(SyncError):
    """The remote refused the push because its branch moved since the fetch (another sync won)."""


class Git:
    def __init__(self, work: str):
        self.work = work

    def __call__(self, *args, timeout=LOCAL_TIMEOUT_SEC, check=True, stdin_data=None):
        env = git_env(drop=("GIT_INDEX_FILE",), GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="", SSH_ASKPASS="",
                      GCM_INTERACTIVE="never")
        env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
        # gc/maintenance in the foreground: a detached one would be killed with the call's process group
        argv = ["git", "-c", "user.name=maestro", "-c", "user.email=maestro@localhost",
                "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null",
                "-c", "gc.autoDetach=false", "-c", "maintenance.autoDetach=false", *args]
        done = process.run(argv, timeout=timeout, cwd=self.work, env=env, stdin_data=stdin_data)
        if check and done.rc != 0:
            raise SyncError(f"git {args[0]} failed: {why(done)}", "io")
        return done


def why(done) -> str:
    lines = done.err_text.strip().splitlines()
    return "timed out" if done.timed_out else redact(lines[-1] if lines else f"rc {done.rc}")


def open_work(work: str, remote: str):
    """The work area's Git, creating or re-pointing it when `remote` is given; None when not enabled."""
    exists = os.path.isfile(os.path.join(work, ".git", "config"))
    if not exists and not remote:
        return None
    make_private_dirs(work)
    git = Git(work)
    if not exists:
        git("init", "-q")
        git("remote", "add", "origin", remote)
    elif remote:
        git("remote", "set-url", "origin", remote)
    return git


def remote_url(git) -> str:
    return git("remote", "get-url", "origin").text.strip()


def listed_branches(git, *keys) -> set:
    """Which of the branches named by `keys` the remote has."""
    refs = [f"refs/heads/{branch_name(key)}" for key in keys]
    out = git("ls-remote", "origin", *refs, timeout=NETWORK_TIMEOUT_SEC).text
    present = {line.split("\t", 1)[1].strip() for line in out.splitlines() if "\t" in line}
    return {key for key, ref in zip(keys, refs) if ref in present}


def fetch(git, key: str, names) -> tuple:
    """(tip commit, {name: bytes or None}) of branch `maestro-memory/<key>`, its files under
    `projects/<key>/`; (None, {}) when the remote has no such branch (one git call less than asking first)."""
    ref = f"refs/heads/{branch_name(key)}"
    done = git("fetch", "-q", "--no-tags", "origin", f"+{ref}:{FETCHED}", timeout=NETWORK_TIMEOUT_SEC, check=False)
    if done.rc != 0:
        if "couldn't find remote ref" in done.err_text:
            return None, dict.fromkeys(names)
        raise SyncError(f"git fetch failed: {why(done)}", "io")
    specs = [FETCHED] + [f"{FETCHED}:projects/{key}/{name}" for name in names]
    out = git("cat-file", "--batch", stdin_data="".join(s + "\n" for s in specs).encode()).stdout
    values = []
    for index, spec in enumerate(specs):
        head, _, out = out.partition(b"\n")
        fields = head.split()
        if len(fields) != 3:  # "<spec> missing"
            values.append(None)
            continue
        if fields[1] != (b"commit" if index == 0 else b"blob"):
            raise SyncError(f"the remote branch {branch_name(key)} is malformed: {redact(spec)} is a "
                            f"{fields[1].decode('ascii', 'replace')}, not a file; fix the branch or sync with "
                            "another --project-id", "malformed")
        size = int(fields[2])
        values.append((fields[0].decode(), out[:size]))
        out = out[size + 1:]
    tip = values[0][0] if values[0] else None
    return tip, {name: (value[1] if value else None) for name, value in zip(names, values[1:])}


def work_tree_files(git, key: str, names) -> dict:
    """{name: bytes or None}: the files an older maestro left in the work tree (its last-synced state)."""
    out = {}
    for name in names:
        try:
            with open(os.path.join(git.work, "projects", key, name), "rb") as handle:
                out[name] = handle.read()
        except OSError:
            out[name] = None
    return out


def push(git, key: str, tip, files: dict) -> str:
    """Commit `files` ({name: bytes}) under `projects/<key>/` on top of `tip` (None: a new branch)
    and push it; the new commit, or `Rejected` when the branch moved since the fetch."""
    when = int(time.time())
    script = [f"commit {OUTGOING}", "mark :1", f"committer maestro <maestro@localhost> {when} +0000"]
    message = f"maestro memory sync {key}".encode()
    stream = "\n".join(script).encode() + b"\n" + b"data %d\n" % len(message) + message + b"\n"
    stream += (f"from {tip}\n" if tip else "").encode()
    for name, data in files.items():
        stream += f"M 100644 inline projects/{key}/{name}\n".encode() + b"data %d\n" % len(data) + data + b"\n"
    stream += b"get-mark :1\n"
    made = git("fast-import", "--quiet", "--force", "--done", stdin_data=stream + b"done\n").text.split()
    commit = made[-1] if made else ""
    done = git("push", "--porcelain", "origin", f"{OUTGOING}:refs/heads/{branch_name(key)}",
               timeout=NETWORK_TIMEOUT_SEC, check=False)
    if done.rc != 0:
        said = done.text + done.err_text
        if any(mark in said for mark in _RACE):
            raise Rejected(f"the remote branch moved during the push: {why(done)}", "io")
        raise SyncError(f"git push failed: {why(done)}", "io")
    return commit


def serialized(entries) -> bytes:
    return grammar.serialize_entries(entries).encode("utf-8")
