"""Compare the worktree with the last completed dispatch's snapshot: one `PROVENANCE:` line.

States: a write lease is in flight; no baseline yet; comparison unavailable (the prior or the
current snapshot was not observed); the tree matches; or BASELINE GAP — the tree changed while
no write lease was held (exit 1; the author is unknown). A diagnostic, not an enforcement
boundary: it never blocks anything. The line goes to stdout, warnings to stderr; exit 0 unless
there is a gap.
"""

import sys

from maestro.commands.support import parser


def main(argv) -> int:
    parser("provenance-check", __doc__).parse_args(argv)
    from maestro.commands.digest import warn
    from maestro.provenance import log as provenance_log

    line, rc = provenance_log.check_line(emit=warn)
    sys.stdout.write(line + "\n")
    return rc
