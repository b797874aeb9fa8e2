"""`memory outcome save | list`: task outcomes of this project (maestro/memory/project/outcomes.py).

`loop` and `watchdog` record one automatically when they end; `save` lets a person record one by
hand (what worked, what did not), which `memory patterns extract` mines like the automatic ones.
Saving a finished state (VERIFIED_DONE, DONE) for a task id also clears that task's open handoff,
so work finished outside the loop stops showing as "Resuming: …" at session start.
"""

import sys

from maestro.commands.memory.output import one_line, parser, run
from maestro.errors import Exit
from maestro.memory.store.errors import StoreError

USAGE = "usage: maestro memory outcome save --title T --state S [options] | list [--task ID] [--limit N] [--json]"


def _save(out, argv) -> int:
    from maestro.memory.project import outcomes
    from maestro.memory.project import files as project
    from maestro.memory.store.sanitize import filter_text

    p = parser("outcome save", "record a task outcome by hand")
    p.add_argument("--title", required=True, help="what the task was")
    p.add_argument("--state", required=True, choices=outcomes.STATES, help="how it ended")
    p.add_argument("--task-id", help="the task's id (default: a slug of the title)")
    p.add_argument("--plan", help="the plan file, if any")
    p.add_argument("--iterations", type=int, default=0, help="dispatches it took")
    p.add_argument("--verify", help="the verification command")
    p.add_argument("--worked", action="append", default=[], help="what worked (repeatable)")
    p.add_argument("--didnt", action="append", default=[], help="what did not work (repeatable): mined as a lesson")
    p.add_argument("--file", action="append", default=[], dest="files", help="a file it changed (repeatable)")
    p.add_argument("--notes", default="", help="free text")
    p.add_argument("--cwd", help="the project directory (default: .)")
    p.add_argument("--json", action="store_true", help="print one JSON envelope")
    args = p.parse_args(argv)
    if args.iterations < 0:
        raise StoreError("--iterations must be >= 0", "usage")
    title = filter_text(args.title).strip()
    if not title:
        raise StoreError("--title is empty", "invalid")
    task_id = project.check_id(args.task_id, "task id") if args.task_id else (project.slugify(title) or "task")
    started = outcomes.now_utc()
    value = outcomes.record(
        kind="manual", task_id=task_id, state=args.state, started_at=started, ended_at=started,
        plan=args.plan, title=title[:120], iterations=args.iterations,
        verify={"command": args.verify, "last_state": None, "last_rc": None, "last_output_tail": ""}
        if args.verify else None,
        files_changed=args.files, what_worked=args.worked, what_didnt=args.didnt, notes=args.notes)
    memory = project.ProjectMemory.for_cwd(args.cwd)
    path = outcomes.save(memory, value)
    out.line(f"saved outcome {value['id']}: {args.state} — {one_line(title, 100)}")
    cleared = False
    if args.state not in outcomes.OPEN_STATES:  # finished by hand: session-start stops offering to resume it
        from maestro.memory.project import handoffs

        cleared = handoffs.remove(memory, task_id)
        if cleared:
            out.line(f"cleared the open handoff of task {task_id}")
    return out.done(id=value["id"], path=path, outcome=value, cleared_handoff=cleared)


def _list(out, argv) -> int:
    from maestro.memory.project import outcomes
    from maestro.memory.project import files as project

    p = parser("outcome list", "list this project's task outcomes, newest first")
    p.add_argument("--task", help="only this task id")
    p.add_argument("--limit", type=int, default=20, help="at most N (default 20)")
    p.add_argument("--cwd", help="the project directory (default: .)")
    p.add_argument("--json", action="store_true", help="print one JSON envelope")
    args = p.parse_args(argv)
    if args.limit < 1:
        raise StoreError("--limit must be >= 1", "usage")
    memory = project.ProjectMemory.for_cwd(args.cwd)
    errors = []
    found = [item for item in outcomes.load_all(memory, errors)
             if args.task is None or item["task_id"] == args.task][::-1][: args.limit]
    for problem in errors:
        sys.stderr.write(f"maestro memory outcome list: skipped {one_line(problem, 300)}\n")
    for item in found:
        files = len(item.get("files_changed") or ())
        out.line(f"{item['ended_at']}  {item['state']:<13} {item['kind']:<8} it={item['iterations']} "
                 f"files={files}  {item['task_id']}  {one_line(item.get('plan_title') or '', 80)}")
    if not found:
        out.line("no outcomes recorded for this project")
    return out.done(project=memory.project, outcomes=found, skipped=errors)


def main(argv) -> int:
    argv = list(argv)

    def body(out):
        if not argv or argv[0] in ("-h", "--help"):
            sys.stdout.write(USAGE + "\n")
            return Exit.OK if argv else Exit.USAGE
        action, rest = argv[0], argv[1:]
        if action == "save":
            return _save(out, rest)
        if action == "list":
            return _list(out, rest)
        raise StoreError(f"unknown action '{action}' ({USAGE})", "usage")

    return run("outcome", argv, body)
