"""The shared shell of an adapter's `main`: the progress channel decided first, `--help`, and a
`MAESTRO_FINAL:` record that stays the last line whatever goes wrong (bad arguments, an expected
error, or a crash, which also leaves a crash note)."""

import sys

from maestro.util import progress
from maestro.errors import Exit, UsageError


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
        return Exit.OK
    try:
        return run(argv)
    except UsageError as exc:
        sys.stderr.write(f"{scope}_ERROR: {exc}\n")
        return progress.final(scope, "FAILED", exc.code)
    except Exception as exc:  # noqa: BLE001 - the final record must still be the last line
        from maestro import crash

        return progress.final(scope, "FAILED", crash.report(verb, exc, f"{scope}_ERROR"))
