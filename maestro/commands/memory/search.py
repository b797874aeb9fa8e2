"""`memory search`: ranked entries of every track for a query, as lines or a `--json` envelope.

The ranking and the index are the store's (maestro/memory/store/search.py); this module parses,
calls, prints. Exit 0 with hits, 1 (Exit.NOT_FOUND) with none, 3 on bad arguments.
"""

import os
import sys

from maestro.commands.memory.output import one_line, parser, run
from maestro.errors import Exit

TEXT_CHARS = 200  # an entry's first line as shown in a result line (the envelope has it whole)


def hit_fields(hit) -> dict:
    """One hit as the `--json` envelope and the MCP tool give it."""
    return {"track": hit.track, "id": hit.id, "date": hit.date, "score": round(hit.score, 4), "file": hit.file,
            "text": hit.text, "project": hit.project}


def hit_line(hit) -> str:
    """`score track id date file: text` — '-' for an entry without an id or a date."""
    return (f"{hit.score:.3f}  {hit.track}  {hit.id or '-'}  {hit.date or '-'}  {hit.file}: "
            f"{one_line(hit.text, TEXT_CHARS)}")


def run_search(query: str, *, tracks=(), limit: int = 10, cwd=None, branch=None, since=None,
               archived: bool = False) -> list:
    """The store's search over the configured memory dir; the project of `cwd` (default: the working
    directory) is included. StoreError on bad arguments."""
    from maestro import paths
    from maestro.memory.store import search
    from maestro.memory.store.errors import StoreError

    if not cwd:
        try:
            cwd = os.getcwd()
        except OSError:  # the working directory was removed under us
            raise StoreError("the working directory no longer exists; pass --cwd", "usage") from None
    return search.search(paths.memory_dir(), query, tracks=tuple(tracks or ()), limit=limit, cwd=cwd,
                         branch=branch, since=since, archived=archived)


# The options of `memory search`: (takes a value, repeats). Anything else (an abbreviation, `--`, -h, a
# query word that starts with '-', a bad --limit) goes to argparse, which says what is wrong.
_OPTIONS = {"--track": (True, True), "--limit": (True, False), "--cwd": (True, False), "--branch": (True, False),
            "--since": (True, False), "--archived": (False, False), "--json": (False, False)}


def quick_args(argv):
    """The parsed arguments of an ordinary command line, as argparse would give them (a dict), or None
    when argparse must parse it: a search pays ~4 ms for importing argparse otherwise."""
    found = {"query": [], "track": [], "limit": 10, "cwd": None, "branch": None, "since": None,
             "archived": False, "json": False}
    at, closed = 0, False  # closed: an option came after the query words (argparse then refuses more)
    while at < len(argv):
        word = argv[at]
        if not word.startswith("-"):
            if closed:
                return None
            found["query"].append(word)
            at += 1
            continue
        closed = bool(found["query"])
        name, has_value, value = word.partition("=")
        if name not in _OPTIONS or bool(has_value) and not _OPTIONS[name][0]:
            return None
        takes_value, repeats = _OPTIONS[name]
        key = name[2:]
        if not takes_value:
            found[key] = True
            at += 1
            continue
        if not has_value:
            if at + 1 >= len(argv) or argv[at + 1].startswith("-"):
                return None
            value = argv[at + 1]
            at += 1
        at += 1
        if key == "limit":
            try:
                value = int(value)  # argparse's type=int
            except ValueError:
                return None
        if repeats:
            found[key].append(value)
        else:
            found[key] = value
    return found if found["query"] else None


def _parsed(argv) -> dict:
    """The arguments, by quick_args or by argparse (same names and values)."""
    quick = quick_args(argv)
    if quick is not None:
        return quick
    p = parser("search", main.__doc__)
    p.add_argument("query", nargs="+", help="words to look for (one query)")
    p.add_argument("--track", action="append", default=[],
                   help="only this track (repeat for several): global|memory, user, project, key, daily, "
                        "reference")
    p.add_argument("--limit", type=int, default=10, help="at most this many hits (default 10)")
    p.add_argument("--cwd", help="the project whose tracks are searched (default: .)")
    p.add_argument("--branch", help="favour entries of this branch")
    p.add_argument("--since", help="only entries dated YYYY-MM-DD or later")
    p.add_argument("--archived", action="store_true", help="search the archives too")
    p.add_argument("--json", action="store_true", help="print one JSON envelope")
    return vars(p.parse_args(argv))


def main(argv) -> int:
    """rank the entries of every track for a query (exit 1 when nothing matches)

Searches the global tracks (global, user, daily) and the project tracks (project, key, reference)
of the --cwd repository (default: the working directory); archived entries only with --archived.
One line per hit, best first: score, track, id, date, file, and the entry's first line.
Exit 0 with hits, 1 with none, 3 on bad arguments."""

    def body(out):
        args = _parsed(argv)
        hits = run_search(" ".join(args["query"]), tracks=args["track"], limit=args["limit"], cwd=args["cwd"],
                          branch=args["branch"], since=args["since"], archived=args["archived"])
        for hit in hits:
            out.line(hit_line(hit))
        if not hits and not out.as_json:
            sys.stderr.write("maestro memory search: no entry matches\n")
        out.done(results=[hit_fields(hit) for hit in hits])
        return Exit.OK if hits else Exit.NOT_FOUND

    return run("search", argv, body)
