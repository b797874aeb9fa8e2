"""`<hook> --help`, and the answer of a hook that was given arguments (a misconfigured hook)."""

import sys

from maestro.errors import Exit


def hook_help(verb: str, doc: str, argv, failure_code: int = Exit.HOOK_BLOCK) -> int:
    """Hooks take no arguments: `--help` explains them; anything else is a misconfigured hook.

    A misconfigured hook answers with its deliberate failure code (the gate fails closed)."""
    if list(argv) in (["--help"], ["-h"]):
        sys.stdout.write(f"usage: maestro {verb}  (reads a Claude Code hook payload on stdin)\n\n")
        sys.stdout.write((doc or "").strip() + "\n")
        return Exit.OK
    sys.stderr.write(f"maestro {verb}: takes no arguments, only a hook payload on stdin (see --help)\n")
    return failure_code
