"""What every verb shares: its argparse parser (usage errors become one line + exit 3) and the one
`--json` envelope, `{"version": 1, "command": <verb>, "ok": <bool>, …the verb's fields}`."""

import argparse
import sys

from maestro.errors import UsageError


class Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would exit 2, which a hook host reads as "block"
        raise UsageError(f"{self.verb_name()}: {message} (see --help)")

    def verb_name(self) -> str:
        """`maestro memory <sub …>` / `maestro worktrees remove` in full for a subcommand, else `maestro <last word of prog>`."""
        if self.prog.startswith(("maestro memory ", "maestro worktrees ")):
            return self.prog
        return f"maestro {self.prog.split()[-1]}"


def parser(verb: str, doc: str) -> Parser:
    summary, _, rest = (doc or "").strip().partition("\n")
    return Parser(
        prog=f"maestro {verb}",
        description=summary,
        epilog=rest.strip() or None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


ENVELOPE_VERSION = 1


def envelope_text(command: str, ok: bool, **fields) -> str:
    """The `--json` envelope of every verb (no trailing newline): the three envelope keys first,
    then the verb's own fields in their order; UTF-8 text as is, indented by two."""
    import json

    envelope = {"version": ENVELOPE_VERSION, "command": command, "ok": ok, **fields}
    return json.dumps(envelope, ensure_ascii=False, indent=2)


def write_envelope(command: str, ok: bool, **fields) -> None:
    """Print the `--json` envelope (see `envelope_text`) as one document on stdout."""
    sys.stdout.write(envelope_text(command, ok, **fields) + "\n")
