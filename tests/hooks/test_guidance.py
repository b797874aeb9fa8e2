"""The model-setup directive keeps the original Maestro's phrases whole, each on one line (issue 17
item 9): users' scripts and tests grep for "separate role-specific efforts" and
"<model> <debate-effort> <impl-effort>", and grep matches within a line."""

import json

from maestro import messages

ROLE_EFFORTS = "separate role-specific efforts"
PIN_ARGS = "<model> <debate-effort> <impl-effort>"


def grep(text, phrase):
    """The lines of `text` that contain `phrase`, as `grep -F` would print them."""
    return [line for line in text.splitlines() if phrase in line]


def test_the_inject_model_setup_directive_has_both_phrases_on_one_line_each(maestro, home):
    result = maestro("inject", stdin=json.dumps({"session_id": "guidance-1", "prompt": "codex model"}))
    assert result.rc == 0 and result.out.startswith("CODEX MODEL SETUP — "), result
    role_lines, pin_lines = grep(result.out, ROLE_EFFORTS), grep(result.out, PIN_ARGS)
    assert len(role_lines) == 1 and len(pin_lines) == 1, result.out
    lines = result.out.splitlines()
    assert lines.index(role_lines[0]) < lines.index(pin_lines[0])  # as in the original's test 38
    assert "maestro model-select " + PIN_ARGS in pin_lines[0]


def test_the_session_start_setup_question_names_the_pin_arguments_on_one_line(maestro, home):
    (home / ".maestro").mkdir(exist_ok=True)
    (home / ".maestro" / "ask-on-start").write_bytes(b"")
    result = maestro("session-start", stdin=json.dumps({"source": "startup", "session_id": "guidance-2"}))
    assert result.rc == 0 and result.out.startswith("MAESTRO SESSION SETUP — "), result
    assert len(grep(result.out, "maestro model-select " + PIN_ARGS)) == 1, result.out


def test_the_pin_recovery_command_is_one_line():
    assert "\n" not in messages.PIN_MODELS and PIN_ARGS in messages.PIN_MODELS
