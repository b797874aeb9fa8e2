"""The write lease: acquisition, fencing, poison, proof-of-death reclaim, release, clear (spec §2.3).

Port-native tests: the lease's collaborators (global writer list, digest, clock) are injected,
and "other owners" are fabricated lock directories in the original Maestro's on-disk format.
"""

import os
import time

import pytest

from maestro.locks import lockdir as claimlib
from maestro.locks import identity
from maestro.locks import lease
from maestro.locks import lease_clear
from testing.waiting import release_once_waiting
from testing.pids import dead_pid

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)


class Recorder:
    def __init__(self):
        self.lines = []
        self.records = []

    def emit(self, line):
        self.lines.append(line)

    def log(self, *record):
        self.records.append(record)

    def text(self):
        return "\n".join(self.lines)


def make(git_dir, rec, writers=lambda: {}, **kw):
    kw.setdefault("heartbeat_interval", 0.0)
    return lease.WriteLease(git_dir, writers=writers, digest=lambda: "tree-v3:" + "a" * 40, emit=rec.emit,
                            log_dispatch=rec.log, session="sess-1", **kw)


def fabricate(git_dir, *, pid, start=None, job="unknown", generation=None, metadata=True, extra=None, poison=None,
              heartbeat_epoch=None, started_epoch=None):
    """An owner's lease as another process (or the original Maestro) would have written it."""
    path = os.path.join(git_dir, lease.LOCK_NAME)
    os.mkdir(path, 0o700)
    gen = claimlib.new_token()
    with open(os.path.join(path, "generation"), "w") as handle:
        handle.write(gen + "\n")
    token = claimlib.new_token()
    fields = {"token": token, "generation": generation or gen, "pid": str(pid),
              "process_start": start if start is not None else identity.process_start(pid),
              "job_id": job, "session_id": "other-session", "started_at": "2026-11-29T00:00:00Z",
              "started_epoch": str(started_epoch if started_epoch is not None else int(time.time())),
              "digest_before": "tree-v3:" + "b" * 40, **(extra or {})}
    if metadata:
        with open(os.path.join(path, "metadata"), "wb") as handle:
            handle.write(claimlib.format_record(fields))
    if poison:
        staged = dict(fields, quiescence="unconfirmed", unconfirmed_job=job, unconfirmed_reason=poison)
        with open(os.path.join(path, "metadata.new"), "wb") as handle:
            handle.write(claimlib.format_record(staged))
    if heartbeat_epoch is not None:
        with open(os.path.join(path, "heartbeat"), "wb") as handle:
            handle.write(claimlib.format_record({"token": token, "generation": gen, "epoch": str(heartbeat_epoch)}))
    return path


def test_fresh_acquire_publishes_metadata_in_the_original_format(git_dir):
    rec = Recorder()
    held = make(git_dir, rec)
    assert held.acquire() == 0
    lock = claimlib.LockDir(os.path.join(git_dir, lease.LOCK_NAME))
    meta = lock.read_record("metadata")
    assert list(meta) == ["token", "generation", "pid", "process_start", "job_id", "session_id", "started_at",
                          "started_epoch", "digest_before"]
    assert meta["generation"] == lock.read_text("generation").strip()
    assert claimlib.is_token(meta["token"]) and meta["pid"] == str(os.getpid())
    assert meta["job_id"] == "unknown" and meta["session_id"] == "sess-1"
    assert meta["digest_before"] == "tree-v3:" + "a" * 40
    assert meta["process_start"] == identity.process_start(os.getpid())
    assert os.stat(lock.path).st_mode & 0o777 == 0o700
    beat = lock.read_record("heartbeat")
    assert beat["token"] == meta["token"] and beat["generation"] == meta["generation"]


def test_second_acquirer_is_blocked_by_a_live_owner_without_waiting(git_dir):
    first, rec = make(git_dir, Recorder()), Recorder()
    assert first.acquire() == 0
    assert make(git_dir, rec).acquire() == 11
    assert "write dispatch blocked; held by job=unknown session=sess-1" in rec.text()
    assert "heartbeat is fresh" in rec.text()


