"""`checkpoints [--json]` | `checkpoints prune [--keep N] [--older-than DAYS]`: the worktree's rollback points.

    maestro checkpoints                       newest first: job, time, plan title, run end state, files changed
    maestro checkpoints prune                 keep the 50 newest, drop the rest
    maestro checkpoints prune --older-than 14 also drop every checkpoint older than 14 days

A checkpoint is the whole worktree as it was just before a write dispatch (`refs/maestro/
checkpoints/<job>`); `maestro rollback JOB` restores one. "state" is how the loop or watchdog run
that job belonged to ended ("-" while it runs, or when it was killed); "files" is how many files
changed between that checkpoint and the next one of the run (for the last: the tree at the run's
end). Pruning drops only the refs; git's gc reclaims the objects later.
"""

import argparse
import sys
import time

from maestro.commands.support import parser, write_envelope
from maestro.errors import Exit, MaestroError, UsageError

DEFAULT_KEEP = 50


def _non_negative(kind):
    def convert(value: str):
        try:
            number = kind(value)
        except ValueError:
            number = -1
        if number < 0 or number != number:
            raise argparse.ArgumentTypeError(f"expected a non-negative number, got {value!r}")
        return number
    return convert


def run_ends(git_dir: str) -> dict:
    """{job: (run end state, files changed or None)} from the run-end records (checkpoint.RUNS_LOG)."""
    from maestro.provenance import log as provenance_log
    from maestro.provenance.checkpoint import RUNS_LOG

    ends = {}
    data = provenance_log.read_log(git_dir, RUNS_LOG) or b""
    for line in data.decode("utf-8", "replace").splitlines():
        fields = dict(part.split("=", 1) for part in line.split(" ")[1:] if "=" in part)
        if fields.get("type") != "run-end":
            continue
        for item in fields.get("jobs", "").split(","):
            job, _, count = item.rpartition(":")
            if job:
                ends[job] = (fields.get("state", "unknown"), int(count) if count.isdigit() else None)
    return ends


def main(argv) -> int:
    p = parser("checkpoints", __doc__)
    p.add_argument("action", nargs="?", choices=("prune",), help="prune: drop old checkpoints")
    p.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    p.add_argument("--keep", type=_non_negative(int), default=None, help=f"prune: how many to keep (default {DEFAULT_KEEP})")
    p.add_argument("--older-than", type=_non_negative(float), default=None, metavar="DAYS",
                   help="prune: also drop those older than DAYS")
    args = p.parse_args(argv)
    if args.action != "prune" and (args.keep is not None or args.older_than is not None):
        raise UsageError("--keep and --older-than belong to `checkpoints prune`")
    from maestro.provenance import checkpoint
    from maestro.workflow.context import repository

    root, git_dir = repository("CHECKPOINTS", "checkpoints are git commits")
    try:
        if args.action == "prune":
            dropped = checkpoint.prune(root, git_dir, DEFAULT_KEEP if args.keep is None else args.keep, args.older_than)
            if args.json:
                write_envelope("checkpoints", True, dropped=dropped)
            else:
                sys.stdout.write(f"CHECKPOINTS: dropped {len(dropped)} checkpoint(s)\n")
            return Exit.OK
        rows = checkpoint.list_refs(root, git_dir)
    except checkpoint.CheckpointError as exc:
        raise MaestroError(f"CHECKPOINTS_ERROR: {exc}", Exit.FAILED) from None
    ends = run_ends(git_dir)
    items = [{"job": name, "commit": commit, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch)),
              "title": title, "state": ends.get(name, (None, None))[0], "files_changed": ends.get(name, (None, None))[1]}
             for name, commit, epoch, title in rows]
    if args.json:
        write_envelope("checkpoints", True, checkpoints=items)
        return Exit.OK
    if not items:
        sys.stdout.write("CHECKPOINTS: none yet (one is taken before each write dispatch)\n")
        return Exit.OK
    for item in items:
        files = "-" if item["files_changed"] is None else str(item["files_changed"])
        sys.stdout.write(f"{item['job']}  {item['time']}  {item['state'] or '-'}  files={files}  {item['title']}\n")
    return Exit.OK
