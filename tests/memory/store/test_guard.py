"""The memory write guard's pieces (maestro/memory/store/write_guard.py; spec memory.md §2.7): config and threshold
clamping, the per-session state file, the transcript reader, noteWrite from the Store, and the
snapshot's Backlog section. The hook-level scenarios 35–36 are in tests/hooks/test_stop.py."""

import json
import os
import stat

import pytest
from testing.memory import CANONICAL_TIME

from maestro.memory.store import write_guard as guard
from maestro.memory.store import layout
from maestro.memory.store import snapshot
from maestro.memory.store import transcript

pytestmark = pytest.mark.timeout(60)

SID = "guard-unit-1"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    monkeypatch.delenv("MAESTRO_MEMORY_DIR", raising=False)
    monkeypatch.delenv("MAESTRO_MEMORY_LOCK_TIMEOUT_SEC", raising=False)


@pytest.fixture
def mem_root(home):
    return home / ".maestro" / "memory"


@pytest.fixture
def store(mem_root):
    from maestro.memory.store.tracks import Store

    return Store(str(mem_root), clock=lambda: CANONICAL_TIME)


def enable(home, text="[memory]\nwrite_guard = true\n"):
    (home / ".maestro").mkdir(exist_ok=True)
    (home / ".maestro" / "config.toml").write_text(text)


def lines(path, *records, raw=b""):
    with open(path, "ab") as handle:
        for record in records:
            handle.write(json.dumps(record).encode() + b"\n")
        handle.write(raw)
    return str(path)


def prompt(content="do x", uuid="p1", **flags):
    return dict({"type": "user", "uuid": uuid, "message": {"role": "user", "content": content}}, **flags)


def tool(*ids, kind="tool_use", **flags):
    return dict({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": kind, "id": i, "name": "Bash", "input": {}} for i in ids]}}, **flags)


def result(tool_id="t1"):
    return {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}]}}


# --- config -------------------------------------------------------------------------------------


@pytest.mark.parametrize("value,expected", [
    (2, 2), (1, 1), (0, 1), (-7, 1), (10, 10), (3.0, 3), (2.5, 2), (float("nan"), 2), (float("inf"), 2),
    ("x", 2), ("", 2), ("4", 4), (" 0 ", 1), (True, 2), (False, 2), (None, 2), ([3], 2), ({"a": 1}, 2)])
def test_threshold_clamping(value, expected):
    assert guard.clamp_threshold(value) == expected


def test_config_defaults_to_off_with_threshold_2(home):
    config = guard.load_config()
    assert (config.enabled, config.threshold) == (False, 2)


def test_config_reads_write_guard_and_threshold(home):
    enable(home, "[memory]\nwrite_guard = true\nthreshold = 0\n")
    config = guard.load_config()
    assert (config.enabled, config.threshold) == (True, 1)
    enable(home, '[memory]\nwrite_guard = true\nthreshold = "x"\n')
    assert guard.load_config().threshold == 2


@pytest.mark.parametrize("text,why", [
    ("[memory\n", "not valid TOML"), (b"\xff\xfe[memory]", "not valid TOML"), ("memory = 3\n", "not a table"),
    ('[memory]\nwrite_guard = "true"\n', "must be true or false")])
def test_a_malformed_config_is_off_with_one_stderr_line(home, capsys, text, why):
    (home / ".maestro").mkdir()
    path = home / ".maestro" / "config.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    assert guard.load_config().enabled is False
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and why in err and "the guard is off" in err


def test_an_unreadable_config_is_off(home, capsys):
    (home / ".maestro" / "config.toml").mkdir(parents=True)  # a directory: open fails
    assert guard.load_config().enabled is False
    assert "cannot read" in capsys.readouterr().err


def test_the_meta_dir_is_the_layouts():
    assert guard.META_DIR == layout.META_DIR


# --- state --------------------------------------------------------------------------------------


