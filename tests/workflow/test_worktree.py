"""maestro's isolated worktrees as a domain (maestro/workflow/worktree.py): names, creation and resumption,
what counts as maestro's (a marker git cannot be tricked into pointing elsewhere), the commit (fixed author,
no user hooks, trailers) and removal (refused while a lease or job lock exists; only maestro's)."""

import os
from pathlib import Path

import pytest
from testing.git import git

from maestro.errors import MaestroError, UsageError
from maestro.workflow import worktree as worktrees
from maestro.workflow import worktree_run

pytestmark = pytest.mark.in_process


@pytest.mark.parametrize("name", ["a", "fix-value", "v1.2_x", "A" * 64])
def test_usable_names(name):
    assert worktrees.validate_name(name) == name


@pytest.mark.parametrize("name", ["", "-x", ".x", "a..b", "a.", "a.lock", "A.LOCK", "a/b", "a b", "a~1", "a^",
                                  "a:b", "a@{1}", "é", "A" * 65, "a\nb"])
def test_unusable_names(name):
    with pytest.raises(UsageError, match="is not usable"):
        worktrees.validate_name(name)


def test_default_name_is_the_plan_title_plus_a_unique_suffix():
    first, second = worktrees.default_name("Set VALUE to 2!"), worktrees.default_name("Set VALUE to 2!")
    assert first.startswith("set-value-to-2-") and len(first) == len("set-value-to-2-") + 6 and first != second
    assert worktrees.default_name("…").startswith("task-")
    assert len(worktrees.default_name("x" * 300)) <= 32 + 7


def test_prepare_excludes_the_worktrees_dir_once_keeping_the_users_excludes(repo):
    exclude = repo / ".git" / "info" / "exclude"
    exclude.write_text("*.log")  # no trailing newline
    wt, resumed = worktrees.prepare(str(repo), "one", title="T")
    worktrees.prepare(str(repo), "two")
    assert not resumed and wt.branch == "maestro/one" and wt.path == str(repo / ".maestro-worktrees" / "one")
    lines = exclude.read_text().splitlines()
    assert lines[0] == "*.log" and lines.count("/.maestro-worktrees/") == 1
    assert git(repo, "status", "--porcelain") == b""
    again, resumed = worktrees.prepare(str(repo), "one")
    assert resumed and again.path == wt.path and again.record["title"] == "T"


def test_prepare_refuses_what_maestro_did_not_create(repo, tmp_path):
    (repo / ".maestro-worktrees" / "plain").mkdir(parents=True)
    with pytest.raises(UsageError, match="already exists and is not a maestro worktree"):
        worktrees.prepare(str(repo), "plain")
    git(repo, "worktree", "add", "-q", "-b", "maestro/users", str(tmp_path / "users"))
    with pytest.raises(UsageError, match="branch maestro/users already exists"):
        worktrees.prepare(str(repo), "users")
    assert [wt.name for wt in worktrees.find_all(str(repo))] == []
    worktrees.prepare(str(repo), "mine")
    with pytest.raises(UsageError, match="already exists at"):
        worktrees.prepare(str(repo), "mine", str(tmp_path / "elsewhere"))
    with pytest.raises(UsageError, match="inside this worktree"):
        worktrees.prepare(str(repo), "inner", str(repo / "sub"))
    link = tmp_path / "link-into-repo"
    link.symlink_to(repo)
    with pytest.raises(UsageError, match="inside this worktree"):
        worktrees.prepare(str(repo), "inner", str(link / "sub"))  # a symlink does not hide where it lands


def test_a_planted_worktrees_symlink_is_never_followed(repo, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".maestro-worktrees").symlink_to(elsewhere)
    with pytest.raises(UsageError, match="is a symlink or not a directory"):
        worktrees.prepare(str(repo), "out")
    assert list(elsewhere.iterdir()) == [] and git(repo, "branch", "--list", "maestro/out") == b""


