"""Sync between machines, three-way (issue 10 §1): edits and deletions travel, two clones of one project at
different paths meet, only a change on both sides is a conflict and each resolution converges in one round,
a lost push race is retried, and a store synced by the first format migrates. In-process, through the
domain (tests/memory/store/sync_world.py); the command's own tests are tests/commands/memory/test_sync_command.py."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from testing.git import git

from maestro.memory.store import layout
from maestro.memory.store import sync
from maestro.memory.store.errors import StoreError
from sync_world import World

pytestmark = pytest.mark.source_only  # in-process domain calls; the archive's run is test_sync_command.py


@pytest.fixture
def world(tmp_path):
    return World(tmp_path / "world")


def bodies(machine, name="KEY.md") -> list:
    return sorted(sync.compose.dedupe_key(e).split("] ", 1)[-1] for e in machine.entries(name))


def settle(*machines) -> None:
    """Two quiet rounds: every machine takes the last push; none has anything left to exchange."""
    for machine in machines:
        machine.sync()
    for machine in machines:
        assert machine.sync()["pushed"] is None, machine.name
    first = machines[0].files()
    assert all(m.files() == first for m in machines), "the machines' synced files differ"


def test_the_issue_repro_an_edit_after_a_sync_is_pushed_not_a_conflict(world):
    one = world["one"]
    one.add("K-orig")
    one.sync()
    one.replace("K-orig", "K-edited")
    result = one.sync()  # was: rc 4 modifiedBoth, push refused
    assert result["conflicts"] == [] and result["pushed"]
    assert b"K-edited" in world.remote_file(result["projectKey"]) and b"K-orig" not in world.remote_file(
        result["projectKey"])
    one.remove("K-edited")
    assert one.sync()["pushed"] and world.remote_file(result["projectKey"]) == b""


def test_two_clones_at_different_paths_meet_on_the_root_commit_branch(world):
    one, two = world["one"], world["two"]
    assert one.cwd != two.cwd and one.project_dir.name != two.project_dir.name  # different local storage keys
    one.add("decided in the first clone")
    first = one.sync()
    root = git(world.origin, "rev-list", "--max-parents=0", "HEAD").decode().split()[0]
    assert first["identity"] == "root" and first["projectKey"] == f"root-{root[:20]}"
    assert world.remote_branches() == [f"maestro-memory/root-{root[:20]}"]
    second = two.sync()
    assert second["files"]["KEY.md"]["added"] == 1 and second["branch"] == first["branch"]
    assert bodies(two) == ["decided in the first clone"]


def test_an_edit_and_a_deletion_travel_both_ways(world):
    one, two = world["one"], world["two"]
    one.add("alpha v1")
    one.add("beta")
    one.add("a project note", track="project")
    one.sync()
    two.sync()
    one.replace("alpha v1", "alpha v2")
    one.remove("a project note", track="project")
    two.remove("beta")
    one.sync()
    result = two.sync()
    assert result["conflicts"] == [] and result["files"]["KEY.md"]["updated"] == 1
    assert result["files"]["MEMORY.md"]["removed"] == 1
    settle(one, two)
    assert bodies(one) == bodies(two) == ["alpha v2"] and one.entries("MEMORY.md") == []


def test_todo_status_changes_are_edits_that_travel(world):
    one, two = world["one"], world["two"]
    todo, _ = one.todos.add("ship the release", "project", cwd=one.cwd)
    one.sync()
    two.sync()
    two.todos.set_status(todo.id, "doing", cwd=two.cwd)
    two.sync()
    one.sync()
    (seen,) = [t for t in one.todos.all(one.cwd) if t.id == todo.id]
    assert seen.status == "doing"
    one.todos.set_status(todo.id, "done", cwd=one.cwd)
    assert one.sync()["conflicts"] == []
    settle(one, two)


def edit_on_both(world):
    one, two = world["one"], world["two"]
    one.add("shared decision")
    one.add("untouched")
    one.sync()
    two.sync()
    one.replace("shared decision", "shared decision, as one sees it")
    two.replace("shared decision", "shared decision, as two sees it")
    one.sync()
    return one, two


@pytest.mark.parametrize("how, kept", [
    ("local", ["shared decision, as two sees it"]),
    ("remote", ["shared decision, as one sees it"]),
    ("both", ["shared decision, as one sees it", "shared decision, as two sees it"]),
])
def test_an_entry_edited_on_both_machines_is_a_conflict_each_resolution_converges_in_one_round(world, how, kept):
    one, two = edit_on_both(world)
    (conflict,) = two.conflicted_sync()
    assert conflict["kind"] == "modifiedBoth" and conflict["file"] == "KEY.md"
    assert "two sees it" in conflict["local"] and "one sees it" in conflict["remote"]
    assert [c["id"] for c in two.resolve(how)] == [conflict["id"]]
    two.sync()
    assert one.sync()["conflicts"] == []  # one round: one takes two's choice as a one-sided change
    settle(one, two)
    assert bodies(one) == sorted(kept + ["untouched"])
    if how == "both":
        ids = [sync.grammar.entry_id(e) for e in one.entries()]
        assert len(set(ids)) == 3 and conflict["id"] in ids


@pytest.mark.parametrize("deleter, how, survives", [
    ("one", "local", True), ("one", "remote", False), ("two", "local", False), ("two", "both", True),
])
def test_an_edit_against_a_deletion_is_a_conflict_and_the_chosen_side_wins(world, deleter, how, survives):
    one, two = world["one"], world["two"]
    one.add("contested")
    one.sync()
    two.sync()
    editor = two if deleter == "one" else one
    world[deleter].remove("contested")
    editor.replace("contested", "contested, but edited")
    one.sync()  # one pushes first: two sees the conflict
    (conflict,) = two.conflicted_sync()
    if deleter == "one":
        assert conflict["kind"] == "deletedRemote" and conflict["remote"] is None and "edited" in conflict["local"]
    else:
        assert conflict["kind"] == "deletedLocal" and conflict["local"] is None and "edited" in conflict["remote"]
    two.resolve(how)
    two.sync()
    settle(one, two)
    assert bodies(one) == (["contested, but edited"] if survives else [])


def test_a_push_that_loses_the_race_fetches_and_merges_again(world):
    one, two = world["one"], world["two"]
    one.add("from one")
    two.add("from two")
    raced = []

    def other_machine_pushes_first(attempt):
        if not raced:
            raced.append(attempt)
            two.sync()

    result = one.sync(before_push=other_machine_pushes_first)
    assert raced == [1] and result["attempts"] == 2 and result["conflicts"] == []
    key = result["projectKey"]
    assert b"from one" in world.remote_file(key) and b"from two" in world.remote_file(key)
    settle(one, two)


def test_a_push_that_keeps_losing_says_in_one_line_what_to_do(world):
    one, two = world["one"], world["two"]
    one.add("from one")

    def always_beaten(attempt):
        two.add(f"beat you {attempt}")
        two.sync()

    with pytest.raises(sync.SyncError) as caught:
        one.sync(before_push=always_beaten)
    message = caught.value.message
    assert caught.value.reason == "busy" and "\n" not in message
    assert "run `maestro memory sync` again" in message and "hint" not in message.lower()
    assert one.sync()["pushed"]  # nothing lost: the next sync pushes one's entry beside two's
    settle(one, two)
    assert bodies(two) == ["beat you 1", "beat you 2", "beat you 3", "from one"]


def test_a_new_empty_remote_deletes_nothing(world, tmp_path):
    one = world["one"]
    one.add("kept")
    one.sync()
    other = tmp_path / "other.git"
    subprocess.run(["git", "init", "-q", "--bare", str(other)], check=True, capture_output=True)
    result = sync.sync(one.store, one.cwd, remote=str(other))
    assert result["pushed"] and bodies(one) == ["kept"]


def test_project_id_names_the_branch_and_lets_plain_directories_meet(world, tmp_path):
    one, two = world["one"], world["two"]
    plain_one, plain_two = tmp_path / "a" / "notes", tmp_path / "b" / "elsewhere"
    plain_one.mkdir(parents=True)
    plain_two.mkdir(parents=True)
    one.store.add("key", "outside git", cwd=str(plain_one))
    first = sync.sync(one.store, str(plain_one), remote=world.remote_url, project_id="team-notes")
    assert first["branch"] == "maestro-memory/id-team-notes"
    again = sync.sync(one.store, str(plain_one))  # the identity is pinned: no --project-id needed again
    assert again["branch"] == "maestro-memory/id-team-notes"
    sync.sync(two.store, str(plain_two), remote=world.remote_url, project_id="team-notes")
    listed = two.store.list("key", cwd=str(plain_two)).entries
    assert [sync.compose.dedupe_key(e).split("] ", 1)[-1] for e in listed] == ["outside git"]


@pytest.mark.parametrize("bad", ["", "-x", "a/b", "a..b", "x.lock", "a b", "x" * 65, "ä"])
def test_an_unsafe_project_id_is_refused_before_any_git_call(store, project, tmp_path, bad):
    with pytest.raises(StoreError) as caught:
        sync.sync(store, str(project), remote=str(tmp_path / "nowhere.git"), project_id=bad)
    assert caught.value.reason == "usage" and "--project-id" in caught.value.message
    assert not os.path.exists(os.path.join(store.layout.meta_dir, "sync"))


def legacy_store(world, machine, entries, synced=None, conflicts=(), overrides=None):
    """A store as the first format left it after a sync: state keyed by the path hash with ids only,
    the work area `.maestro-memory/sync/<h>/` holding `synced` (default: `entries`, what it pushed; after
    a sync that stopped on conflicts: the remote as fetched), on branch maestro-memory/<h>."""
    h = layout.project_hash(layout.project_root(machine.cwd))
    machine.project_dir.mkdir(parents=True, exist_ok=True)
    (machine.project_dir / "KEY.md").write_text("\n§\n".join(entries) + "\n")
    synced = entries if synced is None else synced
    work = machine.store.layout.meta_dir + f"/sync/{h}"
    os.makedirs(f"{work}/projects/{h}")
    git(work, "init", "-q", "-b", f"maestro-memory/{h}")
    git(work, "remote", "add", "origin", world.remote_url)
    with open(f"{work}/projects/{h}/KEY.md", "w") as handle:
        handle.write("\n§\n".join(synced) + "\n")
    git(work, "add", "-A")
    git(work, "-c", "user.name=m", "-c", "user.email=m@x", "commit", "-qm", "old sync")
    git(work, "push", "-q", "origin", f"HEAD:refs/heads/maestro-memory/{h}")
    ids = sorted(sync.grammar.entry_id(e) for e in synced)
    state = {"version": 1, "projects": {h: {"lastSync": {"KEY.md": ids}, "conflicts": list(conflicts),
                                              "overrides": overrides or {}}}}
    with open(machine.store.layout.meta_dir + "/sync-state.json", "w") as handle:
        json.dump(state, handle)
    machine.enabled = True
    return h, work


A = "[id:0000000a] [2024-05-01 10:00] [summary:a] decision a"
B = "[id:0000000b] [2024-05-01 10:01] [summary:b] decision b"
C = "[id:0000000c] [2024-05-01 10:02] [summary:c] decision c"


def test_a_first_format_store_migrates_without_losing_its_last_sync(world):
    one = world["one"]
    h, work = legacy_store(world, one, [A, B, C])
    # after that old sync: a edited here, b deleted here; the old branch got d from this path's other user
    one.replace("decision a", "decision a, edited after the last old sync")
    one.remove("decision b")
    git(work, "checkout", "-q", "-b", "other")
    with open(f"{work}/projects/{h}/KEY.md", "a") as handle:
        handle.write("§\n[id:0000000d] [2024-05-01 10:03] [summary:d] decision d\n")
    git(work, "-c", "user.name=m", "-c", "user.email=m@x", "commit", "-qam", "the other machine")
    git(work, "push", "-q", "origin", f"HEAD:refs/heads/maestro-memory/{h}")
    git(work, "checkout", "-q", f"maestro-memory/{h}")  # the work tree: what this machine last synced

    result = one.sync()  # was keyed by the path hash; now the root commit names the branch
    assert result["migrated"] and result["conflicts"] == [] and result["projectKey"].startswith("root-")
    assert bodies(one) == ["decision a, edited after the last old sync", "decision c", "decision d"]
    pushed = world.remote_file(result["projectKey"]).decode()
    assert "edited after" in pushed and "decision b" not in pushed and "decision d" in pushed
    state = json.loads(Path(one.store.layout.meta_dir, "sync-state.json").read_text())
    assert state["version"] == 2 and state["projects"][h]["identity"].startswith("root:")
    assert "overrides" not in state["projects"][h]
    two = world["two"]  # a new clone elsewhere meets the migrated branch
    two.sync()
    assert bodies(two) == bodies(one)
    git(work, "push", "-q", "origin", "--delete", f"maestro-memory/{h}")
    assert one.sync()["pushed"] is None  # the old branch is read once, at the migration only


C_MINE = "[id:0000000c] [2024-05-01 10:02] [summary:c] decision c, as this machine has it"


def test_a_first_format_local_resolution_still_wins_after_the_upgrade(world):
    one = world["one"]
    legacy_store(world, one, [A, C_MINE], synced=[A, C], overrides={"KEY.md": ["0000000c"]})
    result = one.sync()
    assert result["conflicts"] == [] and result["pushed"]
    assert "as this machine has it" in world.remote_file(result["projectKey"]).decode()


def test_a_first_format_unresolved_conflict_stays_a_conflict_until_resolved(world):
    one, two = world["one"], world["two"]
    recorded = {"file": "KEY.md", "id": "0000000c", "kind": "modifiedBoth", "local": C_MINE, "remote": C}
    legacy_store(world, one, [A, C_MINE], synced=[A, C], conflicts=[recorded])
    (conflict,) = one.conflicted_sync()
    assert conflict["id"] == "0000000c" and conflict["kind"] == "modifiedBoth"
    one.resolve("remote")
    one.sync()
    two.sync()
    settle(one, two)
    assert bodies(two) == ["decision a", "decision c"]


def test_a_remote_branch_holding_a_directory_where_a_file_belongs_is_refused_and_nothing_is_written(world, tmp_path):
    one, two = world["one"], world["two"]
    one.add("fine")
    key = one.sync()["projectKey"]
    hand = tmp_path / "hand"
    git(tmp_path, "clone", "-q", "-b", f"maestro-memory/{key}", world.remote_url, str(hand))
    (hand / "projects" / key / "KEY.md").unlink()
    (hand / "projects" / key / "KEY.md").mkdir()
    (hand / "projects" / key / "KEY.md" / "x").write_text("x\n")
    git(hand, "add", "-A")
    git(hand, "-c", "user.name=m", "-c", "user.email=m@x", "commit", "-qm", "broken")
    git(hand, "push", "-q", "origin", f"HEAD:maestro-memory/{key}")
    two.add("mine")
    before = two.files()
    with pytest.raises(sync.SyncError) as caught:
        two.sync()
    assert caught.value.reason == "malformed" and "is a tree, not a file" in caught.value.message
    assert two.files() == before


@pytest.mark.parametrize("project", [[], {"base": []}, {"base": {"KEY.md": ["x"]}}, {"conflicts": {}}])
def test_a_malformed_sync_state_is_reported_not_a_crash(world, project):
    one = world["one"]
    one.add("kept")
    one.sync()
    h = layout.project_hash(layout.project_root(one.cwd))
    Path(one.store.layout.meta_dir, "sync-state.json").write_text(json.dumps({"projects": {h: project}}))
    for call in (one.sync, lambda: one.resolve("local")):
        with pytest.raises(StoreError) as caught:
            call()
        assert caught.value.reason == "malformed" and "sync state" in caught.value.message


OTHER_D = "[id:0000000d] [2024-05-01 10:03] [summary:d] decision d"


def test_a_resolve_before_the_first_sync_after_an_upgrade_keeps_the_old_branch_and_the_migrated_base(world):
    one = world["one"]
    recorded = {"file": "KEY.md", "id": "0000000c", "kind": "modifiedBoth", "local": C_MINE, "remote": C}
    h, work = legacy_store(world, one, [A, C_MINE], synced=[A, C], conflicts=[recorded])
    git(work, "checkout", "-q", "-b", "other")  # the other machine's old sync pushed d to the old branch
    with open(f"{work}/projects/{h}/KEY.md", "a") as handle:
        handle.write("§\n" + OTHER_D + "\n")
    git(work, "-c", "user.name=m", "-c", "user.email=m@x", "commit", "-qam", "the other machine")
    git(work, "push", "-q", "origin", f"HEAD:refs/heads/maestro-memory/{h}")
    git(work, "checkout", "-q", f"maestro-memory/{h}")
    one.resolve("local")
    assert one.sync()["migrated"] is True
    assert "decision d" in bodies(one)


def test_the_first_sync_of_a_new_project_is_not_a_migration(world):
    one = world["one"]
    one.add("fine")
    assert one.sync()["migrated"] is False
