"""`memory todo`: add, list (the ranked view), set the status of and archive todos (maestro/memory/store/todos.py)."""

from maestro.commands.memory.entry_args import text_or_stdin
from maestro.commands.memory.output import one_line, parser, run
from maestro.memory.store.errors import StoreError
from maestro.memory.store.todos import ARCHIVE_FILE, LISTS, Todo, Todos, list_view, rank


def todo_line(todo: Todo) -> str:
    """One todo as `memory todo` and the MCP tool memory_todo show it: id, status, quadrant, due, list, cat, text."""
    bits = [todo.id, f"[{todo.status}]"]
    if todo.quadrant:
        bits.append(f"q{todo.quadrant}")
    if todo.due:
        bits.append(f"due {todo.due}")
    bits.append(f"({todo.list})")
    if todo.cat:
        bits.append(f"#{todo.cat}")
    return " ".join(bits) + "  " + one_line(todo.text, 160)


def left_out_line(left_out) -> str:
    """Why open todos are missing from the default view, and the command that shows them."""
    lists = sorted({t.list for t in left_out})
    see = f"todo list --list {lists[0]}" if len(lists) == 1 else "todo list --all"
    return (f"… {len(left_out)} open todo(s) not in this view, which holds only overdue, due-today, q1–q2, "
            f"project and today's daily todos (see them: {see})")


def main(argv) -> int:
    """todos: add | list | start | done | drop | reopen | archive

  todo add TEXT [--due YYYY-MM-DD] [--quadrant q1..q4] [--list life|work|project|daily] [--cat C]
  todo list [--all] [--list L] [--json]   default: the ranked view of at most 8 (and how many
                                          open todos it leaves out); --list L: L's open todos
  todo start|done|drop|reopen ID          set the status (doing, done, dropped, open)
  todo archive                            move done and dropped todos to TODO-archive.md

Files: TODOS-life.md, TODOS-work.md, projects/<h>/TODOS.md (--cwd), daily/D.todo.md. The default
view ranks open todos overdue < due today < q1 < q2 < q3 < q4 < none and shows at most 8 of the
overdue, due today, project, life/work q1–q2 and today's daily ones, then one line counting the
open todos it leaves out; `--list L` shows every open todo of list L instead. Quadrants: q1 urgent and
important, q2 important, q3 urgent, q4 neither. Text is sanitized (secrets filtered)."""

    def body(out):
        p = parser("todo", main.__doc__)
        p.add_argument("action", choices=("add", "list", "start", "done", "drop", "reopen", "archive"))
        p.add_argument("arg", nargs="?", help="add: the text (- reads stdin); start/done/drop/reopen: the id")
        p.add_argument("--due", help="add: the due date, YYYY-MM-DD")
        p.add_argument("--quadrant", "-q", help="add: q1 urgent+important, q2 important, q3 urgent, q4 neither")
        p.add_argument("--list", dest="list_name", help="life, work (add's default), project or daily")
        p.add_argument("--cat", help="add: a category")
        p.add_argument("--date", help="add --list daily: the day, YYYY-MM-DD (default: today)")
        p.add_argument("--cwd", help="the project directory for the project list (default: .)")
        p.add_argument("--all", action="store_true", help="list: every todo of every status, no cap")
        p.add_argument("--json", action="store_true", help="print one JSON envelope")
        args = p.parse_args(argv)
        todos = Todos()
        if args.action in ("add", "start", "done", "drop", "reopen") and not args.arg:
            raise StoreError(f"todo {args.action} needs {'a text' if args.action == 'add' else 'an id'}", "usage")
        if args.action != "add" and args.arg and args.action in ("list", "archive"):
            raise StoreError(f"todo {args.action} takes no argument", "usage")
        if args.action == "add":
            todo, duplicate = todos.add(text_or_stdin(args.arg), args.list_name or "work", args.due, args.quadrant,
                                        args.cat, args.cwd, args.date)
            out.line(("duplicate (already open): " if duplicate else "added todo ") + todo_line(todo))
            return out.done(duplicate=duplicate, todo=todo.as_dict())
        if args.action == "list":
            if args.list_name is not None and args.list_name not in LISTS:
                raise StoreError(f"unknown todo list '{args.list_name[:20]}' (lists: {', '.join(LISTS)})", "usage")
            every = todos.all(args.cwd)
            today = todos.today()
            if args.all:
                every = [t for t in every if not args.list_name or t.list == args.list_name]
                shown, hidden, left_out = sorted(every, key=lambda t: rank(t, today)), 0, []
            else:
                view = list_view(every, today, args.list_name)
                shown, hidden, left_out = view.shown, view.more, view.left_out
            for todo in shown:
                out.line(todo_line(todo))
            if hidden:
                out.line(f"… {hidden} more (todo list{f' --list {args.list_name}' if args.list_name else ''} --all)")
            if left_out:
                out.line(left_out_line(left_out))
            return out.done(todos=[t.as_dict() for t in shown], more=hidden, left_out=len(left_out), all=args.all)
        if args.action == "archive":
            moved = todos.archive(args.cwd)
            out.line(f"archived {len(moved)} todo(s) to {ARCHIVE_FILE}")
            return out.done(archived=[t.as_dict() for t in moved])
        status = {"start": "doing", "done": "done", "drop": "dropped", "reopen": "open"}[args.action]
        todo = todos.set_status(args.arg, status, args.cwd)
        out.line(f"{status} " + todo_line(todo))
        return out.done(todo=todo.as_dict())

    return run("todo", argv, body)
