"""The tools `memory mcp` serves: their JSON Schemas, an argument check, and the handlers.

Every handler takes the checked arguments and returns one text (a line like the CLI's, or the
listed entries). Arguments that break the tool's input schema (a wrong type, an unknown or a
missing required argument, a value outside its enum, range or pattern) raise `InvalidArguments`,
a JSON-RPC -32602 error in maestro/commands/memory/mcp.py, as MCP says for invalid arguments; what
only running the tool finds out (a StoreError, a UsageError: no such day, branches on a track
other than key, a todo action without its id) becomes an `isError` result. The store logic is the store's: `Store.add`/`list`,
`Queue.suggest`, `Todos`. A write to the `key` track is never made here: it is queued for a
human's `maestro memory queue approve N`, as `memory suggest` does.
"""

import os
import re

from maestro.errors import UsageError
from maestro.memory.store import compose
from maestro.memory.store.errors import StoreError

TRACKS = ["global", "memory", "user", "project", "key", "daily", "reference"]
TODO_ACTIONS = ["add", "list", "start", "done", "drop", "reopen"]
TODO_LISTS = ["life", "work", "project", "daily"]
LIST_DEFAULT, LIST_MAX = 50, 500
SEARCH_DEFAULT, SEARCH_MAX = 10, 100
MAX_TEXT_CHARS = 20_000  # a tool result's text; longer is cut with a marker
MAX_ARG_CHARS = 100_000  # one string argument

_CWD = {"type": "string", "description": "the project directory for project/key/reference (default: the "
                                         "server's working directory); its git toplevel names the project"}
_BRANCHES = {"type": "array", "items": {"type": "string"}, "maxItems": 20,
             "description": "key only: the branches the entry is visible on (default: every branch)"}
_DATE = {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "description": "daily only: YYYY-MM-DD "
                                                                                     "(default: today)"}
_SUMMARY = {"type": "string", "description": "the entry's [summary:…] (default: its first line, 80 characters)"}


def _schema(properties: dict, required: list) -> dict:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


TOOLS = [
    {"name": "memory_add",
     "description": "Store an entry in maestro's durable memory. Tracks: global (alias memory), user, project "
                    "(this project's timeline), daily (today's log), reference, key (decisions). The text is "
                    "sanitized (secrets filtered; a text that is only a secret is refused), stamped, summarized "
                    "and deduplicated. A key entry is NOT written: it is queued for a human to approve.",
     "inputSchema": _schema({"track": {"type": "string", "enum": TRACKS, "description": "the track to add to"},
                             "content": {"type": "string", "description": "the entry's text"},
                             "cwd": _CWD, "branches": _BRANCHES, "summary": _SUMMARY, "date": _DATE},
                            ["track", "content"])},
    {"name": "memory_list",
     "description": "List a memory track's entries, oldest first (the newest `limit`, default 50), in the "
                    "store's own format: entries separated by a line holding only §.",
     "inputSchema": _schema({"track": {"type": "string", "enum": TRACKS, "description": "the track to list"},
                             "cwd": _CWD,
                             "branch": {"type": "string", "description": "key only: hide entries scoped to "
                                                                         "other branches"},
                             "archived": {"type": "boolean", "description": "list <TRACK>-archive.md instead"},
                             "date": _DATE,
                             "limit": {"type": "integer", "minimum": 1, "maximum": LIST_MAX,
                                       "description": f"at most this many of the newest entries (default "
                                                      f"{LIST_DEFAULT})"}},
                            ["track"])},
    {"name": "memory_suggest",
     "description": "Queue a suggested memory entry for a human to approve (`maestro memory queue approve N`) "
                    "instead of writing it. The default track is key. The same track and text again only "
                    "raises the suggestion's hits.",
     "inputSchema": _schema({"content": {"type": "string", "description": "the suggested entry's text"},
                             "track": {"type": "string", "enum": TRACKS, "description": "the track it is for "
                                                                                       "(default: key)"},
                             "cwd": _CWD, "branches": _BRANCHES, "summary": _SUMMARY,
                             "reason": {"type": "string", "description": "why it is worth keeping"}},
                            ["content"])},
    {"name": "memory_search",
     "description": "Search maestro's durable memory: the entries of every track (global, user, daily, and the "
                    "project, key and reference tracks of the cwd's repository) ranked by relevance to the query, "
                    "best first, one line each: score, track, id, date, file, the entry's first line. Archived "
                    "entries only with archived: true.",
     "inputSchema": _schema({"query": {"type": "string", "description": "words to look for"},
                             "tracks": {"type": "array", "items": {"type": "string", "enum": TRACKS}, "maxItems": 7,
                                        "description": "only these tracks (default: every track)"},
                             "limit": {"type": "integer", "minimum": 1, "maximum": SEARCH_MAX,
                                       "description": f"at most this many hits (default {SEARCH_DEFAULT})"},
                             "cwd": _CWD,
                             "branch": {"type": "string", "description": "favour entries of this branch"},
                             "since": _DATE | {"description": "only entries dated YYYY-MM-DD or later"},
                             "archived": {"type": "boolean", "description": "search the archives too"}},
                            ["query"])},
    {"name": "memory_todo",
     "description": "Todos: add one (list work by default; due date, Eisenhower quadrant q1 urgent+important, q2 "
                    "important, q3 urgent, q4 neither), list them (ranked: overdue, due today, q1..q4; at most 8 "
                    "unless all), or set one's status by id: start (doing), done, drop (dropped), reopen (open).",
     "inputSchema": _schema({"action": {"type": "string", "enum": TODO_ACTIONS},
                             "text": {"type": "string", "description": "add: the todo's text"},
                             "id": {"type": "string", "description": "start/done/drop/reopen: the todo's id "
                                                                     "(8 hex digits, or a unique prefix)"},
                             "due": _DATE | {"description": "add: the due date, YYYY-MM-DD"},
                             "quadrant": {"type": "string", "enum": ["q1", "q2", "q3", "q4"],
                                          "description": "add: the Eisenhower quadrant"},
                             "list": {"type": "string", "enum": TODO_LISTS,
                                      "description": "add: the list (default work); list: show only this list"},
                             "cat": {"type": "string", "description": "add: a category"},
                             "all": {"type": "boolean", "description": "list: every todo of every status, "
                                                                       "uncapped"},
                             "cwd": _CWD},
                            ["action"])},
]
SCHEMAS = {tool["name"]: tool["inputSchema"] for tool in TOOLS}


