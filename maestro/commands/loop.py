"""`loop`: dispatch a plan to Codex until a local verification command passes.

    maestro loop --plan FILE --verify "CMD" [--max-iters 4] [--max-idle 300] [--poll 20]
                 [--worktree [NAME]] [--worktree-dir DIR]
    maestro loop --clear-lease | --clear-job-lock

Each iteration runs one Write turn under this run's write lease. A DONE claim is checked by
running CMD with `bash -c` at the repository root (own process group, own deadline, no lease
variables in its environment); a failure, with its output, feeds the next dispatch. Exit:
0 VERIFIED_DONE · 10 NEEDS_ANSWERS · 11 BLOCKED · 12 STUCK · 3 FAILED (bad args / could not
start) · 4 INTERRUPTED. Records go to fd 3 (else stdout); the last line is always
`MAESTRO_FINAL: LOOP <STATE> rc=<n>`.

--worktree [NAME] runs the whole loop in an isolated git worktree on a new branch maestro/<NAME>
(under .maestro-worktrees/, or --worktree-dir DIR), commits a VERIFIED_DONE result there and
says how to merge or discard it (docs/worktrees.md); the same NAME again resumes that worktree.
"""

import os
import sys

from maestro import knobs
from maestro.workflow import history as plan_history
from maestro.workflow.attempts import AttemptsLog
from maestro.commands.entry import adapter_main, read_plan
from maestro.errors import Exit, UsageError
from maestro.locks import run_notes
from maestro.util import process
from maestro.util import progress
from maestro.util.text import tail_lines

STATES = {Exit.OK: "VERIFIED_DONE", Exit.NEEDS_ANSWERS: "NEEDS_ANSWERS", Exit.BLOCKED: "BLOCKED", Exit.STUCK: "STUCK",
          Exit.USAGE: "FAILED", Exit.FAILED: "INTERRUPTED"}
VALUE_OPTIONS = ("--plan", "--verify", "--max-iters", "--max-idle", "--poll", "--worktree-dir")


def _positive(name: str, value: str, integer: bool = False) -> float:
    try:
        number = int(value) if integer else float(value)
    except ValueError:
        number = None
    if number is None or number != number or (number < 1 if integer else number <= 0) or number == float("inf"):
        hint = " (0 is prohibited)" if value.strip() == "0" else ""
        kind = "an integer >= 1" if integer else "a positive number of seconds"
        raise UsageError(f"{name} must be {kind}{hint}: {value!r}")
    return number


def parse(argv):
    options, recovery = {}, []
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg in ("--clear-lease", "--clear-job-lock"):
            recovery.append(arg)
        elif arg == "--worktree" or arg.startswith("--worktree="):  # NAME optional: --worktree=NAME or --worktree NAME
            name = arg.partition("=")[2] if "=" in arg else None
            if name is None and index + 1 < len(argv) and not argv[index + 1].startswith("-"):
                name, index = argv[index + 1], index + 1
            options["--worktree"] = name or ""
        elif arg in VALUE_OPTIONS:
            if index + 1 >= len(argv):
                raise UsageError(f"{arg} needs a value")
            options[arg] = argv[index + 1]  # taken verbatim: a flag-like --verify string is fine
            index += 1
        else:
            raise UsageError(f"unknown argument: {arg}")
        index += 1
    if recovery and (len(recovery) > 1 or options):
        raise UsageError("--clear-lease, --clear-job-lock and a loop run are mutually exclusive")
    if recovery:
        return {"recovery": recovery[0]}
    if "--plan" not in options:
        raise UsageError("--plan FILE is required")
    if not os.path.isfile(options["--plan"]):
        raise UsageError(f"plan file not found: {options['--plan']}")
    if "--verify" not in options or not options["--verify"].strip():
        raise UsageError('--verify "CMD" is required (the command that proves the work locally)')
    return {
        "plan": options["--plan"],
        "verify": options["--verify"],
        "max_iters": _positive("--max-iters", options.get("--max-iters", "4"), integer=True),
        "max_idle": _positive("--max-idle", options.get("--max-idle", "300")),
        "poll": _positive("--poll", options.get("--poll", "20")),
        "worktree": worktree_spec(options),
    }


