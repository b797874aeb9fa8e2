"""Crash notes: an unexpected exception in a hook becomes a deliberate answer plus a note here.

The user never sees a traceback; the note (versions, platform, traceback) lands in
`~/.maestro/logs/crashes.log` so a bug report has something to quote. Writing it must never
raise: a failing crash note must not turn a fail-closed answer into a traceback.
"""

import os
import sys

from maestro.util.clock import utc_stamp

MAX_LOG_BYTES = 256 * 1024


def record(verb: str, exc: BaseException) -> str:
    """Append a crash note; return its path ('' if it could not be written)."""
    try:
        import traceback

        from maestro import __version__, paths
        from maestro.util import atomic

        logs = paths.logs_dir()
        # Both 0700 whatever the umask (os.makedirs would give ~/.maestro 0777 & ~umask); a symlink
        # or a non-directory in their place is refused (then no note).
        atomic.ensure_private_dir(paths.maestro_dir())
        atomic.ensure_private_dir(logs)
        path = os.path.join(logs, "crashes.log")
        try:
            if os.lstat(path).st_size > MAX_LOG_BYTES:
                os.replace(path, path + ".1")
        except FileNotFoundError:
            pass
        note = "".join(
            [
                f"--- {utc_stamp()} maestro {__version__} "
                f"verb={verb} python={sys.version.split()[0]} platform={sys.platform}\n",
                *traceback.format_exception(type(exc), exc, exc.__traceback__),
            ]
        )
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            os.write(fd, note.encode("utf-8", "backslashreplace"))
        finally:
            os.close(fd)
        return path
    except BaseException:  # noqa: BLE001 - a crash note must never raise
        return ""


def report(verb: str, exc: Exception, prefix: str) -> int:
    """The one way a verb's uncaught exception ends: one line on stderr and an exit code.

    A MaestroError is expected: its own message and code. Anything else is a bug: a crash note,
    `<prefix>: internal error: <type>: <message>; details in <note>` and exit 4. `cli.main` and
    the adapters' `commands.entry.adapter_main` both end here (prefix `maestro <verb>` or
    `<SCOPE>_ERROR`); hooks keep their own fail-closed answers (a protocol boundary)."""
    from maestro.errors import Exit, MaestroError

    if isinstance(exc, MaestroError):
        sys.stderr.write(exc.message.rstrip("\n") + "\n")
        return exc.code
    note = record(verb, exc)
    where = f"; details in {note}" if note else ""
    sys.stderr.write(f"{prefix}: internal error: {type(exc).__name__}: {exc}{where}\n")
    return Exit.FAILED