_TYPES = {"string": str, "boolean": bool, "array": list, "object": dict}


class InvalidArguments(UsageError):
    """Arguments the tool's input schema rejects: a protocol error (-32602), not a tool result."""


def _matches(pattern: str, value: str) -> bool:
    """JSON Schema's `pattern` (ECMA-262): a final `$` is the end of the text, not before a last newline."""
    if pattern.endswith("$"):
        pattern = pattern[:-1] + r"\Z"
    return re.search(pattern, value, re.ASCII) is not None


def _check_value(name: str, value, spec: dict) -> None:
    kind = spec.get("type")
    if kind == "integer":
        ok = isinstance(value, int) and not isinstance(value, bool) or isinstance(value, float) and value.is_integer()
    else:
        ok = isinstance(value, _TYPES[kind])
    if not ok:
        raise InvalidArguments(f"argument '{name}' must be {'an' if kind[0] in 'aio' else 'a'} {kind}")
    if kind == "string" and len(value) > MAX_ARG_CHARS:
        raise InvalidArguments(f"argument '{name}' is longer than {MAX_ARG_CHARS} characters")
    if "enum" in spec and value not in spec["enum"]:
        raise InvalidArguments(f"argument '{name}' must be one of {', '.join(spec['enum'])}")
    if "pattern" in spec and not _matches(spec["pattern"], value):
        raise InvalidArguments(f"argument '{name}' does not match {spec['pattern']}")
    if kind == "integer" and not spec.get("minimum", value) <= value <= spec.get("maximum", value):
        raise InvalidArguments(f"argument '{name}' must be between {spec['minimum']} and {spec['maximum']}")
    if kind == "array":
        if len(value) > spec.get("maxItems", len(value)):
            raise InvalidArguments(f"argument '{name}' has more than {spec['maxItems']} items")
        for item in value:
            _check_value(f"{name}[]", item, spec["items"])


def check_arguments(tool: str, arguments: dict) -> dict:
    """`arguments` checked against the tool's schema, or InvalidArguments (a date that matches the
    pattern but names no day is the store's to refuse)."""
    schema = SCHEMAS[tool]
    unknown = sorted(set(arguments) - set(schema["properties"]))
    if unknown:
        raise InvalidArguments(f"unknown argument(s) {', '.join(repr(u[:40]) for u in unknown[:5])} for {tool}")
    missing = [name for name in schema["required"] if arguments.get(name) is None]
    if missing:
        raise InvalidArguments(f"{tool} needs {', '.join(missing)}")
    checked = {}
    for name, value in arguments.items():
        if value is not None:
            _check_value(name, value, schema["properties"][name])
            checked[name] = int(value) if schema["properties"][name]["type"] == "integer" else value
    return checked


