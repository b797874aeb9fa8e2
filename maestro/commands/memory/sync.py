"""`memory sync`: two-machine sync of a project's memory through git (the domain: maestro/memory/store/sync.py).

Parses the arguments, runs a sync or `--resolve` and prints the result lines, or the `--json`
envelope; on conflicts the envelope carries the sync result beside the error. Every message and
the conflict envelope have credentials in URLs redacted.
"""

import sys

from maestro.commands.support import envelope_text
from maestro.commands.memory.output import one_line, parser, run
from maestro.memory.store.errors import StoreError
from maestro.memory.store.sync import RESOLUTIONS, SyncError, redact, resolve, sync


def main(argv) -> int:
    """two-machine sync of this project's memory through git (union by id; conflicts; --resolve)

`memory sync --remote URL` enables sync for the project (a private work area under
.maestro-memory/sync/<h>/, branch maestro-memory/<h> on URL); later `memory sync` fetches,
merges by id against the last-sync set, writes the result locally and pushes when there are no
conflicts (exit 4 otherwise). `--resolve local|remote|both [--id ID]` settles recorded conflicts;
run `memory sync` again to push. Remote URLs are printed with credentials redacted."""
    from maestro.memory.store.tracks import Store

    def body(out):
        p = parser("sync", main.__doc__)
        p.add_argument("--remote", help="the git remote URL (enables sync for the project)")
        p.add_argument("--cwd", help="the project directory (default: .)")
        p.add_argument("--resolve", choices=RESOLUTIONS, help="settle recorded conflicts")
        p.add_argument("--id", help="with --resolve: only the conflict with this id")
        p.add_argument("--json", action="store_true", help="print one JSON envelope")
        args = p.parse_args(argv)
        store = Store()
        if args.id and not args.resolve:
            raise StoreError("--id applies to --resolve only", "usage")
        if args.resolve:
            if args.remote:
                raise StoreError("--remote does not apply to --resolve (it makes no git call)", "usage")
            done = resolve(store, args.resolve, args.cwd, args.id)
            for c in done:
                out.line(f"resolved {c['file']} {c['id']} ({c['kind']}): {args.resolve}")
            if not done:
                out.line("no conflicts recorded")
            return out.done(resolved=done, resolution=args.resolve)
        try:
            result = sync(store, args.cwd, args.remote)
        except SyncError as exc:
            result = getattr(exc, "result", None)
            if result is None:
                raise
            out.line(f"remote {result['remote']} branch {result['branch']}")
            for c in result["conflicts"]:
                out.line(f"conflict {c['file']} {c['id']} {c['kind']}: local "
                         f"{one_line(c['local']) if c['local'] else '(deleted)'} | remote {one_line(c['remote'])}")
            if out.as_json:
                error = {"reason": exc.reason, "message": f"maestro memory sync: {exc.message}"}
                sys.stdout.write(redact(envelope_text(out.command, False, **result, error=error)) + "\n")
                sys.stderr.write(f"maestro memory sync: {exc.message}\n")
                return exc.code
            return out.failed(exc)
        out.line(f"remote {result['remote']} branch {result['branch']}")
        for name, f in result["files"].items():
            out.line(f"{name}: {f['local']} local, {f['remote']} remote, {f['added']} added")
        out.line(f"pushed {result['pushed']}" if result["pushed"] else "up to date")
        return out.done(**result)

    def redacted(out):
        try:
            return body(out)
        except StoreError as exc:
            exc.message = redact(exc.message)
            raise

    return run("sync", argv, redacted)
