"""`memory repair`: rewrite drifted memory files canonically (the domain: maestro/memory/store/repair.py).

Parses the arguments, runs the dry run or `--confirm` and prints one line per file that changes
(or is skipped) and a closing count, or the `--json` envelope.
"""

from maestro.commands.memory.output import parser, run
from maestro.memory.store.repair import repair


def main(argv) -> int:
    """rewrite drifted memory files canonically (dry run unless --confirm)

Splits glued entries (a line opening with [id:…] and/or a [YYYY-MM-DD…] stamp) and stray §
lines, moves a trailing [summary:…] into the header and drops repeated entries (ignoring [id:],
summaries and whitespace; the first wins). Covers MEMORY, USER, TODOS-life/work, daily/* and
projects/*/{MEMORY,KEY,TODOS}.md. A file that is not UTF-8 (archives and REFERENCE.md included) is
decoded with U+FFFD for each bad byte and rewritten. With --confirm each changed file's original
bytes are backed up to <file>.bak.<ms> next to it first, and the first confirmed run writes
.maestro-memory/delimiter-repaired-v3."""
    from maestro.memory.store.tracks import Store

    def body(out):
        p = parser("repair", main.__doc__)
        mode = p.add_mutually_exclusive_group()
        mode.add_argument("--confirm", action="store_true", help="write the repaired files (default: dry run)")
        mode.add_argument("--dry-run", action="store_true", help="the default: report what would change")
        p.add_argument("--json", action="store_true", help="print one JSON envelope")
        args = p.parse_args(argv)
        report = repair(Store(), confirm=args.confirm)
        verb = "repaired" if report.applied else "would repair"
        for item in report.files:
            if item.error:
                out.line(f"skipped {item.file}: {item.error}")
            elif item.changed:
                plan = item.plan
                line = (f"{verb} {item.file}: entries {plan.before} -> {plan.after} (split {plan.split}, "
                        f"deduped {plan.deduped}, relocated {plan.relocated})")
                if item.recoded:
                    line += f"; {item.recoded}: each undecodable byte becomes U+FFFD"
                out.line(line + (f"; backup {item.backup}" if item.backup else ""))
        out.line(f"changed {report.changed}" + ("" if report.applied else " (dry run; --confirm to write)"))
        return out.done(**report.as_dict())

    return run("repair", argv, body)