def test_a_forged_or_redirected_marker_is_not_maestros(repo, tmp_path):
    wt, _ = worktrees.prepare(str(repo), "real")
    marker = Path(wt.git_dir) / worktrees.MARKER
    text = marker.read_text()
    assert [found.name for found in worktrees.find_all(str(repo))] == ["real"]
    marker.rename(marker.with_suffix(".bak"))
    marker.symlink_to(marker.with_suffix(".bak"))
    assert worktrees.find_all(str(repo)) == []  # a symlinked marker is not read
    marker.unlink()
    marker.write_text(text.replace(str(repo / ".maestro-worktrees" / "real"), str(tmp_path)))
    assert worktrees.find_all(str(repo)) == []  # its path must be the one git has on record
    marker.write_text(text.replace('"maestro/real"', '"main"'))
    assert worktrees.find_all(str(repo)) == []  # only maestro/<name> branches
    marker.write_text("{not json")
    assert worktrees.find_all(str(repo)) == []


def test_commit_uses_a_fixed_author_runs_no_user_hook_and_carries_trailers(repo, tmp_path):
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("pre-commit", "commit-msg", "post-commit", "post-checkout"):
        (hooks / hook).write_text(f"#!/bin/sh\necho ran >> {tmp_path}/{hook}\nexit 1\n")
        (hooks / hook).chmod(0o755)
    git(repo, "config", "core.hooksPath", str(hooks))
    git(repo, "config", "--unset", "user.name")
    wt, _ = worktrees.prepare(str(repo), "hooked")
    with open(os.path.join(wt.path, "app.py"), "w") as handle:
        handle.write("VALUE = 2\n")
    with open(os.path.join(wt.path, "added.txt"), "w") as handle:
        handle.write("new\n")
    commit = worktrees.commit(wt, "Set VALUE to 2", ["task-1", "task-2"], "pytest -q\n&& echo ok")
    assert commit and not any((tmp_path / hook).exists() for hook in ("pre-commit", "commit-msg", "post-commit",
                                                                      "post-checkout"))
    author = git(repo, "log", "-1", "--format=%an <%ae>|%cn", commit).decode().strip()
    assert author == "maestro <maestro@localhost>|maestro"
    trailers = git(repo, "interpret-trailers", "--parse", input=git(repo, "log", "-1", "--format=%B", commit))
    assert trailers.decode().splitlines() == ["Maestro-Job: task-1", "Maestro-Job: task-2",
                                              "Maestro-Verify: pytest -q && echo ok"]
    assert git(repo, "show", "--name-only", "--format=", commit).decode().split() == ["added.txt", "app.py"]
    assert worktrees.commit(wt, "again", [], "true") is None  # nothing left to commit


def test_the_users_author_is_kept_when_configured(repo):
    wt, _ = worktrees.prepare(str(repo), "authored")
    with open(os.path.join(wt.path, "app.py"), "w") as handle:
        handle.write("VALUE = 2\n")
    commit = worktrees.commit(wt, "T", [], None)
    assert git(repo, "log", "-1", "--format=%an", commit).decode().strip() == "t"
    assert b"Maestro-Verify: none" in git(repo, "log", "-1", "--format=%B", commit)


def test_remove_refuses_while_a_lease_or_job_lock_exists_and_touches_only_maestros(repo, tmp_path, monkeypatch):
    wt, _ = worktrees.prepare(str(repo), "busy")
    lease = os.path.join(wt.git_dir, "maestro-write.lock")
    os.mkdir(lease)  # whatever its state: held, orphaned, poisoned or unreadable
    with pytest.raises(MaestroError, match="its write lease is present") as refused:
        worktrees.remove(str(repo), "busy")
    assert refused.value.code == 11 and os.path.isdir(wt.path)
    with pytest.raises(MaestroError, match="its write lease is unidentifiable"):  # the command's judging (status')
        worktrees.remove(str(repo), "busy", judge=lambda git_dir: "its write lease is unidentifiable")
    os.rmdir(lease)
    os.mkdir(os.path.join(wt.git_dir, "maestro-job-lock"))
    with pytest.raises(MaestroError, match="companion job lock is present"):
        worktrees.remove(str(repo), "busy")
    os.rmdir(os.path.join(wt.git_dir, "maestro-job-lock"))
    monkeypatch.chdir(wt.path)
    with pytest.raises(UsageError, match="from outside that worktree"):
        worktrees.remove(str(repo), "busy")
    monkeypatch.chdir(repo)
    with open(os.path.join(wt.path, "scratch.txt"), "w") as handle:
        handle.write("uncommitted\n")
    removed = worktrees.remove(str(repo), "busy")
    assert removed.removed_head and not os.path.exists(wt.path) and not os.path.exists(wt.git_dir)
    assert git(repo, "branch", "--list", "maestro/busy") == b""
    git(repo, "worktree", "add", "-q", "-b", "maestro/users", str(tmp_path / "users"))
    with pytest.raises(UsageError, match="no maestro worktree named 'users'"):
        worktrees.remove(str(repo), "users")
    assert (tmp_path / "users").is_dir() and git(repo, "branch", "--list", "maestro/users")


