"""`memory remove`: the one entry containing --match leaves its track, through `Store.remove`."""

from maestro.commands.memory.entry_args import change_fields, edit_parser
from maestro.commands.memory.output import one_line, run
from maestro.memory.store.tracks import Store


def main(argv) -> int:
    """remove the one entry containing --match"""

    def body(out):
        args = edit_parser("remove", main.__doc__, False).parse_args(argv)
        change = Store().remove(args.track, args.match, cwd=args.cwd, date=args.date)
        out.line(f"removed {change.track}: {one_line(change.entry)}")
        return out.done(**change_fields(change))

    return run("remove", argv, body)
