"""What `Transport.wait` (codex/companion.py) remembers between the polls of one job."""

import os
from dataclasses import dataclass, field


@dataclass
class PollWatch:
    """What one `Transport.wait` remembers between polls."""

    midpoint: float  # past it, the budget warning is shown once
    log_file: str = ""
    last_size: int = -1
    last_activity: float = None  # when the job last showed a sign of life (None before the first good status)
    losses: int = 0  # status answers lost in a row
    last_phase: str = None
    last_preview: list = field(default_factory=list)
    quiet: float = 0.0  # seconds polled without showing anything
    keepalive_size: int = 0
    warned: bool = False
    from_file: bool = False  # the job's own file stood in for the table (said once)


def file_size(path: str) -> int:
    if not path:
        return 0
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def new_preview_lines(previous: list, current: list) -> list:
    """Lines of `current` not already shown: drop the longest prefix that continues `previous`."""
    for overlap in range(min(len(previous), len(current)), 0, -1):
        if previous[-overlap:] == current[:overlap]:
            return current[overlap:]
    return current