def test_remove_of_a_worktree_whose_directory_was_deleted_by_hand(repo):
    import shutil

    wt, _ = worktrees.prepare(str(repo), "gone")
    shutil.rmtree(wt.path)
    assert worktrees.describe(worktrees.find(str(repo), "gone"))["exists"] is False
    with pytest.raises(UsageError, match="directory is gone"):
        worktrees.prepare(str(repo), "gone")
    worktrees.remove(str(repo), "gone")
    assert worktrees.find_all(str(repo)) == [] and git(repo, "branch", "--list", "maestro/gone") == b""
    assert b"gone" not in git(repo, "worktree", "list", "--porcelain")


def test_jobs_since_reads_only_the_dispatches_of_this_run(tmp_path):
    log = tmp_path / "maestro-provenance.log"
    log.write_text("2026 type=dispatch job=task-old session=s before=a after=b\n")
    offset = worktree_run.log_size(str(tmp_path))
    with open(log, "a") as handle:
        handle.write("2026 type=gap prior_job=task-old session=s expected=a observed=b\n"
                     "2026 type=dispatch job=task-new session=s before=a after=b\n"
                     "2026 type=dispatch job=task-new session=s before=a after=b\n"
                     "2026 type=dispatch job=unknown session=s before=a after=b\n")
    assert worktree_run.jobs_since(str(tmp_path), offset) == ["task-new"]
    assert worktree_run.jobs_since(str(tmp_path / "missing"), 0) == []


def test_a_worktree_whose_marker_cannot_be_written_is_taken_back(repo, monkeypatch):
    def full_disk(git_dir, record):
        raise OSError(28, "No space left on device")

    write_marker = worktrees.write_marker
    monkeypatch.setattr(worktrees, "write_marker", full_disk)
    with pytest.raises(OSError, match="No space left"):
        worktrees.prepare(str(repo), "half")
    assert not (repo / ".maestro-worktrees" / "half").exists() and git(repo, "branch", "--list", "maestro/half") == b""
    monkeypatch.setattr(worktrees, "write_marker", write_marker)  # (not undo(): that would also undo the isolated HOME)
    assert worktrees.prepare(str(repo), "half")[1] is False  # the name is usable again


def test_remove_drops_the_worktrees_checkpoints_and_companion_data_so_a_reused_name_starts_clean(repo):
    from maestro.codex import plugin_data
    from maestro.provenance import checkpoint

    def take(root, job):
        tree = checkpoint.snapshot_tree(root, git_dir=gitscope_dir(root))
        checkpoint.set_ref(root, job, checkpoint.commit_tree(root, tree, "T", "s"))

    wt, _ = worktrees.prepare(str(repo), "reused")
    take(wt.path, "task-in-worktree")
    take(str(repo), "task-in-checkout")  # the user's own checkpoint: never dropped by a worktree's removal
    data = plugin_data.ensure_data_dir(wt.path)
    Path(data, "state").mkdir()
    removed = worktrees.remove(str(repo), "reused")
    assert removed.dropped_checkpoints == ["task-in-worktree"] and removed.companion_data_kept == ""
    assert not os.path.exists(data)
    assert [row[0] for row in checkpoint.list_refs(str(repo))] == ["task-in-checkout"]
    again, resumed = worktrees.prepare(str(repo), "reused")
    assert not resumed and checkpoint.list_refs(again.path) == []  # not the old run's checkpoints


