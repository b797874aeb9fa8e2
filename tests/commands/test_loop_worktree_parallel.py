"""Isolated worktree loops as real processes (issue 13 §2 acceptance): three `loop --worktree` runs started
together all reach VERIFIED_DONE on their own branches, none seeing another's files; and a worktree loop killed
with SIGKILL leaves a lease that `status`, `loop --clear-lease` (run in that worktree) and `worktrees remove`
handle as usual."""

import json
import re
import signal

import pytest
from testing.git import git
from testing.processes import finish, run, start, wait_for

pytestmark = pytest.mark.timeout(120)

VERIFY = "test \"$(cat mine.txt)\" = \"$(basename \"$PWD\")\" && test \"$(ls -1 | grep -c '^mine')\" = 1"
PLAN = "# Mark the worktree\n\nWrite the worktree's name into mine.txt.\n"


def age_lease(lock_dir, seconds=1000):
    """Make the lease's last sign of life `seconds` older, as if that much time had passed since the kill
    (`--clear-lease` rightly refuses a lease whose heartbeat is still fresh)."""
    for name in ("metadata", "heartbeat"):
        path = lock_dir / name
        if path.exists():
            path.write_text(re.sub(r"^((?:started_)?epoch)=(\d+)$", lambda m: f"{m[1]}={int(m[2]) - seconds}",
                                   path.read_text(), flags=re.M))


def write_plan(repo):
    path = repo.parent / "plan.md"
    path.write_text(PLAN)
    path.chmod(0o600)
    return path


@pytest.mark.stress
def test_three_worktree_loops_started_together_each_verify_on_their_own_branch(repo, fake, tmp_path):
    flag = tmp_path / "all-three-launched"
    # every job stays running until all three have launched: they provably run side by side, none queued
    fake.set(final_message="Wrote mine.txt.\nRESULT: DONE", finish_flag=str(flag),
             edits={"mine.txt": "{workspace_name}"})
    plan = write_plan(repo)
    names = ("alpha", "beta", "gamma")
    procs = [start("loop", "--worktree", name, "--plan", str(plan), "--verify", VERIFY, "--poll", "0.2",
                   cwd=repo) for name in names]
    launched = wait_for(lambda: len(fake.calls("task")) == 3 or any(p.poll() is not None for p in procs), timeout=60)
    assert launched and len(fake.calls("task")) == 3, [finish(p).out for p in procs if p.poll() is not None]
    listed = json.loads(run("worktrees", "--json", cwd=repo).out)["worktrees"]
    assert [(row["name"], row["lease"], row["job_lock"]) for row in listed] == [(n, "held", "held") for n in names]
    refused = run("worktrees", "remove", "beta", cwd=repo)
    assert refused.rc == 11 and "its write lease is held" in refused.err
    flag.write_text("go")
    results = [finish(proc, timeout=60) for proc in procs]
    for name, result in zip(names, results):
        assert result.rc == 0, result.out + result.err
        assert result.final() == "MAESTRO_FINAL: LOOP VERIFIED_DONE rc=0"
        assert git(repo, "show", f"maestro/{name}:mine.txt").decode() == name
        tree = git(repo, "ls-tree", "-r", "--name-only", f"maestro/{name}").decode().split()
        assert tree == ["app.py", "mine.txt"]  # nothing of another run
    assert not (repo / "mine.txt").exists() and git(repo, "status", "--porcelain") == b""
    assert {call["cwd"] for call in fake.calls("task")} == {str(repo / ".maestro-worktrees" / n) for n in names}


def test_a_killed_worktree_loop_leaves_a_lease_that_status_clear_lease_and_remove_handle(repo, fake, tmp_path):
    job_ends = tmp_path / "job-ends"
    fake.set(final_message="RESULT: DONE", finish_flag=str(job_ends), edits={})
    proc = start("loop", "--worktree", "killed", "--plan", str(write_plan(repo)), "--verify", "true",
                 "--poll", "0.2", cwd=repo)
    assert wait_for(lambda: fake.calls("task"), timeout=30)
    finish(proc, signal.SIGKILL)
    path = repo / ".maestro-worktrees" / "killed"
    lease = repo / ".git" / "worktrees" / "killed" / "maestro-write.lock"
    assert lease.is_dir()
    age_lease(lease)
    assert not (repo / ".git" / "maestro-write.lock").exists()  # the user's own worktree has no lease

    listed = json.loads(run("worktrees", "--json", cwd=repo).out)["worktrees"]
    assert [(row["name"], row["lease"]) for row in listed] == [("killed", "orphaned")]
    refused = run("worktrees", "remove", "killed", cwd=repo)
    assert refused.rc == 11 and "lease is orphaned" in refused.err and path.is_dir()

    status = run("status", cwd=path)
    assert status.rc == 11 and "ORPHANED" in status.out and "loop --clear-lease" in status.out
    blocked = run("loop", "--clear-lease", cwd=path)  # its Codex job still runs: the lease is kept
    assert blocked.rc == 11 and path.is_dir()
    assert "still running" in blocked.out
    job_ends.write_text("")  # the orphaned Codex job ends
    cleared = run("loop", "--clear-lease", cwd=path)
    assert cleared.rc == 0, cleared.out + cleared.err
    assert cleared.final() == "MAESTRO_FINAL: LOOP CLEARED rc=0"
    assert not (repo / ".git" / "worktrees" / "killed" / "maestro-write.lock").exists()
    if (repo / ".git" / "worktrees" / "killed" / "maestro-job-lock").exists():
        assert run("loop", "--clear-job-lock", cwd=path).rc == 0
    removed = run("worktrees", "remove", "killed", cwd=repo)
    assert removed.rc == 0, removed.out + removed.err
    assert not path.exists() and not git(repo, "branch", "--list", "maestro/killed").strip()
