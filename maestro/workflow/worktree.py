"""Isolated maestro worktrees (issue 13 §2): a git worktree on its own branch `maestro/<name>`,
created from HEAD under `<repo>/.maestro-worktrees/<name>` (or a directory the user names), in
which a whole `loop`/`watchdog` run happens under that worktree's own lease and job lock.

What maestro created is told apart from what the user made by a marker record in the linked
worktree's own git dir (`<common-dir>/worktrees/<id>/maestro-worktree.json`): `worktrees` lists
only those, and `worktrees remove` removes only those (and only `maestro/*` branches). The
marker lives in the git dir, not the tree, so it is never committed and `git worktree remove`
takes it along. `.maestro-worktrees/` is excluded in the repository's `info/exclude` (never the
user's `.gitignore`), so the user's `git status` and tree digest do not see the worktrees.

Every git call that could run a user hook (`worktree add` runs post-checkout, `commit` runs
pre-commit/commit-msg/post-commit) runs with `core.hooksPath=/dev/null`: maestro's bookkeeping
commits are not the user's and must not trigger the user's automation.
"""

import json
import os
import re
import secrets
import shlex
import subprocess
import time

from maestro.errors import Exit, MaestroError, UsageError
from maestro.messages import CLEAR_JOB_LOCK, CLEAR_LEASE, STATUS, WORKTREES, WORKTREES_REMOVE
from maestro.util import atomic
from maestro.util import git as gitscope

WORKTREES_DIR = ".maestro-worktrees"
BRANCH_PREFIX = "maestro/"
MARKER = "maestro-worktree.json"
EXCLUDE_LINE = f"/{WORKTREES_DIR}/"
NO_HOOKS = ("-c", "core.hooksPath=/dev/null")
FALLBACK_AUTHOR = {"GIT_AUTHOR_NAME": "maestro", "GIT_AUTHOR_EMAIL": "maestro@localhost",
                   "GIT_COMMITTER_NAME": "maestro", "GIT_COMMITTER_EMAIL": "maestro@localhost"}
# A name is one path component and one ref component: letters, digits, `.`, `_`, `-`; it starts
# with a letter or digit, has no `..`, does not end in `.` or `.lock` (git's ref rules), ≤ 64.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def validate_name(name: str) -> str:
    if (not _NAME.fullmatch(name or "") or ".." in name or name.endswith(".") or name.lower().endswith(".lock")):
        raise UsageError(f"worktree name {name!r} is not usable: use 1-64 letters, digits, '.', '_' or '-', starting "
                         "with a letter or digit (it becomes the branch maestro/<name> and a directory name)")
    return name


def default_name(title: str) -> str:
    """The plan title as a slug (at most 32 characters) plus a short random suffix, so two runs of
    one plan get two worktrees."""
    from maestro.memory.project.files import slugify

    slug = slugify(title, 32).strip("._-") or "task"
    return validate_name(f"{slug}-{secrets.token_hex(3)}")


