"""`memory add`: one entry into a track, through `Store.add` (maestro/memory/store/tracks.py)."""

from maestro.commands.memory.entry_args import add_fields, add_line, branches_of, entry_arguments, text_or_stdin
from maestro.commands.memory.output import parser, run
from maestro.memory.store.tracks import Store


def main(argv) -> int:
    """add an entry to a track (sanitized, stamped, summarized, deduplicated)

Secrets are replaced by [Filtered:<label>]; a text that is nothing but a secret is refused.
An idle text ("Idle — no change", "waiting …") or one already stored (whitespace aside) is
reported as a duplicate and nothing is written. A text whose later line holds only § or opens
with a [YYYY-MM-DD] stamp is refused (exit 3): `memory repair` would read it as two entries.
key entries get an [id:] and an optional branch scope."""

    def body(out):
        p = parser("add", main.__doc__)
        entry_arguments(p, "the entry (- reads it from stdin)")
        p.add_argument("--summary", help="the entry's [summary:…] (default: its first line, 80 characters)")
        p.add_argument("--date", help="daily only: the day's file, YYYY-MM-DD (default: today)")
        p.add_argument("--json", action="store_true", help="print one JSON envelope")
        args = p.parse_args(argv)
        result = Store().add(args.track, text_or_stdin(args.text), cwd=args.cwd, branches=branches_of(args),
                             summary=args.summary, date=args.date)
        out.line(add_line(result))
        return out.done(**add_fields(result))

    return run("add", argv, body)
