"""`memory list`: a track's entries, in the file's own format or as a `--json` envelope."""

import sys

from maestro.commands.memory.output import parser, run
from maestro.memory.store.tracks import Store


def _entry_fields(text: str) -> dict:
    from maestro.memory.store import entry as grammar

    parts = grammar.split(text)
    return {"text": text, "id": parts.entry_id, "date": parts.date, "branches": list(parts.branches or []) or None,
            "summary": parts.summary_text}


def main(argv) -> int:
    """print a track's entries (key: --branch; --archived)

Text output is the entries in the file's own format (joined by a line holding only §).
An invalid --date (not a real YYYY-MM-DD day) is a usage error: exit 3, nothing listed."""

    def body(out):
        from maestro.memory.store import entry as grammar
        from maestro.memory.store import layout
        from maestro.memory.store.errors import StoreError

        p = parser("list", main.__doc__)
        p.add_argument("track", help="global|memory, user, project, key, daily, reference")
        p.add_argument("--cwd", help="the project directory for project/key/reference (default: .)")
        p.add_argument("--branch", help="key only: hide entries scoped to other branches")
        p.add_argument("--archived", action="store_true", help="list <TRACK>-archive.md instead")
        p.add_argument("--date", help="daily only: the day to list, YYYY-MM-DD (default: today)")
        p.add_argument("--json", action="store_true", help="print one JSON envelope")
        args = p.parse_args(argv)
        if args.date is not None and args.track == "daily":
            layout.check_date(args.date)  # a usage error (exit 3), not an empty listing that exits 0
        listing = Store().list(args.track, cwd=args.cwd, branch=args.branch, archived=args.archived, date=args.date)
        if listing.file is None:  # the store's own traversal guard refused the date
            raise StoreError(f"invalid date {args.date!r} (expected YYYY-MM-DD); nothing listed", "usage")
        if not out.as_json:
            sys.stdout.write(grammar.serialize_entries(listing.entries))
        return out.done(track=listing.track, file=listing.file, entries=[_entry_fields(e) for e in listing.entries])

    return run("list", argv, body)