def _git(args, cwd, check=True, **env):
    try:
        result = gitscope.run([*NO_HOOKS, *args], cwd, **env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MaestroError(f"git {' '.join(args[:2])}: {exc}", Exit.USAGE) from None
    if check and result.returncode != 0:
        detail = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise MaestroError(f"git {' '.join(args[:2])} failed: {detail[-1] if detail else result.returncode}",
                           Exit.USAGE)
    return result


def common_dir(root: str) -> str:
    out = _git(["rev-parse", "--git-common-dir"], root).stdout.decode("utf-8", "surrogateescape").strip()
    return os.path.realpath(os.path.join(root, out))


def branch_exists(root: str, branch: str) -> bool:
    return _git(["show-ref", "--verify", "--quiet", f"refs/heads/{branch}"], root, check=False).returncode == 0


def exclude_worktrees_dir(common: str) -> None:
    """Add `/.maestro-worktrees/` to `<common-dir>/info/exclude` once (atomically, keeping what is there)."""
    path = os.path.join(common, "info", "exclude")
    try:
        with open(path, "rb") as handle:
            text = handle.read()
    except FileNotFoundError:
        text = b""
    if EXCLUDE_LINE.encode() in text.splitlines():
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if text and not text.endswith(b"\n"):
        text += b"\n"
    text += b"# maestro: isolated loop worktrees (maestro worktrees)\n" + EXCLUDE_LINE.encode() + b"\n"
    atomic.write_atomic(path, text, mode=0o644)


class Worktree:
    """One maestro worktree as its marker records it."""

    def __init__(self, record: dict, git_dir: str):
        self.record = record
        self.git_dir = git_dir
        self.name = record["name"]
        self.branch = record["branch"]
        self.path = record["path"]

    def update(self, **fields) -> None:
        self.record.update(fields)
        write_marker(self.git_dir, self.record)


def write_marker(git_dir: str, record: dict) -> None:
    atomic.write_atomic(os.path.join(git_dir, MARKER), (json.dumps(record, sort_keys=True) + "\n").encode())


def _read_marker(git_dir: str):
    try:
        data = atomic.read_regular(os.path.join(git_dir, MARKER), 65536)  # no symlink, no FIFO, bounded
        record = json.loads(data.decode("utf-8")) if data is not None else None
    except (OSError, ValueError, atomic.NotRegular):
        return None
    if not isinstance(record, dict) or not all(isinstance(record.get(k), str) for k in ("name", "branch", "path")):
        return None
    if not record["branch"].startswith(BRANCH_PREFIX) or record["branch"] != BRANCH_PREFIX + record["name"]:
        return None
    return record


def find_all(root: str) -> list:
    """Every worktree maestro created in this repository, by name (from the markers in the common dir)."""
    base = os.path.join(common_dir(root), "worktrees")
    try:
        ids = sorted(os.listdir(base))
    except OSError:
        return []
    found = []
    for ident in ids:
        git_dir = os.path.join(base, ident)
        record = _read_marker(git_dir)
        if record is not None and _registered_path(git_dir) == os.path.realpath(record["path"]):
            found.append(Worktree(record, git_dir))
    return sorted(found, key=lambda wt: wt.name)


def _registered_path(git_dir: str):
    """The worktree directory git has on record for this admin dir (its `gitdir` file names `<path>/.git`)."""
    try:
        with open(os.path.join(git_dir, "gitdir"), encoding="utf-8", errors="surrogateescape") as handle:
            dot_git = handle.read().strip()
    except OSError:
        return None
    return os.path.realpath(os.path.dirname(dot_git))


def find(root: str, name: str):
    return next((wt for wt in find_all(root) if wt.name == name), None)


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def prepare(root: str, name: str, directory: str = None, *, title: str = ""):
    """(Worktree, resumed) for a run named `name`: a new worktree on a new branch from HEAD, or the
    maestro worktree of that name when it exists at that place (resumed: a re-run after
    NEEDS_ANSWERS or STUCK continues where the last one stopped). Anything else already there —
    a branch `maestro/<name>` or a directory maestro did not create — is refused, never reused."""
    validate_name(name)
    branch = BRANCH_PREFIX + name
    default_place = os.path.join(root, WORKTREES_DIR, name)
    path = os.path.realpath(os.path.abspath(directory)) if directory else default_place
    if directory and _inside(path, root) and not _inside(path, os.path.join(root, WORKTREES_DIR)):
        raise UsageError(f"--worktree-dir {directory} is inside this worktree ({root}); the user's own worktree is "
                         f"never touched: choose a directory outside it (or leave --worktree-dir out: "
                         f"{WORKTREES_DIR}/<name>)")
    home = os.path.join(root, WORKTREES_DIR)
    if not directory and os.path.lexists(home) and (os.path.islink(home) or not os.path.isdir(home)):
        # a repository may carry `.maestro-worktrees` as a committed symlink: never follow it out of the repo
        raise UsageError(f"{home} is a symlink or not a directory; maestro keeps its worktrees only in a real "
                         "directory there (remove it, or use --worktree-dir)")
    existing = find(root, name)
    if existing is not None:
        if os.path.realpath(existing.path) != path:
            raise UsageError(f"maestro worktree {name!r} already exists at {existing.path}; resume it there (leave "
                             f"--worktree-dir out or name that directory) or pick another name")
        if not os.path.isdir(path):
            raise UsageError(f"maestro worktree {name!r} is registered at {path} but the directory is gone; remove it "
                             f"with: {WORKTREES_REMOVE} {name}")
        return existing, True
    if branch_exists(root, branch):
        raise UsageError(f"branch {branch} already exists and is not a maestro worktree of this repository; pick "
                         f"another --worktree name; {leftover_hint(root, name)}")
    if os.path.lexists(path):
        raise UsageError(f"{path} already exists and is not a maestro worktree; pick another name or directory")
    common = common_dir(root)
    exclude_worktrees_dir(common)
    if not directory:
        try:
            atomic.ensure_private_dir(home)  # ours, 0700, not a symlink (checked again as it is made)
        except atomic.NotPrivate as exc:
            raise UsageError(f"{exc.path} {exc.problem}; maestro keeps its worktrees only in a private directory "
                             "of yours there") from None
    try:
        _git(["worktree", "add", "--quiet", "-b", branch, path, "HEAD"], root)
    except MaestroError:
        raise  # git refused: it made nothing
    except BaseException:  # Ctrl-C while git was adding it: whatever it made is taken back below
        _take_back(root, path, branch)
        raise
    try:
        git_dir = gitscope.git_dir(path)
        base = _git(["rev-parse", "HEAD"], path).stdout.decode().strip()
        record = {"name": name, "branch": branch, "path": path, "base": base, "created_epoch": int(time.time()),
                  "title": title, "last_outcome": "", "last_epoch": 0}
        write_marker(git_dir, record)
    except BaseException:  # a failure, Ctrl-C or SystemExit included
        # unmarked, it would be neither maestro's nor reusable under this name: take back what was just made
        _take_back(root, path, branch)
        raise
    return Worktree(record, git_dir), False


def _checked_out_at(root: str, branch: str):
    """The directory of the worktree that has `branch` checked out, or None."""
    out = _git(["worktree", "list", "--porcelain", "-z"], root, check=False).stdout.decode("utf-8", "surrogateescape")
    path = None
    for field in out.split("\0"):
        if field.startswith("worktree "):
            path = field[len("worktree "):]
        elif field == f"branch refs/heads/{branch}":
            return path
    return None


def _take_back(root: str, path: str, branch: str) -> None:
    _git(["worktree", "remove", "--force", path], root, check=False)
    _git(["branch", "-D", branch], root, check=False)


def leftover_hint(root: str, name: str, path: str = None) -> str:
    """What to run when `maestro/<name>` is there without maestro's marker: the leftover of a run killed
    between `git worktree add` and the marker (or something of the user's, hence the condition)."""
    path = path or _checked_out_at(root, BRANCH_PREFIX + name) or os.path.join(root, WORKTREES_DIR, name)
    return (f"if it is the leftover of a maestro run killed while creating it (no changes of yours in it), clean "
            f"it with: git worktree remove --force {shlex.quote(path)} && git branch -D {BRANCH_PREFIX}{name}")


def _author_env(path: str) -> dict:
    """maestro's fixed identity when the repository (or the user's config) names no author."""
    name = _git(["config", "user.name"], path, check=False).stdout.strip()
    email = _git(["config", "user.email"], path, check=False).stdout.strip()
    return {} if name and email else dict(FALLBACK_AUTHOR)


def _trailer(value: str, limit: int = 400) -> str:
    """One line, bounded, with any secret (a token in a verify command, say) replaced by its placeholder, as
    outcomes are: the message goes into git history, which outlives any memory entry."""
    from maestro.memory.store.sanitize import filter_text

    value = " ".join(filter_text(value).split())
    return value if len(value) <= limit else value[: limit - 1] + "…"


class NotOnBranch(MaestroError):
    """The worktree's HEAD is no longer its own branch (switched or detached by hand): nothing is committed."""

    def __init__(self, wt: "Worktree", head: str):
        super().__init__(f"HEAD of {wt.path} is {head} instead of {wt.branch}, so nothing was committed (a commit "
                         f"there would not land on {wt.branch}); check that worktree: the result is in its files, "
                         f"uncommitted", Exit.BLOCKED)


def head(wt: Worktree) -> str:
    """The commit the worktree's HEAD is at ('' when unreadable)."""
    return _git(["rev-parse", "-q", "--verify", "HEAD"], wt.path, check=False).stdout.decode().strip()


def commit(wt: Worktree, title: str, jobs, verify: str = None, verb: str = "loop"):
    """Commit everything in the worktree (tracked and untracked-not-ignored) on its branch. Returns
    the new commit id, or None when there was nothing to commit; NotOnBranch when HEAD is not
    `refs/heads/maestro/<name>` any more. The user's hooks never run (--no-verify and an empty hooks
    path) and signing is off: the commit is maestro's record of the run; the user's own merge is
    where their policy applies."""
    ref = _git(["symbolic-ref", "-q", "HEAD"], wt.path, check=False).stdout.decode("utf-8", "replace").strip()
    if ref != f"refs/heads/{wt.branch}":
        raise NotOnBranch(wt, ref.removeprefix("refs/heads/") or f"detached at {head(wt)[:12] or 'an unknown commit'}")
    _git(["add", "--all"], wt.path)
    if _git(["diff", "--cached", "--quiet"], wt.path, check=False).returncode == 0:
        return None
    trailers = [f"Maestro-Job: {_trailer(job, 120)}" for job in jobs] or ["Maestro-Job: unknown"]
    if verify:
        body = f"maestro {verb} run in worktree {wt.name}: Codex claimed DONE and the verify command passed locally."
        trailers.append(f"Maestro-Verify: {_trailer(verify)}")
    else:
        body = f"maestro {verb} run in worktree {wt.name}: Codex claimed DONE; nothing was verified locally."
        trailers.append("Maestro-Verify: none")
    _git(["-c", "commit.gpgsign=false", "commit", "--quiet", "--no-verify", "-m", _trailer(title or wt.name, 200),
          "-m", body, "-m", "\n".join(trailers)], wt.path, **_author_env(wt.path))
    return head(wt)


def locks_present(git_dir: str) -> str:
    """'' when the worktree has neither a write lease nor a companion job lock, else what is there. Removal
    needs no judging (held, orphaned or poisoned alike refuse it); `maestro status` does the judging."""
    from maestro.locks import joblock
    from maestro.locks.lease_state import lock_path

    if os.path.lexists(lock_path(git_dir)):
        return "its write lease is present"
    return "its companion job lock is present" if os.path.lexists(joblock.lock_path(git_dir)) else ""


def describe(wt: Worktree) -> dict:
    """One row of `maestro worktrees` (its lease and job lock are judged by the command, as `status` does)."""
    return {"name": wt.name, "branch": wt.branch, "path": wt.path, "exists": os.path.isdir(wt.path),
            "last_outcome": str(wt.record.get("last_outcome") or ""),
            "last_epoch": epoch if isinstance(epoch := wt.record.get("last_epoch"), int) else 0,
            "title": str(wt.record.get("title") or "")}


def remove(root: str, name: str, judge=None) -> Worktree:
    """Remove the maestro worktree `name` (its directory, uncommitted changes included), its branch, the
    checkpoint refs taken in it and its private companion data directory (a name used again starts clean).
    Refused while its lease or job lock exists in any state: a writer may still be at work there, and
    only `loop --clear-lease` run in that worktree can prove none is. `judge(git_dir)` may word what is
    there (the command passes `status`' judging)."""
    validate_name(name)
    wt = find(root, name)
    if wt is None:
        hint = f"; {leftover_hint(root, name)}" if branch_exists(root, BRANCH_PREFIX + name) else ""
        raise UsageError(f"no maestro worktree named {name!r} in this repository (see: {WORKTREES}){hint}")
    if _inside(os.path.realpath(os.getcwd()), os.path.realpath(wt.path)):
        raise UsageError(f"run `{WORKTREES_REMOVE} {name}` from outside that worktree ({wt.path})")
    what = locks_present(wt.git_dir)
    if what:
        what = (judge(wt.git_dir) if judge is not None else None) or what
        raise MaestroError(f"maestro worktree {name!r} was not removed: {what}. Check it with `cd {wt.path} && "
                           f"{STATUS}`; once no Codex job is writing there, clear it in that worktree "
                           f"({CLEAR_LEASE} / {CLEAR_JOB_LOCK}) and remove it again", Exit.BLOCKED)
    wt.dropped_checkpoints = _drop_checkpoints(wt)
    if os.path.isdir(wt.path):
        _git(["worktree", "remove", "--force", wt.path], root)
    else:  # its directory was deleted by hand: drop git's record of this one worktree only
        import shutil

        shutil.rmtree(wt.git_dir)
    wt.removed_head = ""
    if branch_exists(root, wt.branch):
        wt.removed_head = _git(["rev-parse", wt.branch], root).stdout.decode().strip()
        _git(["branch", "-D", wt.branch], root)
    wt.companion_data_kept = _drop_companion_data(wt.path)
    return wt


def _drop_checkpoints(wt: Worktree):
    """Drop the checkpoint refs taken in this worktree (before it goes: they are listed from inside it);
    their names, or None when its directory is gone already (its refs cannot be told apart then)."""
    from maestro.provenance import checkpoint

    if not os.path.isdir(wt.path):
        return None
    try:
        return checkpoint.prune(wt.path, wt.git_dir, keep=0)
    except checkpoint.CheckpointError as exc:
        raise MaestroError(f"maestro worktree {wt.name!r} was not removed: its checkpoints could not be dropped "
                           f"({exc}); nothing was changed, try again", Exit.BLOCKED) from None


def _drop_companion_data(path: str) -> str:
    """Delete maestro's private companion data directory of the worktree at `path` ('' when gone or
    removed); kept (and the reason returned) when it is not a private directory of ours all the way down
    from ~/.maestro, or when a broker record says a companion broker may still run there."""
    import shutil

    from maestro.codex import plugin_data

    data = plugin_data.data_dir(path)
    if not os.path.lexists(data):
        return ""
    for directory in (os.path.dirname(os.path.dirname(data)), os.path.dirname(data), data):
        try:
            st = os.lstat(directory)
        except OSError as exc:
            return f"{directory}: {exc.strerror or exc}"
        if not os.path.isdir(directory) or os.path.islink(directory) or st.st_uid != os.geteuid():
            return f"{directory} is not a private directory of yours"
    if plugin_data.broker_record(data, path) is not None:
        return f"{data} holds a broker record: a companion broker may still run there"
    try:
        shutil.rmtree(data)
    except OSError as exc:
        return f"{data}: {exc.strerror or exc}"
    return ""
