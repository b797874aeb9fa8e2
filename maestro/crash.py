"""Crash notes: an unexpected exception in a hook becomes a deliberate answer plus a note here.

The user never sees a traceback; the note (versions, platform, traceback) lands in
`~/.maestro/logs/crashes.log` so a bug report has something to quote. Writing it must never
raise: a failing crash note must not turn a fail-closed answer into a traceback.
"""

import os
import sys
import time

MAX_LOG_BYTES = 256 * 1024


def record(verb: str, exc: BaseException) -> str:
    """Append a crash note; return its path ('' if it could not be written)."""
    try:
        import traceback

        from maestro import __version__, paths

        logs = paths.logs_dir()
        os.makedirs(logs, mode=0o700, exist_ok=True)
        path = os.path.join(logs, "crashes.log")
        try:
            if os.lstat(path).st_size > MAX_LOG_BYTES:
                os.replace(path, path + ".1")
        except FileNotFoundError:
            pass
        note = "".join(
            [
                f"--- {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} maestro {__version__} "
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
