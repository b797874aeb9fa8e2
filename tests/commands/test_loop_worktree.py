"""`loop --worktree` / `watchdog --worktree` end to end: the run happens in an isolated git worktree on its own
branch, commits a verified result there, keeps anything else for inspection, and never touches the user's own
worktree (issue 13 §2). Real git, the fake companion."""

import os
import subprocess

import pytest
from testing.git import git

pytestmark = pytest.mark.timeout(90)

VERIFY = "grep -q 'VALUE = 2' app.py"
DONE_EDIT = {"final_message": "Edited app.py.\nRESULT: DONE", "turn_seconds": 0,
             "edits": {"app.py": "VALUE = 2\n", "new_{workspace_name}.txt": "made in {workspace_name}\n"}}


def write_plan(repo, text="# Set VALUE to 2\n\nSet VALUE to 2 in app.py.\n"):
    path = repo.parent / "plan.md"
    path.write_text(text)
    path.chmod(0o600)
    return path


def snapshot(repo):
    """The user's worktree as bytes: every file outside .git (and the worktrees dir), the index and HEAD."""
    files = {}
    for base, dirs, names in os.walk(repo):
        dirs[:] = [d for d in dirs if d not in (".git", ".maestro-worktrees")]
        for name in names:
            path = os.path.join(base, name)
            with open(path, "rb") as handle:
                files[os.path.relpath(path, repo)] = (handle.read(), os.stat(path).st_mode)
    return files, (repo / ".git" / "index").read_bytes(), git(repo, "rev-parse", "HEAD"), \
        git(repo, "symbolic-ref", "HEAD")


def test_verified_done_is_committed_on_its_branch_and_the_users_worktree_is_untouched(repo, fake, maestro):
    fake.set(**DONE_EDIT)
    (repo / "dirty.txt").write_text("the user's uncommitted work\n")
    (repo / "app.py").write_text("VALUE = 'mine'\n")
    git(repo, "add", "app.py")
    before = snapshot(repo)
    write_plan(repo)
    # a relative plan path still names the same plan once the run has moved into the worktree
    result = maestro("loop", "--worktree", "fix-value", "--plan", "../plan.md", "--verify", VERIFY,
                     "--poll", "1", cwd=str(repo))
    assert result.rc == 0, result.out + result.err
    assert result.out.splitlines()[-1] == "MAESTRO_FINAL: LOOP VERIFIED_DONE rc=0"
    assert result.out.splitlines()[-2].startswith("LOOP_STATE: VERIFIED_DONE")
    path = repo / ".maestro-worktrees" / "fix-value"
    assert f"LOOP_WORKTREE: created {path} on branch maestro/fix-value" in result.out
    assert "git merge maestro/fix-value" in result.out and "maestro worktrees remove fix-value" in result.out
    assert snapshot(repo) == before
    assert "/.maestro-worktrees/" in (repo / ".git" / "info" / "exclude").read_text().splitlines()
    assert b".maestro-worktrees" not in git(repo, "status", "--porcelain", "--ignored=no")
    message = git(repo, "log", "-1", "--format=%B", "maestro/fix-value").decode()
    assert message.startswith("Set VALUE to 2\n")
    job = fake.calls("task") and [line for line in message.splitlines() if line.startswith("Maestro-Job: ")]
    assert job and job[0] != "Maestro-Job: unknown"
    assert f"Maestro-Verify: {VERIFY}" in message
    committed = git(repo, "show", "maestro/fix-value:app.py").decode()
    assert committed == "VALUE = 2\n"
    assert git(repo, "show", "maestro/fix-value:new_fix-value.txt").decode() == "made in fix-value\n"
    assert git(path, "status", "--porcelain") == b""  # everything the run wrote is on the branch
    assert not (path / ".git").is_dir() and not (repo / ".git" / "maestro-write.lock").exists()


def test_a_run_that_does_not_verify_keeps_its_worktree_uncommitted_and_a_rerun_resumes_it(repo, fake, maestro):
    fake.set(final_message="Did it.\nRESULT: DONE", turn_seconds=0, edits={"app.py": "VALUE = 3\n"})
    plan = write_plan(repo)
    before = snapshot(repo)
    stuck = maestro("loop", "--worktree=try", "--plan", str(plan), "--verify", VERIFY, "--max-iters", "1",
                    "--poll", "1", cwd=str(repo))
    assert stuck.rc == 12 and stuck.out.splitlines()[-1] == "MAESTRO_FINAL: LOOP STUCK rc=12"
    path = repo / ".maestro-worktrees" / "try"
    assert f"LOOP_WORKTREE: STUCK: the worktree is kept for inspection at {path}" in stuck.out
    assert (path / "app.py").read_text() == "VALUE = 3\n"  # kept as the run left it, not committed
    assert git(repo, "rev-parse", "maestro/try") == git(repo, "rev-parse", "HEAD")
    # project memory is the user's checkout's, and its handoff continues in the worktree
    from maestro.memory.project import handoffs
    from maestro.memory.project.files import ProjectMemory

    assert handoffs.load_open(ProjectMemory(str(path))) == []
    [note] = handoffs.load_open(ProjectMemory(str(repo)))
    assert note["state"] == "STUCK" and f"maestro loop --worktree try --plan {plan}" in note["next_command"]
    fake.set(**DONE_EDIT)
    resumed = maestro("loop", "--worktree", "try", "--plan", str(plan), "--verify", VERIFY, "--poll", "1",
                      cwd=str(repo))
    assert resumed.rc == 0, resumed.out + resumed.err
    assert f"LOOP_WORKTREE: resuming {path} on branch maestro/try" in resumed.out
    assert git(repo, "show", "maestro/try:app.py") == b"VALUE = 2\n"
    assert snapshot(repo)[1:] == before[1:]  # index and HEAD; the plan history went into the plan, not the repo
    assert handoffs.load_open(ProjectMemory(str(repo))) == []  # the verified run closed the user's handoff
    listed = maestro("worktrees", "--json", cwd=str(repo))
    assert listed.rc == 0
    import json

    rows = json.loads(listed.out)["worktrees"]
    assert [(r["name"], r["branch"], r["lease"], r["last_outcome"]) for r in rows] == [
        ("try", "maestro/try", "free", "VERIFIED_DONE")]
    removed = maestro("worktrees", "remove", "try", cwd=str(repo))
    assert removed.rc == 0, removed.out + removed.err
    assert not path.exists() and not git(repo, "branch", "--list", "maestro/try").strip()
    assert snapshot(repo)[1:] == before[1:]


