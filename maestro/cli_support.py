"""Shared argparse plumbing: every verb's parser maps usage errors to one line + exit 3."""

import argparse
import sys

from maestro.errors import Exit, MaestroError


class Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would exit 2, which a hook host reads as "block"
        raise MaestroError(f"maestro {self.prog.split()[-1]}: {message} (see --help)", Exit.USAGE)


def parser(verb: str, doc: str) -> Parser:
    summary, _, rest = (doc or "").strip().partition("\n")
    return Parser(
        prog=f"maestro {verb}",
        description=summary,
        epilog=rest.strip() or None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def hook_help(verb: str, doc: str, argv, failure_code: int = Exit.HOOK_BLOCK) -> int:
    """Hooks take no arguments: `--help` explains them; anything else is a misconfigured hook.

    A misconfigured hook answers with its deliberate failure code (the gate fails closed)."""
    if list(argv) in (["--help"], ["-h"]):
        sys.stdout.write(f"usage: maestro {verb}  (reads a Claude Code hook payload on stdin)\n\n")
        sys.stdout.write((doc or "").strip() + "\n")
        return Exit.OK
    sys.stderr.write(f"maestro {verb}: takes no arguments, only a hook payload on stdin (see --help)\n")
    return failure_code
