"""Checkpoints in-process (maestro.provenance.checkpoint, checkpoint_restore): what a checkpoint records, that it
never touches the user's index, HEAD or stash, that it needs no git identity, how a failure reads, and the
restore's refusals (a symlink where a directory was, ignored files in the way, unsafe paths)."""

import os

import pytest
from testing.git import git, git_repo

from maestro.provenance import checkpoint, checkpoint_restore
from maestro.provenance import log as provenance_log

pytestmark = pytest.mark.in_process


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    path = git_repo(tmp_path / "work", {"app.py": "VALUE = 1\n", "gone.py": "x\n", "run.sh": "echo\n",
                                        ".gitignore": "*.log\n"})
    return path


def take(path, name="task-1", lines=None):
    git_dir = git(path, "rev-parse", "--absolute-git-dir").decode().strip()
    checkpointer = checkpoint.Checkpointer(str(path), git_dir, "sess-1",
                                           emit=(lines.append if lines is not None else lambda line: None))
    pending = checkpointer.take("## Fix the thing\n\nbody")
    return checkpointer, pending, pending and pending.name(name)


def tree_of(path, ref):
    return git(path, "ls-tree", "-r", ref).decode()


def test_a_checkpoint_records_the_worktree_and_leaves_index_head_and_stash_alone(work):
    (work / "app.py").write_text("VALUE = 2\n")
    git(work, "add", "app.py")  # a staged change: the user's index differs from HEAD
    (work / "app.py").write_text("VALUE = 3\n")
    (work / "gone.py").unlink()
    os.chmod(work / "run.sh", 0o755)
    os.symlink("app.py", work / "link")
    (work / "untracked.txt").write_text("mine\n")
    (work / "debug.log").write_text("ignored\n")
    index, head = (work / ".git" / "index").read_bytes(), git(work, "rev-parse", "HEAD")
    lines = []
    _, pending, name = take(work, lines=lines)
    assert name == "task-1" and lines == [f"CHECKPOINT: refs/maestro/checkpoints/task-1 = {pending.commit[:12]} "
                                          "(undo this write with: maestro rollback task-1)"]
    listing = tree_of(work, "refs/maestro/checkpoints/task-1")
    assert "100755 blob" in listing.split("run.sh")[0].splitlines()[-1]
    assert "120000 blob" in [line for line in listing.splitlines() if line.endswith("\tlink")][0]
    assert "untracked.txt" in listing and "gone.py" not in listing and "debug.log" not in listing
    assert git(work, "show", "refs/maestro/checkpoints/task-1:app.py") == b"VALUE = 3\n"
    assert (work / ".git" / "index").read_bytes() == index and git(work, "rev-parse", "HEAD") == head
    assert git(work, "stash", "list") == b"" and git(work, "diff", "--cached", "--name-only") == b"app.py\n"
    record = (work / ".git" / "maestro-provenance.log").read_text().splitlines()[-1]
    assert record.endswith(f" type=checkpoint job=task-1 session=sess-1 commit={pending.commit}")
    meta = git(work, "log", "-1", "--format=%an <%ae>|%cn|%s", "refs/maestro/checkpoints/task-1").decode().strip()
    assert meta == "maestro <maestro@localhost>|maestro|maestro checkpoint: Fix the thing"
    assert oct(os.stat(work / ".git" / "maestro-checkpoints").st_mode & 0o777) == "0o700"


