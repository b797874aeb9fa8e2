"""Transport rules that planted bugs (bench/mutants.py) showed no test held: a running-job list with
one unreadable entry is unknown (None), never a shorter list; polling gives up after exactly
STATUS_LOSS_LIMIT unreadable statuses in a row.
"""

import json

import pytest

from maestro.codex import companion

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)


def test_a_running_list_with_an_unreadable_entry_is_unknown_not_shorter():
    good = {"id": "task-abc-1", "write": False}
    assert companion.parse_writers(json.dumps({"running": [good]})) == {"task-abc-1": False}
    for junk in ("task-def-2", None, ["task-def-2", True], 7):
        # the entry that cannot be read may be the write job: the answer is "cannot tell"
        assert companion.parse_writers(json.dumps({"running": [good, junk]})) is None


def test_polling_fails_closed_after_exactly_the_status_loss_limit():
    lines, calls = [], []
    transport = companion.Transport(["true"], cwd=".", emit=lines.append, clock=lambda: 0.0, sleep=lambda s: None)

    def lost(job, timeout=None):
        calls.append(job)
        return None

    transport.status = lost
    assert transport.wait("task-abc-1", max_total=3600, max_idle=3600, poll=1, turn_started=0.0) == (
        "cancel", "status-lost")
    assert len(calls) == companion.STATUS_LOSS_LIMIT
    assert f"unreachable {companion.STATUS_LOSS_LIMIT}x in a row" in lines[-1]
