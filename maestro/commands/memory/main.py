"""`memory <subcommand>`: the durable memory store from the command line.

Each subcommand lives in a module named in SUBCOMMANDS and is imported only when asked for. Text
output is one line per action; `--json` prints one versioned envelope on stdout instead,
`{"version": 1, "command": "memory <sub>", "ok": …}`, also on failure (then with
`"error": {"reason", "message"}`). Errors are one line on stderr; exit 3 for usage and invalid
input, 4 for a refused or failed write (see maestro/memory/store/errors.py for the reasons).
"""

import argparse
import json
import os
import sys

from maestro.cli_support import Parser
from maestro.errors import Exit, MaestroError
from maestro.hooks.policy import is_valid_session_id

ENVELOPE_VERSION = 1

# subcommand -> ("module:function", one-line summary). Order is the order of `--help`.
SUBCOMMANDS = {
    "add": ("maestro.commands.memory.store_cli:add", "add an entry to a track (sanitized, stamped, summarized, deduplicated)"),
    "list": ("maestro.commands.memory.store_cli:list_", "print a track's entries (key: --branch; --archived)"),
    "replace": ("maestro.commands.memory.store_cli:replace", "replace the one entry containing --match (keeps its [id:])"),
    "remove": ("maestro.commands.memory.store_cli:remove", "remove the one entry containing --match"),
    "archive": ("maestro.commands.memory.store_cli:archive", "move the one entry containing --match to <TRACK>-archive.md"),
    "batch": ("maestro.commands.memory.store_cli:batch", "add a JSON list of entries, all or nothing"),
    "maintenance": ("maestro.memory.store.maintenance:main", "archive old and overflowing entries (dry run; --confirm)"),
    "repair": ("maestro.memory.store.repair:main", "rewrite drifted memory files canonically (dry run unless --confirm)"),
    "sync": ("maestro.memory.store.sync:main", "sync this project's memory through git (union by id; --resolve)"),
    "todo": ("maestro.memory.store.todos:main", "todos: add | list (ranked, at most 8) | start | done | drop | archive"),
    "suggest": ("maestro.memory.store.queue:suggest", "queue a suggested entry for approval instead of writing it"),
    "queue": ("maestro.memory.store.queue:main", "the suggestion queue: list | approve N | reject N | archive N"),
    "snapshot": ("maestro.commands.memory.main:snapshot", "print the bounded session-start snapshot (--json: with stats)"),
    "health": ("maestro.memory.store.health:main", "print the five-dimension health score and the render cost per section"),
    "outcome": ("maestro.commands.memory.outcome:main", "task outcomes: save one by hand | list (loop/watchdog record theirs)"),
    "patterns": ("maestro.memory.project.patterns:main", "patterns and things to avoid (list | add | remove | extract from outcomes)"),
    "skill": ("maestro.memory.project.skills:main", "candidate skills: list | show | promote (person-only) | archive | restore"),
    "codemap-init": ("maestro.memory.project.codemap:init_main", "create a codemap of a module (source paths, verified commit)"),
    "codemap-probe": ("maestro.memory.project.codemap:probe_main", "is a codemap stale? (sources changed since verified_commit)"),
    "codemap-audit": ("maestro.memory.project.codemap:audit_main", "probe every codemap of the project; summary, exit 1 if any is stale"),
    "mcp": ("maestro.commands.memory.mcp:main", "serve the store to Claude Code as MCP tools over stdio (key writes are queued)"),
}


class SubParser(Parser):
    def error(self, message):
        raise MaestroError(f"{self.prog}: {message} (see --help)", Exit.USAGE)


def parser(sub: str, doc: str) -> SubParser:
    summary, _, rest = (doc or "").strip().partition("\n")
    return SubParser(prog=f"maestro memory {sub}", description=summary, epilog=rest.strip() or None,
                     formatter_class=argparse.RawDescriptionHelpFormatter)


def one_line(text: str, limit: int = 200) -> str:
    """An entry as shown in a result line: first line only, printable, bounded."""
    first = text.split("\n", 1)[0]
    first = "".join(ch if ch.isprintable() else "?" for ch in first)
    more = "…" if len(first) > limit or "\n" in text else ""
    return first[:limit] + more


