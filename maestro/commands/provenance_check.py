"""Compare the worktree with the last completed dispatch's snapshot: one `PROVENANCE:` line.

States: a write lease is in flight; no baseline yet; comparison unavailable (the prior or the
current snapshot was not observed); the tree matches; or BASELINE GAP — the tree changed while
no write lease was held (exit 1; the author is unknown). A diagnostic, not an enforcement
boundary: it never blocks anything. The line goes to stdout, warnings to stderr; exit 0 unless
there is a gap. Outside a git repository there is nothing to compare: one line on stderr and
exit 3 (not "no baseline yet", which would read as a repository the loop has not written to yet).
"""

import os
import sys

from maestro.commands.support import parser
from maestro.errors import Exit, MaestroError


def main(argv) -> int:
    parser("provenance-check", __doc__).parse_args(argv)
    from maestro.commands.digest import warn
    from maestro.provenance import log as provenance_log
    from maestro.provenance.digest import NOT_A_WORKTREE
    from maestro.util import git

    if git.scope_root() is None:  # digest says the same, in the same words and code
        raise MaestroError(f"maestro provenance-check: no comparison — {NOT_A_WORKTREE} ({os.getcwd()}); "
                           "run it in the repository the loop writes to", Exit.USAGE)
    line, rc = provenance_log.check_line(emit=warn)
    sys.stdout.write(line + "\n")
    return rc
