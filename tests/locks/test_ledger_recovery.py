"""Every lock recovery consults maestro's job ledger (issue 12 §1.2), and one judgement of a process.

The companion's job table can lose a job whose worker still writes: the write lease's reclaim, the job
lock's reclaim, `--clear-lease` and `--clear-job-lock` all ask job_ledger.live_worker first. A zombie has
exited — unless other threads of it still run — and the job lock and the statusline judge it as `status` does.
"""

import os
import subprocess
import sys
import time

import pytest

from maestro.commands import statusline
from maestro.locks import identity, joblock, lease, lease_clear
from maestro.locks import lockdir as claimlib
from maestro.locks.job_ledger import KEEP, JobLedger, live_worker
from test_lease import fabricate
from testing.pids import dead_pid
from testing.recording import Rec

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)

MY_START = identity.process_start(os.getpid())


@pytest.fixture
def zombie():
    """A real zombie: exited, not yet reaped (WNOWAIT), so `kill -0` still finds it."""
    proc = subprocess.Popen(["true"])
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    yield proc.pid
    proc.wait()


def record(git_dir, job, *, kind="write", state="running", pid=None, start=None, reason="", epoch=1000):
    entry = {"id": job, "kind": kind, "state": state, "reason": reason, "worker_pid": pid or os.getpid(),
             "worker_start": MY_START if start is None else start, "launched_epoch": epoch,
             "log_file": f"/logs/{job}.log", "data_dir": "/data"}
    assert JobLedger(git_dir).write(entry)
    return entry


def fabricate_lease(git_dir, *, pid, start=None, old=False):
    """A lease another process holds (test_lease.fabricate), started and last beating now, or 1,000 s ago."""
    epoch = int(time.time()) - (1000 if old else 0)
    return fabricate(git_dir, pid=pid, start=start, job="task-old-1", started_epoch=epoch, heartbeat_epoch=epoch)


def fabricate_joblock(git_dir, *, pid, job="task-old-1"):
    path = os.path.join(git_dir, joblock.LOCK_NAME)
    os.mkdir(path, 0o700)
    gen = claimlib.new_token()
    with open(os.path.join(path, "generation"), "w") as handle:
        handle.write(gen + "\n")
    fields = {"token": claimlib.new_token(), "generation": gen, "pid": str(pid), "session": "other",
              "class": "write", "start": "1", "process_start": identity.process_start(pid), "job": job}
    with open(os.path.join(path, "metadata"), "wb") as handle:
        handle.write(claimlib.format_record(fields))
    return path


def new_lease(git_dir, rec, **kw):
    return lease.WriteLease(git_dir, writers=lambda: {}, digest=lambda: "tree-v3:" + "a" * 40, emit=rec,
                            session="me", heartbeat_interval=0.0, **kw)


# -- the one ledger check ------------------------------------------------------------------------------------
@pytest.mark.parametrize("changes, found", [
    ({}, True),
    ({"state": "poisoned"}, True),
    ({"state": "launched"}, True),
    ({"state": "completed"}, False),
    ({"state": "poisoned", "reason": "worker-dead"}, False),
    ({"kind": "read"}, False),
    ({"start": ""}, False),  # B4: no confirmed start — a reused pid must not block recovery forever
    ({"start": "unavailable"}, False),
    ({"start": "Thu Jan  1 00:00:00 1970"}, False),  # the pid now belongs to another process
])
def test_live_worker_is_an_unfinished_write_job_whose_confirmed_worker_runs(git_dir, changes, found):
    record(git_dir, "task-live-1", **changes)
    assert (live_worker(git_dir) is not None) == found
    assert live_worker(git_dir, write_only=False) is not None or not found


def test_a_zombie_worker_is_not_live(git_dir, zombie):
    record(git_dir, "task-z-1", pid=zombie, start=identity.process_start(zombie))
    assert live_worker(git_dir) is None


def test_prune_never_drops_an_unfinished_entry(git_dir):
    unfinished = ["launched", "queued", "running", "poisoned"]
    for index, state in enumerate(unfinished + ["completed"]):
        record(git_dir, f"task-old-{index}", state=state, epoch=index)
    for index in range(KEEP):
        record(git_dir, f"task-new-{index}", state="completed", epoch=1000 + index)
    JobLedger(git_dir).prune()
    kept = {entry["id"]: entry["state"] for entry in JobLedger(git_dir).entries()}
    assert [kept.get(f"task-old-{index}") for index in range(5)] == unfinished + [None]
    assert len(kept) == KEEP + len(unfinished)


# -- the write lease ----------------------------------------------------------------------------------------
def test_a_dead_owners_lease_is_not_reclaimed_while_a_ledger_write_worker_runs(git_dir):
    path = fabricate_lease(git_dir, pid=dead_pid())
    record(git_dir, "task-lost-1")
    rec = Rec()
    assert new_lease(git_dir, rec).acquire() == 11
    assert "write job=task-lost-1" in rec.text() and f"pid {os.getpid()}" in rec.text()
    assert JobLedger(git_dir).path("task-lost-1") in rec.text()
    assert claimlib.LockDir(path).read_record("metadata")["pid"] != str(os.getpid())
    JobLedger(git_dir).update("task-lost-1", state="completed")
    assert new_lease(git_dir, Rec()).acquire() == 0


def test_with_a_wait_budget_the_reclaim_waits_for_the_ledger_worker_to_end(git_dir):
    fabricate_lease(git_dir, pid=dead_pid())
    record(git_dir, "task-lost-1")
    naps = []

    def nap(seconds):
        naps.append(seconds)
        JobLedger(git_dir).update("task-lost-1", state="completed")  # its worker ended meanwhile

    rec = Rec()
    held = new_lease(git_dir, rec, wait_budget=60.0, wait_poll=1.0, sleep=nap)
    assert held.acquire() == 0 and len(naps) == 1
    assert "broke stale write lock held by job=task-old-1" in rec.text()


