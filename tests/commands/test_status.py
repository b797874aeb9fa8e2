"""`status` and the lock recovery commands as a user meets them."""

import json
import os
import subprocess

import pytest
from testing.processes import run

from maestro.locks import lockdir as claimlib
from maestro.locks import joblock
from testing.pids import dead_pid

pytestmark = pytest.mark.timeout(60)


def fabricate_job_lock(repo, pid, job="task-a-1"):
    path = repo / ".git" / joblock.LOCK_NAME
    path.mkdir(mode=0o700)
    gen = claimlib.new_token()
    (path / "generation").write_text(gen + "\n")
    record = {"token": claimlib.new_token(), "generation": gen, "pid": str(pid), "session": "s", "class": "read",
              "start": "1", "job": job}
    (path / "metadata").write_bytes(claimlib.format_record(record))
    return path


def test_clean_worktree_reports_free_locks(repo, fake):
    result = run("status", cwd=repo)
    assert result.rc == 0
    assert result.out.splitlines()[:3] == [f"worktree: {repo}", "lease: free", "job lock: free"]


def test_json_envelope(repo, fake):
    result = run("status", "--json", cwd=repo)
    report = json.loads(result.out)
    assert list(report)[:3] == ["version", "command", "ok"]
    assert (report["version"], report["command"], report["ok"]) == (1, "status", True)
    assert report["lease"]["state"] == "absent" and report["needs_recovery"] is False
    assert report["git_dir"] == str(repo / ".git")


def test_orphaned_job_lock_names_the_recovery_and_clear_job_lock_works(repo, fake):
    fabricate_job_lock(repo, dead_pid())
    status = run("status", cwd=repo)
    assert status.rc == 11 and "job lock: ORPHANED class=read job=task-a-1" in status.out
    assert "recover with: maestro loop --clear-job-lock" in status.out
    cleared = run("loop", "--clear-job-lock", cwd=repo)  # the fake knows no such job: status unavailable
    assert cleared.rc == 0, cleared.out + cleared.err
    assert "cleared companion job lock (class=read job=task-a-1 session=s)" in cleared.out
    assert run("status", cwd=repo).rc == 0


def test_clear_job_lock_refuses_a_live_holder(repo, fake):
    fabricate_job_lock(repo, os.getpid())
    result = run("loop", "--clear-job-lock", cwd=repo)
    assert result.rc == 11 and result.final() == "MAESTRO_FINAL: LOOP BLOCKED rc=11"
    assert "is alive" in result.out


def test_status_outside_git_is_one_line_exit_3(tmp_path, fake):
    outside = tmp_path / "plain"
    outside.mkdir()
    result = run("status", cwd=outside)
    assert result.rc == 3 and result.err == "maestro status: not inside a git repository\n"


def test_linked_worktrees_have_their_own_lease(repo, fake):
    other = repo.parent / "wt"
    subprocess.run(["git", "worktree", "add", "-q", str(other)], cwd=repo, check=True, capture_output=True)
    (repo / ".git" / "maestro-write.lock").mkdir()
    here = json.loads(run("status", "--json", cwd=repo).out)
    there = json.loads(run("status", "--json", cwd=other).out)
    assert here["lease"]["state"] == "unidentifiable" and there["lease"]["state"] == "absent"
    assert there["git_dir"] != here["git_dir"]