def test_state_round_trip_is_private_and_tolerates_garbage(tmp_path):
    root = str(tmp_path / "mem")
    assert guard.read_state(root, SID) == guard.fresh_state()
    guard.write_state(root, SID, dict(guard.fresh_state(), gap=3, alert=True, turn="p9"))
    path = guard.state_path(root, SID)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    value = guard.read_state(root, SID)
    assert (value["gap"], value["alert"], value["turn"]) == (3, True, "p9") and value["updated_at"]
    assert guard.alert_due(root, SID) is True
    for garbage in (b"", b"{", b"null", b'{"version":1,"gap":-1,"alert":"yes","turn":5}', b"\x00" * 9000):
        with open(path, "wb") as handle:
            handle.write(garbage)
        state = guard.read_state(root, SID)
        assert state["gap"] == 0 and state["alert"] is False and state["turn"] is None
        assert guard.alert_due(root, SID) is False


@pytest.mark.parametrize("sid", ["../x", "", "a" * 65, None, 5, "a/b"])
def test_invalid_session_ids_never_touch_the_disk(tmp_path, sid):
    root = str(tmp_path / "mem")
    assert guard.alert_due(root, sid) is False
    assert guard.on_stop({"session_id": sid, "transcript_path": "/x"}, root, guard.Config(True, 1)) is None
    with pytest.raises(ValueError):
        guard.state_path(root, sid)
    assert not os.path.exists(root)


def test_prune_removes_only_old_state_files(tmp_path):
    root = str(tmp_path / "mem")
    for sid in ("old", "new", "keep"):
        guard.write_state(root, sid, guard.fresh_state())
    directory = guard.state_dir(root)
    old = os.path.join(directory, "old.json")
    os.utime(old, (1, 1))
    os.utime(os.path.join(directory, "keep.json"), (1, 1))
    assert guard.prune(root, keep="keep.json") == 1
    assert sorted(os.listdir(directory)) == ["keep.json", "new.json"]


# --- the transcript -----------------------------------------------------------------------------


def test_read_turn_counts_the_tool_calls_after_the_last_genuine_prompt(tmp_path):
    path = lines(tmp_path / "t.jsonl",
                 prompt("first", "p1"), tool("a", "b"), result("a"),
                 prompt("second", "p2"), tool("t1"), result("t1"),
                 tool("t1"),  # the same call written twice (one line per block): counted once
                 tool("t2", kind="server_tool_use"),
                 prompt("<local-command-caveat>", "m1", isMeta=True),
                 prompt("summary of earlier work", "c1", isCompactSummary=True),
                 prompt("sub", "s1", isSidechain=True), tool("s", isSidechain=True),
                 {"type": "user", "message": {"role": "user", "content": [
                     {"type": "tool_result", "tool_use_id": "t2"}, {"type": "text", "text": "hook note"}]}},
                 {"type": "system", "content": "x"}, {"type": "summary", "summary": "s"})
    assert transcript.read_turn(path) == ("p2", 2, False)


def test_read_turn_with_content_blocks_and_no_uuid(tmp_path):
    path = lines(tmp_path / "t.jsonl", prompt([{"type": "text", "text": "hi"}], uuid=None), tool(None, None))
    assert transcript.read_turn(path) == (None, 2, False)  # id-less calls count one each


def test_read_turn_missing_or_odd_paths(tmp_path):
    assert transcript.read_turn(str(tmp_path / "absent.jsonl")) is None
    assert transcript.read_turn(str(tmp_path)) is None
    assert transcript.read_turn(None) is None and transcript.read_turn("") is None and transcript.read_turn("a\0b") is None
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert transcript.read_turn(str(tmp_path / "empty.jsonl")) == (None, 0, False)


def test_read_turn_drops_the_partial_first_line_of_its_window(tmp_path):
    path = tmp_path / "t.jsonl"
    lines(path, prompt("old", "p1"), tool("x" * 50))
    window = len(json.dumps(tool("x" * 50))) - 10  # starts inside the tool line: it must not parse
    assert transcript.read_turn(str(path), tail=window + 1) == (None, 0, False)
    assert transcript.read_turn(str(path)) == ("p1", 1, False)


# --- on_stop ------------------------------------------------------------------------------------