def test_when_the_wait_budget_runs_out_the_message_names_the_ledger_job(git_dir):
    fabricate_lease(git_dir, pid=dead_pid())
    record(git_dir, "task-lost-1")
    clock = [1000.0]
    rec = Rec()
    held = new_lease(git_dir, rec, wait_budget=5.0, wait_poll=5.0, clock=lambda: clock[0],
                     sleep=lambda seconds: clock.__setitem__(0, clock[0] + seconds))
    assert held.acquire() == 11
    assert "write dispatch blocked; held by job=task-old-1" in rec.lines[-1]
    assert "lease retained because maestro's job ledger shows write job=task-lost-1" in rec.lines[-1]


def test_clear_lease_refusal_names_the_ledger_entry_and_skips_one_without_a_start(git_dir):
    fabricate_lease(git_dir, pid=dead_pid(), old=True)
    record(git_dir, "task-lost-1")
    rec = Rec()
    assert lease_clear.clear(git_dir, writers=lambda: {}, emit=rec, heartbeat_stale=90) == 11
    assert "write job=task-lost-1" in rec.text() and JobLedger(git_dir).path("task-lost-1") in rec.text()
    record(git_dir, "task-lost-1", start="")  # an old entry: its live pid may be anyone's now
    rec = Rec()
    assert lease_clear.clear(git_dir, writers=lambda: {}, emit=rec, heartbeat_stale=90) == 0, rec.text()


# -- the companion job lock ---------------------------------------------------------------------------------
def test_a_dead_job_lock_holder_is_not_replaced_while_a_ledger_worker_runs(git_dir):
    fabricate_joblock(git_dir, pid=dead_pid())
    record(git_dir, "task-read-1", kind="read")  # any companion job: the lock serializes reads too
    rec = Rec()
    held = joblock.JobLock(git_dir, "read", job_status=lambda job: "terminal", emit=rec, session="me")
    assert held.acquire() == 11 and "read job=task-read-1" in rec.text()
    rec = Rec()
    assert joblock.clear(git_dir, job_status=lambda job: "terminal", writers=lambda: {}, emit=rec) == 11
    assert "refusing to clear" in rec.text() and JobLedger(git_dir).path("task-read-1") in rec.text()
    JobLedger(git_dir).update("task-read-1", state="completed")
    assert joblock.JobLock(git_dir, "read", job_status=lambda job: "terminal", emit=Rec()).acquire() == 0


# -- one judgement of a process -----------------------------------------------------------------------------
def test_a_zombie_holder_is_gone_for_the_job_lock_and_the_statusline_as_for_status(git_dir, zombie):
    assert identity.pid_alive(zombie)  # kill -0 still finds it
    assert identity.owner_state(zombie, identity.process_start(zombie)) == identity.DEAD
    assert not joblock.holder_alive({"pid": str(zombie), "process_start": ""})
    assert not joblock.holder_alive({"pid": str(zombie), "process_start": identity.process_start(zombie)})
    assert not statusline.owner_alive({"pid": str(zombie)})
    fabricate_lease(git_dir, pid=zombie)
    assert statusline.lease_part(git_dir, time.time())[0].startswith("lease ORPHANED")


@pytest.mark.parametrize("pid", ["", "0", "-5", "abc", "²", "9" * 30, None, [1], True])
def test_a_record_pid_that_names_no_process_is_gone(pid):
    assert identity.owner_gone(pid, "x")
    assert not statusline.owner_alive({"pid": pid})


def test_the_statusline_judges_a_reused_pid_as_status_does(git_dir):
    fabricate_lease(git_dir, pid=os.getpid(), start="Thu Jan  1 00:00:00 1970")
    assert statusline.lease_part(git_dir, time.time())[0].startswith("lease ORPHANED")


@pytest.mark.parametrize("threads, state", [(b"1", identity.DEAD), (b"3", identity.ALIVE_CONFIRMED)])
def test_a_zombie_leader_whose_other_threads_run_has_not_exited(monkeypatch, threads, state):
    """/proc shows `Z` for a process whose main thread exited while its other threads still run (and may write)."""
    real = identity.read_proc
    me = os.getpid()

    def fake(name):
        if name == f"{me}/stat":
            stat = real(name)
            at = stat.rindex(b")") + 2
            return stat[:at] + b"Z" + stat[at + 1 :]
        if name == f"{me}/status":
            return b"Name:\tpython\nState:\tZ (zombie)\nThreads:\t" + threads + b"\n"
        return real(name)

    monkeypatch.setattr(identity, "read_proc", fake)
    assert identity.owner_state(me, MY_START) == state
    assert identity.exited(me) == (state == identity.DEAD)


@pytest.mark.source_only
def test_the_statusline_judging_a_held_lease_imports_no_subprocess_re_or_json(git_dir):
    fabricate_lease(git_dir, pid=os.getpid())
    code = ("import sys, time; sys.path.insert(0, %r); from maestro.commands import statusline; "
            "print(statusline.lease_part(%r, time.time())[0]); "
            "print(sorted(m for m in ('json', 'subprocess', 're', 'shutil', 'argparse') if m in sys.modules))"
            % (os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), git_dir))
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=30)
    lines = done.stdout.splitlines()
    assert lines[-1] == "[]" and not lines[0].startswith("lease ORPHANED"), done.stdout + done.stderr