def worktree_spec(options: dict):
    """The `--worktree [NAME]` / `--worktree-dir DIR` request (None without either), checked before anything runs."""
    if "--worktree" not in options and "--worktree-dir" not in options:
        return None
    from maestro.workflow.worktree_run import spec_from

    return spec_from(options)


def verify_env() -> dict:
    """The verifier's environment: the caller's, minus any lease capability a parent leaked."""
    return {k: v for k, v in os.environ.items() if not k.startswith("MAESTRO_LOCK_")}


class LoopRun:
    def __init__(self, ctx, args, recorder):
        self.ctx = ctx
        self.args = args
        self.emit = ctx.emit
        self.attempts = AttemptsLog()
        self.recorder = recorder
        self.iteration = 0
        self.result_text = ""
        self.companion_failure = False
        self.quota = None  # the reset time ('' when unsaid) once Codex reported a usage limit: BLOCKED reason=quota

    def read_plan(self) -> str:
        """Re-read at every dispatch (the user may answer questions in it), and re-checked each time."""
        return read_plan(self.args["plan"])

    def verify(self):
        """(fact state, rc, output). `process.run` has ended the verifier's whole process group
        (TERM, grace, KILL) before it returns, on a pass, a failure, a timeout and a signal alike,
        so nothing the command left in the background outlives the verdict (a child that called
        setsid() itself has left the group and is out of reach)."""
        result = process.run(
            ["bash", "-c", "--", self.args["verify"]], timeout=knobs.verify_timeout().value, cwd=self.ctx.root,
            env=verify_env(), tick=self.ctx.heartbeat.beat, should_stop=self.ctx.signals.stop_requested,
            grace=knobs.terminate_grace().value,
        )
        output = result.text + result.err_text
        if result.interrupted:
            return "interrupted", result.rc, output
        if not self.ctx.lease.guard():
            return "lease-lost", result.rc, output
        if result.timed_out:
            return "timed-out", 124, output
        return ("passed" if result.rc == Exit.OK else "failed"), result.rc, output

    def iterate(self) -> int:
        max_iters = self.args["max_iters"]
        for iteration in range(1, max_iters + 1):
            self.iteration = iteration
            if self.ctx.signals.stop_requested():
                return Exit.FAILED
            self.emit(f"LOOP: iteration {iteration}/{max_iters} — dispatching to Codex")
            run_notes.note_run(self.ctx.git_dir, "loop", self.args["plan"], iteration, max_iters, "codex")
            try:
                plan = self.read_plan()
            except UsageError as exc:  # it became unsafe (or unreadable) during the run: send nothing
                sys.stderr.write(f"LOOP_ERROR: {exc}\n")
                return Exit.USAGE
            turn = self.ctx.write_turn(self.args["max_idle"], self.args["poll"])
            outcome = turn.run(plan + self.attempts.dispatch_suffix())
            for line in outcome.evidence:
                sys.stderr.write(line.rstrip("\n") + "\n")
            sys.stderr.flush()
            self.result_text = outcome.result
            if outcome.rc == Exit.USAGE:
                sys.stderr.write("LOOP_ERROR: dispatch could not start\n")
                return Exit.USAGE
            if outcome.rc == Exit.POISONED:
                return Exit.BLOCKED
            if outcome.rc == Exit.BLOCKED:
                self.companion_failure = "IMPLEMENTER_STATE: COMPANION_FAILURE" in outcome.evidence
                self.quota = outcome.reset if outcome.reason == "quota" else None
                return Exit.BLOCKED
            if outcome.rc == Exit.NEEDS_ANSWERS:
                self._record_stop(iteration, outcome.result)
                return Exit.NEEDS_ANSWERS
            if outcome.rc == Exit.FAILED and not outcome.started:
                return Exit.FAILED  # interrupted before anything was launched
            if outcome.rc == Exit.FAILED:
                self.attempts.add(
                    f"Attempt {iteration} — RESULT: FAILED",
                    tail_lines(outcome.result, 80) + "\n" + tail_lines("\n".join(outcome.evidence), 40))
                self.recorder.attempt(iteration, "turn-failed", f"Attempt {iteration} — RESULT: FAILED")
                continue
            self.emit(f"LOOP: RESULT: DONE on iteration {iteration} — verifying locally: {self.args['verify']}")
            run_notes.note_run(self.ctx.git_dir, "loop", self.args["plan"], iteration, max_iters, "verify")
            state, rc, output = self.verify()
            self.emit(f"LOOP_VERIFY: state={state} rc={rc}")
            self.recorder.verified(state, rc, output)
            if state == "passed":
                return Exit.OK
            if state == "interrupted":
                return Exit.FAILED
            if state == "lease-lost":
                sys.stderr.write("LOOP_ERROR: the write lease was lost or poisoned during verification\n")
                return Exit.BLOCKED
            detail = (f"timed out after {knobs.verify_timeout().value:g}s (exit 124)" if state == "timed-out"
                      else f"(exit {rc})")
            heading = (f"Attempt {iteration} — claimed DONE but LOCAL verification {detail}: {self.args['verify']}"
                       if state == "timed-out" else
                       f"Attempt {iteration} — claimed DONE but LOCAL verification failed {detail}: "
                       f"{self.args['verify']}")
            self.attempts.add(heading, tail_lines(output, 60))
            self.recorder.attempt(iteration, "verify-" + state, heading, output)
        self._record_stuck()
        return Exit.STUCK

    def _record_stop(self, iteration: int, result: str) -> None:
        try:
            plan_history.append(self.args["plan"], plan_history.stop_history(iteration, result))
        except OSError as exc:
            sys.stderr.write(f"LOOP_WARNING: could not append the stop history to the plan ({exc.strerror or exc}); "
                             "the questions are on stdout\n")

    def _record_stuck(self) -> None:
        sys.stderr.write(f"LOOP_STUCK: {self.args['max_iters']} iteration(s) without a verified result; attempt "
                         "history follows and is appended to the plan\n" + self.attempts.text)
        try:
            plan_history.append(self.args["plan"], plan_history.stuck_history(self.attempts.text))
        except OSError as exc:
            sys.stderr.write(f"LOOP_WARNING: could not append the attempt history to the plan "
                             f"({exc.strerror or exc}); the plan is unchanged\n")

    def describe(self, rc: int) -> str:
        n = self.iteration
        its = f"after {n} iteration(s)"
        return {
            0: f"LOOP_STATE: VERIFIED_DONE — Codex claimed DONE and `{self.args['verify']}` passed locally {its}.",
            10: f"LOOP_STATE: NEEDS_ANSWERS — Codex stopped with QUESTIONS {its}; answer them in the plan "
                f"({self.args['plan']}) and run the loop again.",
            11: (f"LOOP_STATE: BLOCKED reason=quota reset=\"{self.quota or 'unknown'}\" — Codex reported a usage, rate "
                 f"or quota limit {its}; no implementation attempt was counted and no failed outcome recorded. Run the "
                 "loop again once the limit resets." if self.quota is not None else
                 f"LOOP_STATE: BLOCKED — post-launch companion/process/result failure {its}; it did not consume "
                 "another implementation attempt. Check `status` before re-running."
                 if self.companion_failure else
                 f"LOOP_STATE: BLOCKED {its} — see the evidence above; never work around credentials or "
                 "destructive steps."),
            12: f"LOOP_STATE: STUCK — verification still failing {its}; the attempt history is in the plan. Re-plan "
                "or debate the root cause; do not just raise --max-iters.",
            3: f"LOOP_STATE: FAILED — the dispatch could not start {its}.",
            4: f"LOOP_STATE: INTERRUPTED {its}.",
        }[rc]


