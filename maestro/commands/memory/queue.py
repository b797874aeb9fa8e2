"""`memory queue`: list the suggestion queue and decide its items (maestro/memory/store/queue.py)."""

import os

from maestro.commands.memory.entry_args import text_or_stdin
from maestro.commands.memory.output import one_line, parser, run
from maestro.memory.store.errors import StoreError
from maestro.memory.store.queue import Queue, suggestion_fields


def main(argv) -> int:
    """the suggestion queue: list | approve N | reject N | archive N

  queue list [--json]               the pending suggestions, with their numbers
  queue approve N [--text T]        write it through the store (key: the only way a model's lands)
  queue reject N                    drop it; no track is touched
  queue archive N                   move it to its track's <TRACK>-archive.md

Numbers are given when a suggestion is queued and never change or get reused."""

    def body(out):
        p = parser("queue", main.__doc__)
        p.add_argument("action", choices=("list", "approve", "reject", "archive"))
        p.add_argument("n", nargs="?", help="the suggestion's number (see queue list)")
        p.add_argument("--text", help="approve: store this text instead (- reads stdin)")
        p.add_argument("--json", action="store_true", help="print one JSON envelope")
        args = p.parse_args(argv)
        queue = Queue()
        if args.action == "list":
            if args.n is not None:
                raise StoreError("queue list takes no number", "usage")
            items = queue.items()
            for item in items:
                where = f" ({item['cwd']})" if item.get("cwd") else ""
                hits = f" ×{item['hits']}" if isinstance(item.get("hits"), int) and item["hits"] > 1 else ""
                out.line(f"{item['n']:>3}. {item['target']}{where}{hits}: {one_line(item['content'], 160)}")
            if not items:
                out.line("the queue is empty")
            return out.done(suggestions=[suggestion_fields(i) for i in items])
        if args.n is None:
            raise StoreError(f"queue {args.action} needs a number (see queue list)", "usage")
        if args.text is not None and args.action != "approve":
            raise StoreError("--text applies to approve only", "usage")
        if args.action == "approve":
            decision = queue.approve(args.n, text_or_stdin(args.text) if args.text is not None else None)
        else:
            decision = getattr(queue, args.action)(args.n)
        n, track = decision.item["n"], decision.item["target"]
        if decision.action == "approved":
            out.line(f"approved {n}: added to {track}: {one_line(decision.entry)}")
        elif decision.action == "duplicate":
            out.line(f"approved {n}: {track} already holds it; dropped from the queue")
        elif decision.action == "archived":
            out.line(f"archived {n} to {os.path.basename(decision.file)}: {one_line(decision.entry)}")
        else:
            out.line(f"rejected {n}: {one_line(decision.item['content'], 120)}")
        return out.done(action=decision.action, suggestion=suggestion_fields(decision.item), entry=decision.entry,
                        file=decision.file)

    return run("queue", argv, body)
