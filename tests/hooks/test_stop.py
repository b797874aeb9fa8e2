"""`maestro stop` — the Stop hook and the memory write guard (spec memory.md §2.7, §5; §4 scenarios 35–36).

Black-box against the selected target: a synthetic Claude Code transcript (JSONL) in tmp_path, the
guard switched on in ~/.maestro/config.toml, `stop` payloads on stdin; the alert is observed
through `inject` and the session-start snapshot, writes through `maestro memory add` with
MAESTRO_SESSION_ID set. The hook always exits 0 and prints exactly {"continue": true}.
"""

import json
import os
import stat
import subprocess
import sys

import pytest
from testing import ROOT
from testing.archive_cases import first_on_archive

pytestmark = pytest.mark.timeout(60)

SID = "stop-test-1"
OUTPUT = '{"continue": true}\n'
ALERT_HEAD = "MEMORY BACKLOG: several tool-using turns have passed without a daily or project memory entry."
BACKLOG_TITLE = "# ⚠️ Memory Write Backlog"


# --------------------------------------------------------------------------------------------- helpers


def enable(home, threshold=2, extra=""):
    (home / ".maestro").mkdir(exist_ok=True)
    body = "[memory]\nwrite_guard = true\n" + (f"threshold = {threshold}\n" if threshold is not None else "") + extra
    (home / ".maestro" / "config.toml").write_text(body, encoding="utf-8")


def guard_dir(home):
    return home / ".maestro" / "memory" / ".maestro-memory" / "guard"


def state_file(home, sid=SID):
    return guard_dir(home) / f"{sid}.json"


def state(home, sid=SID):
    return json.loads(state_file(home, sid).read_text())


class Transcript:
    """A Claude Code-style transcript: one JSON object per line, appended turn by turn."""

    def __init__(self, path):
        self.path = path
        self.turns = 0
        path.write_bytes(b"")

    def _append(self, *records, raw=b""):
        with open(self.path, "ab") as handle:
            for record in records:
                handle.write(json.dumps(record).encode() + b"\n")
            handle.write(raw)

    def turn(self, tools=1, sidechain_tools=0, prompt="do x", content_blocks=False):
        self.turns += 1
        n = self.turns
        content = [{"type": "text", "text": prompt}] if content_blocks else prompt
        records = [{"type": "user", "uuid": f"p{n}", "isSidechain": False,
                    "message": {"role": "user", "content": content}}]
        for i in range(tools):
            tid = f"t{n}-{i}"
            records.append({"type": "assistant", "uuid": f"a{n}-{i}", "isSidechain": False, "message": {
                "role": "assistant", "content": [{"type": "text", "text": ".."},
                                                 {"type": "tool_use", "id": tid, "name": "Bash", "input": {}}]}})
            records.append({"type": "user", "uuid": f"r{n}-{i}", "isSidechain": False, "message": {
                "role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": "ok"}]}})
        for i in range(sidechain_tools):  # a Task subagent's lines inside the main transcript
            tid = f"s{n}-{i}"
            records.append({"type": "user", "isSidechain": True, "message": {"role": "user", "content": "sub task"}})
            records.append({"type": "assistant", "isSidechain": True, "message": {
                "role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": "Read", "input": {}}]}})
        records.append({"type": "assistant", "uuid": f"e{n}", "isSidechain": False,
                        "message": {"role": "assistant", "content": [{"type": "text", "text": "done"}]}})
        self._append(*records)
        return self


def stop(maestro, transcript=None, sid=SID, **extra):
    body = {"session_id": sid, "hook_event_name": "Stop", "stop_hook_active": False, "cwd": "/tmp"}
    if transcript is not None:
        body["transcript_path"] = str(transcript.path if isinstance(transcript, Transcript) else transcript)
    body.update(extra)
    result = maestro("stop", stdin=json.dumps(body))
    assert (result.rc, result.out) == (0, OUTPUT), result
    return result


def inject(maestro, sid=SID, prompt="hello there"):
    result = maestro("inject", stdin=json.dumps({"session_id": sid, "prompt": prompt}))
    assert result.rc == 0, result
    return result.out


