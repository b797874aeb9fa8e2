"""Lease rules that planted bugs (bench/mutants.py) showed no test held: a heartbeat counts only for
the interval that wrote it, a clear never retires a successor's lease, and a record that repeats a
key is malformed (fail closed), not read as its last value.
"""

import os
import time

import pytest

from maestro.locks import lease
from maestro.locks import lease_clear
from maestro.locks import lockdir as claimlib

from test_lease import Recorder, fabricate, make
from testing.pids import dead_pid

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)


def test_a_heartbeat_written_by_another_interval_does_not_keep_a_dead_owners_lease_alive(git_dir):
    now = 2_000_000_000
    path = fabricate(git_dir, pid=dead_pid(), started_epoch=now - 5000)
    generation = claimlib.LockDir(path).read_text("generation").strip()
    with open(os.path.join(path, "heartbeat"), "wb") as handle:  # fresh, but not this owner's token
        handle.write(claimlib.format_record({"token": claimlib.new_token(), "generation": generation,
                                             "epoch": str(now - 5)}))
    rec = Recorder()
    assert lease_clear.clear(git_dir, writers=lambda: {}, emit=rec.emit, heartbeat_stale=90,
                             clock=lambda: now) == 0, rec.text()
    assert "last sign of life 5000s ago" in rec.text()
    assert not os.path.exists(path)


def test_a_clear_never_retires_a_successor_that_took_the_lease_while_it_was_deciding(git_dir):
    old = int(time.time()) - 1000
    path = fabricate(git_dir, pid=dead_pid(), started_epoch=old, heartbeat_epoch=old)
    successor = {}

    def writers():
        # Between judging the old lease and retiring it, the old one goes and a live owner takes over.
        claimlib.LockDir(path).retire()
        fabricate(git_dir, pid=os.getpid())
        successor["generation"] = claimlib.LockDir(path).read_text("generation").strip()
        return {}

    rec = Recorder()
    assert lease_clear.clear(git_dir, writers=writers, emit=rec.emit, heartbeat_stale=90) == 11
    assert "a successor lease now holds" in rec.text()
    assert claimlib.LockDir(path).read_text("generation").strip() == successor["generation"]


def test_a_lease_record_that_repeats_a_key_is_malformed_and_blocks(git_dir):
    path = fabricate(git_dir, pid=dead_pid(), started_epoch=int(time.time()) - 1000)
    with open(os.path.join(path, "metadata"), "ab") as handle:
        handle.write(b"job_id=task-second-1\n")  # job_id twice: which one is the owner's job?
    assert claimlib.parse_record("job_id=a\njob_id=b\n") is None
    rec = Recorder()
    assert make(git_dir, rec).acquire() == 11
    assert "metadata is malformed" in rec.text() and "failing closed" in rec.text()
    assert os.path.isdir(path) and os.path.exists(os.path.join(path, "metadata"))
    assert lease.LOCK_NAME in os.listdir(git_dir)
