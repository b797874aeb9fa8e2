"""`loop --worktree` / `watchdog --worktree`: run a whole write run in an isolated maestro worktree.

The run itself is unchanged: this module creates (or resumes) the worktree, makes it the current
directory for the length of the run — so the scope, the companion's workspace, the lease, the job
lock, the provenance log and the verifier are all that worktree's own — and puts the caller's
directory back afterwards. At the end it commits a successful result on the worktree's branch and
says how to merge or discard it; any other end keeps the worktree, uncommitted, for inspection.
The user's own worktree (tree, index, HEAD) is never touched: maestro only adds one line to the
repository's `info/exclude`. What the run leaves in project memory (its outcome, a handoff) goes to
the user's checkout (`user_root`), not to the worktree, whose path disappears with `worktrees remove`.
"""

import os
import re
import sys
import time

from maestro.errors import Exit, MaestroError, UsageError
from maestro.messages import WORKTREES_REMOVE
from maestro.util import git as gitscope
from maestro.workflow import worktree as worktrees


class Spec:
    """What the command line asked for: a name (None: derive one from the plan title) and a directory."""

    def __init__(self, name=None, directory=None):
        self.name = worktrees.validate_name(name) if name else None
        self.directory = directory


def spec_from(options: dict):
    """A Spec from parsed `--worktree [NAME]` / `--worktree-dir DIR` options, or None when neither was given.
    `--worktree-dir` alone implies `--worktree`."""
    if "--worktree" not in options and "--worktree-dir" not in options:
        return None
    directory = options.get("--worktree-dir")
    if directory is not None and not directory.strip():
        raise UsageError("--worktree-dir needs a directory")
    return Spec(options.get("--worktree") or None, directory)


