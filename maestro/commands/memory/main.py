"""`memory <subcommand>`: the durable memory store from the command line.

Each subcommand is the module maestro/commands/memory/<sub>.py (`codemap-*` share codemap.py), a thin
layer over the domain in maestro/memory/, imported only when asked for. What they share (parser,
result lines, the `--json` envelope) is in output.py.
"""

import sys

from maestro.errors import Exit

# subcommand -> ("module:function", one-line summary). Order is the order of `--help`.
SUBCOMMANDS = {
    "add": ("maestro.commands.memory.add:main", "add an entry to a track (sanitized, stamped, summarized, deduplicated)"),
    "list": ("maestro.commands.memory.list:main", "print a track's entries (key: --branch; --archived)"),
    "search": ("maestro.commands.memory.search:main", "rank the entries of every track for a query (exit 1 when nothing matches)"),
    "replace": ("maestro.commands.memory.replace:main", "replace the one entry containing --match (keeps its [id:])"),
    "remove": ("maestro.commands.memory.remove:main", "remove the one entry containing --match"),
    "archive": ("maestro.commands.memory.archive:main", "move the one entry containing --match to <TRACK>-archive.md"),
    "batch": ("maestro.commands.memory.batch:main", "add a JSON list of entries, all or nothing"),
    "maintenance": ("maestro.commands.memory.maintenance:main", "archive old and overflowing entries (dry run; --confirm)"),
    "repair": ("maestro.commands.memory.repair:main", "rewrite drifted memory files canonically (dry run unless --confirm)"),
    "sync": ("maestro.commands.memory.sync:main", "sync this project's memory through git (union by id; --resolve)"),
    "todo": ("maestro.commands.memory.todo:main", "todos: add | list (ranked, at most 8) | start | done | drop | archive"),
    "suggest": ("maestro.commands.memory.suggest:main", "queue a suggested entry for approval instead of writing it"),
    "queue": ("maestro.commands.memory.queue:main", "the suggestion queue: list | approve N | reject N | archive N"),
    "snapshot": ("maestro.commands.memory.snapshot:main", "print the bounded session-start snapshot (--json: with stats)"),
    "health": ("maestro.commands.memory.health:main", "print the five-dimension health score and the render cost per section"),
    "outcome": ("maestro.commands.memory.outcome:main", "task outcomes: save one by hand | list (loop/watchdog record theirs)"),
    "patterns": ("maestro.commands.memory.patterns:main", "patterns and things to avoid (list | add | remove | extract from outcomes)"),
    "skill": ("maestro.commands.memory.skill:main", "candidate skills: list | show | promote (person-only) | archive | restore"),
    "codemap-init": ("maestro.commands.memory.codemap:init_main", "create a codemap of a module (source paths, verified commit)"),
    "codemap-probe": ("maestro.commands.memory.codemap:probe_main", "is a codemap stale? (sources changed since verified_commit)"),
    "codemap-audit": ("maestro.commands.memory.codemap:audit_main", "probe every codemap of the project; summary, exit 1 if any is stale"),
    "mcp": ("maestro.commands.memory.mcp:main", "serve the store to Claude Code as MCP tools over stdio (key writes are queued)"),
}


def _usage() -> str:
    width = max(len(name) for name in SUBCOMMANDS)
    lines = ["usage: maestro memory <subcommand> [args]   (maestro memory <subcommand> --help for each)", "",
             "The durable memory store: global, user, project, key, daily and reference tracks of",
             "entries separated by a line holding only § (plain Markdown files you can read) under",
             "~/.maestro/memory or $MAESTRO_MEMORY_DIR.",
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
