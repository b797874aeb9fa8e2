"""The store's subcommands: add, list, replace, remove, archive, batch (one line per action).

Tracks: global (alias memory), user, project, key, daily, reference. project/key/reference belong
to the project of --cwd (its git toplevel; default: the current directory). TEXT `-` reads the
text from stdin, which keeps it out of the process list.
"""

import json
import os
import sys

from maestro.commands.memory.output import one_line, parser, run
from maestro.memory.store.errors import StoreError
from maestro.memory.store.tracks import AddRequest, Store

BATCH_KEYS = {"track", "target", "text", "content", "cwd", "branches", "branch", "summary", "date"}


def _text(value: str) -> str:
    if value != "-":
        return value
    raw = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
    try:
        return raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        raise StoreError("stdin is not UTF-8 text", "invalid") from None


def _add_line(result) -> str:
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


def _add_fields(result) -> dict:
    return {"track": result.track, "file": result.file, "duplicate": result.duplicate, "reason": result.reason,
            "id": result.id, "entry": result.entry}


def add(argv) -> int:
    """add an entry to a track (sanitized, stamped, summarized, deduplicated)

Secrets are replaced by [Filtered:<label>]; a text that is nothing but a secret is refused.
An idle text ("Idle — no change", "waiting …") or one already stored is reported as a duplicate
and nothing is written. key entries get an [id:] and an optional branch scope."""

    def body(out):
        p = parser("add", add.__doc__)
        entry_arguments(p, "the entry (- reads it from stdin)")
        p.add_argument("--summary", help="the entry's [summary:…] (default: its first line, 80 characters)")
        p.add_argument("--date", help="daily only: the day's file, YYYY-MM-DD (default: today)")
        p.add_argument("--json", action="store_true", help="print one JSON envelope")
        args = p.parse_args(argv)
        result = Store().add(args.track, _text(args.text), cwd=args.cwd, branches=branches_of(args),
                             summary=args.summary, date=args.date)
        out.line(_add_line(result))
        return out.done(**_add_fields(result))

    return run("add", argv, body)


def _entry_fields(text: str) -> dict:
    from maestro.memory.store import entry as grammar

    parts = grammar.split(text)
    return {"text": text, "id": parts.entry_id, "date": parts.date, "branches": list(parts.branches or []) or None,
            "summary": parts.summary_text}


def list_(argv) -> int:
    """print a track's entries (key: --branch; --archived)

Text output is the entries in the file's own format (joined by a line holding only §).
An invalid --date lists nothing (it is also the daily track's path-traversal guard)."""

    def body(out):
        from maestro.memory.store import entry as grammar

        p = parser("list", list_.__doc__)
        p.add_argument("track", help="global|memory, user, project, key, daily, reference")
        p.add_argument("--cwd", help="the project directory for project/key/reference (default: .)")
        p.add_argument("--branch", help="key only: hide entries scoped to other branches")
        p.add_argument("--archived", action="store_true", help="list <TRACK>-archive.md instead")
        p.add_argument("--date", help="daily only: the day to list, YYYY-MM-DD (default: today)")
        p.add_argument("--json", action="store_true", help="print one JSON envelope")
        args = p.parse_args(argv)
        listing = Store().list(args.track, cwd=args.cwd, branch=args.branch, archived=args.archived, date=args.date)
        if listing.file is None:
            sys.stderr.write(f"maestro memory list: invalid date {args.date!r} (expected YYYY-MM-DD); nothing listed\n")
        if not out.as_json:
            sys.stdout.write(grammar.serialize_entries(listing.entries))
        return out.done(track=listing.track, file=listing.file, entries=[_entry_fields(e) for e in listing.entries])

    return run("list", argv, body)


def _edit_parser(sub: str, doc: str, with_text: bool):
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


def _change_fields(change) -> dict:
    return {"action": change.action, "track": change.track, "file": change.file, "entry": change.entry,
            "previous": change.previous, "archive": change.archive}


