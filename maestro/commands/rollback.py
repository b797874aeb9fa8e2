"""`rollback [JOB | --last] [--dry-run] [--clear-lease]`: put the worktree back as it was before a write.

    maestro rollback --last            the checkpoint taken before the most recent write dispatch
    maestro rollback task-abc123       the checkpoint taken before that job (see `maestro checkpoints`)
    maestro rollback --last --dry-run  only list what would change

Files the job added are removed, files it changed or deleted are restored, exec bits and symlinks
too. HEAD, the index and ignored files are left alone; submodules are named and skipped. The tree
as it was just before the rollback is kept as checkpoint `pre-rollback-<time>`, so a rollback can
itself be undone. Runs under the write lease: refused (exit 11) while a writer holds it; a
poisoned lease (a cancelled write whose end was never observed) is cleared first only with
`--clear-lease`, which like `loop --clear-lease` refuses while any Codex write job runs. Records a
`type=rollback` provenance line, so the next write sees no baseline gap. For the orchestrator the
gate treats it (without --dry-run) as a work-tree write (docs/gate.md). Exit 0 done (or nothing
to do), 3 no such checkpoint / not in git, 4 a git or file error, 11 refused by the lease.
"""

import os
import sys
import time

from maestro import knobs
from maestro.commands.support import parser
from maestro.errors import Exit, MaestroError, UsageError


def _say(line: str) -> None:
    sys.stderr.write(line.rstrip("\n") + "\n")


class _LazyWriters:
    """The global Codex writer list, asked only when the lease needs it (None: no companion, unknown)."""

    def __init__(self):
        self.transport = False

    def __call__(self, interruptible=True):
        if self.transport is False:
            from maestro.workflow.context import companion_transport

            try:
                self.transport = companion_transport("ROLLBACK", _say)
            except MaestroError:
                self.transport = None
        return None if self.transport is None else self.transport.global_writers(interruptible=interruptible)


class _Digest:
    """The lease's digest: measured at acquisition; after the rollback, the one the rollback measured."""

    def __init__(self, root: str):
        self.root, self.after = root, None

    def __call__(self) -> str:
        if self.after is not None:
            return self.after
        from maestro.provenance import digest

        return digest.digest_or_unavailable(self.root, emit=_say)


def main(argv) -> int:
    p = parser("rollback", __doc__)
    p.add_argument("job", nargs="?", help="the job whose checkpoint to restore (see `maestro checkpoints`)")
    p.add_argument("--last", action="store_true", help="the checkpoint before the most recent write")
    p.add_argument("--dry-run", action="store_true", help="list what would change; change nothing")
    p.add_argument("--clear-lease", action="store_true",
                   help="clear a poisoned or orphaned write lease first (refused while a Codex write job runs)")
    args = p.parse_args(argv)
    if bool(args.job) == bool(args.last):
        raise UsageError("name one checkpoint: JOB or --last (list them with: maestro checkpoints)")
    from maestro.provenance import checkpoint
    from maestro.workflow.context import repository

    root, git_dir = repository("ROLLBACK", "checkpoints are git commits")
    try:
        name, commit = checkpoint.resolve(root, git_dir, args.job, args.last)
    except checkpoint.CheckpointError as exc:
        raise MaestroError(f"ROLLBACK_ERROR: {exc}", Exit.USAGE) from None
    try:
        if args.dry_run:
            return _dry_run(root, git_dir, name, commit)
        return _rollback(root, git_dir, name, commit, args.clear_lease)
    except (checkpoint.CheckpointError, OSError) as exc:
        raise MaestroError(f"ROLLBACK_ERROR: {exc}", Exit.FAILED) from None


def _changes(root: str, commit: str, current_tree: str) -> list:
    from maestro.provenance import checkpoint_restore
    from maestro.provenance.checkpoint import git

    return checkpoint_restore.plan(root, git(root, ["rev-parse", f"{commit}^{{tree}}"]).decode().strip(), current_tree)