def add(maestro, track, text, sid=SID, cwd=None):
    args = ["memory", "add", track, text] + (["--cwd", str(cwd)] if cwd else [])
    result = maestro(*args, env={"MAESTRO_SESSION_ID": sid})
    assert result.rc == 0, result
    return result


@pytest.fixture
def transcript(tmp_path):
    return Transcript(tmp_path / "transcript.jsonl")


@pytest.fixture(autouse=True)
def no_memory_dir_override(monkeypatch):
    monkeypatch.delenv("MAESTRO_MEMORY_DIR", raising=False)


# ------------------------------------------------------------------------------------ the hook's contract


@pytest.mark.parametrize("stdin", [b"", b"not json", b"[1,2]", b'{"session_id": 5}', b"\xff\xfe", b"{" * 5000,
                                   b'{"session_id": "../x", "transcript_path": "/etc/passwd"}'])
def test_stop_always_prints_continue_and_exits_0_even_for_garbage(maestro, home, stdin):
    enable(home)
    result = maestro("stop", stdin=stdin)
    assert (result.rc, result.out) == (0, OUTPUT)
    assert "Traceback" not in result.err
    assert not guard_dir(home).exists()


def test_stop_help_works_and_stray_arguments_never_block(maestro):
    result = maestro("stop", "--help")
    assert result.rc == 0 and "usage: maestro stop" in result.out and "write guard" in result.out
    result = maestro("stop", "--bogus")
    assert result.rc == 0 and "takes no arguments" in result.err


def test_stop_is_in_the_verb_list(maestro):
    assert "  stop " in maestro("--help").out


def test_a_crashing_guard_step_leaves_a_note_and_still_continues(maestro, home, monkeypatch, transcript):
    if maestro.target == "pyz":
        pytest.skip("source_only: monkeypatches maestro internals")
    from maestro.memory.store import write_guard as guard

    def boom(payload):
        raise RuntimeError("guard kaboom")

    monkeypatch.setattr(guard, "on_stop", boom)
    result = stop(maestro, transcript.turn())
    assert "Traceback" not in result.out + result.err
    log = (home / ".maestro" / "logs" / "crashes.log").read_text()
    assert "guard kaboom" in log and "stop:guard" in log


# ------------------------------------------------------------------------------------- scenario 35


def test_35_two_tool_turns_without_a_write_raise_the_alert_and_a_daily_add_clears_it(maestro, home, transcript):
    enable(home, threshold=2)
    add(maestro, "memory", "the user likes tea", sid="other-session")  # something for the snapshot to show
    assert "MEMORY BACKLOG" not in inject(maestro)

    stop(maestro, transcript.turn(tools=2))
    assert state(home)["gap"] == 1 and state(home)["alert"] is False
    assert "MEMORY BACKLOG" not in inject(maestro)

    stop(maestro, transcript.turn(tools=1))
    assert state(home)["gap"] == 2 and state(home)["alert"] is True
    out = inject(maestro)
    assert ALERT_HEAD in out
    assert "2" not in out.split("MEMORY BACKLOG", 1)[1].split("\n")[0]  # never the count
    # the directive still comes first when the prompt carries a work signal
    work = inject(maestro, prompt="implement the parser and fix the failing test")
    assert work.startswith("ORCHESTRATOR/IMPLEMENTER LOOP") and ALERT_HEAD in work
    # the snapshot (session-start) carries the Backlog section, before the discipline note
    start = maestro("session-start", stdin=json.dumps({"session_id": SID, "source": "resume"}))
    assert start.rc == 0 and BACKLOG_TITLE in start.out
    assert start.out.index(BACKLOG_TITLE) < start.out.index("Memory discipline:")
    other = maestro("session-start", stdin=json.dumps({"session_id": "someone-else", "source": "resume"}))
    assert BACKLOG_TITLE not in other.out

    # a real daily add during the next turn, then its stop: cleared
    add(maestro, "daily", "found the root cause of the flaky parser test")
    assert state(home)["wrote"] is True
    assert ALERT_HEAD in inject(maestro)  # noteWrite only sets the flag; the stop decides
    stop(maestro, transcript.turn(tools=1))
    assert (state(home)["gap"], state(home)["alert"], state(home)["wrote"]) == (0, False, False)
    assert "MEMORY BACKLOG" not in inject(maestro)
    start = maestro("session-start", stdin=json.dumps({"session_id": SID, "source": "resume"}))
    assert BACKLOG_TITLE not in start.out


