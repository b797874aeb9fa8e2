"""`memory patterns list | add | remove | extract`: the command over maestro/memory/project/patterns.py
(patterns.json) and learn.py (extract: outcomes mined into candidate skills and avoid items)."""

from maestro.commands.memory.output import one_line, parser, run
from maestro.memory.project import patterns
from maestro.memory.store.errors import StoreError


def _extract_cli(memory, out, dry_run: bool) -> int:
    from maestro.memory.project import learn

    result = learn.extract(memory, dry_run)
    prefix = "(dry run) " if dry_run else ""
    for cand in (c for c in result["candidates"] if c["action"] != "unchanged"):
        out.line(f"{prefix}{cand['action']} candidate {cand['slug']} [{cand['status']}, {cand['confidence']}, "
                 f"{cand['occurrences']} observation(s), +{cand['added']}]: {cand['title'][:120]}")
    for item in (i for i in result["avoid"] if i["action"] != "unchanged"):
        out.line(f"{prefix}{item['action']} avoid {item['id']} (candidate {item['candidate']})")
    for error in result["errors"]:
        out.line(f"skipped invalid outcome: {error}")
    counts = {a: sum(1 for c in result["candidates"] if c["action"] == a) for a in ("created", "updated", "unchanged")}
    out.line(f"{prefix}extract: {result['outcomes']} outcome(s), {result['lessons']} lesson(s); candidates "
             f"{counts['created']} created, {counts['updated']} updated, {counts['unchanged']} unchanged"
             + ("; nothing written" if dry_run else ""))
    return out.done(**result)


def _line(item) -> str:
    where = ", ".join(item.get("applies_to") or []) or ("nowhere (no file known)" if "lesson" in item else "everywhere")
    head = f"{item['id']} [{item.get('confidence', '?')}] "
    text = item["title"] + (f" — {item['reason']}" if item.get("reason") else "")
    return one_line(head + ("avoid: " if item["id"].startswith("A") else "") + text + f"  (applies to: {where})")


def main(argv) -> int:
    """patterns and things to avoid (patterns.json); extract mines outcomes into candidate skills

  patterns [list] [--file PATH ...] [--cwd D] [--json]    --file: only what applies to those files
  patterns add --title T [--avoid --reason R] [--source S] [--confidence high|medium|low]
               [--applies-to GLOB_OR_PREFIX ...] [--cwd D]
  patterns remove ID [--cwd D]                             ID: P001, A001, …
  patterns extract [--dry-run] [--cwd D] [--json]

extract: a lesson (a verify check that keeps failing, a `what_didnt` item) observed in >= 2
distinct outcomes becomes a candidate skill in candidate-skills/<slug>/ plus an
avoid item here. Re-running it is idempotent. Promotion is by a person: memory skill promote."""
    from maestro.memory.project.files import ProjectMemory

    def body(out):
        p = parser("patterns", main.__doc__)
        p.add_argument("action", nargs="?", default="list", choices=("list", "add", "remove", "extract"))
        p.add_argument("arg", nargs="?", help="remove: the id")
        p.add_argument("--title")
        p.add_argument("--avoid", action="store_true", help="add: a thing to avoid (needs --reason)")
        p.add_argument("--reason")
        p.add_argument("--source")
        p.add_argument("--confidence", default="medium", choices=patterns.CONFIDENCE)
        p.add_argument("--applies-to", nargs="+", action="extend", default=[], metavar="GLOB")
        p.add_argument("--file", action="append", default=[], help="list: only items applying to this file")
        p.add_argument("--dry-run", action="store_true", help="extract: report, write nothing")
        p.add_argument("--cwd", help="the project directory (default: .)")
        p.add_argument("--json", action="store_true", help="print one JSON envelope")
        args = p.parse_args(argv)
        if args.arg is not None and args.action != "remove":
            raise StoreError(f"patterns {args.action} takes no positional argument", "usage")
        memory = ProjectMemory.for_cwd(args.cwd)
        if args.action == "add":
            if not args.title:
                raise StoreError("patterns add needs --title", "usage")
            item = patterns.add(memory, title=args.title, avoid=args.avoid, reason=args.reason, source=args.source,
                                confidence=args.confidence, applies_to=args.applies_to)
            out.line("added " + _line(item))
            return out.done(item=item)
        if args.action == "remove":
            if not args.arg:
                raise StoreError("patterns remove needs an id", "usage")
            item = patterns.remove(memory, args.arg)
            out.line("removed " + _line(item))
            return out.done(item=item)
        if args.action == "extract":
            return _extract_cli(memory, out, args.dry_run)
        doc = patterns.load(memory)
        items = patterns.applicable(doc, args.file) if args.file else (
            [dict(i, kind="pattern") for i in doc["patterns"]] + [dict(i, kind="avoid") for i in doc["avoid"]])
        for item in items:
            out.line(_line(item))
        if not items:
            out.line("no patterns yet (memory patterns add, memory patterns extract)")
        return out.done(project=memory.project, file=memory.patterns_file, items=items)

    return run("patterns", argv, body)