class Output:
    """Collects one command's result: lines for text mode, fields for the JSON envelope."""

    def __init__(self, command: str, as_json: bool):
        self.command, self.as_json = command, as_json
        self.fields = {}

    def line(self, text: str) -> None:
        if not self.as_json:
            sys.stdout.write(text + "\n")

    def done(self, **fields) -> int:
        if self.as_json:
            envelope = {"version": ENVELOPE_VERSION, "command": self.command, "ok": True, **fields}
            sys.stdout.write(json.dumps(envelope, ensure_ascii=False, indent=2) + "\n")
        return Exit.OK

    def failed(self, exc: MaestroError) -> int:
        from maestro.memory.store.sanitize import filter_text  # argparse echoes stray arguments, secrets included

        message = filter_text(exc.message.rstrip("\n"))
        prefix = f"maestro {self.command}: "
        line = message if message.startswith("maestro ") else prefix + message
        if self.as_json:
            error = {"reason": getattr(exc, "reason", "usage"), "message": line}
            envelope = {"version": ENVELOPE_VERSION, "command": self.command, "ok": False, "error": error}
            sys.stdout.write(json.dumps(envelope, ensure_ascii=False, indent=2) + "\n")
        sys.stderr.write(line + "\n")
        return exc.code


def run(sub: str, argv, body) -> int:
    """Parse nothing, catch everything expected: `body(out)` does the work and returns the code."""
    out = Output(f"memory {sub}", "--json" in argv)
    try:
        return body(out)
    except MaestroError as exc:
        return out.failed(exc)


def snapshot(argv) -> int:
    """print the bounded session-start snapshot (--json: with stats)

The sections of spec memory.md §2.6 in order (Global, User, Project Key, Project Context,
Project Knowledge, Recent Daily, then the discipline note), each within its byte cap and entry
budget; see maestro/memory/store/snapshot.py. Reads only: nothing is written. --cwd picks the project
(default: the current directory); --branch the key track's branch (default: the checked-out one)."""

    def body(out):
        from maestro.memory.store import snapshot as snap
        from maestro.memory.store.tracks import Store

        p = parser("snapshot", snapshot.__doc__)
        p.add_argument("--cwd", help="the project directory (default: .)")
        p.add_argument("--branch", help="the branch for key entries (default: git's current branch)")
        p.add_argument("--session", help="render as session-start would for this session id (its write-guard "
                                         "backlog section included); default: $MAESTRO_SESSION_ID")
        p.add_argument("--json", action="store_true", help="print one JSON envelope with per-section stats")
        args = p.parse_args(argv)
        project, branch = snap.locate(args.cwd or ".")
        if args.branch is not None:
            branch = args.branch.strip() or None
        session = args.session if args.session is not None else os.environ.get("MAESTRO_SESSION_ID")
        if session is not None and not is_valid_session_id(session):
            raise MaestroError(f"invalid session id {session[:80]!r}", Exit.USAGE)
        result = snap.render(Store().root, project=project, branch=branch, session_id=session or None)
        if not out.as_json:
            sys.stdout.write(result.text)
        return out.done(project=project, branch=branch, text=result.text, **result.as_dict())

    return run("snapshot", argv, body)


def _usage() -> str:
    width = max(len(name) for name in SUBCOMMANDS)
    lines = ["usage: maestro memory <subcommand> [args]   (maestro memory <subcommand> --help for each)", "",
             "The durable memory store: global, user, project, key, daily and reference tracks of",
             "§-delimited entries (dsh-maestro-memory's format) under ~/.maestro/memory or $MAESTRO_MEMORY_DIR.",
             "", "subcommands:"]
    lines += [f"  {name.ljust(width)}  {summary}" for name, (_, summary) in SUBCOMMANDS.items()]
    return "\n".join(lines) + "\n"


def main(argv) -> int:
    argv = list(argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(_usage())
        return Exit.OK if argv else Exit.USAGE
    sub, rest = argv[0], argv[1:]
    if sub not in SUBCOMMANDS:
        sys.stderr.write(f"maestro memory: unknown subcommand '{sub}' (see maestro memory --help)\n")
        return Exit.USAGE
    module_name, _, function = SUBCOMMANDS[sub][0].partition(":")
    module = __import__(module_name, fromlist=(function,))
    return getattr(module, function)(rest)
