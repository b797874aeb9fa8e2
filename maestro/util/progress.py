"""The progress channel (spec §1.0): machine-readable records go to fd 3 when the caller opened
it, else to stdout — so `maestro loop … 3>&1 >/dev/null` captures only the records.

Whether fd 3 is open is decided once, at the first record, before maestro opens files of its
own (which could otherwise land on fd 3 and be mistaken for the caller's channel). stdout is
flushed before every record so the two streams keep their order when they are the same file.
"""

import os
import sys

PROGRESS_FD = 3
STDOUT = "stdout"
_fd = None  # undecided, PROGRESS_FD, or STDOUT (records interleave with sys.stdout)


def _channel():
    global _fd
    if _fd is None:
        try:
            os.fstat(PROGRESS_FD)
            _fd = PROGRESS_FD
        except OSError:
            _fd = STDOUT
    return _fd


def emit(line: str) -> None:
    """Write one record line (a trailing newline is added)."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    text = line.rstrip("\n") + "\n"
    fd = _channel()
    if fd == STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    data = text.encode("utf-8", "backslashreplace")
    try:
        while data:
            written = os.write(fd, data)
            data = data[written:]
    except OSError:  # the caller closed fd 3 under us: records must not be lost
        global _fd
        _fd = STDOUT
        sys.stdout.write(data.decode("utf-8", "replace"))
        sys.stdout.flush()


def init() -> None:
    """Decide the channel now, before this process opens files of its own (adapters call it first)."""
    _channel()


def final(scope: str, state: str, rc: int) -> int:
    """The terminal record, always the last line an adapter prints; returns rc for `return final(…)`."""
    emit(f"MAESTRO_FINAL: {scope} {state} rc={rc}")
    return rc
