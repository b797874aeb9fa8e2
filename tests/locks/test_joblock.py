"""The companion job lock: serialization, dead-holder reclaim only after a terminal job, clear."""

import os

import pytest

from maestro.locks import lockdir as claimlib
from maestro.locks import identity
from maestro.locks import joblock
from testing.waiting import release_once_waiting
from testing.pids import dead_pid
from testing.recording import Rec

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)


def fabricate(git_dir, *, pid, job=None, job_class="write", start=None, malformed=False):
    path = os.path.join(git_dir, joblock.LOCK_NAME)
    os.mkdir(path, 0o700)
    gen = claimlib.new_token()
    with open(os.path.join(path, "generation"), "w") as handle:
        handle.write(gen + "\n")
    fields = {"token": claimlib.new_token(), "generation": gen, "pid": str(pid), "session": "other",
              "class": "bogus" if malformed else job_class, "start": "1"}
    if start is not None:
        fields["process_start"] = start
    if job:
        fields["job"] = job
    with open(os.path.join(path, "metadata"), "wb") as handle:
        handle.write(claimlib.format_record(fields))
    return path


def lock(tmp_path, status=lambda job: "terminal", **kw):
    rec = Rec()
    return joblock.JobLock(str(tmp_path), "read", job_status=status, emit=rec, session="me", **kw), rec


def test_acquire_and_release_leave_nothing_behind(tmp_path):
    held, _ = lock(tmp_path)
    assert held.acquire() == 0
    meta = claimlib.LockDir(os.path.join(tmp_path, joblock.LOCK_NAME)).read_record("metadata")
    assert meta["class"] == "read" and meta["pid"] == str(os.getpid()) and meta["session"] == "me"
    assert held.publish_job("task-a-1")
    assert held.release() == 0
    assert not os.path.exists(os.path.join(tmp_path, joblock.LOCK_NAME))


def test_live_holder_blocks_then_releases_to_a_waiter(tmp_path):
    first, _ = lock(tmp_path)
    assert first.acquire() == 0
    sleep, released = release_once_waiting(first.release)  # the owner releases while the waiter waits
    second, rec = lock(tmp_path, wait_budget=60, wait_poll=0.05, sleep=sleep)
    assert second.acquire() == 0
    released()
    assert rec.lines[0].startswith("MAESTRO_JOB_LOCK: waiting for class=read job=unknown session=me — ")


def test_busy_without_wait_budget_is_blocked_with_the_recovery_command(tmp_path):
    first, _ = lock(tmp_path)
    assert first.acquire() == 0
    second, rec = lock(tmp_path)
    assert second.acquire() == 11
    assert "loop --clear-job-lock" in rec.text()


def test_dead_holder_is_reclaimed_only_when_its_job_is_terminal(tmp_path):
    fabricate(str(tmp_path), pid=dead_pid(), job="task-a-1")
    running, rec = lock(tmp_path, status=lambda job: "running")
    assert running.acquire() == 11
    unknown, rec = lock(tmp_path, status=lambda job: None)
    assert unknown.acquire() == 11 and "cannot be checked" in rec.text()
    finished, rec = lock(tmp_path)
    assert finished.acquire() == 0 and "reclaimed the job lock of a dead holder" in rec.text()


def test_dead_holder_without_job_is_reclaimed_only_when_nothing_runs(tmp_path):
    fabricate(str(tmp_path), pid=dead_pid())
    unknown, rec = lock(tmp_path)
    assert unknown.acquire() == 11 and "running jobs cannot be listed" in rec.text()
    busy, rec = lock(tmp_path, writers=lambda: {"task-z-9": True})
    assert busy.acquire() == 11 and "a job it may have launched is still running" in rec.text()
    idle, rec = lock(tmp_path, writers=lambda: {})
    assert idle.acquire() == 0 and "reclaimed the job lock of a dead holder" in rec.text()


