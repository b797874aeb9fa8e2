"""`loop --clear-lease` when things go wrong (issue 17, items 5 and 6): two clears at once under a big companion
status, a writer list that fails for a moment, and refusals that name the writer they protect.

The races are made deterministic by the fake companion's `status_all_barrier`: each clear's `status --all --json`
waits until both have asked, so both are provably past their reading of the lease before either retires it.
"""

import os
import subprocess
import sys
import time

import pytest
from testing.processes import finish, run, start

from maestro.locks import lease_clear
from maestro.locks import lockdir as claimlib
from maestro.locks.lease_state import LOCK_NAME
from testing.pids import dead_pid

pytestmark = pytest.mark.timeout(90)

STATUS_BYTES = 256 * 1024


def plan(repo):
    path = repo.parent / "plan.md"
    path.write_text("Set VALUE to 2.\n")
    return path


def lock_entries(repo):
    return sorted(name for name in os.listdir(repo / ".git") if name.startswith(LOCK_NAME))


def poisoned_lease_with_a_dead_owner(repo, fake):
    """A real poisoned lease: a watchdog whose launch printed no job id, now exited. Its job is already
    finished (turn_seconds 0), so no write-capable job is left running however slow the machine is."""
    fake.set(launch_output="Started.", turn_seconds=0)
    result = run("watchdog", "--file", str(plan(repo)), "30", "1", cwd=repo)
    assert result.rc == 125, result.out + result.err
    assert lock_entries(repo) == [LOCK_NAME]


def test_the_big_status_document_is_really_big(repo, fake):
    fake.set(status_all_pad_bytes=STATUS_BYTES)
    listing = subprocess.run([sys.executable, os.environ["MAESTRO_COMPANION"], "status", "--all", "--json"],
                             cwd=repo, capture_output=True, check=True)
    assert len(listing.stdout) >= STATUS_BYTES


def test_two_concurrent_clears_under_a_256_kib_status_clear_exactly_once(repo, fake):
    poisoned_lease_with_a_dead_owner(repo, fake)
    fake.set(status_all_pad_bytes=STATUS_BYTES, status_all_barrier=2)
    clears = [start("loop", "--clear-lease", cwd=repo) for _ in range(2)]
    results = [finish(proc, timeout=60) for proc in clears]
    outputs = [result.out + result.err for result in results]
    winners = [result for result in results if "clearing poisoned write lease" in result.out]
    assert len(winners) == 1, outputs
    assert winners[0].rc == 0 and winners[0].final() == "MAESTRO_FINAL: LOOP CLEARED rc=0"
    loser = results[1 - results.index(winners[0])]
    assert loser.rc in (0, 11), outputs
    assert "already cleared" in loser.out, outputs  # both passed the barrier: the loser saw the lease go
    assert "refusing" not in loser.out and "successor" not in loser.out, outputs
    assert lock_entries(repo) == []  # no lease, no half-retired `.reclaim.` or `.init.` directory
    assert len(fake.calls("status")) >= 2


def test_a_clear_after_a_clear_reports_nothing_left(repo, fake):
    poisoned_lease_with_a_dead_owner(repo, fake)
    fake.set(status_all_pad_bytes=STATUS_BYTES)
    first = run("loop", "--clear-lease", cwd=repo)
    assert first.rc == 0 and "clearing poisoned write lease" in first.out, first.out + first.err
    second = run("loop", "--clear-lease", cwd=repo)
    assert second.rc == 0 and "there is no write lease to clear" in second.out
    assert lock_entries(repo) == []


# -- the domain call, with injected writer lists ------------------------------------------------------------