def test_35_a_project_add_counts_as_a_write(maestro, home, transcript, tmp_path):
    enable(home, threshold=1)
    stop(maestro, transcript.turn())
    assert state(home)["alert"] is True
    project = tmp_path / "proj"
    project.mkdir()
    add(maestro, "project", "the parser now streams its input", cwd=project)
    stop(maestro, transcript.turn())
    assert state(home)["gap"] == 0 and ALERT_HEAD not in inject(maestro)


def test_35_a_batch_that_really_added_a_daily_entry_counts_as_a_write(maestro, home, transcript, tmp_path):
    enable(home, threshold=1)
    stop(maestro, transcript.turn())
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps([{"track": "memory", "text": "global fact"}, {"track": "daily", "text": "shipped it"}]))
    result = maestro("memory", "batch", str(batch), env={"MAESTRO_SESSION_ID": SID})
    assert result.rc == 0, result
    stop(maestro, transcript.turn())
    assert state(home)["gap"] == 0


def test_35_writes_to_other_tracks_or_without_a_session_id_do_not_count(maestro, home, transcript):
    enable(home, threshold=5)
    stop(maestro, transcript.turn())
    add(maestro, "memory", "a global fact")  # not daily/project
    result = maestro("memory", "add", "daily", "written outside any session")  # no MAESTRO_SESSION_ID
    assert result.rc == 0
    add(maestro, "daily", "written by another session", sid="another-one")
    assert state(home)["wrote"] is False
    stop(maestro, transcript.turn())
    assert state(home)["gap"] == 2


# ------------------------------------------------------------------------------------- scenario 36


def test_36_zero_tool_turns_leave_the_gap_at_0(maestro, home, transcript):
    enable(home, threshold=1)
    for _ in range(3):
        stop(maestro, transcript.turn(tools=0))
    assert state(home)["gap"] == 0 and state(home)["alert"] is False
    assert "MEMORY BACKLOG" not in inject(maestro)


def test_36_a_zero_tool_turn_keeps_the_gap_it_found(maestro, home, transcript):
    enable(home, threshold=3)
    stop(maestro, transcript.turn(tools=1))
    stop(maestro, transcript.turn(tools=0))
    assert state(home)["gap"] == 1


def test_36_subagent_stops_are_not_accounted(maestro, home, transcript):
    enable(home, threshold=1)
    for _ in range(3):
        stop(maestro, transcript.turn(tools=2), agent_id="agent-123", agent_type="general-purpose")
    stop(maestro, transcript, hook_event_name="SubagentStop")
    assert not state_file(home).exists()
    assert "MEMORY BACKLOG" not in inject(maestro)


def test_36_sidechain_tool_calls_are_not_the_main_turns(maestro, home, transcript):
    enable(home, threshold=1)
    stop(maestro, transcript.turn(tools=0, sidechain_tools=3))
    assert state(home)["gap"] == 0


def test_36_every_user_prompt_counts_as_a_human_turn(maestro, home, transcript):
    """Claude Code has no goal or plugin turn origin (§5): a slash-command prompt or a prompt sent
    as content blocks opens a counted turn like any other."""
    enable(home, threshold=5)
    stop(maestro, transcript.turn(prompt="<command-name>/review</command-name>"))
    stop(maestro, transcript.turn(content_blocks=True))
    assert state(home)["gap"] == 2