class WorktreeRun:
    """One isolated run: `enter` (create or resume, chdir), `commit_result` under the run's lease (the
    branch gets exactly what was verified: a waiting second run on the same NAME cannot take the lease
    and have its half-written files committed), `end` once the lease is released, `leave`."""

    def __init__(self, scope: str, verb: str, spec: Spec, plan_text: str, verify: str = None, *, emit, states):
        from maestro.memory.project.outcomes import plan_title

        self.scope, self.verb, self.spec, self.verify = scope, verb, spec, verify
        self.emit, self.states = emit, states
        self.title = plan_title(plan_text)
        self.worktree = None
        self.user_root = None  # the user's checkout: where the run's project memory goes
        self.previous_cwd = None
        self.log_offset = 0
        self.committed = None  # the commit made by commit_result, if any

    @property
    def name(self):
        return self.worktree.name if self.worktree is not None else None

    @property
    def directory(self):
        """The worktree's directory when it is not the default place (a re-run must name it again)."""
        return self.worktree.path if self.worktree is not None and self.spec.directory else None

    def enter(self) -> None:
        root = gitscope.scope_root()
        if root is None:
            raise MaestroError(f"{self.scope}_ERROR: not inside a git repository; --worktree needs one", Exit.USAGE)
        name = self.spec.name or worktrees.default_name(self.title)
        try:
            self.worktree, resumed = worktrees.prepare(root, name, self.spec.directory, title=self.title)
        except OSError as exc:
            raise MaestroError(f"{self.scope}_ERROR: could not create the worktree ({exc.strerror or exc})",
                               Exit.USAGE) from None
        wt = self.worktree
        self.user_root = root
        self.log_offset = log_size(wt.git_dir)
        self.previous_cwd = os.getcwd()
        os.chdir(wt.path)
        self.emit(f"{self.scope}_WORKTREE: {'resuming' if resumed else 'created'} {wt.path} on branch {wt.branch}; "
                  "the whole run happens there, under that worktree's own lease")

    def leave(self) -> None:
        if self.previous_cwd is not None:
            os.chdir(self.previous_cwd)
            self.previous_cwd = None

    def commit_result(self, rc: int, lease) -> int:
        """While the run still holds its `lease` (locks/lease.WriteLease): commit a successful result on the
        branch. A success that cannot be committed becomes BLOCKED (the branch does not hold it). The jobs
        are the dispatch records of this run plus the lease's current job (logged only at its release)."""
        if rc != Exit.OK:
            return rc
        wt, prefix = self.worktree, f"{self.scope}_WORKTREE:"
        keep = f"it is uncommitted in {wt.path} — commit it there yourself or discard it with: " \
               f"{WORKTREES_REMOVE} {wt.name}"
        if not lease.guard():
            self.emit(f"{prefix} the write lease is no longer this run's, so nothing was committed on {wt.branch}; "
                      f"{keep}")
            return Exit.BLOCKED
        try:
            jobs = jobs_since(wt.git_dir, self.log_offset)
            current = str((getattr(lease, "metadata", None) or {}).get("job_id") or "")
            jobs += [current] if current and current != "unknown" and current not in jobs else []
            self.committed = worktrees.commit(wt, self.title, jobs, self.verify, self.verb) or ""
        except worktrees.NotOnBranch as exc:
            self.emit(f"{prefix} {exc.message}")
            return Exit.BLOCKED
        except (MaestroError, OSError) as exc:
            self.emit(f"{prefix} could not commit the result on {wt.branch} ({exc}); {keep}")
            return Exit.BLOCKED
        return rc

    def end(self, rc: int) -> int:
        """Called once the lease is released: say what is on the branch and where the worktree is."""
        wt, prefix = self.worktree, f"{self.scope}_WORKTREE:"
        if self.committed is not None:
            if self.committed:
                what = f"committed {self.committed[:12]} on {wt.branch}"
            elif worktrees.head(wt) == wt.record.get("base"):
                what = f"nothing changed: {wt.branch} is still at its base"
            else:  # a resumed run whose result an earlier run had committed already
                what = f"nothing new to commit: {wt.branch} stays at {worktrees.head(wt)[:12]}"
            self.emit(f"{prefix} {what} ({wt.path})")
        if rc == Exit.OK:
            self.emit(f"{prefix} merge it from your checkout with: git merge {wt.branch}  (then "
                      f"{WORKTREES_REMOVE} {wt.name})")
            self.emit(f"{prefix} or discard it with: {WORKTREES_REMOVE} {wt.name}")
        else:
            state = self.states.get(rc, str(rc))
            done = "the verified result is committed" if self.committed else "nothing committed"
            self.emit(f"{prefix} {state}: the worktree is kept for inspection at {wt.path} (branch {wt.branch}, "
                      f"{done}); re-run with --worktree {wt.name} to continue there, or discard it with: "
                      f"{WORKTREES_REMOVE} {wt.name}")
        try:
            wt.update(last_outcome=self.states.get(rc, str(rc)), last_epoch=int(time.time()))
        except OSError as exc:
            self.emit(f"{prefix} could not record the outcome in {wt.git_dir} ({exc.strerror or exc})")
        return rc


def run_isolated(scope: str, verb: str, spec: Spec, plan_text: str, verify, run, *, emit, states) -> int:
    """Run `run(isolated)` — the verb's whole run, which calls `isolated.commit_result(rc, lease)`
    before its lease is released and `isolated.end(rc)` after — inside the worktree `spec` names; the
    caller's directory is restored whatever happens."""
    isolated = WorktreeRun(scope, verb, spec, plan_text, verify, emit=emit, states=states)
    isolated.enter()
    try:
        return run(isolated)
    finally:
        isolated.leave()
        sys.stdout.flush()


def jobs_since(git_dir: str, offset: int) -> list:
    """The job ids of the dispatch records appended to this worktree's provenance log after `offset`."""
    from maestro.provenance import log as provenance_log

    try:
        with open(provenance_log.log_path(git_dir), "rb") as handle:
            handle.seek(offset)
            lines = handle.read(1 << 20).decode("utf-8", "replace").splitlines()
    except OSError:
        return []
    jobs = []
    for line in lines:
        found = re.search(r" type=dispatch job=(\S+)", line)
        if found and found.group(1) not in jobs and found.group(1) != "unknown":
            jobs.append(found.group(1))
    return jobs


def log_size(git_dir: str) -> int:
    from maestro.provenance import log as provenance_log

    try:
        return os.stat(provenance_log.log_path(git_dir)).st_size
    except OSError:
        return 0
