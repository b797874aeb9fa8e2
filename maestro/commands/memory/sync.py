"""`memory sync`: a project's memory shared between machines through git (the domain: maestro/memory/store/sync.py;
the user's guide: docs/memory-sync.md).

Parses the arguments, runs a sync or `--resolve` and prints the result lines, or the `--json`
envelope; on conflicts the envelope carries the sync result beside the error. Every message and
the conflict envelope have credentials in URLs redacted.
"""

import sys

from maestro.commands.support import envelope_text
from maestro.commands.memory.output import one_line, parser, run
from maestro.memory.store.errors import StoreError
from maestro.memory.store.sync import RESOLUTIONS, SyncError, redact, resolve, sync


def shown(entry) -> str:
    return one_line(entry) if entry is not None else "(deleted)"


def main(argv) -> int:
    """sync this project's memory between machines through git (three-way merge per entry; --resolve)

`memory sync --remote URL` enables sync for this checkout (a private work area under
.maestro-memory/sync/<h>/, branch maestro-memory/<key> on URL, <key> named from the project's
identity: its root commit, else its origin URL, else --project-id ID); later `memory sync` fetches,
merges each entry against what both sides last agreed (a one-sided edit, deletion or addition
travels; an entry changed on both sides is a conflict), writes the result locally and pushes when
there are no conflicts (exit 4 otherwise). `--resolve local|remote|both [--id ID]` settles recorded
conflicts; run `memory sync` again to push. Guide: docs/memory-sync.md. Remote URLs are printed
with credentials redacted."""
    from maestro.memory.store.tracks import Store

    def body(out):
        p = parser("sync", main.__doc__)
        p.add_argument("--remote", help="the git remote URL (enables sync for the project)")
        p.add_argument("--project-id",
                       help="name the project yourself (a token; default: the repository's root commit)")
        p.add_argument("--cwd", help="the project directory (default: .)")
        p.add_argument("--resolve", choices=RESOLUTIONS, help="settle recorded conflicts")
        p.add_argument("--id", help="with --resolve: only the conflict with this id")
        p.add_argument("--json", action="store_true", help="print one JSON envelope")
        args = p.parse_args(argv)
        store = Store()
        if args.id and not args.resolve:
            raise StoreError("--id applies to --resolve only", "usage")
        if args.resolve:
            if args.remote or args.project_id:
                raise StoreError("--remote and --project-id do not apply to --resolve (it makes no git call)", "usage")
            done = resolve(store, args.resolve, args.cwd, args.id)
            for c in done:
                out.line(f"resolved {c['file']} {c['id']} ({c['kind']}): {args.resolve}")
            if not done:
                out.line("no conflicts recorded")
            return out.done(resolved=done, resolution=args.resolve)
        try:
            result = sync(store, args.cwd, args.remote, args.project_id)
        except SyncError as exc:
            result = getattr(exc, "result", None)
            if result is None:
                raise
            out.line(f"remote {result['remote']} branch {result['branch']}")
            for c in result["conflicts"]:
                out.line(f"conflict {c['file']} {c['id']} {c['kind']}: local {shown(c['local'])} | "
                         f"remote {shown(c['remote'])}")
            if out.as_json:
                error = {"reason": exc.reason, "message": f"maestro memory sync: {exc.message}"}
                sys.stdout.write(redact(envelope_text(out.command, False, **result, error=error)) + "\n")
                sys.stderr.write(f"maestro memory sync: {exc.message}\n")
                return exc.code
            return out.failed(exc)
        out.line(f"remote {result['remote']} branch {result['branch']}")
        if result["migrated"]:
            out.line("sync state migrated to per-entry tracking (edits and deletions now travel)")
        for name, f in result["files"].items():
            taken = "".join(f", {f[k]} {k}" for k in ("updated", "removed") if f[k])
            out.line(f"{name}: {f['local']} local, {f['remote']} remote, {f['added']} added{taken}")
        out.line(f"pushed {result['pushed']}" if result["pushed"] else "up to date")
        return out.done(**result)

    def redacted(out):
        try:
            return body(out)
        except StoreError as exc:
            exc.message = redact(exc.message)
            raise

    return run("sync", argv, redacted)
