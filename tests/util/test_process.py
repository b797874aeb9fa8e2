"""Bounded child processes: deadline, group kill, descendants reaped, output kept, ticks."""

import os
import subprocess
import sys
import time

import pytest

from maestro.util import process
from testing.pids import gone

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)


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


def _open_descriptors():
    return set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else set()


@pytest.mark.parametrize("watch", ["pidfd", "polling"])
def test_the_exit_wait_works_with_and_without_a_pidfd_and_leaks_no_descriptor(monkeypatch, watch):
    if watch == "polling":
        monkeypatch.setattr(process.os, "pidfd_open", _refuse, raising=False)
    before = _open_descriptors()
    ticks = []
    done = process.run([sys.executable, "-c", "import time; time.sleep(0.3); print('out')"], timeout=30,
                       tick=lambda: ticks.append(1), tick_interval=0.05)
    assert (done.rc, done.text, done.timed_out) == (0, "out\n", False)
    assert ticks, "the child outlived several tick intervals: tick must have run"
    assert _open_descriptors() == before


def _refuse(pid):
    raise OSError(38, "Function not implemented")


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="the zombie check reads /proc (Linux)")
def test_a_group_holding_only_a_zombie_counts_as_gone_and_a_running_one_does_not():
    dead = subprocess.Popen(["true"], start_new_session=True)
    running = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        os.waitid(os.P_PID, dead.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: a zombie
        assert process._only_zombies_left(dead.pid) is True
        assert process._only_zombies_left(running.pid) is False
        assert process._group_alive(running.pid) is True
    finally:
        running.kill()
        running.wait()
        dead.wait()
    assert process._group_alive(dead.pid) is False  # reaped: nothing left at all