def test_waiter_gets_the_lease_when_the_owner_releases(git_dir):
    first = make(git_dir, Recorder())
    assert first.acquire() == 0
    sleep, released = release_once_waiting(first.release)  # the owner releases while the waiter waits
    rec = Recorder()
    second = make(git_dir, rec, wait_budget=60, wait_poll=0.05, sleep=sleep)
    assert second.acquire() == 0
    released()
    assert rec.lines[0].startswith("MAESTRO_LOCK: waiting for the write lease held by job=unknown session=sess-1 — ")
    assert rec.lines[0].endswith("arrival order is not guaranteed")
    assert sum("waiting for the write lease" in line for line in rec.lines) == 1  # throttled to one per 30 s


def test_poisoned_lease_blocks_immediately_and_names_clear_lease(git_dir):
    fabricate(git_dir, pid=dead_pid(), job="task-abc-123", poison="deadline")
    rec = Recorder()
    start = time.monotonic()
    assert make(git_dir, rec, wait_budget=30).acquire() == 11
    assert time.monotonic() - start < 15  # far below the 30 s it would have waited, whatever the machine's load
    assert "quiescence is unconfirmed for job=task-abc-123 session=other-session reason=deadline" in rec.text()
    assert "loop --clear-lease" in rec.text()


@pytest.mark.parametrize("mutation", ["foreign-generation", "empty-token", "non-numeric-pid", "garbage-line"])
def test_malformed_metadata_fails_closed(git_dir, mutation):
    path = fabricate(git_dir, pid=os.getpid(),
                     generation=claimlib.new_token() if mutation == "foreign-generation" else None)
    meta = os.path.join(path, "metadata")
    with open(meta) as handle:
        text = handle.read()
    if mutation == "empty-token":
        text = "\n".join("token=" if line.startswith("token=") else line for line in text.splitlines()) + "\n"
    elif mutation == "non-numeric-pid":
        text = text.replace(f"pid={os.getpid()}", "pid=12ab")
    elif mutation == "garbage-line":
        text += "this is not a record\n"
    with open(meta, "w") as handle:
        handle.write(text)
    rec = Recorder()
    assert make(git_dir, rec).acquire() == 11
    assert "owner cannot be identified; failing closed" in rec.text()
    assert os.path.isdir(path)


def test_young_metadata_less_lease_is_an_initializing_owner(git_dir):
    fabricate(git_dir, pid=os.getpid(), metadata=False)
    rec = Recorder()
    assert make(git_dir, rec, init_grace=0.2).acquire() == 11
    assert "blocked by an initializing owner" in rec.text()


def test_lease_without_generation_is_unidentifiable(git_dir):
    os.mkdir(os.path.join(git_dir, lease.LOCK_NAME))
    rec = Recorder()
    assert make(git_dir, rec).acquire() == 11
    assert "generation identity is unavailable; failing closed" in rec.text()


def test_dead_owner_with_unknown_writer_state_is_retained(git_dir):
    fabricate(git_dir, pid=dead_pid(), job="task-abc-123")
    rec = Recorder()
    assert make(git_dir, rec, writers=lambda: None).acquire() == 11
    assert "job liveness could not be determined; write lock retained" in rec.text()


def test_dead_owner_whose_job_still_runs_is_retained(git_dir):
    fabricate(git_dir, pid=dead_pid(), job="task-abc-123")
    rec = Recorder()
    assert make(git_dir, rec, writers=lambda: {"task-abc-123": True}).acquire() == 11
    assert "orphaned job=task-abc-123 session=other-session is still running" in rec.text()


def test_dead_owner_without_job_id_is_retained_while_any_writer_runs(git_dir):
    fabricate(git_dir, pid=dead_pid())
    rec = Recorder()
    assert make(git_dir, rec, writers=lambda: {"task-zzz-111": True}).acquire() == 11
    assert "unidentified write-capable job is still running" in rec.text()


def test_dead_owner_is_reclaimed_once_its_job_is_finished(git_dir):
    path = fabricate(git_dir, pid=dead_pid(), job="task-abc-123")
    rec = Recorder()
    held = make(git_dir, rec, writers=lambda: {"task-other-1": False})
    assert held.acquire() == 0
    assert "MAESTRO_LOCK: broke stale write lock held by job=task-abc-123 session=other-session" in rec.text()
    assert "PROVENANCE: ADOPTED UNOBSERVED INTERVAL" in rec.text()
    assert rec.records[0] == ("orphan-adopted", "task-abc-123", "other-session", "tree-v3:" + "b" * 40,
                              "tree-v3:" + "a" * 40)
    assert claimlib.LockDir(path).read_record("metadata")["pid"] == str(os.getpid())
    assert not [n for n in os.listdir(git_dir) if ".reclaim." in n]


