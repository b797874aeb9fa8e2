"""`memory maintenance`: archive old and overflowing entries (the domain: maestro/memory/store/maintenance.py).

Parses the arguments, runs a dry run or `--confirm` per track and prints one result line per track
(and one per entry that moves), or the `--json` envelope.
"""

from maestro.commands.memory.output import one_line, parser, run
from maestro.memory.store import layout
from maestro.memory.store.errors import StoreError
from maestro.memory.store.maintenance import POLICY, TRACKS, TrackResult, apply, dry_run
from maestro.memory.store.txn import check_write_block


def _line(result: TrackResult) -> str:
    moved = result.plan.archive
    verb = "archived" if result.applied else "would archive"
    size = sum(d.bytes for d in moved)
    line = (f"{result.track}: {verb} {len(moved)} of {len(moved) + len(result.plan.keep)} entries ({size} B; "
            f"keepBytes {result.plan.keep_bytes}, cutoff {result.plan.cutoff})")
    if result.backup:
        line += f"; backup {result.backup}"
    if not result.canonical:
        line += "; file is not canonical: --confirm will refuse it (run `memory repair`)"
    return line


def main(argv) -> int:
    """archive old and overflowing entries (dry run unless --confirm)

Policy (keepBytes / maxAgeDays): memory and user 8 KiB / 180, key 64 KiB / 180, project
128 KiB / 180; daily is never archived. Dated entries before the UTC cutoff move to
<TRACK>-archive.md, undated ones never age out; then the newest entries are kept up to keepBytes
and any entry that would exceed it moves too. Without --confirm nothing is written. With it,
each track with something to move gets a <file>.bak.<ms> backup, its archive appended and the
live file rewritten. Archiving on one machine only is undone by the next union sync."""
    from maestro.memory.store.tracks import Store

    def body(out):
        p = parser("maintenance", main.__doc__)
        p.add_argument("--track", help="one of global|memory, user, key, project (default: all four)")
        p.add_argument("--cwd", help="the project directory for key/project (default: .)")
        mode = p.add_mutually_exclusive_group()
        mode.add_argument("--confirm", action="store_true", help="write: move the entries (default: dry run)")
        mode.add_argument("--dry-run", action="store_true", help="the default: print what would move")
        p.add_argument("--keep-bytes", type=int, help="override keepBytes for the tracks run")
        p.add_argument("--max-age-days", type=int, help="override maxAgeDays for the tracks run")
        p.add_argument("--json", action="store_true", help="print one JSON envelope")
        args = p.parse_args(argv)
        tracks = [layout.track_name(args.track)] if args.track else list(TRACKS)
        for track in tracks:
            if track not in POLICY:
                raise StoreError(f"maintenance covers global|memory, user, key, project (not {track})", "usage")
        store = Store()
        if args.confirm:
            check_write_block(store.layout)
        results = []
        for track in tracks:
            result = dry_run(store, track, args.cwd, args.keep_bytes, args.max_age_days)
            if args.confirm and result.plan.archive:
                result = apply(store, track, args.cwd, args.keep_bytes, args.max_age_days)
            results.append(result)
            out.line(_line(result))
            for decision in result.plan.archive:
                out.line(f"  {decision.reason}: {one_line(decision.entry, 100)}")
        return out.done(dryRun=not args.confirm, tracks=[r.as_dict() for r in results],
                        archived=sum(len(r.plan.archive) for r in results if r.applied),
                        wouldArchive=sum(len(r.plan.archive) for r in results if not r.applied))

    return run("maintenance", argv, body)
