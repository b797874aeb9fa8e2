"""Checkpoints (issue 13 §1): before each write dispatch the whole worktree is recorded as a git
commit, `refs/maestro/checkpoints/<job-id>`, so `maestro rollback` can bring the tree back.

What is recorded is what the tree digest sees: tracked and untracked-not-ignored files, their
exec bits, symlinks and deletions. It is written through a PRIVATE index,
`<git-dir>/maestro-checkpoints/index` (GIT_INDEX_FILE): the user's index, HEAD and stash are never
read for writing nor changed. That index persists between checkpoints, so git's own stat cache
stays warm and `git add -A` rehashes only the files that changed since the previous checkpoint
(its first use seeds it with a copy of the user's index, which is warm already and carries the
tracked files an ignore rule would otherwise hide). Commit metadata is fixed (author and committer
`maestro`), so no user.name/user.email is needed and no hook or signing runs.

The job id exists only after the launch, so a checkpoint is taken in two steps: `take()` writes
the commit before the launch, `Pending.name(job)` points the ref at it once the id is known (a
launch that printed no id is named `unnamed-<UTC stamp>`; a launch that failed leaves an
unreferenced commit that git's gc collects). Each named checkpoint appends a
`type=checkpoint job=… session=… commit=…` record to the provenance log, and the end of a run
appends `type=run-end state=… jobs=<job>:<files changed>,…` to `<git-dir>/maestro-checkpoints/
runs.log`, which `maestro checkpoints` lists.
Restoring lives in maestro.provenance.checkpoint_restore.
"""

import os
import re
import stat
import subprocess
import time

from maestro.util import atomic
from maestro.util import git as gitscope
from maestro.util.clock import utc_stamp

REF_PREFIX = "refs/maestro/checkpoints/"
PRIVATE_DIR = "maestro-checkpoints"
PRE_ROLLBACK = "pre-rollback-"
RUNS_LOG = os.path.join(PRIVATE_DIR, "runs.log")  # under the git dir: how each run's checkpoints ended
IDENTITY = {"GIT_AUTHOR_NAME": "maestro", "GIT_AUTHOR_EMAIL": "maestro@localhost",
            "GIT_COMMITTER_NAME": "maestro", "GIT_COMMITTER_EMAIL": "maestro@localhost"}
# Raw bytes in, raw bytes out where config alone decides; no embedded-repository advice on stderr.
CONFIG = ("-c", "core.autocrlf=false", "-c", "core.safecrlf=false", "-c", "advice.addEmbeddedRepo=false")
_DROPPED_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX", "GIT_OBJECT_DIRECTORY",
                "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE")
_UNSAFE_REF_CHARS = re.compile(r"[^A-Za-z0-9._-]")
SUBJECT_PREFIX = "maestro checkpoint: "
WORKTREE_KEY = "worktree: "  # refs are shared by a repository's worktrees: each lists and restores its own
TIMEOUT_SEC = 120.0


class CheckpointError(Exception):
    """Why a checkpoint could not be taken, named, read or dropped (one line)."""


def ref_name(job: str) -> str:
    """A ref-name-safe name for `job` (job ids are `task-…`; anything else is made safe)."""
    name = _UNSAFE_REF_CHARS.sub("_", job or "").strip(".")[:120].replace("..", "_") or "unnamed"
    return name[:-len(".lock")] + "_lock" if name.endswith(".lock") else name


def git(root: str, args, *, index=None, stdin=None, env=None, timeout=TIMEOUT_SEC) -> bytes:
    """`git <CONFIG> <args>` in `root`, stdout bytes; CheckpointError with git's last line on failure."""
    extra = dict(env or {})
    if index:
        extra["GIT_INDEX_FILE"] = index
    try:
        done = subprocess.run(["git", *CONFIG, *args], cwd=root, input=stdin, capture_output=True, timeout=timeout,
                              env=gitscope.git_env(drop=_DROPPED_ENV, **extra),
                              stdin=None if stdin is not None else subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CheckpointError(f"git {args[0]}: {exc}") from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"rc={done.returncode}"]
        raise CheckpointError(f"git {args[0]} failed: {detail[0]}")
    return done.stdout


