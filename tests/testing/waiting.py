"""Waiters that are released by an event, never by a timer (a timer can fire before the waiter even looks
when the machine is busy)."""

import threading
import time


def release_once_waiting(release):
    """(sleep, join): a `sleep` to hand to a lock's waiter that runs `release` on another thread once the
    waiter's first sleep has begun, and `join` to wait for that release to finish."""
    releaser = threading.Thread(target=release)

    def sleep(seconds):
        if releaser.ident is None:
            releaser.start()
        time.sleep(seconds)

    return sleep, releaser.join
