"""`memory suggest`: queue an entry for a human to approve, through `Queue.suggest` (maestro/memory/store/queue.py)."""

import os

from maestro.commands.memory.entry_args import branches_of, entry_arguments, text_or_stdin
from maestro.commands.memory.output import one_line, parser, run
from maestro.memory.store.queue import Queue, suggestion_fields


def main(argv) -> int:
    """queue a suggested entry for a human to approve (instead of writing it)

The text is sanitized and queued in SUGGESTIONS.jsonl; the same track and text again raises
its hits. `memory queue approve N` writes it through the store; key entries suggested by a
model land only that way."""

    def body(out):
        p = parser("suggest", main.__doc__)
        entry_arguments(p, "the suggested entry (- reads it from stdin)")
        p.add_argument("--reason", help="why it is suggested")
        p.add_argument("--session-id", help="the suggesting session")
        p.add_argument("--json", action="store_true", help="print one JSON envelope")
        args = p.parse_args(argv)
        item, again = Queue().suggest(args.track, text_or_stdin(args.text), args.cwd, branches_of(args), args.reason,
                                      args.session_id or os.environ.get("MAESTRO_SESSION_ID"))
        if again:
            out.line(f"already queued as {item['n']} (hits {item['hits']}): {one_line(item['content'], 120)}")
        else:
            out.line(f"queued {item['n']} for {item['target']}: {one_line(item['content'], 120)}")
        return out.done(queued=not again, hits=item["hits"], suggestion=suggestion_fields(item))

    return run("suggest", argv, body)