def test_remove_keeps_a_companion_data_dir_whose_broker_may_still_run_or_that_is_not_ours(repo, tmp_path):
    from maestro.codex import plugin_data

    wt, _ = worktrees.prepare(str(repo), "broker")
    data = plugin_data.ensure_data_dir(wt.path)
    state = Path(plugin_data.state_dir(data, wt.path))
    state.mkdir(parents=True)
    (state / "broker.json").write_text('{"pid": 1}')
    assert "broker record" in worktrees.remove(str(repo), "broker").companion_data_kept and os.path.isdir(data)
    wt, _ = worktrees.prepare(str(repo), "linked")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious").write_text("x")
    os.symlink(elsewhere, plugin_data.data_dir(wt.path))  # a planted symlink is never followed into a delete
    assert "not a private directory" in worktrees.remove(str(repo), "linked").companion_data_kept
    assert (elsewhere / "precious").exists()


def gitscope_dir(root):
    from maestro.util import git as gitscope

    return gitscope.git_dir(root)


def test_the_commit_message_carries_no_secret_of_the_verify_command_or_title(repo):
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    wt, _ = worktrees.prepare(str(repo), "secret")
    Path(wt.path, "app.py").write_text("VALUE = 2\n")
    commit = worktrees.commit(wt, f"Deploy with {token}", ["task-1"], f"curl -H 'Authorization: Bearer {token}' x")
    message = git(repo, "log", "-1", "--format=%B", commit).decode()
    assert token not in message and token[4:20] not in message
    assert "Maestro-Verify: curl -H" in message and message.startswith("Deploy with ")


@pytest.mark.parametrize("move", [["switch", "-q", "-c", "elsewhere"], ["switch", "-q", "--detach"]])
def test_commit_refuses_when_head_left_the_worktrees_branch(repo, move):
    wt, _ = worktrees.prepare(str(repo), "moved")
    git(wt.path, *move)
    Path(wt.path, "app.py").write_text("VALUE = 2\n")
    with pytest.raises(worktrees.NotOnBranch, match="instead of maestro/moved, so nothing was committed") as refused:
        worktrees.commit(wt, "T", [], "true")
    assert refused.value.code == 11 and git(repo, "rev-parse", "maestro/moved") == git(repo, "rev-parse", "HEAD")
    assert (b"elsewhere" if "-c" in move else b"detached at") in refused.value.message.encode()


@pytest.mark.parametrize("interrupt_in", ["worktree add", "marker"])
def test_ctrl_c_while_creating_takes_the_half_made_worktree_back(repo, monkeypatch, interrupt_in):
    real_git, real_marker = worktrees._git, worktrees.write_marker

    def interrupted_git(args, cwd, check=True, **env):
        result = real_git(args, cwd, check, **env)
        if args[:2] == ["worktree", "add"]:
            raise KeyboardInterrupt  # after git made it, before it returned
        return result

    def interrupted_marker(git_dir, record):
        raise KeyboardInterrupt

    if interrupt_in == "marker":
        monkeypatch.setattr(worktrees, "write_marker", interrupted_marker)
    else:
        monkeypatch.setattr(worktrees, "_git", interrupted_git)
    with pytest.raises(KeyboardInterrupt):
        worktrees.prepare(str(repo), "half")
    assert not (repo / ".maestro-worktrees" / "half").exists() and git(repo, "branch", "--list", "maestro/half") == b""
    monkeypatch.setattr(worktrees, "_git", real_git)  # (not undo(): that would also undo the isolated HOME)
    monkeypatch.setattr(worktrees, "write_marker", real_marker)
    assert worktrees.prepare(str(repo), "half")[1] is False


