"""Signal capture for adapters: HUP/INT/TERM set a flag instead of killing the supervisor, so
the current job can be cancelled (or poisoned) deliberately and the final record still printed.

`pause(seconds)` sleeps until the time is up or a signal arrives, without periodic wake-ups:
the handler's wake-up byte lands on a pipe that `select` watches, so an idle supervisor costs
almost no CPU and still reacts to a signal at once.
"""

import os
import select
import signal
import time

_received = []
_wakeup = None  # (read fd, write fd) once installed
NAMES = {signal.SIGHUP: "hup", signal.SIGINT: "int", signal.SIGTERM: "term"}


def install() -> None:
    global _wakeup
    reset()
    if _wakeup is None:
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        os.set_blocking(write_fd, False)
        _wakeup = (read_fd, write_fd)
    signal.set_wakeup_fd(_wakeup[1], warn_on_full_buffer=False)
    for sig in NAMES:
        signal.signal(sig, _handler)


def _handler(signum, _frame):
    _received.append(signum)


def stop_requested() -> bool:
    return bool(_received)


def reason() -> str:
    """`signal-term` etc. for the first signal received, '' when none."""
    return f"signal-{NAMES[_received[0]]}" if _received else ""


def reset() -> None:
    _received.clear()


def pause(seconds: float) -> None:
    """Sleep up to `seconds`; return early when a signal is (or already was) received."""
    deadline = time.monotonic() + seconds
    while not _received:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        if _wakeup is None:
            time.sleep(min(remaining, 0.25))
            continue
        try:
            ready, _, _ = select.select([_wakeup[0]], [], [], remaining)
        except InterruptedError:  # pragma: no cover - PEP 475 retries, kept for clarity
            continue
        if ready:
            try:
                os.read(_wakeup[0], 512)
            except BlockingIOError:
                pass
