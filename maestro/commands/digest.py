"""Print the tree-v3 digest of the current worktree: `tree-v3:<hex>`.

The value the write lease records before and after every dispatch: every tracked and untracked,
non-ignored path of this worktree, its submodules and nested repositories — bytes, exec bits,
symlinks and deletions — but not HEAD, the index or commits (committing changes nothing).
stdout carries only the digest; warnings go to stderr. Exit 0 with the digest; 3 outside a git
work tree; 4 when the tree could not be enumerated or MAESTRO_DIGEST_TIMEOUT_SEC (default 120)
ran out.
"""

import sys

from maestro.errors import Exit, MaestroError


def warn(line: str) -> None:
    sys.stderr.write(line.rstrip("\n") + "\n")


def _use_cache(argv) -> bool:
    # The two valid command lines are read without argparse (~15 ms of a ~150 ms warm digest);
    # everything else (--help, a typo) goes through the one Parser for its usual text and exit 3.
    if argv in ([], ["--no-cache"]):
        return not argv
    from maestro.commands.support import parser

    cli = parser("digest", __doc__)
    cli.add_argument("--no-cache", action="store_true",
                     help="hash every file's bytes instead of reusing maestro's stat cache (slower, same value)")
    return not cli.parse_args(argv).no_cache


def main(argv) -> int:
    use_cache = _use_cache(list(argv))
    from maestro.provenance import digest as provenance

    value, why = provenance.digest(use_cache=use_cache, emit=warn)
    if value is None:
        code = Exit.USAGE if why == provenance.NOT_A_WORKTREE else Exit.FAILED
        raise MaestroError(f"maestro digest: no digest — {why}", code)
    sys.stdout.write(value + "\n")
    return Exit.OK
