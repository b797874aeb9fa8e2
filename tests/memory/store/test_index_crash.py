"""Writers SIGKILLed mid-transaction leave an index that agrees with the files (issue 11 acceptance).

Each worker (index_crash_driver.py, importing maestro from the selected target) is paused at a named
point — inside the index's write transaction, between two files of a store commit, inside a rebuild —
and killed there; then search over the index must give exactly the hits of parsing the files, the
index must pass SQLite's integrity check, and the next writer must leave no debris. The fast variant
kills once at each point; the stress variant kills at a seeded random schedule of points and calls.
"""

import os
import random
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from testing.memory import site_path

from maestro.memory.store import index
from maestro.memory.store import search as memsearch

DRIVER = Path(__file__).with_name("index_crash_driver.py")
QUERIES = ("payload", "crash sqlite", "daily payload", "k0-1", "k2-4 crash")


def run(root, tag, count, point="none", nth=0, kill=True):
    proc = subprocess.Popen([sys.executable, "-I", str(DRIVER), site_path(), str(root), tag, str(count), point,
                             str(nth)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={k: v for k, v in os.environ.items() if k != "MAESTRO_MEMORY_INDEX"})
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line.strip())
            if line.strip() == "paused" and kill:
                proc.send_signal(signal.SIGKILL)
                break
        proc.wait(timeout=60)
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
        proc.stdin.close()
    assert lines[-1] in ("paused", "done"), (lines[-3:], err)
    return lines


def assert_index_agrees_with_files(root, monkeypatch):
    monkeypatch.delenv("MAESTRO_MEMORY_INDEX", raising=False)
    for query in QUERIES:
        for archived in (False, True):
            fast = memsearch.search(str(root), query, archived=archived, limit=50)
            monkeypatch.setenv("MAESTRO_MEMORY_INDEX", "off")
            slow = memsearch.search(str(root), query, archived=archived, limit=50)
            monkeypatch.delenv("MAESTRO_MEMORY_INDEX")
            assert fast == slow, (query, archived)
    conn = sqlite3.connect(index.index_path(str(root)))
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        indexed = conn.execute("SELECT count(*) FROM docs").fetchone()[0]
    finally:
        conn.close()
    return indexed


def test_writers_killed_at_each_named_point_leave_an_index_that_agrees_with_the_files(mem_root, monkeypatch):
    mem_root.mkdir(parents=True)
    for tag, point, nth in (("k0", "reindex", 9), ("k1", "write", 5), ("k2", "rebuild", 1)):
        lines = run(mem_root, tag, 8, point, nth)
        assert lines[-1] == "paused"
        assert_index_agrees_with_files(mem_root, monkeypatch)
    assert run(mem_root, "k3", 3, kill=False)[-1] == "done"
    assert assert_index_agrees_with_files(mem_root, monkeypatch) > 0
    debris = [p.name for p in mem_root.rglob("*") if "tmp" in p.name or p.name.endswith("-journal")]
    assert debris == []


@pytest.mark.stress
@pytest.mark.timeout(300)
def test_writers_killed_at_a_seeded_random_schedule_never_leave_the_index_disagreeing(mem_root, monkeypatch):
    mem_root.mkdir(parents=True)
    rng = random.Random(0x1D3)
    for round_ in range(16):
        point = rng.choice(("reindex", "write", "rebuild"))
        nth = 1 if point == "rebuild" else rng.randint(1, 40)
        run(mem_root, f"s{round_}", 15, point, nth)
        assert_index_agrees_with_files(mem_root, monkeypatch)
