"""What every `memory <sub>` shares: its argument parser, its result line, and the `--json` envelope.

Text output is one line per action; `--json` prints the one versioned envelope of every verb
(commands/support.py write_envelope) on stdout instead, `{"version": 1, "command": "memory <sub>", "ok": …}`,
also on failure (then with `"error": {"reason", "message"}`). Errors are one line on stderr; exit 3
for usage and invalid input, 4 for a refused or failed write (see maestro/memory/store/errors.py for
the reasons).
"""

import sys

from maestro.errors import Exit, MaestroError
from maestro.util.text import first_line


def parser(sub: str, doc: str):
    """The shared commands.support `Parser`: its usage errors read `maestro memory <sub>: … (see --help)`.
    (commands.support is imported here, not at the top: `memory search` parses its usual command lines
    itself and never loads argparse.)"""
    from maestro.commands.support import parser as cli_parser

    return cli_parser(f"memory {sub}", doc)


def write_envelope(command: str, ok: bool, **fields) -> None:
    from maestro.commands import support

    support.write_envelope(command, ok, **fields)


def one_line(text: str, limit: int = 200) -> str:
    """An entry as shown in a result line: first line only, printable, bounded (util/text)."""
    return first_line(text, limit)


class Output:
    """Collects one command's result: lines for text mode, fields for the JSON envelope."""

    def __init__(self, command: str, as_json: bool):
        self.command, self.as_json = command, as_json
        self.fields = {}

    def line(self, text: str) -> None:
        if not self.as_json:
            sys.stdout.write(text + "\n")

    def done(self, **fields) -> int:
        if self.as_json:
            write_envelope(self.command, True, **fields)
        return Exit.OK

    def failed(self, exc: MaestroError) -> int:
        from maestro.memory.store.sanitize import filter_text  # argparse echoes stray arguments, secrets included

        message = filter_text(exc.message.rstrip("\n"))
        prefix = f"maestro {self.command}: "
        line = message if message.startswith("maestro ") else prefix + message
        if self.as_json:
            error = {"reason": getattr(exc, "reason", "usage"), "message": line}
            write_envelope(self.command, False, error=error)
        sys.stderr.write(line + "\n")
        return exc.code


def run(sub: str, argv, body) -> int:
    """Parse nothing, catch everything expected: `body(out)` does the work and returns the code."""
    out = Output(f"memory {sub}", "--json" in argv)
    try:
        return body(out)
    except MaestroError as exc:
        return out.failed(exc)
