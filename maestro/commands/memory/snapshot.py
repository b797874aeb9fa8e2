"""`memory snapshot`: print the bounded session-start snapshot (the domain: memory/store/snapshot.py)."""

import os
import sys

from maestro.commands.memory.output import parser, run
from maestro.errors import UsageError
from maestro.util.session import is_valid_session_id


def main(argv) -> int:
    """print the bounded session-start snapshot (--json: with stats)

The sections in order (Global, User, Project Key, Project Context, Project Knowledge, Recent
Daily, then the discipline note), each within its byte cap and entry budget, the whole under
Claude Code's 10,000-character cap for a hook's context. Reads only: nothing is written. --cwd picks the project
(default: the current directory); --branch the key track's branch (default: the checked-out one)."""

    def body(out):
        from maestro.memory.store import layout
        from maestro.memory.store import snapshot as snap
        from maestro.memory.store.tracks import Store

        p = parser("snapshot", main.__doc__)
        p.add_argument("--cwd", help="the project directory (default: .)")
        p.add_argument("--branch", help="the branch for key entries (default: git's current branch)")
        p.add_argument("--session", help="render as session-start would for this session id (its write-guard "
                                         "backlog section included); default: $MAESTRO_SESSION_ID")
        p.add_argument("--json", action="store_true", help="print one JSON envelope with per-section stats")
        args = p.parse_args(argv)
        project, branch = layout.locate(args.cwd or ".")
        if args.branch is not None:
            branch = args.branch.strip() or None
        session = args.session if args.session is not None else os.environ.get("MAESTRO_SESSION_ID")
        if session is not None and not is_valid_session_id(session):
            raise UsageError(f"invalid session id {session[:80]!r}")
        result = snap.render(Store().root, project=project, branch=branch, session_id=session or None)
        if not out.as_json:
            sys.stdout.write(result.text)
        return out.done(project=project, branch=branch, text=result.text, **result.as_dict())

    return run("snapshot", argv, body)