def test_dead_holder_without_job_waits_for_a_running_read_job_too(tmp_path):
    """Any running job may be the one it launched, read or write: the lock is not reclaimed under it."""
    fabricate(str(tmp_path), pid=dead_pid())
    busy, rec = lock(tmp_path, writers=lambda: {"task-r-1": False})
    assert busy.acquire() == 11 and "a job it may have launched is still running" in rec.text()
    assert os.path.isdir(os.path.join(tmp_path, joblock.LOCK_NAME))
    assert joblock.clear(str(tmp_path), job_status=lambda j: None, writers=lambda: {"task-r-1": False},
                         emit=Rec()) == 11


def test_live_holder_whose_identity_is_unconfirmed_is_alive(tmp_path):
    """pid alive but its start time unreadable: it may be the holder, so its lock is neither reclaimed nor cleared."""
    path = fabricate(str(tmp_path), pid=os.getpid(), job="task-a-1", start="unavailable")
    assert identity.owner_state(os.getpid(), "unavailable") == identity.ALIVE_UNCONFIRMED
    assert joblock.holder_alive(claimlib.LockDir(path).read_record("metadata"))
    held, rec = lock(tmp_path)  # its job is terminal: only the holder's liveness keeps the lock
    assert held.acquire() == 11 and "companion job lock is busy (class=write job=task-a-1" in rec.text()
    rec = Rec()
    assert joblock.clear(str(tmp_path), job_status=lambda j: "terminal", writers=lambda: {}, emit=rec) == 11
    assert f"holder pid={os.getpid()} is alive" in rec.text() and os.path.isdir(path)


def test_reused_pid_is_not_a_live_holder(tmp_path):
    fabricate(str(tmp_path), pid=os.getpid(), job="task-a-1", start="Thu Jan  1 00:00:00 1970")
    held, _ = lock(tmp_path)
    assert held.acquire() == 0


def test_malformed_metadata_fails_closed(tmp_path):
    fabricate(str(tmp_path), pid=dead_pid(), job="task-a-1", malformed=True)
    held, rec = lock(tmp_path)
    assert held.acquire() == 11 and "failing closed" in rec.text()


def test_release_refuses_when_the_token_changed(tmp_path):
    held, rec = lock(tmp_path)
    assert held.acquire() == 0
    path = os.path.join(tmp_path, joblock.LOCK_NAME, "metadata")
    with open(path) as handle:
        text = handle.read()
    with open(path, "w") as handle:
        handle.write(text.replace(held.token, claimlib.new_token()))
    assert held.release() == 11 and "release refused" in rec.text()
    assert os.path.isdir(os.path.join(tmp_path, joblock.LOCK_NAME))


def test_clear_rules(tmp_path):
    rec = Rec()
    assert joblock.clear(str(tmp_path), job_status=lambda j: "terminal", writers=lambda: {}, emit=rec) == 0
    assert "no companion job lock to clear" in rec.text()
    path = fabricate(str(tmp_path), pid=os.getpid(), job="task-a-1", start=identity.process_start(os.getpid()))
    assert joblock.clear(str(tmp_path), job_status=lambda j: "terminal", writers=lambda: {}, emit=rec) == 11
    claimlib.LockDir(path).retire()
    fabricate(str(tmp_path), pid=dead_pid(), job="task-a-1")
    assert joblock.clear(str(tmp_path), job_status=lambda j: "running", writers=lambda: {}, emit=rec) == 11
    assert joblock.clear(str(tmp_path), job_status=lambda j: None, writers=lambda: {"task-b-2": True}, emit=rec) == 11
    assert joblock.clear(str(tmp_path), job_status=lambda j: None, writers=lambda: None, emit=rec) == 11
    rec = Rec()
    assert joblock.clear(str(tmp_path), job_status=lambda j: "terminal", writers=lambda: {}, emit=rec) == 0
    assert rec.lines[-1] == "MAESTRO_JOB_LOCK: cleared companion job lock (class=write job=task-a-1 session=other)"