def test_watchdog_done_is_committed_marked_unverified(repo, fake, maestro):
    fake.set(**DONE_EDIT)
    result = maestro("watchdog", "--worktree=wd", "Set VALUE to 2 in app.py", "30", "1", cwd=str(repo))
    assert result.rc == 0, result.out + result.err
    assert result.out.splitlines()[-1] == "MAESTRO_FINAL: WATCHDOG DONE rc=0"
    message = git(repo, "log", "-1", "--format=%B", "maestro/wd").decode()
    assert "Maestro-Verify: none" in message and "nothing was verified locally" in message
    assert git(repo, "show", "maestro/wd:app.py") == b"VALUE = 2\n"


@pytest.mark.source_only  # the parser and checks are the archive's own code too; the runs above cover the archive
@pytest.mark.parametrize("args, message", [
    (["--worktree", "bad..name"], "is not usable"),  # the whole name table: tests/workflow/test_worktree.py
    (["--worktree-dir", "inside"], "is inside this worktree"),
    (["--worktree", "taken"], "branch maestro/taken already exists"),
    (["--clear-lease", "--worktree"], "mutually exclusive"),
])
def test_bad_worktree_requests_fail_with_3_and_create_nothing(repo, fake, maestro, args, message):
    git(repo, "branch", "maestro/taken")
    before = snapshot(repo)
    result = maestro("loop", *args, "--plan", str(write_plan(repo)), "--verify", "true", cwd=str(repo)) \
        if "--clear-lease" not in args else maestro("loop", *args, cwd=str(repo))
    assert result.rc == 3, result.out + result.err
    assert result.out.splitlines()[-1] == "MAESTRO_FINAL: LOOP FAILED rc=3"
    assert message in result.err
    assert fake.calls("task") == [] and not (repo / ".maestro-worktrees").exists() and not (repo / "inside").exists()
    assert snapshot(repo) == before
    assert git(repo, "worktree", "list", "--porcelain").count(b"worktree ") == 1


def test_a_worktree_dir_outside_the_repository_runs_and_commits_there(repo, fake, maestro, outside_tmp):
    fake.set(**DONE_EDIT)
    place = outside_tmp / "elsewhere"
    before = snapshot(repo)
    result = maestro("loop", "--worktree", "out", "--worktree-dir", str(place), "--plan", str(write_plan(repo)),
                     "--verify", VERIFY, "--poll", "1", cwd=str(repo))
    assert result.rc == 0, result.out + result.err
    assert f"LOOP_WORKTREE: created {place} on branch maestro/out" in result.out
    assert git(repo, "show", "maestro/out:app.py") == b"VALUE = 2\n" and git(place, "status", "--porcelain") == b""
    assert snapshot(repo) == before and not (repo / ".maestro-worktrees").exists()
    assert maestro("worktrees", "remove", "out", cwd=str(repo)).rc == 0 and not place.exists()


@pytest.mark.source_only  # watches the commit from inside the run
def test_the_verified_result_is_committed_while_the_lease_is_still_held(repo, fake, maestro, monkeypatch):
    from maestro.workflow import worktree as worktrees

    commit, seen = worktrees.commit, []

    def watched(wt, *args):
        seen.append(os.path.isdir(os.path.join(wt.git_dir, "maestro-write.lock")))
        return commit(wt, *args)

    monkeypatch.setattr(worktrees, "commit", watched)
    fake.set(**DONE_EDIT)
    result = maestro("loop", "--worktree", "held", "--plan", str(write_plan(repo)), "--verify", VERIFY,
                     "--poll", "1", cwd=str(repo))
    assert result.rc == 0, result.out + result.err
    assert seen == [True]  # a second run waiting on the same NAME cannot have its files committed
    job = [line for line in git(repo, "log", "-1", "--format=%B", "maestro/held").decode().splitlines()
           if line.startswith("Maestro-Job: ")]
    assert job and job != ["Maestro-Job: unknown"]
