"""`memory sync` end to end through the `maestro` fixture (the source tree in-process, or the archive as a
real process): the issue 10 §1 repro, an edit travelling between two clones at different paths, the
conflict envelope, and `--project-id`. The merge itself is tested in tests/memory/store/test_sync_*.py."""

import json
import subprocess

import pytest

from testing.git import git, git_repo


@pytest.fixture
def world(tmp_path):
    origin = git_repo(tmp_path / "origin", {"README.md": "the project\n"})
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True, capture_output=True)
    clones = {}
    for name, where in (("one", "home/a/src"), ("two", "Users/a/code")):
        (tmp_path / where).mkdir(parents=True)
        git(tmp_path / where, "clone", "-q", str(origin), "x")
        clones[name] = tmp_path / where / "x"
    return {"remote": remote, "url": f"file://{remote}", "clones": clones,
            "stores": {name: tmp_path / f"store-{name}" for name in clones}}


def memory(maestro, world, name, *args):
    return maestro("memory", *args, "--cwd", str(world["clones"][name]),
                   env={"MAESTRO_MEMORY_DIR": str(world["stores"][name])})


def remote_branches(world) -> list:
    out = subprocess.run(["git", "--git-dir", str(world["remote"]), "branch", "--format=%(refname:short)"],
                         capture_output=True, check=True).stdout.decode()
    return out.split()


def remote_key(world) -> str:
    (branch,) = remote_branches(world)
    key = branch.split("/", 1)[1]
    return subprocess.run(["git", "--git-dir", str(world["remote"]), "show", f"{branch}:projects/{key}/KEY.md"],
                          capture_output=True, check=True).stdout.decode()


def test_the_issue_repro_replace_after_sync_is_pushed_with_rc_0(maestro, world):
    assert memory(maestro, world, "one", "add", "key", "K-orig").rc == 0
    first = memory(maestro, world, "one", "sync", "--remote", world["url"])
    assert first.rc == 0, first.out + first.err
    assert memory(maestro, world, "one", "replace", "key", "K-edited", "--match", "K-orig").rc == 0
    second = memory(maestro, world, "one", "sync")
    assert second.rc == 0, second.out + second.err  # was rc 4 modifiedBoth
    assert "pushed" in second.out and "K-edited" in remote_key(world) and "K-orig" not in remote_key(world)


def test_an_edit_travels_between_two_clones_at_different_paths(maestro, world):
    memory(maestro, world, "one", "add", "key", "use sqlite for the cache")
    assert memory(maestro, world, "one", "sync", "--remote", world["url"]).rc == 0
    got = memory(maestro, world, "two", "sync", "--remote", world["url"], "--json")
    assert got.rc == 0, got.err
    envelope = json.loads(got.out)
    assert envelope["ok"] and envelope["identity"] == "root" and envelope["files"]["KEY.md"]["added"] == 1
    assert envelope["branch"].startswith("maestro-memory/root-") and remote_branches(world) == [envelope["branch"]]
    memory(maestro, world, "two", "replace", "key", "use postgres for the cache", "--match", "sqlite")
    assert memory(maestro, world, "two", "sync").rc == 0
    back = memory(maestro, world, "one", "sync")
    assert back.rc == 0 and "KEY.md: 1 local, 1 remote, 0 added, 1 updated" in back.out, back.out
    listed = memory(maestro, world, "one", "list", "key")
    assert "postgres" in listed.out and "sqlite" not in listed.out


def test_a_conflict_keeps_the_envelope_and_a_deletion_shows_as_deleted(maestro, world):
    memory(maestro, world, "one", "add", "key", "contested decision")
    memory(maestro, world, "one", "sync", "--remote", world["url"])
    memory(maestro, world, "two", "sync", "--remote", world["url"])
    memory(maestro, world, "one", "remove", "key", "--match", "contested")
    memory(maestro, world, "two", "replace", "key", "contested decision, revised", "--match", "contested")
    assert memory(maestro, world, "one", "sync").rc == 0
    clash = memory(maestro, world, "two", "sync", "--json")
    assert clash.rc == 4 and "conflicts exist, resolve first" in clash.err
    envelope = json.loads(clash.out)
    assert envelope["ok"] is False and envelope["error"]["reason"] == "conflict"
    (conflict,) = envelope["conflicts"]
    assert conflict["kind"] == "deletedRemote" and conflict["remote"] is None and "revised" in conflict["local"]
    assert set(conflict) == {"file", "id", "kind", "local", "remote"}
    plain = memory(maestro, world, "two", "sync")
    assert plain.rc == 4 and "| remote (deleted)" in plain.out
    settled = memory(maestro, world, "two", "sync", "--resolve", "local")
    assert settled.rc == 0 and f"resolved KEY.md {conflict['id']} (deletedRemote): local" in settled.out
    assert memory(maestro, world, "two", "sync").rc == 0
    assert memory(maestro, world, "one", "sync").rc == 0
    assert "revised" in memory(maestro, world, "one", "list", "key").out


def test_project_id_is_validated_and_names_the_branch(maestro, world):
    bad = memory(maestro, world, "one", "sync", "--remote", world["url"], "--project-id", "../evil")
    assert bad.rc == 3 and "--project-id" in bad.err and remote_branches(world) == []
    assert not (world["stores"]["one"] / ".maestro-memory" / "sync").exists()
    memory(maestro, world, "one", "add", "key", "named by hand")
    done = memory(maestro, world, "one", "sync", "--remote", world["url"], "--project-id", "team.notes")
    assert done.rc == 0 and "branch maestro-memory/id-team.notes" in done.out, done.out + done.err
    wrong = memory(maestro, world, "one", "sync", "--resolve", "local", "--project-id", "x")
    assert wrong.rc == 3 and "--project-id" in wrong.err
