"""`memory replace`: the one entry containing --match gets a new text, through `Store.replace`."""

from maestro.commands.memory.entry_args import change_fields, edit_parser, text_or_stdin
from maestro.commands.memory.output import one_line, run
from maestro.memory.store.tracks import Store


def main(argv) -> int:
    """replace the one entry containing --match (keeps its [id:])

The new text is sanitized; it keeps the old entry's [id:], stamp and branch tag unless it
brings its own, and gets a fresh summary."""

    def body(out):
        args = edit_parser("replace", main.__doc__, True).parse_args(argv)
        change = Store().replace(args.track, args.match, text_or_stdin(args.text), cwd=args.cwd, date=args.date,
                                 summary=args.summary)
        if change.action == "unchanged":
            out.line(f"unchanged {change.track}: the replacement equals the entry")
        else:
            out.line(f"replaced {change.track}: {one_line(change.entry)}")
        return out.done(**change_fields(change))

    return run("replace", argv, body)
