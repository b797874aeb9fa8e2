"""maestro's job ledger and the per-poll worker judge (maestro/locks/job_ledger.py, issue 12 §1.2–3)."""

import os
import stat
import subprocess

import pytest

from maestro.locks import identity
from maestro.locks.job_ledger import JobJournal, JobLedger, worker_state

pytestmark = pytest.mark.in_process

JOB = "task-mx00test-abc123"


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def journal(tmp_path, starts=None, stall=120.0, clock=None, gone=()):
    """A journal whose `starts` override process start times and whose `gone` pids read as exited."""
    git_dir = tmp_path / "git"
    git_dir.mkdir(exist_ok=True)
    said = []
    starts = starts if starts is not None else {}
    made = JobJournal(str(git_dir), root=str(tmp_path), data_dir=str(tmp_path / "data"), emit=said.append,
                      queued_stall=stall, clock=clock or Clock(),
                      process_start=lambda pid: starts.get(pid) or identity.process_start(pid),
                      alive=lambda pid: pid not in gone and identity.running(pid))
    made.launched(JOB, write=True)
    return made, said


def test_a_launch_is_recorded_privately_with_what_status_and_recovery_need(tmp_path):
    made, said = journal(tmp_path)
    entry = JobLedger(str(tmp_path / "git")).read(JOB)
    assert entry["kind"] == "write" and entry["state"] == "launched" and entry["data_dir"] == str(tmp_path / "data")
    assert entry["launched_at"].endswith("Z") and entry["root"] == str(tmp_path) and said == []
    folder = tmp_path / "git" / "maestro-jobs"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / f"{JOB}.json").stat().st_mode) == 0o600
    assert made.observe(JOB, "running", os.getpid(), "/x.log") == ""
    entry = JobLedger(str(tmp_path / "git")).read(JOB)
    assert entry["worker_pid"] == os.getpid() and entry["worker_start"] == identity.process_start(os.getpid())
    assert entry["log_file"] == "/x.log" and worker_state(entry) == identity.ALIVE_CONFIRMED


def test_a_reused_pid_is_a_dead_worker_on_the_second_poll(tmp_path):
    starts = {}
    made, said = journal(tmp_path, starts)
    pid = os.getpid()
    assert made.observe(JOB, "running", pid) == ""
    starts[pid] = "Mon Jan  1 00:00:00 2001"  # the same pid now names a process started at another time
    assert made.observe(JOB, "running", pid) == ""  # one sighting could race the job's own end
    assert made.observe(JOB, "running", pid) == "worker-dead"
    assert any("died" in line and f"pid {pid}" in line for line in said)
    entry = JobLedger(str(tmp_path / "git")).read(JOB)
    assert entry["state"] == "abandoned" and entry["reason"] == "worker-dead"


def test_a_worker_gone_once_then_seen_again_is_not_dead(tmp_path):
    gone = set()
    made, _ = journal(tmp_path, gone=gone)
    pid = os.getpid()
    assert made.observe(JOB, "running", pid) == ""
    gone.add(pid)
    assert made.observe(JOB, "running", pid) == ""  # gone once
    gone.discard(pid)
    assert made.observe(JOB, "running", pid) == ""  # the same worker alive again: the count starts over
    gone.add(pid)
    assert made.observe(JOB, "running", pid) == ""  # so one more miss is again only the first


def test_a_live_worker_whose_start_time_cannot_be_read_is_not_dead(tmp_path):
    made, said = journal(tmp_path, {os.getpid(): identity.UNAVAILABLE})
    assert [made.observe(JOB, "running", os.getpid()) for _ in range(4)] == [""] * 4 and said == []
    entry = JobLedger(str(tmp_path / "git")).read(JOB)
    assert entry["worker_pid"] is None and entry["worker_start"] == ""  # an unconfirmed pid is never stored


def test_a_worker_first_seen_gone_is_dead_but_its_pid_is_never_stored(tmp_path):
    pid = os.getpid()  # what the pid will name later, once it is reused
    made, _ = journal(tmp_path, gone={pid})
    assert [made.observe(JOB, "running", pid) for _ in range(2)] == ["", "worker-dead"]
    entry = JobLedger(str(tmp_path / "git")).read(JOB)
    assert entry["reason"] == "worker-dead" and entry["worker_pid"] is None and worker_state(entry) == ""


