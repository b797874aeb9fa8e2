"""`memory archive`: the one entry containing --match moves to <TRACK>-archive.md, through `Store.archive`."""

import os

from maestro.commands.memory.entry_args import change_fields, edit_parser
from maestro.commands.memory.output import one_line, run
from maestro.memory.store.tracks import Store


def main(argv) -> int:
    """move the one entry containing --match to <TRACK>-archive.md

For global/memory, user, project and key. The archive is written first, then the live file;
`list TRACK --archived` shows the archive."""

    def body(out):
        args = edit_parser("archive", main.__doc__, False).parse_args(argv)
        change = Store().archive(args.track, args.match, cwd=args.cwd)
        out.line(f"archived {change.track} to {os.path.basename(change.archive)}: {one_line(change.entry)}")
        return out.done(**change_fields(change))

    return run("archive", argv, body)
