"""The fd-3 progress channel: records on fd 3 when open, else stdout, order kept."""

import os
import subprocess
import sys

import pytest

from testing import ROOT

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)

SCRIPT = (
    "import sys; sys.path.insert(0, %r)\n"
    "from maestro.util import progress\n"
    "print('plain output')\n"
    "progress.emit('LOOP: iteration 1/4')\n"
    "print('more output')\n"
    "sys.exit(progress.final('LOOP', 'VERIFIED_DONE', 0))\n"
) % str(ROOT)


def test_records_go_to_fd3_when_the_caller_opened_it(tmp_path):
    records = tmp_path / "records"
    proc = subprocess.run(
        ["bash", "-c", 'exec "$0" -c "$1" 3>"$2"', sys.executable, SCRIPT, str(records)],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0
    assert proc.stdout == "plain output\nmore output\n"
    assert records.read_text() == "LOOP: iteration 1/4\nMAESTRO_FINAL: LOOP VERIFIED_DONE rc=0\n"


def test_records_fall_back_to_stdout_in_order_when_fd3_is_closed():
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, close_fds=True,
        preexec_fn=lambda: os.closerange(3, 64),
    )
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == [
        "plain output", "LOOP: iteration 1/4", "more output", "MAESTRO_FINAL: LOOP VERIFIED_DONE rc=0",
    ]
