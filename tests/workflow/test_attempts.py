"""The attempts log and the plan's history blocks keep the useful end of an oversized output
(issue 17 item 8): the tail, where a failure is printed, survives; the head goes; a marker line
says so; every wrapper stays within 64 KiB."""

import pytest

from maestro.workflow import history as plan_history
from maestro.workflow.attempts import MAX_BYTES, MAX_LINES, TRUNCATED, AttemptsLog

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)

FAILURE = "FAILURE-AT-THE-END: expected 2, got 1"
HEADING = "Attempt 1 — claimed DONE but LOCAL verification failed (exit 1): make test"


def test_one_huge_last_line_keeps_its_end():
    log = AttemptsLog()
    log.add(HEADING, "START-OF-OUTPUT " + "x" * 200 * 1024 + " " + FAILURE)
    lines = log.text.rstrip("\n").split("\n")
    assert lines[0] == TRUNCATED and lines[-1].endswith(FAILURE)
    assert "START-OF-OUTPUT" not in log.text
    assert len(log.dispatch_suffix().encode()) <= MAX_BYTES


def test_many_lines_keep_the_last_and_the_cut_is_marked_once():
    log = AttemptsLog()
    for attempt in range(1, 4):
        noise = "\n".join(f"noise {attempt}.{i} " + "n" * 3000 for i in range(60))
        log.add(f"Attempt {attempt} — RESULT: FAILED", noise + f"\n{FAILURE} {attempt}")
    lines = log.text.rstrip("\n").split("\n")
    assert lines[0] == TRUNCATED and lines[-1] == f"{FAILURE} 3"
    assert log.text.count("MAESTRO_ATTEMPT_HISTORY_TRUNCATED") == 1
    assert len(lines) <= MAX_LINES and len(log.dispatch_suffix().encode()) <= MAX_BYTES


def test_multibyte_text_is_cut_on_a_character_boundary():
    log = AttemptsLog()
    log.add(HEADING, "é" * 100_000 + FAILURE)
    log.text.encode("utf-8")  # no lone surrogate or broken character
    assert log.text.rstrip("\n").endswith(FAILURE) and len(log.dispatch_suffix().encode()) <= MAX_BYTES


def test_a_small_log_is_untouched():
    log = AttemptsLog()
    log.add(HEADING, "assertion failed")
    assert log.text == f"## {HEADING}\nassertion failed\n"


def test_the_plans_attempt_history_keeps_the_marker_and_the_failure():
    log = AttemptsLog()
    for attempt in range(1, 4):  # 180 lines of 560 bytes: past both the line and the byte ceiling
        noise = "\n".join("noise " + "n" * 560 for _ in range(59))
        log.add(f"Attempt {attempt} — RESULT: FAILED", noise + "\n" + FAILURE)
    block = plan_history.stuck_history(log.text)
    assert len(block.strip("\n").encode()) + 1 <= MAX_BYTES  # BEGIN … END lines, last newline included
    body = block.strip("\n").split("\n")[1:-1]
    assert all(line.startswith("> ") for line in body)
    assert body[0] == f"> {TRUNCATED}" and body[-1] == f"> {FAILURE}"


def test_a_history_block_cut_inside_one_huge_line_keeps_its_end_quoted():
    block = plan_history.stop_history(1, "RESULT: NEEDS_ANSWERS\nQ " + "q" * 200 * 1024 + " " + FAILURE)
    lines = block.strip("\n").split("\n")
    assert len(block.encode()) <= plan_history.MAX_BLOCK_BYTES
    assert lines[1] == f"> {plan_history.TRUNCATED}"
    assert all(line.startswith("> ") for line in lines[1:-1])
    assert lines[-2].endswith(FAILURE) and "RESULT: NEEDS_ANSWERS" not in block
