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


def main(argv) -> int:
    """rank the entries of every track for a query (exit 1 when nothing matches)

Searches the global tracks (global, user, daily) and the project tracks (project, key, reference)
of the --cwd repository (default: the working directory); archived entries only with --archived.
One line per hit, best first: score, track, id, date, file, and the entry's first line.
Exit 0 with hits, 1 with none, 3 on bad arguments."""

    def body(out):
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
        args = p.parse_args(argv)
        hits = run_search(" ".join(args.query), tracks=args.track, limit=args.limit, cwd=args.cwd,
                          branch=args.branch, since=args.since, archived=args.archived)
        for hit in hits:
            out.line(hit_line(hit))
        if not hits and not out.as_json:
            sys.stderr.write("maestro memory search: no entry matches\n")
        out.done(results=[hit_fields(hit) for hit in hits])
        return Exit.OK if hits else Exit.NOT_FOUND

    return run("search", argv, body)