def test_clear_lease_is_not_refused_forever_by_a_worker_dead_entry_whose_pid_was_reused(tmp_path):
    from test_lease_clear_races import Lines, fabricate
    from testing.pids import dead_pid

    from maestro.locks import lease_clear

    git_dir = tmp_path / "repo" / ".git"
    git_dir.mkdir(parents=True)
    fabricate(str(git_dir), pid=dead_pid(), poison_job=JOB)
    # as the ledger of an earlier version left it: the dead worker's pid, no start time, and that pid now reused
    JobLedger(str(git_dir)).write({"id": JOB, "kind": "write", "state": "poisoned", "reason": "worker-dead",
                                   "worker_pid": os.getpid(), "worker_start": ""})
    lines = Lines()
    assert lease_clear.clear(str(git_dir), writers=lambda: {}, emit=lines.emit, sleep=lambda s: None) == 0, lines


def test_an_exited_unreaped_worker_counts_as_dead(tmp_path):
    proc = subprocess.Popen(["sleep", "0"])
    assert made_dead_after_exit(tmp_path, proc)


def made_dead_after_exit(tmp_path, proc):
    made, _ = journal(tmp_path)
    import time

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # exited but not reaped: a zombie, which `kill -0` still finds
        with open(f"/proc/{proc.pid}/stat") as handle:
            if handle.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        time.sleep(0.01)
    try:
        return [made.observe(JOB, "running", proc.pid) for _ in range(2)] == ["", "worker-dead"]
    finally:
        proc.wait()


def test_a_job_queued_past_the_stall_limit_is_a_stall_on_the_injected_clock(tmp_path):
    clock = Clock()
    made, said = journal(tmp_path, stall=120.0, clock=clock)
    assert made.observe(JOB, "queued", None) == ""
    clock.now += 119.9
    assert made.observe(JOB, "queued", None) == ""
    clock.now += 0.2
    assert made.observe(JOB, "queued", None) == "queued-stall"
    assert any("still queued after 120s" in line for line in said)


@pytest.mark.parametrize("phase, progressed", [("running", False), ("queued", True)],
                         ids=["phase-moved-on", "log-grows"])
def test_a_job_whose_status_still_says_queued_but_runs_is_no_stall(tmp_path, phase, progressed):
    """The launcher may write `queued` after its worker's `running`; progress patches never fix the status."""
    clock = Clock()
    made, said = journal(tmp_path, stall=10.0, clock=clock)
    for _ in range(3):
        assert made.observe(JOB, "queued", None, phase=phase, progressed=progressed) == ""
        clock.now += 20
    assert said == []


def test_running_resets_the_queue_clock(tmp_path):
    clock = Clock()
    made, _ = journal(tmp_path, stall=10.0, clock=clock)
    made.observe(JOB, "queued", None)
    clock.now += 9
    made.observe(JOB, "running", None)
    clock.now += 9
    assert made.observe(JOB, "queued", None) == ""


def test_a_symlinked_ledger_directory_is_never_written_through(tmp_path):
    git_dir, elsewhere = tmp_path / "git", tmp_path / "elsewhere"
    git_dir.mkdir()
    elsewhere.mkdir()
    (git_dir / "maestro-jobs").symlink_to(elsewhere)
    said = []
    JobJournal(str(git_dir), root=str(tmp_path), data_dir="d", emit=said.append, queued_stall=1).launched(
        JOB, write=False)
    assert list(elsewhere.iterdir()) == [] and any("could not record" in line for line in said)


@pytest.mark.parametrize("content", ["", "{", "[]", '{"id": "task-other"}'])
def test_a_damaged_or_foreign_entry_reads_as_none(tmp_path, content):
    ledger = JobLedger(str(tmp_path))
    os.makedirs(ledger.dir)
    with open(ledger.path(JOB), "w") as handle:
        handle.write(content)
    assert ledger.read(JOB) is None and ledger.entries() == []
