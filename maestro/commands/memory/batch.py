"""`memory batch`: a JSON list of entries added all or nothing, through `Store.batch`."""

import json

from maestro.commands.memory.entry_args import add_fields, add_line, text_or_stdin
from maestro.commands.memory.output import parser, run
from maestro.memory.store.errors import StoreError
from maestro.memory.store.tracks import AddRequest, Store

BATCH_KEYS = {"track", "target", "text", "content", "cwd", "branches", "branch", "summary", "date"}


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


def main(argv) -> int:
    """add a JSON list of entries, all or nothing

FILE (- for stdin) holds [{"track": "daily", "text": "…"}, …]; each object may also carry cwd,
branches (a list or "a,b"), summary and date ("target"/"content" are accepted for track/text).
Every entry is checked before anything is written: any failure writes nothing and names the
0-based index of the failing entry. Duplicates are reported, not written, and not an error."""

    def body(out):
        p = parser("batch", main.__doc__)
        p.add_argument("file", help="a JSON file with a list of entries (- reads stdin)")
        p.add_argument("--json", action="store_true", help="print one JSON envelope")
        args = p.parse_args(argv)
        try:
            if args.file == "-":
                raw = text_or_stdin("-")
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
            out.line(add_line(result))
        return out.done(results=[add_fields(r) for r in results])

    return run("batch", argv, body)