def test_36_a_duplicate_add_does_not_reset_the_gap(maestro, home, transcript):
    enable(home, threshold=2)
    add(maestro, "daily", "the cache is keyed by path")
    stop(maestro, transcript.turn())  # the write came before this turn's stop: it counts here
    assert state(home)["gap"] == 0
    stop(maestro, transcript.turn())
    stop(maestro, transcript.turn())
    assert state(home)["alert"] is True
    result = add(maestro, "daily", "the cache is keyed by path")
    assert "duplicate" in (result.out + result.err).lower()
    idle = add(maestro, "daily", "Idle — no change")
    assert "duplicate" in (idle.out + idle.err).lower()
    assert state(home)["wrote"] is False
    stop(maestro, transcript.turn())
    assert state(home)["gap"] == 3 and ALERT_HEAD in inject(maestro)


def test_the_same_turn_stopping_twice_counts_once(maestro, home, transcript):
    """Another Stop hook may block and Claude carries on: the turn's second stop re-decides it."""
    enable(home, threshold=5)
    transcript.turn(tools=1)
    stop(maestro, transcript)
    stop(maestro, transcript, stop_hook_active=True)
    assert state(home)["gap"] == 1
    add(maestro, "daily", "wrote it during the continuation")
    stop(maestro, transcript, stop_hook_active=True)
    assert state(home)["gap"] == 0


# ---------------------------------------------------------------------------------- off and broken


def test_the_guard_is_off_by_default_and_writes_no_state(maestro, home, transcript):
    stop(maestro, transcript.turn())
    stop(maestro, transcript.turn())
    add(maestro, "daily", "a real entry")
    assert not guard_dir(home).exists()
    assert "MEMORY BACKLOG" not in inject(maestro)


@pytest.mark.parametrize("config", first_on_archive([  # one config reader (testing/archive_cases.py)
    "[memory]\nwrite_guard = false\n", "[memory]\nthreshold = 1\n", "[other]\nx = 1\n", '[memory]\nwrite_guard = "yes"\n']))
def test_the_guard_stays_off_unless_write_guard_is_true(maestro, home, transcript, config):
    (home / ".maestro").mkdir()
    (home / ".maestro" / "config.toml").write_text(config)
    stop(maestro, transcript.turn())
    assert not state_file(home).exists()


def test_a_malformed_config_turns_the_guard_off_with_one_stderr_line(maestro, home, transcript):
    (home / ".maestro").mkdir()
    (home / ".maestro" / "config.toml").write_text("[memory\nwrite_guard = true\n")
    result = stop(maestro, transcript.turn())
    assert [line for line in result.err.splitlines() if line] == [result.err.strip()]
    assert "not valid TOML" in result.err and "guard is off" in result.err
    assert not state_file(home).exists()
    assert "Traceback" not in result.err


def test_turning_the_guard_off_drops_a_pending_alert(maestro, home, transcript):
    enable(home, threshold=1)
    stop(maestro, transcript.turn())
    assert ALERT_HEAD in inject(maestro)
    (home / ".maestro" / "config.toml").write_text("[memory]\nwrite_guard = false\n")
    stop(maestro, transcript.turn())
    assert not state_file(home).exists() and ALERT_HEAD not in inject(maestro)


@pytest.mark.parametrize("value,expected", first_on_archive(  # one config reader (testing/archive_cases.py)
    [(0, 1), (-3, 1), (1, 1), (3, 3), ('"x"', 2), ("2.5", 2), ("true", 2)]))
def test_threshold_is_clamped(maestro, home, transcript, value, expected):
    enable(home, threshold=value)
    for n in range(1, 4):
        stop(maestro, transcript.turn())
        assert state(home)["alert"] is (n >= expected), (n, state(home))


def test_a_malformed_state_file_is_a_fresh_state_and_is_replaced(maestro, home, transcript):
    enable(home, threshold=2)
    stop(maestro, transcript.turn())
    for garbage in (b"{not json", b'{"version": 99, "gap": 50, "alert": true}', b"[]", b"\xff" * 10, b"x" * 20000):
        state_file(home).write_bytes(garbage)
        assert ALERT_HEAD not in inject(maestro)
        stop(maestro, transcript.turn())
        assert state(home)["gap"] == 1, garbage
    assert stat.S_IMODE(os.stat(state_file(home)).st_mode) == 0o600