def test_an_unmarked_leftover_is_refused_with_the_two_git_commands_that_clean_it(repo):
    leftover = repo / ".maestro-worktrees" / "killed"
    git(repo, "worktree", "add", "-q", "-b", "maestro/killed", str(leftover))  # as a kill -9 before the marker
    cleanup = f"git worktree remove --force {leftover} && git branch -D maestro/killed"
    with pytest.raises(UsageError) as refused:
        worktrees.prepare(str(repo), "killed")
    assert cleanup in refused.value.message
    with pytest.raises(UsageError) as refused:
        worktrees.remove(str(repo), "killed")
    assert "no maestro worktree named 'killed'" in refused.value.message and cleanup in refused.value.message
    git(repo, *cleanup.split(" && ")[0].split()[1:])
    git(repo, *cleanup.split(" && ")[1].split()[1:])
    assert worktrees.prepare(str(repo), "killed")[1] is False


class Lease:
    """A stand-in write lease: still held, its current job published."""

    metadata = {"job_id": "task-now"}

    def __init__(self, held=True):
        self.held = held

    def guard(self):
        return self.held


def isolated_run(repo, name):
    lines = []
    run = worktree_run.WorktreeRun("LOOP", "loop", worktree_run.Spec(name), "# T\n", "true", emit=lines.append,
                                   states={0: "VERIFIED_DONE", 11: "BLOCKED"})
    run.worktree, _ = worktrees.prepare(str(repo), name)
    return run, lines


def test_a_resumed_run_with_nothing_new_says_so_not_still_at_its_base(repo):
    run, lines = isolated_run(repo, "again")
    Path(run.worktree.path, "app.py").write_text("VALUE = 2\n")
    assert run.commit_result(0, Lease()) == 0 and run.committed
    assert b"Maestro-Job: task-now" in git(repo, "log", "-1", "--format=%B", "maestro/again")
    rerun, lines = isolated_run(repo, "again")  # resumed: the branch already holds the result
    assert rerun.commit_result(0, Lease()) == 0 and rerun.end(0) == 0
    assert lines[0] == (f"LOOP_WORKTREE: nothing new to commit: maestro/again stays at {run.committed[:12]} "
                        f"({rerun.worktree.path})")
    fresh, lines = isolated_run(repo, "fresh")
    fresh.commit_result(0, Lease())
    fresh.end(0)
    assert lines[0].startswith("LOOP_WORKTREE: nothing changed: maestro/fresh is still at its base")


def test_a_switched_head_or_a_lost_lease_ends_blocked_with_nothing_committed(repo):
    run, lines = isolated_run(repo, "switched")
    git(run.worktree.path, "switch", "-q", "-c", "mine")
    Path(run.worktree.path, "app.py").write_text("VALUE = 2\n")
    assert run.commit_result(0, Lease()) == 11 and run.end(11) == 11
    assert lines[0].startswith(f"LOOP_WORKTREE: HEAD of {run.worktree.path} is mine instead of maestro/switched")
    assert "nothing committed" in lines[1] and git(repo, "rev-parse", "mine") == git(repo, "rev-parse", "HEAD")
    lost, lines = isolated_run(repo, "lost")
    Path(lost.worktree.path, "app.py").write_text("VALUE = 2\n")
    assert lost.commit_result(0, Lease(held=False)) == 11
    assert "no longer this run's" in lines[0]
    assert git(repo, "rev-parse", "maestro/lost") == git(repo, "rev-parse", "HEAD")


def test_the_handoff_of_a_worktree_run_continues_in_that_worktree():
    from maestro.memory.project import handoffs

    assert handoffs.next_step("STUCK", "/p.md", "make test", worktree="fix").endswith(
        "maestro loop --worktree fix --plan /p.md --verify 'make test'")
    assert handoffs.next_step("NEEDS_ANSWERS", "/p.md", None, "watchdog", "t", worktree="fix",
                              worktree_dir="/w d").endswith("maestro watchdog --worktree=fix --worktree-dir '/w d' "
                                                            "--file /p.md")
    assert "--worktree" not in handoffs.next_step("STUCK", "/p.md", "make test")
