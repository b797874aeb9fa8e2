"""What the entry subcommands share: their arguments, TEXT `-` from stdin, and their result lines and fields.

Used by `memory add|list|replace|remove|archive|batch` (one module each beside this one), and by
`memory suggest`, `memory queue`, `memory todo` and the MCP tools for the same lines and arguments.

Tracks: global (alias memory), user, project, key, daily, reference. project/key/reference belong
to the project of --cwd (its git toplevel; default: the current directory). TEXT `-` reads the
text from stdin, which keeps it out of the process list.
"""

import sys

from maestro.commands.memory.output import one_line, parser
from maestro.memory.store.errors import StoreError


def text_or_stdin(value: str) -> str:
    """The text argument as given, or stdin (UTF-8) when it is `-`."""
    if value != "-":
        return value
    raw = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
    try:
        return raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        raise StoreError("stdin is not UTF-8 text", "invalid") from None


def add_line(result) -> str:
    """The one line an add reports (`memory add`, `memory batch`, the MCP tool memory_add)."""
    if not result.duplicate:
        ident = f" id={result.id}" if result.id else ""
        return f"added {result.track}{ident}: {one_line(result.entry)}"
    if result.reason == "idle":
        return f"duplicate {result.track}: idle/no-change text carries no information; nothing written"
    return f"duplicate {result.track}: already stored; nothing written"


def entry_arguments(p, text_help: str) -> None:
    """The arguments that place one entry: TRACK TEXT [--cwd] [--branch B | --branches B,C]
    (shared by `memory add` and `memory suggest`)."""
    p.add_argument("track", help="global|memory, user, project, key, daily, reference")
    p.add_argument("text", help=text_help)
    p.add_argument("--cwd", help="the project directory for project/key/reference (default: .)")
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--branch", help="key only: visible on this branch only")
    scope.add_argument("--branches", help="key only: visible on these comma-separated branches only")


def branches_of(args) -> list:
    branches = [args.branch] if args.branch else (args.branches or "").split(",")
    return [b for b in branches if b]


def add_fields(result) -> dict:
    """An add's fields in the `--json` envelope (`memory add`, and each of `memory batch`'s results)."""
    return {"track": result.track, "file": result.file, "duplicate": result.duplicate, "reason": result.reason,
            "id": result.id, "entry": result.entry}


def edit_parser(sub: str, doc: str, with_text: bool):
    """The parser of `memory replace|remove|archive`: TRACK --match M [TEXT] [--cwd] [--date] [--json]."""
    p = parser(sub, doc)
    p.add_argument("track", help="global|memory, user, project, key, daily, reference")
    p.add_argument("--match", required=True, help="a case-sensitive substring of exactly one entry")
    if with_text:
        p.add_argument("text", help="the new entry (- reads it from stdin)")
        p.add_argument("--summary", help="the new entry's [summary:…] (default: its first line)")
    p.add_argument("--cwd", help="the project directory for project/key/reference (default: .)")
    if sub != "archive":
        p.add_argument("--date", help="daily only: the day's file, YYYY-MM-DD (default: today)")
    p.add_argument("--json", action="store_true", help="print one JSON envelope")
    return p


def change_fields(change) -> dict:
    """A replace/remove/archive's fields in the `--json` envelope."""
    return {"action": change.action, "track": change.track, "file": change.file, "entry": change.entry,
            "previous": change.previous, "archive": change.archive}
