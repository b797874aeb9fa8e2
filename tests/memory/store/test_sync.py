"""Two-machine sync through git (spec memory.md §2.11; §4 scenarios 42–44): two stores (two
MAESTRO_MEMORY_DIR roots) and a local bare repository as the remote; no network."""

import hashlib
import json
import os
import subprocess

import pytest

from maestro.memory.store import sync as sync_mod

A1 = "[id:0000000a] [2024-05-01 10:00] [summary:a] decision a"
B1 = "[id:0000000b] [2024-05-01 10:01] [summary:b] decision b"
C1 = "[id:0000000c] [2024-05-01 10:02] [summary:c] decision c"
C_OTHER = "[id:0000000c] [2024-05-01 10:02] [summary:c] decision c, edited elsewhere"


@pytest.fixture
def world(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True, capture_output=True)
    h = hashlib.sha1(os.path.realpath(project).encode()).hexdigest()[:12]
    roots = {name: tmp_path / f"store-{name}" for name in ("one", "two")}
    return {"project": project, "remote": remote, "h": h, "roots": roots}


def key_path(world, name, file="KEY.md"):
    return world["roots"][name] / "projects" / world["h"] / file


def write_key(world, name, *entries):
    path = key_path(world, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(("\n§\n".join(entries) + "\n").encode() if entries else b"")


def read_key(world, name):
    path = key_path(world, name)
    return [e.strip() for e in path.read_text().split("\n§\n") if e.strip()] if path.exists() else []


def run_sync(maestro, world, name, *args, remote=True):
    argv = ["memory", "sync", "--cwd", str(world["project"]), *args]
    if remote:
        argv += ["--remote", str(world["remote"])]
    return maestro(*argv, env={"MAESTRO_MEMORY_DIR": str(world["roots"][name])})


def remote_key(world):
    done = subprocess.run(["git", "--git-dir", str(world["remote"]), "show",
                           f"maestro-memory/{world['h']}:projects/{world['h']}/KEY.md"],
                          capture_output=True, check=True)
    return [e.strip() for e in done.stdout.decode().split("\n§\n") if e.strip()]


def test_42_disjoint_ids_union_without_conflicts(maestro, world):
    write_key(world, "one", A1)
    write_key(world, "two", B1)
    first = run_sync(maestro, world, "one")
    assert first.rc == 0, first.err
    assert "pushed" in first.out
    second = run_sync(maestro, world, "two", "--json")
    assert second.rc == 0, second.err
    envelope = json.loads(second.out)
    assert envelope["ok"] and envelope["conflicts"] == [] and envelope["files"]["KEY.md"]["added"] == 1
    assert read_key(world, "two") == [B1, A1]
    again = run_sync(maestro, world, "one", remote=False)
    assert again.rc == 0, again.err
    assert read_key(world, "one") == [A1, B1]
    assert sorted(remote_key(world)) == sorted([A1, B1])


def test_idempotent_second_sync(maestro, world):
    write_key(world, "one", A1, B1)
    assert run_sync(maestro, world, "one").rc == 0
    before = key_path(world, "one").read_bytes()
    again = run_sync(maestro, world, "one", remote=False)
    assert again.rc == 0, again.err
    assert "up to date" in again.out
    assert key_path(world, "one").read_bytes() == before
    state = json.loads((world["roots"]["one"] / ".maestro-memory" / "sync-state.json").read_text())
    assert state["projects"][world["h"]]["lastSync"]["KEY.md"] == ["0000000a", "0000000b"]


def test_43_same_id_different_bodies_conflict_then_resolve_both(maestro, world):
    write_key(world, "one", C1)
    assert run_sync(maestro, world, "one").rc == 0
    write_key(world, "two", C_OTHER)
    clash = run_sync(maestro, world, "two")
    assert clash.rc == 4
    assert "conflicts exist, resolve first" in clash.err
    assert "modifiedBoth" in clash.out
    assert read_key(world, "two") == [C_OTHER]  # local kept
    assert remote_key(world) == [C1]  # push refused
    again = run_sync(maestro, world, "two", remote=False)
    assert again.rc == 4 and remote_key(world) == [C1]

    env = {"MAESTRO_MEMORY_DIR": str(world["roots"]["two"])}
    settled = maestro("memory", "sync", "--resolve", "both", "--cwd", str(world["project"]), env=env)
    assert settled.rc == 0, settled.err
    assert "resolved KEY.md 0000000c (modifiedBoth): both" in settled.out
    entries = read_key(world, "two")
    ids = [e.split("]")[0] for e in entries]
    assert len(entries) == 2 and len(set(ids)) == 2
    assert entries[0] == C_OTHER and entries[1].endswith("decision c")
    pushed = run_sync(maestro, world, "two", remote=False)
    assert pushed.rc == 0, pushed.err
    assert sorted(remote_key(world)) == sorted(entries)
    back = run_sync(maestro, world, "one", remote=False)  # one's c is still what was agreed: it takes both
    assert back.rc == 0, back.out + back.err
    assert sorted(read_key(world, "one")) == sorted(entries)
    for name in ("two", "one"):  # converged in that one round: nothing left to exchange, no new conflict
        quiet = run_sync(maestro, world, name, remote=False)
        assert quiet.rc == 0 and "up to date" in quiet.out, quiet.out + quiet.err
    assert sorted(read_key(world, "two")) == sorted(read_key(world, "one")) == sorted(remote_key(world))


def test_44_a_deletion_since_the_last_sync_travels_and_is_not_readded(maestro, world):
    write_key(world, "one", A1, B1)
    assert run_sync(maestro, world, "one").rc == 0
    assert run_sync(maestro, world, "two").rc == 0
    write_key(world, "one", A1)  # b deleted here after the last sync
    gone = run_sync(maestro, world, "one", remote=False)
    assert gone.rc == 0, gone.out + gone.err
    assert read_key(world, "one") == [A1]  # not silently re-added
    assert remote_key(world) == [A1]
    other = run_sync(maestro, world, "two", remote=False)
    assert other.rc == 0 and "1 removed" in other.out, other.out + other.err
    assert read_key(world, "two") == [A1]


def test_remote_url_credentials_are_redacted(maestro, world, tmp_path):
    write_key(world, "one", A1)
    url = "https://alice:s3cretpass@127.0.0.1:9/nothing.git"
    env = {"MAESTRO_MEMORY_DIR": str(world["roots"]["one"])}
    done = maestro("memory", "sync", "--cwd", str(world["project"]), "--remote", url, env=env)
    assert done.rc == 4
    assert "s3cretpass" not in done.out + done.err
    assert sync_mod.redact(f"fatal: unable to access '{url}'") == \
        "fatal: unable to access 'https://alice:****@127.0.0.1:9/nothing.git'"
    assert sync_mod.redact("https://tok123@host/x") == "https://****@host/x"
    assert sync_mod.redact("ssh://git@host/x") == "ssh://git@host/x"


def test_redacted_in_success_output(maestro, world, tmp_path):
    """A file:// URL with a user part: git ignores it, the output must still hide it."""
    write_key(world, "one", A1)
    url = f"file://bob:hunter2@/{world['remote']}".replace("@//", "@/")
    env = {"MAESTRO_MEMORY_DIR": str(world["roots"]["one"])}
    done = maestro("memory", "sync", "--json", "--cwd", str(world["project"]), "--remote", url, env=env)
    assert "hunter2" not in done.out + done.err


def test_write_block_is_respected(maestro, world):
    write_key(world, "one", A1)
    meta = world["roots"]["one"] / ".maestro-memory"
    meta.mkdir(parents=True)
    (meta / "write-block.json").write_text('{"blocked": true}')
    done = run_sync(maestro, world, "one")
    assert done.rc == 4 and "blocked" in done.err
    assert not (meta / "sync").exists()  # no git call, no work area
    listed = subprocess.run(["git", "--git-dir", str(world["remote"]), "branch"], capture_output=True, check=True)
    assert listed.stdout == b""


def test_not_enabled_makes_no_git_call(maestro, world):
    env = {"MAESTRO_MEMORY_DIR": str(world["roots"]["one"])}
    done = maestro("memory", "sync", "--cwd", str(world["project"]), env=env)
    assert done.rc == 3 and "--remote" in done.err
    assert not (world["roots"]["one"] / ".maestro-memory" / "sync").exists()


def test_merge_is_pure_and_handles_idless_entries():
    plain = "[2024-05-01 10:00] [summary:x] plain note"
    merged = sync_mod.merge([A1], [A1, plain, "[2024-05-01 10:00] plain note"], {"0000000a": sync_mod.UNKNOWN})
    assert merged.entries == [A1, plain] and merged.conflicts == [] and merged.added == 1


def todo_add(maestro, world, name, text):
    result = maestro("memory", "todo", "add", text, "--list", "project", "--cwd", str(world["project"]),
                     env={"MAESTRO_MEMORY_DIR": str(world["roots"][name])})
    assert result.rc == 0, result.err
    return result


def todo_texts(world, name):
    path = key_path(world, name, "TODOS.md")
    entries = [e for e in path.read_text().split("\n§\n") if e.strip()] if path.exists() else []
    return sorted(e.split("\n", 1)[1].strip() for e in entries if e.startswith("["))


def test_project_todos_sync_by_their_id_in_both_directions(maestro, world):
    todo_add(maestro, world, "one", "write the migration")
    todo_add(maestro, world, "two", "review the api")
    assert run_sync(maestro, world, "one").rc == 0
    second = run_sync(maestro, world, "two", "--json")
    assert second.rc == 0, second.err
    assert json.loads(second.out)["files"]["TODOS.md"]["added"] == 1
    assert run_sync(maestro, world, "one", remote=False).rc == 0
    assert todo_texts(world, "one") == todo_texts(world, "two") == ["review the api", "write the migration"]
    again = run_sync(maestro, world, "one", remote=False)
    assert "TODOS.md: 3 local, 3 remote, 0 added" in again.out  # the comment header + 2 todos


def todo_status(maestro, world, name, verb):
    (todo_id,) = [sync_mod.todo_id(e) for e in key_path(world, name, "TODOS.md").read_text().split("\n§\n")
                  if sync_mod.todo_id(e)]
    done = maestro("memory", "todo", verb, todo_id, "--cwd", str(world["project"]),
                   env={"MAESTRO_MEMORY_DIR": str(world["roots"][name])})
    assert done.rc == 0, done.err


def test_a_todo_changed_on_one_machine_travels_and_changed_on_both_is_resolved_both_with_a_fresh_id(maestro, world):
    todo_add(maestro, world, "one", "ship it")
    assert run_sync(maestro, world, "one").rc == 0
    assert run_sync(maestro, world, "two").rc == 0
    path_one = key_path(world, "one", "TODOS.md")
    path_one.write_text(path_one.read_text().replace("ship it", "ship it on monday"))
    edited = run_sync(maestro, world, "one", remote=False)  # a one-sided edit is no conflict
    assert edited.rc == 0, edited.out + edited.err
    assert run_sync(maestro, world, "two", remote=False).rc == 0
    assert todo_texts(world, "two") == ["ship it on monday"]

    todo_status(maestro, world, "one", "done")
    todo_status(maestro, world, "two", "drop")
    assert run_sync(maestro, world, "one", remote=False).rc == 0
    clash = run_sync(maestro, world, "two", remote=False)
    assert clash.rc == 4 and "modifiedBoth" in clash.out
    env = {"MAESTRO_MEMORY_DIR": str(world["roots"]["two"])}
    assert maestro("memory", "sync", "--resolve", "both", "--cwd", str(world["project"]), env=env).rc == 0
    assert todo_texts(world, "two") == ["ship it on monday", "ship it on monday"]
    path_two = key_path(world, "two", "TODOS.md")
    ids = [sync_mod.todo_id(e) for e in path_two.read_text().split("\n§\n") if sync_mod.todo_id(e)]
    assert len(set(ids)) == 2
    assert run_sync(maestro, world, "two", remote=False).rc == 0
    assert run_sync(maestro, world, "one", remote=False).rc == 0
    assert path_one.read_bytes() == path_two.read_bytes()
    statuses = sorted(e.split("[status: ")[1].split("]")[0] for e in path_one.read_text().split("\n§\n")
                      if sync_mod.todo_id(e))
    assert statuses == ["done", "dropped"]  # both machines' choices kept, once each
