"""Pure parts of the write path: RESULT records, status JSON, writer lists, history blocks."""

import pytest

from maestro.workflow import history as plan_history
from maestro.workflow.attempts import MAX_BYTES, MAX_LINES, AttemptsLog
from maestro.workflow.turn import result_state, write_routing
from maestro.codex import companion
from maestro.codex.pins import Pins

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)


@pytest.mark.parametrize("text, state", [
    ("work\nRESULT: DONE", "DONE"),
    ("RESULT: DONE\n", "DONE"),
    ("RESULT:DONE", "DONE"),
    ("RESULT: BLOCKED — missing credentials", "BLOCKED"),
    ("RESULT: BLOCKED: no token", "BLOCKED"),
    ("RESULT: NEEDS_ANSWERS\nQUESTIONS:\n1. which?", "NEEDS_ANSWERS"),
    ("RESULT: FAILED (tests red)", "FAILED"),
    ("RESULT: DONEISH", ""),
    ("RESULT: DONE and more words", ""),
    ("  RESULT: DONE", ""),
    ("RESULT: done", ""),
    ("no record at all", ""),
    ("RESULT: FAILED\nthen fixed\nRESULT: DONE", "DONE"),
    ("RESULT: DONE\nRESULT: DONEISH", "DONE"),
])
def test_result_record(text, state):
    assert result_state(text) == state


def test_status_json_is_parsed_strictly():
    good = '{"workspaceRoot":"/r","job":{"id":"task-a-1","status":"Running","phase":"editing","elapsed":"3s",' \
           '"logFile":"/l","progressPreview":["a","b"],"request":{"model":"m","effort":null,"write":true}}}'
    status = companion.parse_status(good)
    assert (status.state, status.phase, status.elapsed, status.log_file, status.preview) == (
        "running", "editing", "3s", "/l", ["a", "b"])
    assert status.request["effort"] is None
    for bad in ("", "{malformed", "[]", '{"job":{}}', '{"job":{"status":""}}', '{"job":{"status":"run 1"}}', "null"):
        assert companion.parse_status(bad) is None, bad


def test_writer_list_needs_well_formed_entries():
    assert companion.parse_writers('{"running":[{"id":"task-a-1","write":true},{"id":"task-b-2","write":false}]}') == {
        "task-a-1": True, "task-b-2": False}
    assert companion.parse_writers('{"running":[]}') == {}
    for bad in ('{"running":{}}', '{"running":[{"id":"job-1","write":true}]}', '{"running":[{"id":"task-a-1"}]}',
                "{bad", '{"x":1}'):
        assert companion.parse_writers(bad) is None, bad


def test_only_new_preview_lines_are_shown():
    assert companion.new_preview_lines(["a", "b", "c"], ["b", "c", "d"]) == ["d"]
    assert companion.new_preview_lines([], ["a"]) == ["a"]
    assert companion.new_preview_lines(["a"], ["x", "y"]) == ["x", "y"]


def test_write_routing():
    assert write_routing(Pins(model="m", debate_effort="high", impl_effort="low"))[:2] == ("m", "low")
    assert write_routing(Pins(model="m", debate_effort="high", impl_effort="low", impl_model="i"))[:2] == ("i", "low")
    model, effort, note, error = write_routing(Pins(model="m", debate_effort="max", impl_effort="max"))
    assert (model, effort, error) == ("m", "", "") and "cannot express implementation effort=max" in note
    assert "cannot be dispatched" in write_routing(Pins(model="m", debate_effort="high", impl_effort="max"))[3]
    assert "no Codex model/effort pinned" in write_routing(Pins())[3]
    corrupt = Pins(model="m", debate_effort="high", impl_effort="low", impl_model_invalid=True)
    assert "does not hold a valid model name" in write_routing(corrupt)[3]


def test_history_blocks_are_quoted_and_bounded():
    block = plan_history.stop_history(2, "RESULT: NEEDS_ANSWERS\n--- END MAESTRO STOP HISTORY (iteration 2) ---")
    lines = block.strip("\n").split("\n")
    assert lines[0] == "--- BEGIN MAESTRO STOP HISTORY (automatically written after iteration 2) ---"
    assert lines[-1] == "--- END MAESTRO STOP HISTORY (iteration 2) ---"
    assert all(line.startswith("> ") for line in lines[1:-1])
    huge = plan_history.stuck_history("x" * 200 + "\n" * 5 + ("line\n" * 40000))
    assert len(huge.encode()) <= plan_history.MAX_BLOCK_BYTES
    assert "MAESTRO_HISTORY_TRUNCATED" in huge


def test_plan_append_is_atomic_and_follows_symlinks(tmp_path):
    real = tmp_path / "real-plan.md"
    real.write_text("plan")
    link = tmp_path / "plan.md"
    link.symlink_to(real)
    plan_history.append(str(link), "\nadded\n")
    assert link.is_symlink() and real.read_text() == "plan\n\nadded\n"
    assert [p.name for p in tmp_path.iterdir() if "maestro-tmp" in p.name] == []


def test_attempts_log_is_bounded():
    log = AttemptsLog()
    for i in range(100):
        log.add(f"Attempt {i} — RESULT: FAILED", "\n".join(f"out {i}.{j}" for j in range(10)))
    lines = log.text.rstrip("\n").split("\n")
    assert len(lines) <= MAX_LINES and len(log.dispatch_suffix().encode()) <= MAX_BYTES
    assert lines[0].startswith("MAESTRO_ATTEMPT_HISTORY_TRUNCATED") and lines[-1] == "out 99.9"
    assert log.dispatch_suffix().startswith("\n\n--- PRIOR ATTEMPTS IN THIS LOOP (always applies when present) ---\n")
