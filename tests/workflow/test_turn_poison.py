"""A write turn that cannot prove its job has stopped keeps the write lease (issue 17, items 4 and 7).

End to end through `watchdog`/`loop` and the fake companion. Poison staging is made to fail for real: while the
fake holds the launch (`launch_gate`), the test puts a directory where the lease writes its staged poison's temp
file (`metadata.new.tmp.<token>`), so `stage_poison` meets an OSError — no timing assumption, no monkeypatching.
"""

import pytest
from testing.processes import run, start, finish, wait_for

from maestro.messages import CLEAR_JOB_LOCK, CLEAR_LEASE

pytestmark = pytest.mark.timeout(90)


def plan(repo):
    path = repo.parent / "plan.md"
    path.write_text("Set VALUE to 2.\n")
    return path


def lease_dir(repo):
    return repo / ".git" / "maestro-write.lock"


def job_lock_dir(repo):
    return repo / ".git" / "maestro-job-lock"


def block_poison_staging(repo):
    """Make the lease's next `metadata.new` write fail: its temp name is taken by a directory."""
    token = next(line.split("=", 1)[1] for line in (lease_dir(repo) / "metadata").read_text().splitlines()
                 if line.startswith("token="))
    (lease_dir(repo) / f"metadata.new.tmp.{token}").mkdir()


def gated(fake, tmp_path, **knobs):
    gate = tmp_path / "launch-gate"
    fake.set(launch_gate=str(gate), **knobs)
    return gate


def test_launch_without_job_id_retains_both_locks_and_names_the_recovery(repo, fake):
    fake.set(launch_output="Started.")
    result = run("watchdog", "--file", str(plan(repo)), "30", "1", cwd=repo)
    assert result.rc == 125, result.out + result.err
    assert result.final() == "MAESTRO_FINAL: WATCHDOG POISONED rc=125"
    assert lease_dir(repo).is_dir() and job_lock_dir(repo).is_dir()
    assert "quiescence=unconfirmed" in (lease_dir(repo) / "metadata").read_text()
    assert f"recover with: {CLEAR_LEASE}" in result.err and CLEAR_JOB_LOCK in result.err


def test_launch_without_job_id_keeps_the_lease_when_its_poison_cannot_be_staged(repo, fake, tmp_path):
    gate = gated(fake, tmp_path, launch_output="Started.")
    proc = start("loop", "--plan", str(plan(repo)), "--verify", "true", "--poll", "1", cwd=repo)
    assert wait_for(lambda: fake.calls("task"), timeout=30)
    block_poison_staging(repo)
    gate.touch()
    result = finish(proc)
    assert result.rc == 11 and result.final() == "MAESTRO_FINAL: LOOP BLOCKED rc=11", result.out + result.err
    assert lease_dir(repo).is_dir() and job_lock_dir(repo).is_dir()  # neither lock was released
    assert "could not stage poison for job=unknown" in result.out
    assert "was not cancelled and may still be running" in result.out and CLEAR_LEASE in result.out
    assert "write lease retained because a job launched without a job id may still be running" in result.out
    assert f"recover with: {CLEAR_LEASE}" in result.err


def test_poison_staging_that_fails_before_the_cancel_says_so_and_keeps_the_lease(repo, fake, tmp_path):
    gate = gated(fake, tmp_path, turn_seconds=None)
    proc = start("watchdog", "--file", str(plan(repo)), "1", "1", cwd=repo)
    assert wait_for(lambda: fake.calls("task"), timeout=30)
    block_poison_staging(repo)
    gate.touch()
    result = finish(proc)
    assert result.rc == 125 and result.final() == "MAESTRO_FINAL: WATCHDOG POISONED rc=125", result.out + result.err
    assert lease_dir(repo).is_dir()
    job = next(line.split("job=")[1].split()[0] for line in result.lines if "could not stage cancellation" in line)
    note = next(line for line in result.lines if "could not stage cancellation poison" in line)
    assert job.startswith("task-") and f"job={job} reason=idle" in note
    assert "the job was not cancelled and may still be running" in note
    log = fake.job_log(job)  # in maestro's private companion data dir (issue 12 §1.1)
    assert log.is_file() and f"log={log}" in note, note
    assert CLEAR_LEASE in note
    assert fake.calls("cancel") == []  # no cancel without its poison first
    assert lease_dir(repo).is_dir()
    assert "write lease retained because cancellation poison for job=" in result.out
