"""`watchdog`: one Write turn under one write lease, no local verification.

    maestro watchdog --file PLAN [MAX_IDLE=300] [POLL=20]
    maestro watchdog "<plan text>" [MAX_IDLE] [POLL]
    maestro watchdog [--worktree[=NAME]] [--worktree-dir DIR] (--file PLAN | "<plan text>") [MAX_IDLE] [POLL]

The job's result goes to stdout, its evidence to stderr, then `IMPLEMENTER_STATE: <state>`.
Exit: 0 DONE · 10 NEEDS_ANSWERS · 11 BLOCKED · 125 POISONED (cancelled without confirmed
quiescence; `RESULT: BLOCKED` on stdout) · 3 FAILED to start · 4 FAILED. Last line:
`MAESTRO_FINAL: WATCHDOG <STATE> rc=<n>`.

--worktree[=NAME] (before the plan) runs the turn in an isolated git worktree on a new branch
maestro/<NAME> and commits a DONE result there, marked as not verified locally (docs/worktrees.md).
"""

import os
import sys

from maestro.commands.entry import adapter_main, positive_seconds, read_plan
from maestro.errors import Exit, UsageError
from maestro.util import progress

STATES = {Exit.OK: "DONE", Exit.NEEDS_ANSWERS: "NEEDS_ANSWERS", Exit.BLOCKED: "BLOCKED", Exit.POISONED: "POISONED",
          Exit.USAGE: "FAILED", Exit.FAILED: "FAILED"}
TURN_STATE = {0: "DONE", 10: "NEEDS_ANSWERS", 11: "BLOCKED", 4: "FAILED", 3: "FAILED"}



def worktree_options(argv):
    """({option: value}, the rest): `--worktree`, `--worktree=NAME` and `--worktree-dir DIR` at the front.
    A bare `--worktree` never takes the next argument, which may be the plan text."""
    options, argv = {}, list(argv)
    while argv and (argv[0] == "--worktree" or argv[0].startswith("--worktree=") or argv[0] == "--worktree-dir"):
        arg = argv.pop(0)
        if arg == "--worktree-dir":
            if not argv:
                raise UsageError("--worktree-dir needs a directory")
            options[arg] = argv.pop(0)
        else:
            options["--worktree"] = arg.partition("=")[2]
    if not options:
        return None, argv
    from maestro.workflow.worktree_run import spec_from

    return spec_from(options), argv


def parse(argv):
    """(plan text, plan file or None, max idle, poll); leading worktree options are checked and skipped."""
    _, argv = worktree_options(argv)
    if not argv:
        raise UsageError("usage: watchdog --file PLAN [MAX_IDLE] [POLL] | watchdog \"<plan text>\" [MAX_IDLE] [POLL]")
    if argv[0] == "--file":
        if len(argv) < 2:
            raise UsageError("--file needs a plan file")
        plan, rest, plan_path = read_plan(argv[1]), argv[2:], argv[1]
    elif argv[0].startswith("--"):
        raise UsageError(f"unknown argument: {argv[0]}")
    else:
        plan, rest, plan_path = argv[0], argv[1:], None
    if len(rest) > 2:
        raise UsageError(f"unknown argument: {rest[2]}")
    if not plan.strip():
        raise UsageError("the plan is empty")
    max_idle = positive_seconds("MAX_IDLE", rest[0]) if rest else 300.0
    poll = positive_seconds("POLL", rest[1]) if len(rest) > 1 else 20.0
    return plan, plan_path, max_idle, poll


def _run(argv) -> int:
    spec, argv = worktree_options(argv)
    plan, plan_path, max_idle, poll = parse(argv)
    if spec is not None:
        from maestro.workflow.worktree_run import run_isolated

        plan_path = os.path.abspath(plan_path) if plan_path else None  # the turn runs in the worktree's directory
        return run_isolated("WATCHDOG", "watchdog", spec, plan, None,
                            lambda isolated: _run_here(plan, plan_path, max_idle, poll, isolated), emit=progress.emit,
                            states=STATES)
    return _run_here(plan, plan_path, max_idle, poll)


def _run_here(plan, plan_path, max_idle, poll, worktree=None) -> int:
    """The turn in the current directory; `worktree` (a --worktree run, workflow/worktree_run.WorktreeRun)
    commits a DONE result while the lease is held, and says what it kept once it is released."""
    from maestro.workflow.context import WriteContext

    ctx = WriteContext("WATCHDOG")
    ctx.signals.install()
    from maestro.workflow.run_record import RunRecorder

    recorder = RunRecorder(ctx, "watchdog", plan, plan_path, worktree=worktree)
    acquired = ctx.lease.acquire()
    if acquired != Exit.OK:
        return progress.final("WATCHDOG", {Exit.BLOCKED: "BLOCKED", Exit.FAILED: "FAILED"}.get(acquired, "FAILED"), acquired)
    rc = Exit.FAILED
    outcome = None
    from maestro.locks import run_notes

    try:
        run_notes.note_run(ctx.git_dir, "watchdog", plan_path or "", 1, 1, "codex")
        outcome = ctx.write_turn(max_idle, poll).run(plan)
        rc = outcome.rc
    finally:
        if outcome is not None:
            if outcome.result:
                sys.stdout.write(outcome.result if outcome.result.endswith("\n") else outcome.result + "\n")
                sys.stdout.flush()
            for line in outcome.evidence:
                sys.stderr.write(line.rstrip("\n") + "\n")
            if rc != Exit.POISONED and outcome.result.strip():
                sys.stderr.write(f"IMPLEMENTER_STATE: {TURN_STATE.get(rc, 'FAILED')}\n")
            sys.stderr.flush()
        ctx.checkpoints.measure()  # files changed per checkpoint, while the lease still holds
        if worktree is not None:
            rc = worktree.commit_result(rc, ctx.lease)  # under the lease: nobody else's files get in
        run_notes.clear_run(ctx.git_dir)  # before the release: the next holder's status is not ours to remove
        released = ctx.lease.release()
        if released != Exit.OK and rc not in (Exit.BLOCKED, Exit.POISONED):
            ctx.emit(f"WATCHDOG_RELEASE: completion downgraded to BLOCKED because the write lease could not be "
                     f"released safely (was {STATES.get(rc, rc)})")
            rc = Exit.BLOCKED
        if worktree is not None:
            rc = worktree.end(rc)
        ctx.checkpoints.finish(STATES.get(rc, "FAILED"))
        if outcome is None or outcome.reason != "quota":  # a usage limit is not an outcome of the plan
            recorder.finish(STATES.get(rc, "FAILED"), rc, 1 if outcome is not None and outcome.started else 0,
                            outcome.result if outcome is not None else "")
        run_notes.finish(ctx.git_dir, ctx.session, "watchdog", plan_path or "", STATES.get(rc, "FAILED"), 1)
    return progress.final("WATCHDOG", STATES.get(rc, "FAILED"), rc if rc in STATES else Exit.FAILED)


def main(argv) -> int:
    return adapter_main("WATCHDOG", "watchdog", __doc__, argv, _run)
