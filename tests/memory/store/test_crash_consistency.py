"""20 writers × 50 adds to one track, some SIGKILLed at random moments (issue 5 acceptance).

Afterwards the file parses as canonical, every add a worker reported is on disk exactly once,
nothing is on disk that no worker tried to add, no drift backup was ever needed, and once the
next writer has run (it sweeps a killed writer's temp file) no temp or lock debris is left.
Workers are `crash_driver.py` processes that import the store from the selected target.
"""

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from testing.memory import leftovers, site_path

from maestro.memory.store import entry as grammar

pytestmark = [pytest.mark.stress, pytest.mark.timeout(180)]

DRIVER = Path(__file__).with_name("crash_driver.py")
WORKERS, ADDS, VICTIMS = 20, 50, 6
SEED = 0x6B696C6C  # "kill"


def test_twenty_writers_with_random_sigkills_lose_and_duplicate_nothing(mem_root):
    rng = random.Random(SEED)
    started = time.monotonic()
    procs = [subprocess.Popen([sys.executable, "-I", str(DRIVER), site_path(), str(mem_root), str(worker),
                               str(ADDS), "memory"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for worker in range(WORKERS)]
    kills = sorted((rng.uniform(0.3, 2.5), victim) for victim in rng.sample(range(WORKERS), VICTIMS))
    killed = set()
    for at, victim in kills:
        time.sleep(max(0.0, started + at - time.monotonic()))
        if procs[victim].poll() is None:
            procs[victim].send_signal(signal.SIGKILL)
            killed.add(victim)
    reported = set()
    for worker, proc in enumerate(procs):
        out, err = proc.communicate(timeout=150)
        lines = out.decode().splitlines()
        if lines and lines[0].startswith("from "):
            assert lines.pop(0).startswith("from " + site_path()), "the worker imported the wrong maestro"
        if worker in killed:
            assert proc.returncode in (0, -signal.SIGKILL), err.decode()
        else:
            assert proc.returncode == 0 and len(lines) == ADDS, err.decode()
        assert all(line.startswith("ok ") for line in lines), lines
        reported.update(line[3:] for line in lines)
    assert killed, "no worker was still running when its kill came: raise the load or kill earlier"

    text = (mem_root / "MEMORY.md").read_text()
    assert grammar.is_canonical(text)
    bodies = [grammar.split(entry).body for entry in grammar.parse_entries(text)]
    assert len(bodies) == len(set(bodies)), "an add landed twice"
    assert reported <= set(bodies), f"reported but lost: {sorted(reported - set(bodies))[:5]}"
    attempted = {f"w{worker}-{index} crash payload" for worker in range(WORKERS) for index in range(ADDS)}
    assert set(bodies) <= attempted
    assert list(mem_root.glob("*.bak.*")) == []

    from maestro.memory.store.tracks import Store

    assert not Store(str(mem_root)).add("memory", "the next writer").duplicate
    assert leftovers(mem_root) == []
    print(f"{len(reported)} reported, {len(bodies)} on disk, {len(killed)} killed, "
          f"{time.monotonic() - started:.1f}s")