def _run(argv) -> int:
    args = parse(argv)
    if args.get("worktree") is not None:
        from maestro.workflow.worktree_run import run_isolated

        args["plan"] = os.path.abspath(args["plan"])  # the run happens in the worktree's directory
        return run_isolated("LOOP", "loop", args["worktree"], read_plan(args["plan"]), args["verify"],
                            lambda isolated: _run_here(args, isolated), emit=progress.emit, states=STATES)
    return _run_here(args)


def _run_here(args, worktree=None) -> int:
    """The run in the current directory; `worktree` (a --worktree run, workflow/worktree_run.WorktreeRun)
    commits a verified result while the lease is held, and says what it kept once it is released."""
    from maestro.workflow.context import WriteContext

    ctx = WriteContext("LOOP")
    ctx.signals.install()
    if "recovery" in args:
        from maestro.locks import joblock
        from maestro.locks import lease_clear

        if args["recovery"] == "--clear-lease":
            rc = lease_clear.clear(ctx.git_dir, writers=ctx.writers, emit=ctx.emit,
                             heartbeat_stale=knobs.heartbeat_stale().value, init_grace=knobs.initializing_grace().value)
        else:
            rc = joblock.clear(ctx.git_dir, job_status=ctx.transport.job_status, writers=ctx.writers, emit=ctx.emit,
                               init_grace=knobs.initializing_grace().value)
        return progress.final("LOOP", "CLEARED" if rc == Exit.OK else "BLOCKED", rc)
    from maestro.workflow.run_record import RunRecorder

    # read (and checked) before the lease is taken: nothing after acquire() may fail outside the release below
    recorder = RunRecorder(ctx, "loop", read_plan(args["plan"]), args["plan"], args["verify"], worktree=worktree)
    acquired = ctx.lease.acquire()
    if acquired != Exit.OK:
        state = {Exit.BLOCKED: "BLOCKED", Exit.FAILED: "INTERRUPTED"}.get(acquired, "FAILED")
        ctx.emit(f"LOOP_STATE: {state} — the write lease could not be acquired; nothing was dispatched "
                 "(after 0 iteration(s)).")
        return progress.final("LOOP", state, acquired)
    run = LoopRun(ctx, args, recorder)
    rc = Exit.FAILED
    try:
        rc = run.iterate()
    finally:
        if rc in (Exit.OK, Exit.NEEDS_ANSWERS, Exit.BLOCKED, Exit.STUCK) and run.result_text:
            sys.stdout.write(run.result_text if run.result_text.endswith("\n") else run.result_text + "\n")
            sys.stdout.flush()
        ctx.checkpoints.measure()  # files changed per checkpoint, while the lease still holds
        if worktree is not None:
            rc = worktree.commit_result(rc, ctx.lease)  # under the lease: nobody else's files get in
        run_notes.clear_run(ctx.git_dir)  # before the release: the next holder's status is not ours to remove
        released = ctx.lease.release()
        if released != Exit.OK and rc not in (Exit.BLOCKED, Exit.POISONED):
            ctx.emit(f"LOOP_RELEASE: completion downgraded to BLOCKED because the write lease could not be released "
                     f"safely (was {STATES.get(rc, rc)})")
            rc = Exit.BLOCKED
        if worktree is not None:
            rc = worktree.end(rc)
        ctx.checkpoints.finish(STATES[rc])
        if run.quota is None:  # a usage limit is not an outcome of the plan (issue 12 §1.4)
            run.recorder.finish(STATES[rc], rc, run.iteration, run.result_text)  # before the state line: it stays last
        ctx.emit(run.describe(rc))
        run_notes.finish(ctx.git_dir, ctx.session, "loop", args["plan"], STATES[rc], run.iteration)
    return progress.final("LOOP", STATES[rc], rc)


def main(argv) -> int:
    return adapter_main("LOOP", "loop", __doc__, argv, _run)
