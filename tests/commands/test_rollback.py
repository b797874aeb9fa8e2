"""`rollback` and `checkpoints` end to end (issue 13 §1): a real loop against the fake companion takes a
checkpoint before each write dispatch; rollback brings the whole worktree back (added, deleted, renamed,
exec-bit and symlink changes, untracked files) and leaves HEAD, the user's (dirty) index and ignored files
exactly as they were; it refuses while a live writer holds the lease and clears a poisoned one only with
--clear-lease. Runs against the source tree and the archive."""

import json
import os
import stat

import pytest
from testing.git import git, git_repo

pytestmark = pytest.mark.timeout(90)

PLAN = "# Rework the app\n\nSet VALUE to 2 in app.py.\n"
VERIFY_OK = "grep -q 'VALUE = 2' app.py"
JOB_EDITS = {  # what the fake "Codex" does to the tree
    "app.py": "VALUE = 2\n",                                   # changed (tracked, staged change in the index too)
    "gone.py": None,                                          # deleted
    "old_name.py": None, "new_name.py": "RENAMED = 1\n",      # renamed
    "tool.sh": {"content": "echo tool\n", "mode": 0o755},    # exec bit set
    "link": {"symlink": "other.txt"},                         # symlink retargeted
    "notes.txt": "the job rewrote my notes\n",               # untracked, not ignored
    "added/deep/file.py": "NEW = 1\n",                        # added, in new directories
    "build/cache.bin": "job output\n",                       # ignored: rollback leaves it alone
}


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A repository with every kind of path, a staged change (dirty index), an untracked and an ignored file."""
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    path = git_repo(tmp_path / "work", {"app.py": "VALUE = 1\n", "gone.py": "GONE = 1\n",
                                        "old_name.py": "RENAMED = 1\n", "tool.sh": "echo tool\n",
                                        "other.txt": "other\n", ".gitignore": "build/\n"})
    os.symlink("app.py", path / "link")
    git(path, "add", "link")
    git(path, "commit", "-qm", "link")
    (path / "app.py").write_text("VALUE = 1  # staged\n")
    git(path, "add", "app.py")  # the index now differs from HEAD and from the worktree below
    (path / "app.py").write_text("VALUE = 1  # staged, then edited\n")
    (path / "notes.txt").write_text("my own untracked notes\n")
    (path / "build").mkdir()
    (path / "build" / "cache.bin").write_text("ignored, mine\n")
    monkeypatch.chdir(path)
    return path


def state(repo):
    """Every path outside .git as (kind, bytes or target, exec bit), plus the index bytes, HEAD and the stash."""
    files = {}
    for base, dirs, names in os.walk(repo):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names + [d for d in dirs if os.path.islink(os.path.join(base, d))]:
            full = os.path.join(base, name)
            rel = os.path.relpath(full, repo)
            if os.path.islink(full):
                files[rel] = ("link", os.readlink(full), None)
            else:
                with open(full, "rb") as handle:
                    files[rel] = ("file", handle.read(), bool(os.stat(full).st_mode & stat.S_IXUSR))
    return files, (repo / ".git" / "index").read_bytes(), git(repo, "rev-parse", "HEAD"), git(repo, "stash", "list")


def write_plan(repo):
    path = repo.parent / "plan.md"
    path.write_text(PLAN)
    path.chmod(0o600)
    return str(path)


def loop(maestro, repo, verify=VERIFY_OK, *extra):
    return maestro("loop", "--plan", write_plan(repo), "--verify", verify, "--poll", "0.2", *extra, cwd=str(repo))


def checkpoints(maestro, repo):
    result = maestro("checkpoints", "--json", cwd=str(repo))
    assert result.rc == 0, result.err
    return json.loads(result.out)["checkpoints"]


def test_rollback_after_verified_done_restores_every_kind_of_change(tree, fake, maestro):
    before = state(tree)
    fake.set(final_message="Done.\nRESULT: DONE", turn_seconds=0, edits=JOB_EDITS)
    result = loop(maestro, tree)
    assert result.rc == 0, result.out + result.err
    assert "CHECKPOINT: refs/maestro/checkpoints/task-" in result.out
    assert (tree / "new_name.py").exists() and os.readlink(tree / "link") == "other.txt"
    dry = maestro("rollback", "--last", "--dry-run", cwd=str(tree))
    assert dry.rc == 0, dry.err
    for line in ("remove   added/deep/file.py", "restore  gone.py", "mode     tool.sh (100755 -> 100644)",
                 "remove   new_name.py", "restore  old_name.py", "revert   notes.txt", "revert   link", "revert   app.py"):
        assert line in dry.out
    assert "build/" not in dry.out
    assert (tree / "new_name.py").exists()  # a dry run changes nothing

    undone = maestro("rollback", "--last", cwd=str(tree))
    assert undone.rc == 0, undone.out + undone.err
    after = state(tree)
    expected = dict(before[0], **{"build/cache.bin": ("file", b"job output\n", False)})  # ignored: left as the job left it
    assert after[0] == expected
    assert after[1:] == before[1:]  # the dirty index byte for byte, HEAD, the stash
    assert not (tree / "added").exists()
    check = maestro("provenance-check", cwd=str(tree))
    assert check.rc == 0 and "tree matches the prior completed snapshot" in check.out, check.out + check.err
    listed = checkpoints(maestro, tree)
    job = [item for item in listed if item["job"].startswith("task-")][0]
    assert job["title"] == "Rework the app" and job["state"] == "VERIFIED_DONE" and job["files_changed"] == 8
    assert any(item["job"].startswith("pre-rollback-") for item in listed)


def test_rollback_of_the_first_job_after_stuck(tree, fake, maestro):
    before = state(tree)
    fake.set(turn_seconds=0, script=[{"final_message": "RESULT: DONE", "edits": {"first.txt": "1\n"}},
                                     {"final_message": "RESULT: DONE", "edits": {"second.txt": "2\n", "app.py": None}}])
    result = loop(maestro, tree, "false", "--max-iters", "2")
    assert result.rc == 12, result.out + result.err
    jobs = [item for item in checkpoints(maestro, tree) if item["job"].startswith("task-")]
    assert len(jobs) == 2 and {item["state"] for item in jobs} == {"STUCK"}
    first = jobs[-1]  # the listing is newest first (launch order breaks a tie within one second)
    assert first["files_changed"] == 1 and jobs[0]["files_changed"] == 2
    undone = maestro("rollback", first["job"], cwd=str(tree))
    assert undone.rc == 0, undone.out + undone.err
    assert state(tree) == before


def test_a_poisoned_lease_is_rolled_back_only_with_clear_lease(tree, fake, maestro):
    fake.set(turn_seconds=None)
    result = loop(maestro, tree, "true", "--max-idle", "0.5")
    assert result.rc == 11 and "WATCHDOG_POISONED" in result.err, result.out + result.err
    before = state(tree)
    (tree / "half_written.py").write_text("def half(")  # what the cancelled job left behind
    (tree / "gone.py").unlink()
    refused = maestro("rollback", "--last", cwd=str(tree))
    assert refused.rc == 11 and "quiescence is unconfirmed" in refused.err, refused.out + refused.err
    assert (tree / "half_written.py").exists()
    undone = maestro("rollback", "--last", "--clear-lease", cwd=str(tree))
    assert undone.rc == 0, undone.out + undone.err
    assert "clearing poisoned write lease" in undone.err
    assert state(tree) == before and not (tree / ".git" / "maestro-write.lock").exists()


def test_rollback_refuses_while_a_live_writer_holds_the_lease(tree, fake, maestro):
    fake.set(final_message="RESULT: DONE", turn_seconds=0, edits={"added.py": "x\n"})
    assert loop(maestro, tree, "true").rc == 0
    from maestro.locks.lease import WriteLease

    held = WriteLease(str(tree / ".git"), writers=lambda: {}, digest=lambda: "unavailable", emit=lambda line: None)
    assert held.acquire() == 0  # this (live) test process is the writer
    try:
        refused = maestro("rollback", "--last", cwd=str(tree))
        assert refused.rc == 11 and "write dispatch blocked" in refused.err, refused.out + refused.err
        assert (tree / "added.py").exists()
    finally:
        held.release()


def test_no_checkpoint_and_bad_arguments(tree, maestro):
    missing = maestro("rollback", "--last", cwd=str(tree))
    assert missing.rc == 3 and "no checkpoint yet" in missing.err
    assert maestro("rollback", cwd=str(tree)).rc == 3
    assert maestro("rollback", "task-x", "--last", cwd=str(tree)).rc == 3
    unknown = maestro("rollback", "task-nope", cwd=str(tree))
    assert unknown.rc == 3 and "maestro checkpoints" in unknown.err
    listed = maestro("checkpoints", cwd=str(tree))
    assert listed.rc == 0 and "none yet" in listed.out
    assert maestro("checkpoints", "--keep", "3", cwd=str(tree)).rc == 3


def test_watchdog_takes_a_checkpoint_before_its_write_too(tree, fake, maestro):
    before = state(tree)
    fake.set(final_message="RESULT: DONE", turn_seconds=0, edits={"app.py": None, "made.py": "x\n"})
    result = maestro("watchdog", "--file", write_plan(tree), "30", "0.2", cwd=str(tree))
    assert result.rc == 0, result.out + result.err
    [job] = checkpoints(maestro, tree)
    assert job["state"] == "DONE" and job["files_changed"] == 2 and job["title"] == "Rework the app"
    assert maestro("rollback", job["job"], cwd=str(tree)).rc == 0
    assert state(tree) == before


@pytest.mark.in_process
def test_rollbacks_lease_logs_the_dead_owner_it_adopts(tmp_path):
    """Without an orphan-adopted record the next lease compares against the dead owner's last record and
    reports a false BASELINE GAP (review finding 5)."""
    import subprocess
    import sys

    from maestro.commands import rollback

    git_dir = tmp_path / "git"
    git_dir.mkdir()
    owner = ("import os, sys; from maestro.locks.lease import WriteLease; "
             "lease = WriteLease(sys.argv[1], writers=lambda interruptible=True: {}, digest=lambda: 'unavailable', "
             "emit=print, session='dead-session'); assert lease.acquire() == 0; os._exit(0)")
    source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(rollback.__file__))))
    subprocess.run([sys.executable, "-c", owner, str(git_dir)], check=True, capture_output=True,
                   env=dict(os.environ, PYTHONPATH=source))  # the owner dies holding the lease
    lease = rollback.rollback_lease(str(git_dir), lambda: "unavailable", lambda interruptible=True: {}, "s")
    assert lease.acquire() == 0
    lease.release()
    log = (git_dir / "maestro-provenance.log").read_text()
    assert " type=orphan-adopted job=unknown session=dead-session " in log, log
