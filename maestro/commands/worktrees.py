"""`worktrees [--json]` · `worktrees remove NAME`: the isolated worktrees `loop --worktree` made.

The list shows each maestro worktree of this repository: name, branch, path, its write lease
(free / held / poisoned / orphaned / unidentifiable, judged as `maestro status` judges it) and the
outcome of its last run. `remove` deletes the worktree (uncommitted changes included), its
`maestro/<NAME>` branch, the checkpoints taken in it and its private companion data directory; it
touches only worktrees maestro created, and refuses while the worktree's lease or job lock exists (exit 11).
Exit 0, 11 refused, 3 usage or outside git.
"""

import sys
import time

from maestro.commands.support import parser, write_envelope
from maestro.errors import Exit, MaestroError
from maestro.messages import WORKTREES_REMOVE
from maestro.util import git as gitscope
from maestro.workflow import worktree as worktrees


def _root() -> str:
    root = gitscope.scope_root()
    if root is None:
        raise MaestroError("maestro worktrees: not inside a git repository", Exit.USAGE)
    return root


def _lease(git_dir: str, now: float) -> str:
    """The worktree's write lease as `maestro status` judges it; `free` when there is none."""
    from maestro.commands.status import lease_report

    state = lease_report(git_dir, now)["state"]
    return "free" if state == "absent" else state


def _job_lock(git_dir: str) -> str:
    from maestro.commands.status import joblock_report

    state = joblock_report(git_dir)["state"]
    return "free" if state == "absent" else state


def _judge(git_dir: str) -> str:
    """What stops a removal, in `status`' words."""
    lease = _lease(git_dir, time.time())
    return f"its write lease is {lease}" if lease != "free" else f"its companion job lock is {_job_lock(git_dir)}"


def _age(epoch: int, now: float) -> str:
    if not epoch:
        return ""
    seconds = max(0, int(now) - int(epoch))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f" {seconds // size}{unit} ago"
    return f" {seconds}s ago"


def render(rows, now: float) -> str:
    if not rows:
        return "no maestro worktrees in this repository (create one with: maestro loop --worktree …)\n"
    lines = []
    for row in rows:
        outcome = row["last_outcome"] or "running or never finished"
        where = row["path"] if row["exists"] else f"{row['path']} (directory missing)"
        lines.append(f"{row['name']}  {row['branch']}  lease={row['lease']}  last={outcome}{_age(row['last_epoch'], now)}")
        lines.append(f"  {where}")
    lines.append(f"merge one from your checkout with `git merge maestro/NAME`; discard one with `{WORKTREES_REMOVE} NAME`")
    return "\n".join(lines) + "\n"


def main(argv) -> int:
    argv = list(argv)
    if argv[:1] == ["remove"]:
        p = parser("worktrees remove", __doc__)
        p.add_argument("name", help="the worktree's name (its branch is maestro/<NAME>)")
        args = p.parse_args(argv[1:])
        try:
            wt = worktrees.remove(_root(), args.name, judge=_judge)
        except MaestroError as exc:  # the domain's words, with the verb in front like every verb's error line
            raise MaestroError(exc.message if exc.message.startswith("maestro ") else
                               f"maestro worktrees remove: {exc.message}", exc.code) from None
        kept = f"; its last commit was {wt.removed_head[:12]} (git branch {wt.branch} {wt.removed_head[:12]} " \
               "brings it back until git gc)" if wt.removed_head else ""
        sys.stdout.write(f"removed maestro worktree {wt.name} ({wt.path}) and branch {wt.branch}{kept}\n")
        if wt.dropped_checkpoints:
            sys.stdout.write(f"dropped its {len(wt.dropped_checkpoints)} checkpoint(s)\n")
        elif wt.dropped_checkpoints is None:
            sys.stdout.write(f"its directory was gone, so the checkpoints taken in it were left: their commits name "
                             f"'worktree: {wt.path}' (see: git for-each-ref refs/maestro/checkpoints/)\n")
        if wt.companion_data_kept:
            sys.stdout.write(f"kept its companion data directory: {wt.companion_data_kept}\n")
        return Exit.OK
    p = parser("worktrees", __doc__)
    p.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    args = p.parse_args(argv)
    now = time.time()
    rows = [dict(worktrees.describe(wt), lease=_lease(wt.git_dir, now), job_lock=_job_lock(wt.git_dir))
            for wt in worktrees.find_all(_root())]
    if args.json:
        write_envelope("worktrees", True, worktrees=rows)
    else:
        sys.stdout.write(render(rows, now))
    return Exit.OK