def replace(argv) -> int:
    """replace the one entry containing --match (keeps its [id:])

The new text is sanitized; it keeps the old entry's [id:], stamp and branch tag unless it
brings its own, and gets a fresh summary."""

    def body(out):
        args = _edit_parser("replace", replace.__doc__, True).parse_args(argv)
        change = Store().replace(args.track, args.match, _text(args.text), cwd=args.cwd, date=args.date,
                                 summary=args.summary)
        if change.action == "unchanged":
            out.line(f"unchanged {change.track}: the replacement equals the entry")
        else:
            out.line(f"replaced {change.track}: {one_line(change.entry)}")
        return out.done(**_change_fields(change))

    return run("replace", argv, body)


def remove(argv) -> int:
    """remove the one entry containing --match"""

    def body(out):
        args = _edit_parser("remove", remove.__doc__, False).parse_args(argv)
        change = Store().remove(args.track, args.match, cwd=args.cwd, date=args.date)
        out.line(f"removed {change.track}: {one_line(change.entry)}")
        return out.done(**_change_fields(change))

    return run("remove", argv, body)


def archive(argv) -> int:
    """move the one entry containing --match to <TRACK>-archive.md

For global/memory, user, project and key. The archive is written first, then the live file;
`list TRACK --archived` shows the archive."""

    def body(out):
        args = _edit_parser("archive", archive.__doc__, False).parse_args(argv)
        change = Store().archive(args.track, args.match, cwd=args.cwd)
        out.line(f"archived {change.track} to {os.path.basename(change.archive)}: {one_line(change.entry)}")
        return out.done(**_change_fields(change))

    return run("archive", argv, body)


def _request(index: int, item) -> AddRequest:
    if not isinstance(item, dict):
        raise StoreError(f"entry {index}: expected an object, got {type(item).__name__}", "malformed")
    unknown = sorted(set(item) - BATCH_KEYS)
    if unknown:
        raise StoreError(f"entry {index}: unknown field(s) {', '.join(unknown)}", "malformed")
    track, text = item.get("track", item.get("target")), item.get("text", item.get("content"))
    branches = item.get("branches", item.get("branch")) or []
    if isinstance(branches, str):
        branches = branches.split(",")
    fields = {"track": track, "text": text, "cwd": item.get("cwd"), "summary": item.get("summary"),
              "date": item.get("date")}
    for name, value in fields.items():
        if value is not None and not isinstance(value, str):
            raise StoreError(f"entry {index}: {name} must be a string", "malformed")
    if not isinstance(branches, list) or not all(isinstance(b, str) for b in branches):
        raise StoreError(f"entry {index}: branches must be a string or a list of strings", "malformed")
    if track is None or text is None:
        raise StoreError(f"entry {index}: needs a track and a text", "malformed")
    return AddRequest(track, text, fields["cwd"], tuple(b for b in branches if b), fields["summary"], fields["date"])


def batch(argv) -> int:
    """add a JSON list of entries, all or nothing

FILE (- for stdin) holds [{"track": "daily", "text": "…"}, …]; each object may also carry cwd,
branches (a list or "a,b"), summary and date ("target"/"content" are accepted for track/text).
Every entry is checked before anything is written: any failure writes nothing and names the
0-based index of the failing entry. Duplicates are reported, not written, and not an error."""

    def body(out):
        p = parser("batch", batch.__doc__)
        p.add_argument("file", help="a JSON file with a list of entries (- reads stdin)")
        p.add_argument("--json", action="store_true", help="print one JSON envelope")
        args = p.parse_args(argv)
        try:
            if args.file == "-":
                raw = _text("-")
            else:
                with open(args.file, encoding="utf-8") as handle:
                    raw = handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise StoreError(f"cannot read {args.file}: {getattr(exc, 'strerror', None) or exc}", "usage") from None
        try:
            items = json.loads(raw)
        except ValueError as exc:
            raise StoreError(f"{args.file} is not JSON: {exc}", "malformed") from None
        if not isinstance(items, list):
            raise StoreError(f"{args.file}: expected a JSON list of entries", "malformed")
        results = Store().batch([_request(i, item) for i, item in enumerate(items)])
        for result in results:
            out.line(_add_line(result))
        return out.done(results=[_add_fields(r) for r in results])

    return run("batch", argv, body)
