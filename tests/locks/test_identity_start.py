"""identity.same_start: a process's start time read twice is the same start even when the kernel's boot
time moved by a second in between (a VM's clock correction: /proc/stat btime, what ps uses too) — else
every lock owner, lease holder and ledger worker would be judged a reused pid and its lock taken."""

import os

import pytest

from maestro.locks import identity, job_ledger

pytestmark = pytest.mark.in_process


def with_boot_time_moved(monkeypatch, seconds: int) -> None:
    real = identity.read_proc

    def moved(name):
        data = real(name)
        if name != "stat":
            return data
        return b"\n".join(b"btime %d" % (int(line.split()[1]) + seconds) if line.startswith(b"btime ") else line
                          for line in data.splitlines())

    monkeypatch.setattr(identity, "read_proc", moved)


@pytest.mark.parametrize("seconds", [1, -1])
def test_the_boot_time_moving_a_second_leaves_a_live_owner_confirmed(monkeypatch, seconds):
    recorded = identity.process_start(os.getpid(), ask_ps=False)
    with_boot_time_moved(monkeypatch, seconds)
    assert identity.process_start(os.getpid(), ask_ps=False) != recorded  # what the CI saw happen
    assert identity.owner_state(os.getpid(), recorded, ask_ps=False) == identity.ALIVE_CONFIRMED
    assert not job_ledger._restarted(identity.process_start(os.getpid(), ask_ps=False), recorded)


@pytest.mark.parametrize("seconds", [2, -2, 3600])
def test_a_start_further_away_is_another_process(monkeypatch, seconds):
    recorded = identity.process_start(os.getpid(), ask_ps=False)
    with_boot_time_moved(monkeypatch, seconds)
    assert identity.owner_state(os.getpid(), recorded, ask_ps=False) == identity.DEAD
    assert job_ledger._restarted(identity.process_start(os.getpid(), ask_ps=False), recorded)


@pytest.mark.parametrize("first,second,same", [
    ("Sun Nov 29 19:40:17 2026", "Sun Nov 29 19:40:17 2026", True),
    ("Sun Nov  1 19:40:17 2026", "Sun Nov 1 19:40:17 2026", True),  # ps pads single-digit days
    ("Sun Nov 29 19:40:17 2026", "Sun Nov 29 19:40:18 2026", True),
    ("Mon Nov 30 00:00:00 2026", "Sun Nov 29 23:59:59 2026", True),  # across midnight
    ("Fri Jan  1 00:00:00 2027", "Thu Dec 31 23:59:59 2026", True),  # across a year
    ("Sun Nov 29 19:40:17 2026", "Sun Nov 29 19:40:19 2026", False),
    ("Sun Nov 29 19:40:17 2026", "Sun Nov 29 19:40:17 2025", False),
    ("Sun Nov 29 19:40:17 2026", "garbage", False),
    ("Sun Nov 29 19:40:17 2026", "Sun Xyz 29 19:40:18 2026", False),
    ("Sun Nov 29 19:40:17 2026", "Sun Nov 31 19:40:18 2026", False),
    ("Sun Nov 29 19:40:17 2026", "Sun Nov 29 19:40:1x 2026", False),
    ("Sun Nov 29 19:40:17 2026", "", False),
])
def test_same_start_within_a_second_only(first, second, same):
    assert identity.same_start(first, second) is same and identity.same_start(second, first) is same