def fabricate(git_dir, *, pid, job="unknown", poison_job=None, start="", epoch=None):
    """A lease as its (now dead or alive) owner wrote it; `poison_job` stages quiescence=unconfirmed."""
    path = os.path.join(git_dir, LOCK_NAME)
    os.mkdir(path, 0o700)
    generation, token = claimlib.new_token(), claimlib.new_token()
    with open(os.path.join(path, "generation"), "w") as handle:
        handle.write(generation + "\n")
    epoch = int(time.time()) - 1000 if epoch is None else epoch
    fields = {"token": token, "generation": generation, "pid": str(pid), "process_start": start, "job_id": job,
              "session_id": "sess-0", "started_at": "2026-01-01T00:00:00Z", "started_epoch": str(epoch),
              "digest_before": "unavailable"}
    if poison_job is not None:
        fields.update(quiescence="unconfirmed", unconfirmed_job=poison_job, unconfirmed_reason="idle")
    with open(os.path.join(path, "metadata"), "wb") as handle:
        handle.write(claimlib.format_record(fields))
    return path


class Lines(list):
    def emit(self, line):
        self.append(line)

    def text(self):
        return "\n".join(self)


def test_an_unreadable_writer_list_is_read_again_before_refusing(git_dir):
    path = fabricate(git_dir, pid=dead_pid(), poison_job="task-abc-123")
    answers = [None, None, {}]  # fails twice (the companion rewriting its job table), then reads
    lines = Lines()
    assert lease_clear.clear(git_dir, writers=lambda: answers.pop(0), emit=lines.emit, sleep=lambda s: None) == 0
    assert answers == [] and not os.path.exists(path), lines.text()


def test_a_writer_list_that_stays_unreadable_refuses_and_names_the_lease_writer(git_dir):
    path = fabricate(git_dir, pid=dead_pid(), poison_job="task-abc-123")
    calls, lines = [], Lines()
    assert lease_clear.clear(git_dir, writers=lambda: calls.append(1), emit=lines.emit, sleep=lambda s: None) == 11
    assert len(calls) == lease_clear.WRITER_LIST_READS and os.path.isdir(path)
    assert "writer list is unavailable" in lines.text() and "nothing proves the lease's writer has stopped" in lines.text()
    assert "lease job=task-abc-123" in lines.text()


def test_a_refusal_for_a_running_writer_names_it_and_says_why(git_dir):
    fabricate(git_dir, pid=dead_pid(), job="task-own-1", poison_job="task-own-1")
    lines = Lines()
    assert lease_clear.clear(git_dir, writers=lambda: {"task-run-9": True, "task-read-2": False},
                             emit=lines.emit) == 11
    refusal = lines.text()
    assert "still running: task-run-9;" in refusal and "task-read-2" not in refusal
    assert "may be writing into this worktree" in refusal and "lease job=task-own-1" in refusal


def test_a_refusal_for_a_live_owner_says_which_liveness_it_saw(git_dir):
    from maestro.locks import identity

    old = int(time.time()) - 1000
    fabricate(git_dir, pid=os.getpid(), job="task-live-1", start=identity.process_start(os.getpid()), epoch=old)
    lines = Lines()
    assert lease_clear.clear(git_dir, writers=lambda: {}, emit=lines.emit, heartbeat_stale=90) == 11
    assert "job=task-live-1" in lines.text() and "alive with the recorded start time" in lines.text()
    os.rename(os.path.join(git_dir, LOCK_NAME), os.path.join(git_dir, "aside"))
    fabricate(git_dir, pid=os.getpid(), job="task-live-2", start="unavailable", epoch=old)
    lines = Lines()
    assert lease_clear.clear(git_dir, writers=lambda: {}, emit=lines.emit, heartbeat_stale=90) == 11
    assert "job=task-live-2" in lines.text() and "start time cannot be confirmed" in lines.text()


def test_a_lease_retired_between_reading_and_claiming_is_reported_cleared(git_dir):
    path = fabricate(git_dir, pid=dead_pid(), poison_job="task-abc-123")

    def writers():  # another clear retires the lease while this one asks the companion
        claimlib.LockDir(path).retire()
        return {}

    lines = Lines()
    assert lease_clear.clear(git_dir, writers=writers, emit=lines.emit) == 0
    assert "already cleared by another process" in lines.text() and "successor" not in lines.text()
