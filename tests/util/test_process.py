"""Bounded child processes: deadline, group kill, descendants reaped, output kept, ticks."""

import os
import sys
import time

from maestro.util import process
from testing.pids import gone


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def test_output_and_exit_code_are_kept():
    result = process.run(["bash", "-c", "echo out; echo err >&2; exit 7"], timeout=10)
    assert (result.rc, result.stdout, result.stderr, result.timed_out) == (7, b"out\n", b"err\n", False)


def test_timeout_kills_the_whole_group_and_answers_124(tmp_path):
    pidfile = tmp_path / "grandchild"
    start = time.monotonic()
    result = process.run(["bash", "-c", f"sleep 30 & echo $! > {pidfile}; wait"], timeout=0.5, grace=0.2)
    assert result.rc == 124 and result.timed_out
    assert time.monotonic() - start < 15  # far below the child's 30 s, whatever the machine's load
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(grandchild)


def test_stragglers_left_in_the_group_are_reaped_after_a_normal_exit(tmp_path):
    pidfile = tmp_path / "bg"
    result = process.run(["bash", "-c", f"sleep 30 & echo $! > {pidfile}"], timeout=10)
    assert result.rc == 0
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(grandchild)


def test_term_ignoring_child_is_killed_after_the_grace():
    code = "import signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(30)"
    start = time.monotonic()
    result = process.run([sys.executable, "-c", code], timeout=0.5, grace=0.3)
    assert result.timed_out and time.monotonic() - start < 15  # far below the child's 30 s


def test_tick_runs_while_the_child_runs():
    ticks = []
    process.run(["sleep", "1"], timeout=30, tick=lambda: ticks.append(1), tick_interval=0.1)  # ~10 ticks due
    assert len(ticks) >= 2


def test_should_stop_interrupts():
    result = process.run(["sleep", "30"], timeout=30, should_stop=lambda: True, tick_interval=0.05, grace=0.2)
    assert result.interrupted and not result.timed_out


def test_large_output_does_not_deadlock():
    result = process.run([sys.executable, "-c", "import sys; sys.stdout.write('x' * 5_000_000)"], timeout=20)
    assert result.rc == 0 and len(result.stdout) == 5_000_000


def test_missing_program_is_rc_127():
    result = process.run(["/nonexistent/program"], timeout=5)
    assert result.rc == 127 and b"/nonexistent/program" in result.stderr


def test_stdin_is_delivered():
    assert process.run(["cat"], timeout=5, stdin_data=b"hello").stdout == b"hello"


# A background child that traps TERM, says when its trap is armed, and records that it ran.
TRAPPING_CHILD = ("( trap 'echo cleaned > {marker}; exit 0' TERM; echo $BASHPID > {pidfile}; sleep 30 & wait ) & "
                  "while [ ! -s {pidfile} ]; do sleep 0.01; done; ")


def test_a_clean_exit_ends_the_group_term_first(tmp_path):
    """Issue 17 item 3: stragglers of a successful run get TERM (and a chance to clean up) before KILL."""
    marker, pidfile = tmp_path / "marker", tmp_path / "pid"
    script = TRAPPING_CHILD.format(marker=marker, pidfile=pidfile) + "echo ok"
    result = process.run(["bash", "-c", script], timeout=20, grace=10)
    assert (result.rc, result.text) == (0, "ok\n")
    assert gone(int(pidfile.read_text()))
    assert marker.read_text() == "cleaned\n"


def test_a_failed_run_ends_its_group_too(tmp_path):
    marker, pidfile = tmp_path / "marker", tmp_path / "pid"
    script = TRAPPING_CHILD.format(marker=marker, pidfile=pidfile) + "exit 3"
    result = process.run(["bash", "-c", script], timeout=20, grace=10)
    assert result.rc == 3 and not result.timed_out
    assert gone(int(pidfile.read_text()))
    assert marker.read_text() == "cleaned\n"


def test_a_term_ignoring_straggler_of_a_clean_exit_is_killed_after_the_grace(tmp_path):
    pidfile = tmp_path / "pid"
    script = (f"( trap '' TERM; echo $BASHPID > {pidfile}; exec sleep 30 ) & "
              f"while [ ! -s {pidfile} ]; do sleep 0.01; done; echo ok")
    result = process.run(["bash", "-c", script], timeout=20, grace=0.2)
    assert result.rc == 0
    assert gone(int(pidfile.read_text()))