def test_on_stop_gap_rules(tmp_path):
    root, config = str(tmp_path / "mem"), guard.Config(True, 2)
    path = tmp_path / "t.jsonl"

    def turn(n, tools):
        lines(path, prompt(f"turn {n}", f"p{n}"), *(tool(f"t{n}-{i}") for i in range(tools)))
        return guard.on_stop({"session_id": SID, "transcript_path": str(path)}, root, config)

    assert (turn(1, 1)["gap"], turn(2, 0)["gap"]) == (1, 1)
    state = turn(3, 2)
    assert (state["gap"], state["alert"]) == (2, True)
    assert guard.alert_due(root, SID)
    guard.write_state(root, SID, dict(guard.read_state(root, SID), wrote=True))
    state = turn(4, 0)  # a write is a tool call even when the lagging transcript shows none yet
    assert (state["gap"], state["wrote"], state["alert"]) == (0, False, False)
    state = turn(5, 1)
    assert (state["gap"], state["wrote"], state["alert"]) == (1, False, False)


def test_on_stop_when_disabled_or_subagent(tmp_path):
    root = str(tmp_path / "mem")
    path = lines(tmp_path / "t.jsonl", prompt(), tool("t1"))
    payload = {"session_id": SID, "transcript_path": path}
    assert guard.on_stop(payload, root, guard.Config(False, 2)) is None
    assert guard.on_stop(dict(payload, agent_id="a1"), root, guard.Config(True, 1)) is None
    assert guard.on_stop(dict(payload, hook_event_name="SubagentStop"), root, guard.Config(True, 1)) is None
    assert not os.path.exists(root)


# --- noteWrite from the Store -------------------------------------------------------------------


def test_store_add_marks_the_session_only_for_real_daily_or_project_writes(home, store, mem_root, monkeypatch, tmp_path):
    enable(home)
    monkeypatch.setenv("MAESTRO_SESSION_ID", SID)
    root = str(mem_root)
    store.add("memory", "a global fact")
    store.add("user", "prefers short answers")
    assert not os.path.exists(guard.state_path(root, SID))
    assert store.add("daily", "Idle — no change").duplicate
    assert not os.path.exists(guard.state_path(root, SID))
    store.add("daily", "found the bug")
    assert guard.read_state(root, SID)["wrote"] is True
    guard.write_state(root, SID, guard.fresh_state())
    assert store.add("daily", "found the bug").duplicate
    assert guard.read_state(root, SID)["wrote"] is False
    project = tmp_path / "proj"
    project.mkdir()
    store.add("project", "the parser streams", cwd=str(project))
    assert guard.read_state(root, SID)["wrote"] is True


def test_store_add_does_not_mark_when_the_guard_is_off_or_no_session(home, store, mem_root, monkeypatch):
    store.add("daily", "with no config")
    monkeypatch.setenv("MAESTRO_SESSION_ID", SID)
    store.add("daily", "still no config")
    enable(home, "[memory]\nwrite_guard = false\n")
    store.add("daily", "guard off")
    monkeypatch.setenv("MAESTRO_SESSION_ID", "../bad")
    enable(home)
    store.add("daily", "bad session id")
    assert not os.path.exists(guard.state_dir(str(mem_root)))


def test_a_failing_note_write_never_fails_the_add(home, store, mem_root, monkeypatch):
    enable(home)
    monkeypatch.setenv("MAESTRO_SESSION_ID", SID)

    def boom(root, tracks):
        raise OSError("disk says no")

    monkeypatch.setattr(guard, "note_write", boom)
    added = store.add("daily", "this must land")
    with open(added.file, encoding="utf-8") as handle:
        assert not added.duplicate and "this must land" in handle.read()
    assert "disk says no" in (home / ".maestro" / "logs" / "crashes.log").read_text()


# --- the snapshot's Backlog section -------------------------------------------------------------


def _alert(root):
    guard.write_state(root, SID, dict(guard.fresh_state(), gap=2, alert=True))


def test_snapshot_renders_the_backlog_before_the_note_only_for_an_alerted_session(mem_root):
    root = str(mem_root)
    mem_root.mkdir(parents=True)
    (mem_root / "MEMORY.md").write_text("[2024-05-01 10:07] fact\n")
    assert snapshot.BACKLOG_TITLE not in snapshot.render(root, session_id=SID).text
    _alert(root)
    text = snapshot.render(root, session_id=SID).text
    assert text.index("# Global Memory") < text.index(snapshot.BACKLOG_TITLE) < text.index(snapshot.NOTE)
    assert text.count(snapshot.BACKLOG_TITLE) == 1 and text.endswith(snapshot.NOTE + "\n")
    assert "2" not in snapshot.BACKLOG_TEXT
    assert snapshot.BACKLOG_TITLE not in snapshot.render(root, session_id="another").text
    assert snapshot.BACKLOG_TITLE not in snapshot.render(root).text


