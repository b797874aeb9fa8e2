"""`Transport.job_status`, the answer lock reclamation rests on: a failed or cancelled job is over.

Reclaiming the companion job lock of a dead holder waits for its job to be terminal; a job that
failed or was cancelled must count as terminal (not running forever), and one still running or
queued must never count as terminal.
"""

import json
import os
import subprocess
import sys

import pytest
from testing.paths import FAKE_COMPANION

from maestro.codex import companion
from maestro.util import process

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)


def stub_transport(answer: process.Completed) -> companion.Transport:
    transport = companion.Transport(["companion"], cwd="/", emit=lambda line: None)
    transport.call = lambda args, **kwargs: answer
    return transport


def status_answer(state: str) -> process.Completed:
    return process.Completed(0, json.dumps({"job": {"id": "task-a-1", "status": state}}).encode(), b"")


@pytest.mark.parametrize("state", sorted(companion.TERMINAL_FAILED | companion.TERMINAL_CANCELLED
                                         | companion.TERMINAL_OK) + ["Failed", "CANCELLED"])
def test_every_finished_job_is_terminal(state):
    assert stub_transport(status_answer(state)).job_status("task-a-1") == "terminal"


@pytest.mark.parametrize("state", ["running", "queued", "starting", "Running"])
def test_a_job_not_finished_is_running(state):
    assert stub_transport(status_answer(state)).job_status("task-a-1") == "running"


@pytest.mark.parametrize("answer", [process.Completed(1, b"", b"No job found"), process.Completed(0, b"", b""),
                                    process.Completed(0, b"{malformed", b"")])
def test_an_unreadable_status_is_unknown(answer):
    assert stub_transport(answer).job_status("task-a-1") is None


def test_the_fake_companions_failed_and_cancelled_jobs_are_terminal(tmp_path):
    """The same through a real companion process (the fake), one job per way of ending."""
    knobs = tmp_path / "knobs.json"
    env = {"FAKE_COMPANION_STATE": str(tmp_path / "state"), "FAKE_COMPANION_KNOBS": str(knobs),
           "FAKE_COMPANION_CALL_LOG": str(tmp_path / "calls.jsonl")}

    def launch(**settings):
        knobs.write_text(json.dumps(settings))
        out = subprocess.run([sys.executable, str(FAKE_COMPANION), "task", "--background", "--", "do it"], cwd=tmp_path,
                             env={**os.environ, **env}, capture_output=True, text=True, timeout=30)
        return companion.JOB_ID.search(out.stdout).group(0)

    failed = launch(turn_seconds=0, turn_status="failed")
    thrown = launch(turn_seconds=0, turn_status="error")
    completed = launch(turn_seconds=0)
    running = launch(turn_seconds=None)
    cancelled = launch(turn_seconds=None)
    transport = companion.Transport([sys.executable, str(FAKE_COMPANION)], cwd=str(tmp_path), emit=lambda line: None,
                                    env={**os.environ, **env})
    assert transport.cancel(cancelled)
    assert {job: transport.status(job).state for job in (failed, thrown, cancelled)} == {
        failed: "failed", thrown: "failed", cancelled: "cancelled"}
    assert [transport.job_status(job) for job in (failed, thrown, completed, cancelled)] == ["terminal"] * 4
    assert transport.job_status(running) == "running"