def test_no_git_identity_is_needed(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "bare"
    path.mkdir()
    git(path, "init", "-q")  # no commit, no user.name anywhere (HOME is isolated)
    (path / "a.txt").write_text("a\n")
    _, pending, name = take(path)
    assert pending is not None and name == "task-1"


def test_a_failed_checkpoint_is_one_line_and_the_write_goes_on(work, tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    os.symlink(target, work / ".git" / "maestro-checkpoints")  # planted: never written through
    lines = []
    _, pending, _ = take(work, lines=lines)
    assert pending is None and len(lines) == 1
    assert lines[0].startswith("CHECKPOINT: not taken (") and "is a symlink" in lines[0]
    assert lines[0].endswith("this write proceeds without a rollback point")
    assert os.listdir(target) == []


def test_a_killed_checkpoints_index_lock_does_not_block_the_next(work):
    take(work, "task-1")
    (work / ".git" / "maestro-checkpoints" / "index.lock").write_bytes(b"")
    (work / "app.py").write_text("VALUE = 9\n")
    _, pending, name = take(work, "task-2")
    assert name == "task-2" and git(work, "show", "refs/maestro/checkpoints/task-2:app.py") == b"VALUE = 9\n"


def restore(work, ref="refs/maestro/checkpoints/task-1"):
    current = checkpoint.snapshot_tree(str(work), str(work / ".git"))
    old = git(work, "rev-parse", f"{ref}^{{tree}}").decode().strip()
    restorer = checkpoint_restore.Restorer(str(work))
    restorer.apply(checkpoint_restore.plan(str(work), old, current))
    return restorer


def test_a_symlink_where_a_directory_was_is_never_written_through(work, tmp_path):
    (work / "pkg").mkdir()
    (work / "pkg" / "mod.py").write_text("M = 1\n")
    take(work)
    outside = tmp_path / "outside"
    outside.mkdir()
    (work / "pkg" / "mod.py").unlink()
    (work / "pkg").rmdir()
    os.symlink(outside, work / "pkg")  # the job swapped the directory for a link out of the worktree
    restore(work)
    assert os.listdir(outside) == []
    assert not os.path.islink(work / "pkg") and (work / "pkg" / "mod.py").read_text() == "M = 1\n"


def test_a_directory_in_the_way_is_removed_only_when_it_holds_nothing_else(work):
    (work / "out").write_text("a file\n")
    (work / "spot").write_text("another\n")
    take(work)
    for name in ("out", "spot"):
        (work / name).unlink()
        (work / name).mkdir()
        (work / name / "made.py").write_text("by the job\n")
    (work / "out" / "keep.log").write_text("ignored, must survive\n")
    restorer = restore(work)
    assert (work / "spot").read_text() == "another\n"
    assert (work / "out" / "keep.log").read_text() == "ignored, must survive\n"
    assert restorer.skipped == [("out", "a directory holding other (ignored) files is in the way")]


@pytest.mark.parametrize("path", ["../escape", "/abs", "a/../../b", ".git/config", "a/.GIT/hooks/x", "a//b"])
def test_unsafe_paths_in_a_checkpoint_are_refused(path):
    with pytest.raises(checkpoint.CheckpointError):
        checkpoint_restore._safe_parts(path)


def test_a_rollback_record_is_the_new_baseline(tmp_path):
    git_dir = str(tmp_path)
    provenance_log.log_dispatch(git_dir, "dispatch", "task-1", "s", "tree-v3:aa", "tree-v3:bb")
    provenance_log.log_checkpoint(git_dir, "task-2", "s", "c0ffee")
    assert provenance_log.read_baseline(git_dir).after == "tree-v3:bb"
    provenance_log.log_rollback(git_dir, "task-1", "s", "tree-v3:bb", "tree-v3:aa")
    baseline = provenance_log.read_baseline(git_dir)
    assert (baseline.job, baseline.after) == ("task-1", "tree-v3:aa")
    assert provenance_log.baseline_check(None, git_dir, "tree-v3:aa", "s", emit=lambda line: None) is None


def test_prune_keeps_the_newest_and_drops_the_old(work):
    for index in range(4):
        (work / "app.py").write_text(f"VALUE = {index}\n")
        take(work, f"task-{index}")
    assert checkpoint.prune(str(work), str(work / ".git"), 2) == ["task-1", "task-0"]
    assert [row[0] for row in checkpoint.list_refs(str(work), str(work / ".git"))] == ["task-3", "task-2"]
    assert checkpoint.prune(str(work), str(work / ".git"), 50, older_than_days=0, clock=lambda: 4e9) == [
        "task-3", "task-2"]


def test_each_worktree_lists_and_restores_only_its_own_checkpoints(work, tmp_path):
    other = tmp_path / "other"
    git(work, "worktree", "add", "-q", "-b", "side", str(other))
    other = other.resolve()
    take(work, "task-main")
    take(other, "task-side")  # refs are shared by both worktrees
    assert [row[0] for row in checkpoint.list_refs(str(work), str(work / ".git"))] == ["task-main"]
    side_git_dir = git(other, "rev-parse", "--absolute-git-dir").decode().strip()
    assert [row[0] for row in checkpoint.list_refs(str(other), side_git_dir)] == ["task-side"]
    with pytest.raises(checkpoint.CheckpointError, match="no checkpoint named"):
        checkpoint.resolve(str(work), str(work / ".git"), "task-side")


def test_a_file_ignored_since_an_earlier_checkpoint_leaves_the_checkpoint(work):
    (work / "scratch.tmp").write_text("untracked, not ignored yet\n")
    take(work, "task-1")
    assert "scratch.tmp" in tree_of(work, "refs/maestro/checkpoints/task-1")
    with open(work / ".gitignore", "a") as handle:
        handle.write("*.tmp\n")
    (work / "debug.log").write_text("ignored\n")
    git(work, "add", "-f", "debug.log")  # ignored but tracked by the user: in scope, like the digest says
    take(work, "task-2")
    listing = tree_of(work, "refs/maestro/checkpoints/task-2")
    assert "scratch.tmp" not in listing and "debug.log" in listing
    (work / "scratch.tmp").write_text("the job changed an ignored file\n")
    restore(work, "refs/maestro/checkpoints/task-2")
    assert (work / "scratch.tmp").read_text() == "the job changed an ignored file\n"


def test_an_ignored_file_the_user_tracks_but_deleted_does_not_fail_the_checkpoint(work):
    take(work, "task-1")
    (work / "debug.log").write_text("tracked though ignored\n")
    git(work, "add", "-f", "debug.log")
    (work / "debug.log").unlink()
    _, pending, name = take(work, "task-2")
    assert name == "task-2" and "debug.log" not in tree_of(work, "refs/maestro/checkpoints/task-2")


# -- mends after review (slice 13A): each of these failed on the code as it was -------------------------------------


def test_assume_unchanged_and_skip_worktree_bits_of_the_users_index_do_not_hide_a_change(work):
    git(work, "update-index", "--assume-unchanged", "app.py")
    git(work, "update-index", "--skip-worktree", "run.sh")
    (work / "app.py").write_text("VALUE = 7\n")
    (work / "run.sh").write_text("echo changed\n")
    take(work)
    assert git(work, "show", "refs/maestro/checkpoints/task-1:app.py") == b"VALUE = 7\n"
    assert git(work, "show", "refs/maestro/checkpoints/task-1:run.sh") == b"echo changed\n"
    assert git(work, "ls-files", "-v", "app.py", "run.sh") == b"h app.py\nS run.sh\n"  # the user's bits stay


def test_crlf_under_a_text_attribute_comes_back_with_lf_as_documented(work):
    (work / ".gitattributes").write_text("* text=auto\n")
    (work / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    take(work)
    (work / "win.txt").unlink()
    restore(work)
    assert (work / "win.txt").read_bytes() == b"one\ntwo\n"  # docs/checkpoints.md "Line endings"


def test_a_tracked_ignored_path_under_a_directory_now_a_symlink_does_not_fail_the_checkpoint(work, tmp_path):
    (work / "logs").mkdir()
    (work / "logs" / "keep.log").write_text("tracked though ignored\n")
    git(work, "add", "-f", "logs/keep.log")
    take(work, "task-1")
    outside = tmp_path / "outside-logs"
    outside.mkdir()
    (outside / "keep.log").write_text("elsewhere\n")
    (work / "logs" / "keep.log").unlink()
    (work / "logs").rmdir()
    os.symlink(outside, work / "logs")  # git refuses a path "beyond a symbolic link"
    lines = []
    _, pending, name = take(work, "task-2", lines)
    assert name == "task-2", lines
    assert "logs/keep.log" not in tree_of(work, "refs/maestro/checkpoints/task-2")


def test_a_restored_file_keeps_its_permissions_and_only_the_exec_bit_follows(work):
    (work / ".env.local").write_text("SECRET=1\n")
    os.chmod(work / ".env.local", 0o600)
    take(work)
    (work / ".env.local").write_text("SECRET=leaked\n")
    os.chmod(work / "run.sh", 0o700)  # the checkpoint has run.sh 100644, the job made it executable
    (work / "run.sh").write_text("echo job\n")
    restore(work)
    assert (work / ".env.local").read_text() == "SECRET=1\n"
    assert oct(os.stat(work / ".env.local").st_mode & 0o777) == "0o600"
    assert oct(os.stat(work / "run.sh").st_mode & 0o777) == "0o600"


def test_a_bad_checkpoint_fails_before_the_first_file_is_removed(work):
    (work / "added.py").write_text("by the job\n")
    changes = [checkpoint_restore.Change("remove", "added.py", "000000", "0" * 40, "100644", "1" * 40),
               checkpoint_restore.Change("restore", "../escape", "100644", "2" * 40, "000000", "0" * 40)]
    with pytest.raises(checkpoint.CheckpointError):
        checkpoint_restore.Restorer(str(work)).apply(changes)
    assert (work / "added.py").exists()
    missing_blob = [checkpoint_restore.Change("remove", "added.py", "000000", "0" * 40, "100644", "1" * 40),
                    checkpoint_restore.Change("restore", "app.py", "100644", "3" * 40, "100644", "4" * 40)]
    with pytest.raises(checkpoint.CheckpointError):
        checkpoint_restore.Restorer(str(work)).apply(missing_blob)
    assert (work / "added.py").exists()


def test_a_checkpoint_ref_is_created_never_moved(work):
    first, second = take(work, "task-1")[1].commit, None
    (work / "app.py").write_text("VALUE = 5\n")
    _, pending, name = take(work, "task-1")  # a job id seen twice, or a worktree sharing the refs
    second = pending.commit
    assert name == "task-1-2"
    assert git(work, "rev-parse", "refs/maestro/checkpoints/task-1").decode().strip() == first
    assert git(work, "rev-parse", "refs/maestro/checkpoints/task-1-2").decode().strip() == second


def test_only_maestros_checkpoint_commits_for_this_worktree_are_resolved(work):
    take(work, "task-1")
    tree = git(work, "rev-parse", "HEAD^{tree}").decode().strip()
    forged = git(work, "commit-tree", tree, "-m", "anything").decode().strip()
    git(work, "update-ref", "refs/maestro/checkpoints/forged", forged)
    with pytest.raises(checkpoint.CheckpointError, match="no checkpoint named"):
        checkpoint.resolve(str(work), str(work / ".git"), "forged")
    assert checkpoint.resolve(str(work), str(work / ".git"), last=True)[0] == "task-1"


def test_a_crafted_tree_with_a_symlink_and_a_path_below_it_writes_nothing_outside(work, tmp_path):
    outside = tmp_path / "outside-crafted"
    outside.mkdir()
    link = git(work, "hash-object", "-w", "--stdin", input=os.fsencode(str(outside))).decode().strip()
    blob = git(work, "hash-object", "-w", "--stdin", input=b"pwned\n").decode().strip()
    sub = git(work, "mktree", input=f"100644 blob {blob}\tf\n".encode()).decode().strip()
    base = git(work, "ls-tree", "HEAD").decode()
    crafted = git(work, "mktree", "--missing", input=(base + f"120000 blob {link}\td\n040000 tree {sub}\td\n").encode())
    current = checkpoint.snapshot_tree(str(work), str(work / ".git"))
    restorer = checkpoint_restore.Restorer(str(work))
    restorer.apply(checkpoint_restore.plan(str(work), crafted.decode().strip(), current))
    assert os.listdir(outside) == []
    assert ("d/f", "a parent is a symlink or a file that is not the job's") in restorer.skipped


def test_a_private_directory_owned_by_another_user_is_refused(work, monkeypatch):
    take(work, "task-1")
    real = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: real + 1)
    lines = []
    _, pending, _ = take(work, "task-2", lines)
    assert pending is None and "is owned by another user" in lines[0]


def test_finish_never_runs_git_after_the_lease_is_released(work, monkeypatch):
    checkpointer, pending, name = take(work, "task-1")
    calls = []
    monkeypatch.setattr(checkpoint, "git", lambda *args, **kw: calls.append(args) or b"")
    checkpointer.finish("VERIFIED_DONE")  # one dispatch, no digest-based count, measure() not called
    assert calls == []
    runs = (work / ".git" / checkpoint.RUNS_LOG).read_text()
    assert runs.endswith(" type=run-end state=VERIFIED_DONE jobs=task-1:?\n")


def test_a_checkpoint_is_taken_only_after_the_lease_guard_confirmed_the_launch(monkeypatch):
    from types import SimpleNamespace

    from maestro.workflow import turn

    monkeypatch.setattr(turn, "write_routing", lambda pins: ("gpt", "", "", None))
    taken = []
    joblock = SimpleNamespace(acquire=lambda: 0, release=lambda: 0)
    write_turn = turn.WriteTurn(
        lease=SimpleNamespace(guard=lambda: False), pins=None, checkpoint=taken.append,
        joblock_factory=lambda kind: joblock, transport=SimpleNamespace(write_probe=lambda: ""),
        emit=lambda line: None, signals=SimpleNamespace(stop_requested=lambda: False),
        max_idle=1, poll=1, max_total=1, clock=lambda: 0.0)
    outcome = write_turn.run("# plan")
    assert outcome.rc == 11 and taken == []  # lease lost: no git run, no commit for a write that never starts
