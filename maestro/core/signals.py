"""Signal capture for adapters: HUP/INT/TERM set a flag instead of killing the supervisor, so
the current job can be cancelled (or poisoned) deliberately and the final record still printed."""

import signal

_received = []
NAMES = {signal.SIGHUP: "hup", signal.SIGINT: "int", signal.SIGTERM: "term"}


def install() -> None:
    reset()
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
