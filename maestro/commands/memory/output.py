"""What every `memory <sub>` shares: its argument parser, its result line, and the `--json` envelope.

Text output is one line per action; `--json` prints one versioned envelope on stdout instead,
`{"version": 1, "command": "memory <sub>", "ok": …}`, also on failure (then with
`"error": {"reason", "message"}`). Errors are one line on stderr; exit 3 for usage and invalid
input, 4 for a refused or failed write (see maestro/memory/store/errors.py for the reasons).
"""

import argparse
import json
import sys

from maestro.cli_support import Parser
from maestro.errors import Exit, MaestroError

ENVELOPE_VERSION = 1


class SubParser(Parser):
    def error(self, message):
        raise MaestroError(f"{self.prog}: {message} (see --help)", Exit.USAGE)


def parser(sub: str, doc: str) -> SubParser:
    summary, _, rest = (doc or "").strip().partition("\n")
    return SubParser(prog=f"maestro memory {sub}", description=summary, epilog=rest.strip() or None,
                     formatter_class=argparse.RawDescriptionHelpFormatter)


def one_line(text: str, limit: int = 200) -> str:
    """An entry as shown in a result line: first line only, printable, bounded."""
    first = text.split("\n", 1)[0]
    first = "".join(ch if ch.isprintable() else "?" for ch in first)
    more = "…" if len(first) > limit or "\n" in text else ""
    return first[:limit] + more


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
            envelope = {"version": ENVELOPE_VERSION, "command": self.command, "ok": True, **fields}
            sys.stdout.write(json.dumps(envelope, ensure_ascii=False, indent=2) + "\n")
        return Exit.OK

    def failed(self, exc: MaestroError) -> int:
        from maestro.memory.store.sanitize import filter_text  # argparse echoes stray arguments, secrets included

        message = filter_text(exc.message.rstrip("\n"))
        prefix = f"maestro {self.command}: "
        line = message if message.startswith("maestro ") else prefix + message
        if self.as_json:
            error = {"reason": getattr(exc, "reason", "usage"), "message": line}
            envelope = {"version": ENVELOPE_VERSION, "command": self.command, "ok": False, "error": error}
            sys.stdout.write(json.dumps(envelope, ensure_ascii=False, indent=2) + "\n")
        sys.stderr.write(line + "\n")
        return exc.code


def run(sub: str, argv, body) -> int:
    """Parse nothing, catch everything expected: `body(out)` does the work and returns the code."""
    out = Output(f"memory {sub}", "--json" in argv)
    try:
        return body(out)
    except MaestroError as exc:
        return out.failed(exc)