def _dry_run(root: str, git_dir: str, name: str, commit: str) -> int:
    """The plan against a throwaway copy of the private index: a running loop's stat cache is not raced."""
    import tempfile

    from maestro.provenance import checkpoint, checkpoint_restore

    shared = checkpoint.private_index(git_dir, root)
    fd, scratch = tempfile.mkstemp(prefix="dry-run-index.", dir=os.path.dirname(shared))
    try:
        os.close(fd)
        try:
            with open(shared, "rb") as src, open(scratch, "wb") as dst:
                dst.write(src.read())
        except FileNotFoundError:
            os.unlink(scratch)  # no stat cache yet: git builds one from nothing
        changes = _changes(root, commit, checkpoint.snapshot_tree(root, git_dir, index=scratch))
    finally:
        for leftover in (scratch, scratch + ".lock"):
            try:
                os.unlink(leftover)
            except FileNotFoundError:
                pass
    sys.stdout.write(f"ROLLBACK (dry run): checkpoint {name} ({commit[:12]}) — {len(changes)} change(s)\n")
    for change in changes:
        sys.stdout.write(checkpoint_restore.describe(change) + "\n")
    return Exit.OK


def rollback_lease(git_dir: str, digest, writers, session: str):
    import functools

    from maestro.locks.lease import WriteLease
    from maestro.provenance import log as provenance_log

    return WriteLease(
        git_dir, writers=writers, digest=digest, emit=_say, session=session,
        log_dispatch=functools.partial(provenance_log.log_dispatch, git_dir),  # a dead owner's lease: orphan-adopted
        baseline=lambda value: provenance_log.baseline_check(None, git_dir, value, session, emit=_say),
        wait_budget=0.0, heartbeat_stale=knobs.heartbeat_stale().value, init_grace=knobs.initializing_grace().value)


def _rollback(root: str, git_dir: str, name: str, commit: str, clear_lease: bool) -> int:
    from maestro.locks import identity, lease_clear
    from maestro.provenance import checkpoint, checkpoint_restore
    from maestro.provenance import log as provenance_log

    writers = _LazyWriters()
    if clear_lease and lease_clear.clear(git_dir, writers=writers, emit=_say,
                                         heartbeat_stale=knobs.heartbeat_stale().value,
                                         init_grace=knobs.initializing_grace().value) != Exit.OK:
        return Exit.BLOCKED
    session = identity.session_id()
    digest = _Digest(root)
    lease = rollback_lease(git_dir, digest, writers, session)
    if lease.acquire() != Exit.OK:
        _say("ROLLBACK_BLOCKED: the worktree's write lease is not free (see above); nothing was changed. "
             "Check `maestro status`.")
        return Exit.BLOCKED
    try:
        before = lease.metadata.get("digest_before", "unavailable")
        current = checkpoint.snapshot_tree(root, git_dir)
        changes = _changes(root, commit, current)
        if not changes:
            sys.stdout.write(f"ROLLBACK: the worktree already matches checkpoint {name}; nothing to do\n")
            return Exit.OK
        safety = checkpoint.commit_tree(root, current, f"before rollback to {name}", session)
        saved = checkpoint.set_ref(
            root, f"{checkpoint.PRE_ROLLBACK}{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{safety[:8]}", safety)
        restorer = checkpoint_restore.Restorer(root)
        try:
            restorer.apply(changes)
        finally:
            from maestro.provenance import digest as tree_digest

            digest.after = tree_digest.digest_or_unavailable(root, emit=_say)
            provenance_log.log_rollback(git_dir, name, session, before, digest.after)
        sys.stdout.write(f"ROLLBACK: restored checkpoint {name} ({commit[:12]}): {restorer.done} path(s) changed; "
                         f"the tree before the rollback is {saved}\n")
        for path, why in restorer.skipped:
            sys.stdout.write(f"ROLLBACK: skipped {path} ({why})\n")
        return Exit.OK
    finally:
        lease.release()