@pytest.mark.parametrize("path", first_on_archive(  # one transcript reader (testing/archive_cases.py)
    ["/nonexistent/transcript.jsonl", None, "", 5, "DIR"]))
def test_a_missing_or_unreadable_transcript_changes_nothing(maestro, home, transcript, tmp_path, path):
    enable(home, threshold=1)
    stop(maestro, transcript.turn(tools=0))
    before = state_file(home).read_bytes()
    if path == "DIR":
        path = str(tmp_path)
    body = {} if path is None else {"transcript_path": path}
    result = maestro("stop", stdin=json.dumps(dict(body, session_id=SID)))
    assert (result.rc, result.out) == (0, OUTPUT)
    assert state_file(home).read_bytes() == before


def test_malformed_and_partial_transcript_lines_are_skipped(maestro, home, transcript):
    enable(home, threshold=5)
    transcript.turn(tools=1)
    # Claude Code appends asynchronously: a torn tool-use line, garbage and a partial last line
    transcript._append(raw=b'{"type":"assistant","message":{"content":[{"type":"tool_use","id":"z"\n'
                           b"\xff\xfe not json\n[1,2]\n\n"
                           b'{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_u')
    stop(maestro, transcript)
    assert state(home)["gap"] == 1
    # a transcript made only of junk: no prompt, no tool call
    transcript.path.write_bytes(b"junk\n{]\n")
    stop(maestro, transcript)
    assert state(home)["gap"] == 1


FILLER = {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "x" * 1000}]}}


def test_a_huge_transcript_is_read_from_its_tail(maestro, home, transcript):
    enable(home, threshold=5)
    transcript.turn(tools=3)
    transcript._append(*([FILLER] * 2500))  # ~2.5 MB after the tool calls: they are outside the window
    transcript.turn(tools=0)
    stop(maestro, transcript)
    assert state(home)["gap"] == 0


def test_a_turn_longer_than_the_window_counts_the_calls_inside_it(maestro, home, transcript):
    enable(home, threshold=5)
    transcript.turn(tools=0)  # the prompt scrolls out of the 2 MiB window
    transcript._append(*([FILLER] * 2500))
    transcript._append({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "late", "name": "Bash", "input": {}}]}})
    stop(maestro, transcript)
    assert state(home)["gap"] == 1


def test_state_files_are_private_and_written_atomically(maestro, home, transcript):
    enable(home, threshold=2)
    stop(maestro, transcript.turn())
    assert stat.S_IMODE(os.stat(state_file(home)).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(guard_dir(home)).st_mode) == 0o700
    assert sorted(p.name for p in guard_dir(home).iterdir()) == [".lock", f"{SID}.json"]  # no temp file left
    value = state(home)
    assert set(value) >= {"version", "gap", "wrote", "alert", "updated_at"} and value["version"] == 1


def test_inject_reads_the_alert_without_importing_json_or_tomllib(home, tmp_path):
    """inject is a hot path: the alert costs one open of a small file, parsed by _json directly."""
    enable(home, threshold=1)
    guard_dir(home).mkdir(parents=True)
    state_file(home).write_text('{"version":1,"gap":1,"wrote":false,"alert":true}\n')
    env = dict(os.environ, HOME=str(home))
    env.pop("MAESTRO_MEMORY_DIR", None)
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from maestro import cli; sys.exit(cli.main(['inject']))"
    result = subprocess.run([sys.executable, "-I", "-S", "-X", "importtime", "-c", code],
                            input=json.dumps({"session_id": SID, "prompt": "hi"}).encode(),
                            capture_output=True, env=env, cwd=str(tmp_path), timeout=30)
    assert result.returncode == 0
    assert ALERT_HEAD in result.stdout.decode()
    imported = {line.split("|")[-1].strip() for line in result.stderr.decode().splitlines() if "|" in line}
    assert "maestro.memory.store.write_guard" in imported
    assert not imported & {"json", "tomllib", "argparse", "subprocess"}  # (`re` is directive.py's)
