"""The shared shell of an adapter's `main` (`loop`, `watchdog`, `discuss`, `scout`): the progress
channel decided first, `--help`, `umask 077` while the verb runs (what it writes — lease and job
lock records, run records, discussion transcripts — is nobody else's to read), and a
`MAESTRO_FINAL:` record that stays the last line whatever goes wrong (bad arguments, an expected
error, or a crash, which also leaves a crash note). Also the one plan reader of `loop` and
`watchdog`: a plan is what a Codex write job is told to do, so one that someone else can write
is refused."""

import os
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


PLANS_HINT = "keep plans in ~/.maestro/plans/ (mkdir -p -m 700 ~/.maestro/plans; chmod 600 the plan)"


def read_plan(path: str) -> str:
    """The text of the plan file at `path`, when it is a regular file of ours that neither group nor
    others can write; else a UsageError saying why and how to fix it. The checks are made on the
    open file (fstat of the descriptor the text is then read from), so the file cannot be swapped
    between the check and the read; a symlink is judged by the file it reaches."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO must not hang the verb
    except OSError as exc:
        raise UsageError(f"plan file is not readable: {path} ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"plan {path} is not a regular file; {PLANS_HINT}")
        if st.st_uid != os.geteuid():
            raise UsageError(f"plan {path} is owned by another user (uid {st.st_uid}), who could rewrite what Codex "
                             f"is told to do; copy it and {PLANS_HINT}")
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise UsageError(f"plan {path} is writable by others (mode {stat.S_IMODE(st.st_mode):04o}), who could "
                             f"rewrite what Codex is told to do; {PLANS_HINT}")
        try:
            data = handle.read()
        except OSError as exc:
            raise UsageError(f"plan file is not readable: {path} ({exc.strerror or exc})") from None
    return data.decode("utf-8", "replace")


def adapter_main(scope: str, verb: str, doc: str, argv, run) -> int:
    progress.init()
    argv = list(argv)
    if argv in (["--help"], ["-h"]):
        sys.stdout.write(doc.strip() + "\n")
        return Exit.OK
    previous_umask = os.umask(0o077)  # restored on the way out: the tests run verbs in-process
    try:
        return run(argv)
    except UsageError as exc:
        sys.stderr.write(f"{scope}_ERROR: {exc}\n")
        return progress.final(scope, "FAILED", exc.code)
    except Exception as exc:  # noqa: BLE001 - the final record must still be the last line
        from maestro import crash

        return progress.final(scope, "FAILED", crash.report(verb, exc, f"{scope}_ERROR"))
    finally:
        os.umask(previous_umask)