def test_reused_pid_counts_as_dead(git_dir):
    fabricate(git_dir, pid=os.getpid(), start="Thu Jan  1 00:00:00 1970")
    rec = Recorder()
    assert make(git_dir, rec).acquire() == 0
    assert "broke stale write lock" in rec.text()


def test_live_pid_with_unknown_start_fails_closed(git_dir):
    fabricate(git_dir, pid=os.getpid(), start="unavailable")
    rec = Recorder()
    assert make(git_dir, rec, wait_budget=30).acquire() == 11
    assert "(identity unconfirmed; failing closed)" in rec.text()


def test_release_retires_the_lock_and_logs_the_dispatch(git_dir):
    rec = Recorder()
    held = make(git_dir, rec)
    assert held.acquire() == 0
    assert held.publish_job("task-job-1")
    assert held.release() == 0
    assert not os.path.exists(os.path.join(git_dir, lease.LOCK_NAME))
    assert rec.records == [("dispatch", "task-job-1", "sess-1", "tree-v3:" + "a" * 40, "tree-v3:" + "a" * 40)]


def test_poison_keeps_the_lease_and_blocks_the_guard(git_dir):
    rec = Recorder()
    held = make(git_dir, rec)
    assert held.acquire() == 0 and held.guard()
    assert held.stage_poison("task-job-1", "deadline")
    assert not held.guard()
    assert held.promote_poison()
    assert held.release() == 11
    assert "write lease retained because quiescence was never confirmed (job=task-job-1" in rec.text()
    meta = claimlib.LockDir(os.path.join(git_dir, lease.LOCK_NAME)).read_record("metadata")
    assert meta["quiescence"] == "unconfirmed" and meta["unconfirmed_reason"] == "deadline"


def test_release_retains_the_lease_while_its_job_runs(git_dir):
    rec = Recorder()
    held = make(git_dir, rec, writers=lambda: {"task-job-1": True})
    assert held.acquire() == 0 and held.publish_job("task-job-1")
    assert held.release() == 11
    assert "is still running; a later dispatch will resolve it" in rec.text()


def test_release_refuses_an_unrecognized_entry(git_dir):
    rec = Recorder()
    held = make(git_dir, rec)
    assert held.acquire() == 0
    with open(os.path.join(git_dir, lease.LOCK_NAME, "surprise"), "w"):
        pass
    assert held.release() == 11
    assert "unrecognized entry (surprise)" in rec.text()


def test_a_successor_lease_is_never_released_by_the_old_owner(git_dir):
    rec = Recorder()
    held = make(git_dir, rec)
    assert held.acquire() == 0
    claimlib.LockDir(os.path.join(git_dir, lease.LOCK_NAME)).retire()
    successor = make(git_dir, Recorder())
    assert successor.acquire() == 0
    assert held.release() == 11 and not held.guard()
    assert os.path.isdir(os.path.join(git_dir, lease.LOCK_NAME))


# -- clear ---------------------------------------------------------------------------------------

def clear(git_dir, rec, writers=lambda: {}, **kw):
    return lease_clear.clear(git_dir, writers=writers, emit=rec.emit, **kw)


def test_clear_absent_lease_is_success(git_dir):
    rec = Recorder()
    assert clear(git_dir, rec) == 0
    assert "there is no write lease to clear" in rec.text()


def test_clear_refuses_a_healthy_lease(git_dir):
    make(git_dir, Recorder()).acquire()
    rec = Recorder()
    assert clear(git_dir, rec) == 11
    assert "refusing to clear — write lease is healthy" in rec.text()


def test_clear_removes_a_poisoned_lease_when_no_writer_runs(git_dir):
    path = fabricate(git_dir, pid=dead_pid(), job="task-abc-123", poison="status-lost")
    rec = Recorder()
    assert clear(git_dir, rec) == 0
    assert "clearing poisoned write lease (job=task-abc-123 reason=status-lost" in rec.text()
    assert not os.path.exists(path)