def private_index(git_dir: str, root: str) -> str:
    """The persistent private index, in a 0700 directory of ours (refused when it is a symlink or another
    user's); seeded from a copy of the user's index the first time, its flags cleared (clear_index_flags)."""
    directory = os.path.join(git_dir, PRIVATE_DIR)
    try:
        atomic.ensure_private_dir(directory)
    except atomic.NotPrivate as exc:
        raise CheckpointError(f"{directory} {exc.problem}") from None
    except OSError as exc:
        raise CheckpointError(f"cannot create {directory} ({exc.strerror or exc})") from None
    index = os.path.join(directory, "index")
    if not os.path.lexists(index):
        try:
            seed = atomic.read_regular(os.path.join(git_dir, "index"), 1 << 30)
        except (OSError, atomic.NotRegular):
            seed = None
        if seed:
            try:
                atomic.write_atomic(index, seed, 0o600, durable=False)
                clear_index_flags(root, index)
            except (OSError, CheckpointError):
                drop_private_index(git_dir)  # no seed: git builds the index from nothing, slower but whole
    elif os.path.islink(index) or not os.path.isfile(index):
        raise CheckpointError(f"{index} is not a regular file")
    return index


def clear_index_flags(root: str, index: str) -> None:
    """Clear the assume-unchanged and skip-worktree bits the seed copied from the user's index: with them
    `git add -A` would skip those files and record their old content (the user's index keeps its bits)."""
    entries = git(root, ["ls-files", "-v", "-z"], index=index).split(b"\0")
    for option, flagged in (("--no-assume-unchanged", [e[2:] for e in entries if e[:1].islower()]),
                            ("--no-skip-worktree", [e[2:] for e in entries if e[:1] in (b"S", b"s")])):
        if flagged:  # one flag per call: update-index applies only the last such option to --stdin paths
            git(root, ["update-index", option, "-z", "--stdin"], index=index, stdin=b"\0".join(flagged) + b"\0")


def real_parent(root, parts: list, create: bool = False):
    """The absolute parent directory of path `parts` under `root` (str or bytes), every component a real
    directory (created when `create`), or None when one is missing (and not created), a symlink or not a
    directory: nothing below a link planted where a directory was is read as present or written through."""
    current = root
    for part in parts[:-1]:
        current = os.path.join(current, part)
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            if not create:
                return None
            os.mkdir(current, 0o777)
            continue
        if not stat.S_ISDIR(st.st_mode):
            return None
    return current


def present(root: bytes, path: bytes) -> bool:
    """True when `path` is a regular file or symlink reached through real directories only."""
    parts = path.split(b"/")
    parent = real_parent(root, parts)
    if parent is None:
        return False
    try:
        mode = os.lstat(os.path.join(parent, parts[-1])).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) or stat.S_ISLNK(mode)


def drop_private_index(git_dir: str) -> None:
    """Forget the stat cache (after a failure): the next checkpoint starts from the user's index again."""
    try:
        os.unlink(os.path.join(git_dir, PRIVATE_DIR, "index"))
    except OSError:
        pass


def stage_worktree(root: str, git_dir: str, index: str, *, exact: bool = True) -> None:
    """Bring `index` to the worktree as the digest sees it: `git add -A` (stat cache: only changed files are
    read); then, for the ignored paths, follow the user's own index: an ignored file it tracks is in scope
    (added with -f), one it does not track is out (a file added while it was untracked and ignored since).
    `exact=False` skips that step (two git calls): a count of changed files does not need it."""
    try:
        os.unlink(index + ".lock")  # left by a killed checkpoint: the write lease lets only one run at a time
    except OSError:
        pass
    git(root, ["add", "-A", "--", "."], index=index)
    if not exact:
        return
    listed = ["ls-files", "-z", "--cached", "--ignored", "--exclude-standard"]
    ours = set(git(root, listed, index=index).split(b"\0")) - {b""}
    theirs = set(git(root, listed).split(b"\0")) - {b""}
    missing = {path for path in theirs - ours if not present(os.fsencode(root), path)}
    for args, paths in ((["rm", "-q", "--cached"], ours - theirs), (["add", "-f"], theirs - ours - missing)):
        if paths:
            git(root, [*args, "--pathspec-from-file=-", "--pathspec-file-nul"], index=index,
                stdin=b"\0".join(sorted(paths)) + b"\0", env={"GIT_LITERAL_PATHSPECS": "1"})


def snapshot_tree(root: str, git_dir: str, index=None) -> str:
    """The tree id of the worktree as it is now (tracked + untracked-not-ignored, modes, symlinks)."""
    index = index or private_index(git_dir, root)
    try:
        stage_worktree(root, git_dir, index)
        return git(root, ["write-tree"], index=index).decode().strip()
    except CheckpointError:
        if index == os.path.join(git_dir, PRIVATE_DIR, "index"):
            drop_private_index(git_dir)
        raise