def bounded(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[… truncated: {len(text) - limit} more characters; ask for a smaller limit]"


def _cwd(args) -> str:
    return args.get("cwd") or os.getcwd()


def _with_summary(content: str, summary) -> str:
    """A queued entry carries its summary as a trailing `[summary:…]`, which the approving add moves
    into the header (compose.ensure_summary): the queue file has no summary field of its own."""
    if summary is None:
        return content
    from maestro.memory.store.tracks import clean_text

    text = compose.clean_summary(clean_text(summary, "summary"))
    return f"{content.rstrip()} [summary:{text}]" if text else content


def _queue(track: str, args) -> str:
    from maestro.commands.memory.output import one_line
    from maestro.memory.store.queue import Queue

    content = _with_summary(args["content"], args.get("summary"))
    item, again = Queue().suggest(track, content, _cwd(args), args.get("branches") or (), args.get("reason"),
                                  os.environ.get("MAESTRO_SESSION_ID"))
    n = item["n"]
    if again:
        return (f"already queued as {n} for {item['target']} (hits {item['hits']}), awaiting approval "
                f"(maestro memory queue approve {n}): {one_line(item['content'], 120)}")
    return (f"queued {n} for {item['target']}, awaiting approval (maestro memory queue approve {n}); nothing "
            f"written yet: {one_line(item['content'], 120)}")


def memory_add(args) -> str:
    from maestro.memory.store import layout
    from maestro.memory.store.tracks import Store
    from maestro.commands.memory.entry_args import add_line

    if layout.track_name(args["track"]) == "key":
        if args.get("date") is not None:
            raise StoreError("date applies to the daily track only (not key)", "usage")
        return _queue("key", args)
    result = Store().add(args["track"], args["content"], cwd=_cwd(args), branches=args.get("branches") or (),
                         summary=args.get("summary"), date=args.get("date"))
    return add_line(result)


def memory_list(args) -> str:
    from maestro.memory.store import entry as grammar
    from maestro.memory.store.tracks import Store

    listing = Store().list(args["track"], cwd=_cwd(args), branch=args.get("branch"),
                           archived=bool(args.get("archived")), date=args.get("date"))
    if listing.file is None:
        raise StoreError(f"invalid date {args.get('date')!r} (expected YYYY-MM-DD); nothing listed", "usage")
    entries = listing.entries
    if not entries:
        return f"no entries in {listing.track}{' archive' if args.get('archived') else ''} ({listing.file})"
    limit = args.get("limit", LIST_DEFAULT)
    shown = entries[-limit:]
    head = f"[{len(entries) - len(shown)} older entries not shown; raise limit]\n" if len(shown) < len(entries) else ""
    return bounded(head + grammar.serialize_entries(shown))


def memory_suggest(args) -> str:
    return _queue(args.get("track") or "key", args)


def memory_search(args) -> str:
    """The verb's lines (commands/memory/search.py), or one line saying nothing matched (not an error)."""
    from maestro.commands.memory.search import hit_line, run_search

    hits = run_search(args["query"], tracks=args.get("tracks") or (), limit=args.get("limit", SEARCH_DEFAULT),
                      cwd=_cwd(args), branch=args.get("branch"), since=args.get("since"),
                      archived=bool(args.get("archived")))
    if not hits:
        return f"no entry matches {args['query'][:80]!r}"
    return bounded("\n".join(hit_line(hit) for hit in hits))


def memory_todo(args) -> str:
    from maestro.commands.memory.todo import todo_line
    from maestro.memory.store import todos as todo_mod

    action = args["action"]
    allowed = {"add": {"text", "due", "quadrant", "list", "cat"}, "list": {"list", "all"}}.get(action, {"id"})
    extra = sorted(set(args) - allowed - {"action", "cwd"})
    if extra:
        raise UsageError(f"memory_todo {action} takes no {', '.join(extra)}")
    todos = todo_mod.Todos()
    cwd = _cwd(args)
    if action == "add":
        if not args.get("text"):
            raise UsageError("memory_todo add needs text")
        todo, duplicate = todos.add(args["text"], args.get("list") or "work", args.get("due"), args.get("quadrant"),
                                    args.get("cat"), cwd)
        return ("duplicate (already open): " if duplicate else "added todo ") + todo_line(todo)
    if action == "list":
        every = todos.all(cwd)
        if args.get("list"):
            every = [t for t in every if t.list == args["list"]]
        today = todos.store.clock().date().isoformat()
        if args.get("all"):
            shown, hidden = sorted(every, key=lambda t: todo_mod.rank(t, today)), 0
        else:
            shown, hidden = todo_mod.default_view(every, today)
        lines = [todo_line(t) for t in shown] or ["no todos in the view (all: true lists every todo)"]
        if hidden:
            lines.append(f"… {hidden} more (all: true)")
        return bounded("\n".join(lines))
    if not args.get("id"):
        raise UsageError(f"memory_todo {action} needs id")
    status = {"start": "doing", "done": "done", "drop": "dropped", "reopen": "open"}[action]
    return f"{status} " + todo_line(todos.set_status(args["id"], status, cwd))


HANDLERS = {"memory_add": memory_add, "memory_list": memory_list, "memory_suggest": memory_suggest,
            "memory_search": memory_search, "memory_todo": memory_todo}
