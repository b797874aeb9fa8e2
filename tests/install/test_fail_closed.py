"""The installed hook commands, run exactly as Claude Code runs them (`sh -c "<command>"`), never
fail open: whatever breaks the interpreter or the archive, the gate exits 2 — never 0, never 127,
1 or 120, which Claude Code reads as "allow" — and says, in one line, to run `doctor`."""

import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from testing import install as H

DOCTOR_LINE = "maestro gate cannot run, call blocked: run python3 ~/.claude/hooks/maestro.pyz doctor"
SOURCE_EDIT = {"session_id": "fail-closed-test", "cwd": "/nonexistent-maestro-test", "hook_event_name": "PreToolUse",
               "tool_name": "Edit", "tool_input": {"file_path": "/nonexistent-maestro-test/src/app.py",
                                                   "old_string": "a", "new_string": "b"}}


def _registered(home, verb):
    settings = H.read_json(H.settings_path(home))
    for blocks in settings["hooks"].values():
        for block in blocks:
            for hook in block["hooks"]:
                if hook["command"].endswith(f"# maestro-managed:{verb}"):
                    return hook["command"]
    raise AssertionError(f"{verb} not registered")


def _run(command, payload, stderr_mode="pipe"):
    """(exit code, stdout, stderr) of `sh -c command`; stderr closed, /dev/full or a broken pipe."""
    data = json.dumps(payload).encode()
    if stderr_mode == "pipe":
        proc = subprocess.run(["sh", "-c", command], input=data, capture_output=True, timeout=60)
        return proc.returncode, proc.stdout.decode(), proc.stderr.decode()
    if stderr_mode == "broken-pipe":
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            proc = subprocess.run(["sh", "-c", command], input=data, stdout=subprocess.PIPE, stderr=write_end,
                                  timeout=60)
        finally:
            os.close(write_end)
        return proc.returncode, proc.stdout.decode(), None
    redirect = {"closed": "2>&-", "full": "2>/dev/full"}[stderr_mode]
    proc = subprocess.run(["sh", "-c", f'sh -c "$1" {redirect}', "sh", command], input=data,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


@pytest.fixture
def installed(maestro, home):
    H.write_settings(home, {})
    H.assert_ok(maestro("install"))
    return home


def _python_link(tmp_path):
    """A private alias of the test interpreter, so the test can delete 'the interpreter'."""
    link = tmp_path / "pybin" / "python3"
    link.parent.mkdir()
    link.symlink_to(os.path.realpath(H.PYTHON))
    return str(link)


def _zip_with_main(path: Path, main: str) -> None:
    path.unlink()
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("__main__.py", main)


BREAKAGES = ("interpreter-deleted", "archive-deleted", "archive-truncated", "archive-not-a-zip", "archive-garbage",
             "archive-raises", "archive-exits-1", "archive-is-a-directory")


def _break(how, home, tmp_path):
    """Break the installation; return the gate command as Claude Code would run it."""
    pyz = H.installed_pyz(home)
    if how == "interpreter-deleted":
        python = _python_link(tmp_path)
        command = H.managed_command(home, "gate", python=python)
        assert _run(command, SOURCE_EDIT)[0] == 2  # works while the interpreter is there
        os.unlink(python)
        return command
    if how == "archive-deleted":
        pyz.unlink()
    elif how == "archive-truncated":
        pyz.write_bytes(pyz.read_bytes()[: pyz.stat().st_size // 2])
    elif how == "archive-not-a-zip":
        pyz.write_bytes(b"this is not a zip archive\n")
    elif how == "archive-garbage":
        pyz.write_bytes(bytes(range(256)) * 4)
    elif how == "archive-raises":
        _zip_with_main(pyz, "raise RuntimeError('boom')\n")
    elif how == "archive-exits-1":
        _zip_with_main(pyz, "import sys\nsys.exit(1)\n")
    elif how == "archive-is-a-directory":
        pyz.unlink()
        pyz.mkdir()
        (pyz / "__main__.py").write_text("import sys\nsys.exit(0)\n")  # would allow, were it run
    return _registered(home, "gate")


@pytest.mark.parametrize("stderr_mode", ["pipe", "closed", "full", "broken-pipe"])
@pytest.mark.parametrize("how", BREAKAGES)
def test_a_broken_gate_blocks_and_names_doctor(installed, tmp_path, how, stderr_mode):
    command = _break(how, installed, tmp_path)

    rc, out, err = _run(command, SOURCE_EDIT, stderr_mode)

    assert rc == 2
    assert out == ""
    if stderr_mode == "pipe":
        assert err.splitlines()[-1] == DOCTOR_LINE
        if how in ("interpreter-deleted", "archive-deleted", "archive-is-a-directory"):
            assert err == DOCTOR_LINE + "\n"  # exactly one line: the guards run before anything else


@pytest.mark.parametrize("stderr_mode", ["pipe", "closed", "full", "broken-pipe"])
def test_a_working_gate_blocks_a_source_edit_whatever_stderr_is(installed, stderr_mode):
    rc, _out, err = _run(_registered(installed, "gate"), SOURCE_EDIT, stderr_mode)

    assert rc == 2
    if stderr_mode == "pipe":
        assert "ORCHESTRATOR GATE" in err and "doctor" not in err  # the gate's own answer, not the fallback


def test_a_working_gate_still_allows_what_it_allows(installed, tmp_path):
    scratch = dict(SOURCE_EDIT, cwd=str(tmp_path), tool_input={"file_path": str(tmp_path / "tmp" / "x.py"),
                                                                "old_string": "a", "new_string": "b"})
    assert _run(_registered(installed, "gate"), scratch) == (0, "", "")


def test_session_start_says_maestro_is_broken_on_stdout_and_exits_0(installed):
    payload = {"session_id": "fail-closed-test", "source": "startup", "hook_event_name": "SessionStart"}
    command = _registered(installed, "session-start")
    rc, out, _err = _run(command, payload)
    assert rc == 0 and "maestro is broken" not in out

    H.installed_pyz(installed).unlink()
    rc, out, err = _run(command, payload)

    assert rc == 0 and err == ""
    assert out.count("\n") == 1 and out.startswith("maestro is broken: ")
    assert "python3 ~/.claude/hooks/maestro.pyz doctor" in out


def test_a_broken_inject_lets_the_prompt_through_but_keeps_its_own_rejection(installed):
    command = _registered(installed, "inject")
    assert _run(command, {"prompt": "no session id"})[0] == 2  # inject's deliberate fail-closed answer

    H.installed_pyz(installed).write_bytes(b"this is not a zip archive\n")
    rc, out, _err = _run(command, {"session_id": "fail-closed-test", "prompt": "hello"})

    assert (rc, out) == (0, "")


def test_a_broken_stop_lets_claude_stop(installed):
    command = _registered(installed, "stop")
    payload = {"session_id": "fail-closed-test", "hook_event_name": "Stop", "stop_hook_active": False}
    assert _run(command, payload)[:2] == (0, '{"continue": true}\n')

    shutil.rmtree(H.installed_pyz(installed).parent)
    assert _run(command, payload) == (0, "", "")


def test_the_gate_command_stays_short_enough_to_read_in_a_block_message(installed):
    """The model sees the command line in every block message."""
    command = _registered(installed, "gate")
    without_paths = command.replace(H.PYTHON, "PY").replace(str(H.installed_pyz(installed)), "PYZ")
    assert len(without_paths) <= 280, without_paths