def commit_tree(root: str, tree: str, title: str, session: str, *, clock=time.time) -> str:
    when = f"@{int(clock())} +0000"
    message = f"{SUBJECT_PREFIX}{title or 'untitled plan'}\n\nsession: {session or 'unknown'}\n{WORKTREE_KEY}{root}\n"
    env = dict(IDENTITY, GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    return git(root, ["commit-tree", "--no-gpg-sign", tree], stdin=message.encode("utf-8", "replace"),
               env=env).decode().strip()


def plan_title(plan: str) -> str:
    """The plan's first non-blank line without its heading marks, one line, at most 120 characters."""
    for line in (plan or "").splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return "".join(ch if ch.isprintable() else " " for ch in line)[:120]
    return ""


def set_ref(root: str, name: str, commit: str) -> str:
    """Create `refs/maestro/checkpoints/<name>` (never move one: the worktrees of a repository share these
    refs, and two unnamed launches may share a second); a name already taken gets a `-2`, `-3`, … suffix."""
    base = REF_PREFIX + ref_name(name)
    for attempt in range(1, 100):
        ref = base if attempt == 1 else f"{base}-{attempt}"
        try:
            git(root, ["update-ref", "-m", "maestro checkpoint", ref, commit, ""])
            return ref
        except CheckpointError:
            if not _ref_exists(root, ref):
                raise
    raise CheckpointError(f"{base}: too many checkpoints of that name")


def _ref_exists(root: str, ref: str) -> bool:
    try:
        git(root, ["rev-parse", "-q", "--verify", ref])
    except CheckpointError:
        return False
    return True


class Pending:
    """A checkpoint commit taken before a launch, waiting for the job id to name it."""

    def __init__(self, root, git_dir, session, tree, commit, emit, clock):
        self.root, self.git_dir, self.session, self.tree, self.commit = root, git_dir, session, tree, commit
        self.emit, self.clock = emit, clock
        self.job = ""

    def name(self, job: str) -> str:
        """Point `refs/maestro/checkpoints/<job>` at the commit and log it; '' (after one line) on failure."""
        from maestro.provenance import log as provenance_log

        name = job or f"unnamed-{utc_stamp(self.clock()).replace(':', '')}"
        try:
            ref = set_ref(self.root, name, self.commit)
        except Exception as exc:  # noqa: BLE001 - the job runs already: say so, never stop following it
            self.emit(f"CHECKPOINT: could not name the checkpoint {self.commit[:12]} for job={name} ({exc}); "
                      f"the write went on without a rollback point for it (git show {self.commit})")
            return ""
        self.job = ref[len(REF_PREFIX):]
        provenance_log.log_checkpoint(self.git_dir, self.job, self.session, self.commit, clock=self.clock)
        self.emit(f"CHECKPOINT: {ref} = {self.commit[:12]} (undo this write with: maestro rollback {self.job})")
        return self.job


class Checkpointer:
    """What the write turn calls before each launch (`take`), and `loop`/`watchdog` at their end:
    `measure` while the lease is still held, `finish` once the end state is final."""

    def __init__(self, root: str, git_dir: str, session: str, *, emit, clock=time.time, files_changed=None):
        self.root, self.git_dir, self.session, self.emit, self.clock = root, git_dir, session, emit, clock
        self.files_changed = files_changed  # () -> paths changed between the run's first and last digest, or None
        self.taken = []  # Pending checkpoints of this run, in launch order
        self.counts = {}  # job -> files changed, from measure()

    def take(self, plan: str):
        """A Pending checkpoint of the tree as it is now, or None after one `CHECKPOINT:` line saying the
        write goes on without one (a checkpoint is a convenience; it never stops the loop)."""
        try:
            tree = snapshot_tree(self.root, self.git_dir)
            commit = commit_tree(self.root, tree, plan_title(plan), self.session, clock=self.clock)
        except Exception as exc:  # noqa: BLE001 - a checkpoint never stops the write it would protect
            self.emit(f"CHECKPOINT: not taken ({exc}); this write proceeds without a rollback point")
            return None
        pending = Pending(self.root, self.git_dir, self.session, tree, commit, self.emit, self.clock)
        self.taken.append(pending)
        return pending

    def measure(self) -> None:
        """Before the lease is released, for a run of several dispatches: how many files changed between
        each checkpoint and the next one (the last: and the tree now). A run of one dispatch is counted
        by `finish` from the run's own first and last tree digests, at no cost. Never fails the run."""
        named = [pending for pending in self.taken if pending.job]
        if not self.counts and (len(named) > 1 or (named and self.files_changed is None)):
            self.counts = self._count(named)

    def _count(self, named) -> dict:
        try:
            counts = {p.job: len(changed_paths(self.root, p.tree, after.tree)) for p, after in zip(named, named[1:])}
            index = private_index(self.git_dir, self.root)  # the last one against the tree now: no write-tree
            stage_worktree(self.root, self.git_dir, index, exact=False)
            out = git(self.root, ["diff-index", "--cached", "-z", "--name-only", "--no-renames", named[-1].tree],
                      index=index)
            counts[named[-1].job] = len([p for p in out.split(b"\0") if p])
            return counts
        except Exception:  # noqa: BLE001 - runs in the loop's finally, before the lease is released
            return {p.job: None for p in named}

    def finish(self, state: str) -> None:
        """Append the run's `type=run-end` record to RUNS_LOG: its end state and the counts `measure` took
        (not to the provenance log, whose last record stays the lease's dispatch record). It runs after
        the lease is released, so it never runs git: a count not known by then is written `?`."""
        from maestro.provenance import log as provenance_log

        named = [pending for pending in self.taken if pending.job]
        if not named:
            return
        try:
            counts = self.counts
            if not counts:  # one dispatch: the digests taken at acquisition and release name its files
                changed = self.files_changed() if self.files_changed is not None else None
                counts = {named[0].job: len(changed)} if changed is not None else {}  # no git after release
            jobs = ",".join(f"{p.job}:{'?' if counts.get(p.job) is None else counts[p.job]}" for p in named)
            provenance_log.append_record(
                self.git_dir, f"{utc_stamp(self.clock())} type=run-end state={state} jobs={jobs}", RUNS_LOG)
        except Exception:  # noqa: BLE001 - a listing detail never changes how the run ends
            pass


def changed_paths(root: str, old_tree: str, new_tree: str) -> list:
    out = git(root, ["diff-tree", "-r", "-z", "--no-renames", "--name-only", old_tree, new_tree])
    return [p for p in out.split(b"\0") if p]


# -- listing, resolving, pruning ----------------------------------------------------------------
def launch_order(git_dir: str) -> dict:
    """{job: position of its checkpoint record in the provenance log}: breaks ties between checkpoints
    whose commits carry the same second."""
    from maestro.provenance import log as provenance_log

    order = {}
    for index, line in enumerate((provenance_log.read_log(git_dir) or b"").split(b"\n")):
        if b" type=checkpoint job=" in line:
            order[line.split(b" job=", 1)[1].split(b" ", 1)[0].decode("utf-8", "replace")] = index
    return order


def list_refs(root: str, git_dir=None) -> list:
    """[(name, commit, epoch, title)] of the checkpoints taken in this worktree (`root`; refs are shared
    by all worktrees of a repository), newest first: by commit time, then by launch order."""
    fmt = "%(refname)%00%(objectname)%00%(committerdate:unix)%00%(contents:subject)%00%(contents:body)%1e"
    out = git(root, ["for-each-ref", "--sort=-committerdate", f"--format={fmt}", REF_PREFIX])
    rows = []
    for record in out.decode("utf-8", "replace").split("\x1e"):
        parts = record.lstrip("\n").split("\0")
        if len(parts) != 5 or not parts[0].startswith(REF_PREFIX):
            continue
        places = [line[len(WORKTREE_KEY):] for line in parts[4].splitlines() if line.startswith(WORKTREE_KEY)]
        if not parts[3].startswith(SUBJECT_PREFIX) or places[:1] != [root]:
            continue  # another worktree's, or not a commit maestro wrote (the gate guards the refs: docs/gate.md)
        title = parts[3][len(SUBJECT_PREFIX):]
        rows.append((parts[0][len(REF_PREFIX):], parts[1], int(parts[2]) if parts[2].isdigit() else 0, title))
    order = launch_order(git_dir) if git_dir else {}
    rows.sort(key=lambda row: (row[2], order.get(row[0], -1)), reverse=True)
    return rows


def resolve(root: str, git_dir: str, job=None, last=False):
    """(name, commit) of the checkpoint for `job`, or the newest one taken before a job (`last`)."""
    rows = list_refs(root, git_dir)
    if last:
        rows = [row for row in rows if not row[0].startswith(PRE_ROLLBACK)]
        if not rows:
            raise CheckpointError("there is no checkpoint yet in this worktree")
        return rows[0][0], rows[0][1]
    for name, commit, _, _ in rows:
        if name == job or name == ref_name(job):
            return name, commit
    raise CheckpointError(f"no checkpoint named {job!r} (list them with: maestro checkpoints)")


def prune(root: str, git_dir: str, keep: int, older_than_days=None, *, clock=time.time) -> list:
    """Drop all but the `keep` newest checkpoints, and any older than `older_than_days`; the names dropped."""
    rows = list_refs(root, git_dir)
    cutoff = None if older_than_days is None else clock() - older_than_days * 86400
    drop = [row for index, row in enumerate(rows) if index >= keep or (cutoff is not None and row[2] < cutoff)]
    if drop:
        script = "".join(f"delete {REF_PREFIX}{name} {commit}\n" for name, commit, _, _ in drop)
        git(root, ["update-ref", "--stdin"], stdin=script.encode())
    return [row[0] for row in drop]