def test_clear_refuses_while_a_write_job_runs(git_dir):
    fabricate(git_dir, pid=dead_pid(), job="task-abc-123", poison="deadline")
    rec = Recorder()
    assert clear(git_dir, rec, writers=lambda: {"task-abc-123": True}) == 11
    assert "still running: task-abc-123" in rec.text()
    assert clear(git_dir, Recorder(), writers=lambda: None) == 11


def test_clear_needs_a_stale_heartbeat_and_a_dead_owner(git_dir):
    old = int(time.time()) - 1000
    fabricate(git_dir, pid=os.getpid(), started_epoch=old, heartbeat_epoch=old)
    rec = Recorder()
    assert clear(git_dir, rec, heartbeat_stale=90) == 11
    assert "heartbeat is stale but the recorded owner process is still alive" in rec.text()


def test_clear_refuses_a_live_owner_whose_identity_is_unconfirmed(git_dir):
    """pid alive but its start time unreadable: the writer may be the recorded one, so it is not dead."""
    old = int(time.time()) - 1000
    path = fabricate(git_dir, pid=os.getpid(), start="unavailable", started_epoch=old, heartbeat_epoch=old)
    assert identity.owner_state(os.getpid(), "unavailable") == identity.ALIVE_UNCONFIRMED
    rec = Recorder()
    assert clear(git_dir, rec, heartbeat_stale=90) == 11
    assert "still alive or its identity is unconfirmed" in rec.text()
    assert os.path.isdir(path) and claimlib.LockDir(path).read_record("metadata")["pid"] == str(os.getpid())


@pytest.mark.parametrize("age, rc", [(89, 11), (90, 11), (91, 0)])
def test_clear_heartbeat_staleness_boundary(git_dir, age, rc):
    """A heartbeat exactly `heartbeat_stale` seconds old is still healthy: only an older one is stale."""
    now = 2_000_000_000
    path = fabricate(git_dir, pid=dead_pid(), started_epoch=now - 5000, heartbeat_epoch=now - age)
    rec = Recorder()
    assert clear(git_dir, rec, heartbeat_stale=90, clock=lambda: now) == rc, rec.text()
    assert os.path.exists(path) == (rc == 11)
    if rc == 11:
        assert "write lease is healthy and not this command's to clear" in rec.text()
        assert rec.text().endswith(f"heartbeat {age}s old")
    else:
        assert f"last sign of life {age}s ago" in rec.text()


def test_clear_removes_a_stale_dead_owners_lease(git_dir):
    old = int(time.time()) - 1000
    path = fabricate(git_dir, pid=dead_pid(), started_epoch=old, heartbeat_epoch=old)
    rec = Recorder()
    assert clear(git_dir, rec, heartbeat_stale=90) == 0
    assert "heartbeat went stale" in rec.text() and not os.path.exists(path)


def test_clear_refuses_a_young_metadata_less_lease_but_clears_an_old_one(git_dir):
    path = fabricate(git_dir, pid=os.getpid(), metadata=False)
    assert clear(git_dir, Recorder(), init_grace=60) == 11
    rec = Recorder()
    os.utime(path, (time.time() - 120, time.time() - 120))
    assert clear(git_dir, rec, init_grace=60) == 0
    assert "structurally invalid orphan" in rec.text()


def test_clear_removes_an_old_generation_less_lock_left_by_a_crashed_creator(git_dir):
    path = os.path.join(git_dir, lease.LOCK_NAME)
    os.mkdir(path)
    assert clear(git_dir, Recorder(), init_grace=60) == 11  # young: its creator may still be writing
    os.utime(path, (time.time() - 120, time.time() - 120))
    assert clear(git_dir, Recorder(), init_grace=60, writers=lambda: {"task-a-1": True}) == 11
    rec = Recorder()
    assert clear(git_dir, rec, init_grace=60) == 0
    assert "structurally invalid orphan write lease (no generation" in rec.text()
    assert not os.path.exists(path)


def test_a_new_lease_appears_with_its_generation_and_metadata_at_once(git_dir, monkeypatch):
    """Creation is assembled aside and renamed into place: no half-made lock is ever visible."""
    seen = []
    real_rename = os.rename

    def spy(src, dst):
        seen.append(sorted(os.listdir(src)))
        return real_rename(src, dst)

    monkeypatch.setattr(os, "rename", spy)
    assert make(git_dir, Recorder()).acquire() == 0
    assert seen[0] == ["generation", "metadata"]
