"""The shared shell of an adapter's `main`: the progress channel decided first, `--help`, and a
`MAESTRO_FINAL:` record that stays the last line whatever goes wrong (bad arguments, an expected
error, or a crash, which also leaves a crash note)."""

import sys

from maestro.util import progress
from maestro.errors import MaestroError


class UsageError(Exception):
    """Bad arguments: `<SCOPE>_ERROR: <message>` and FAILED rc 3, before anything is locked."""


def positive_seconds(name: str, value: str) -> float:
    """A MAX_IDLE/POLL-style argument: a positive, finite number of seconds (decimals allowed)."""
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    if not 0 < number < float("inf"):
        raise UsageError(f"{name} must be a positive number of seconds: {value!r}")
    return number


def adapter_main(scope: str, verb: str, doc: str, argv, run) -> int:
    progress.init()
    argv = list(argv)
    if argv in (["--help"], ["-h"]):
        sys.stdout.write(doc.strip() + "\n")
        return 0
    try:
        return run(argv)
    except UsageError as exc:
        sys.stderr.write(f"{scope}_ERROR: {exc}\n")
        return progress.final(scope, "FAILED", 3)
    except MaestroError as exc:
        sys.stderr.write(exc.message.rstrip("\n") + "\n")
        return progress.final(scope, "FAILED", exc.code)
    except Exception as exc:  # noqa: BLE001 - the final record must still be the last line
        from maestro import crash

        note = crash.record(verb, exc)
        sys.stderr.write(f"{scope}_ERROR: internal error: {type(exc).__name__}: {exc}"
                         + (f"; details in {note}" if note else "") + "\n")
        return progress.final(scope, "FAILED", 4)