def test_a_clipped_snapshot_keeps_the_backlog_and_the_note(mem_root):
    root = str(mem_root)
    mem_root.mkdir(parents=True)
    (mem_root / "MEMORY.md").write_text("".join(f"[2024-05-01 10:07] fact {i} {'x' * 200}\n§\n" for i in range(8))
                                        .rstrip("§\n") + "\n")
    _alert(root)
    snap = snapshot.render(root, session_id=SID, max_chars=900)
    assert len(snap.text) <= 900
    assert snapshot.BACKLOG_TITLE in snap.text and snap.text.endswith(snapshot.NOTE + "\n")


def test_memory_snapshot_shows_the_backlog_for_the_given_or_exported_session(maestro, home):
    root = str(home / ".maestro" / "memory")
    guard.write_state(root, "sess-alert", dict(guard.fresh_state(), gap=2, alert=True))
    quiet = maestro("memory", "snapshot", "--session", "sess-quiet")
    assert quiet.rc == 0 and snapshot.BACKLOG_TITLE not in quiet.out
    for args, env in ((("--session", "sess-alert"), None), ((), {"MAESTRO_SESSION_ID": "sess-alert"})):
        shown = maestro("memory", "snapshot", *args, env=env)
        assert shown.rc == 0 and f"{snapshot.BACKLOG_TITLE}\n{snapshot.BACKLOG_TEXT}" in shown.out
    bad = maestro("memory", "snapshot", "--session", "../x")
    assert bad.rc == 3 and "invalid session id" in bad.err


def mcp_add(tool_id, track="daily", name="mcp__maestro-memory__memory_add"):
    return {"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": tool_id, "name": name, "input": {"track": track, "content": "x"}}]}}


def mcp_result(tool_id, text, is_error=False):
    return {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tool_id, "is_error": is_error,
         "content": [{"type": "text", "text": text}]}]}}


@pytest.mark.parametrize("records, wrote", [
    ((mcp_add("m1"), mcp_result("m1", "added daily: shipped the parser")), True),
    ((mcp_add("m1", "project"), mcp_result("m1", "added project: x")), True),
    ((mcp_add("m1"), mcp_result("m1", "duplicate daily: already stored; nothing written")), False),
    ((mcp_add("m1"), mcp_result("m1", "added daily: x", is_error=True)), False),
    ((mcp_add("m1", "key"), mcp_result("m1", "added key: x")), False),  # key is queued, and not a daily write
    ((mcp_add("m1", name="mcp__other__memory_list"), mcp_result("m1", "added daily: x")), False),
    ((mcp_add("m1"),), False),  # no answer yet
])
def test_a_memory_mcp_add_in_the_turn_counts_as_a_write(tmp_path, records, wrote):
    path = lines(tmp_path / "t.jsonl", prompt(), tool("b1"), *records)
    assert transcript.read_turn(path)[2] is wrote


def test_an_mcp_write_resets_the_gap_and_clears_the_alert(tmp_path):
    root, config = str(tmp_path / "mem"), guard.Config(True, 2)
    path = tmp_path / "t.jsonl"
    for n in (1, 2):
        lines(path, prompt(f"turn {n}", f"p{n}"), tool(f"t{n}"))
        state = guard.on_stop({"session_id": SID, "transcript_path": str(path)}, root, config)
    assert state["alert"]
    lines(path, prompt("turn 3", "p3"), mcp_add("m3"), mcp_result("m3", "added daily: learned x"))
    state = guard.on_stop({"session_id": SID, "transcript_path": str(path)}, root, config)
    assert (state["gap"], state["alert"]) == (0, False)


def test_a_stop_hook_continuation_is_the_same_turn_not_a_new_prompt(tmp_path):
    path = lines(tmp_path / "t.jsonl", prompt("do x", "p1"), tool("t1"),
                 prompt("Stop hook feedback:\n- keep going", "c1"), tool("t2"),
                 prompt([{"type": "text", "text": "Stop hook feedback: more"}], "c2"), tool("t3"))
    assert transcript.read_turn(path) == ("p1", 3, False)
