"""A Python below 3.11 gets one line, never a traceback (issue 16 item 2).

The archive's two entry points (build.py's LAUNCHER for `python3 maestro.pyz <verb>`, HOOK_LAUNCHER for
the hooks) and `python -m maestro` check the interpreter before importing anything else. Two ways to
meet an old Python: a faked `sys.version_info` on this interpreter (always runs), and a real older
CPython when one is on this machine (skipped otherwise).
"""

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from testing import ROOT

from maestro.errors import Exit
from maestro.install import settings

pytestmark = pytest.mark.timeout(120)

FAKE_OLD = "import sys;sys.version_info=(3,9,18,'final',0);"
HOOK_VERBS = ("gate", "inject", "session-start", "stop")


def _real_old_pythons():
    """Working CPythons below 3.11 on this machine: the oldest and the newest found (at most two)."""
    found = {}
    names = [shutil.which(f"python3.{minor}") for minor in range(6, 11)]
    if os.environ.get("PYENV_ROOT"):  # pyenv's shims refuse a version not selected: ask for the binaries
        names += sorted(glob.glob(os.path.join(os.environ["PYENV_ROOT"], "versions", "3.*", "bin", "python3")))
    for name in filter(None, names):
        try:
            probe = subprocess.run([name, "-c", "import sys;print(sys.version_info[0], sys.version_info[1])"],
                                   capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0 and probe.stdout.split()[:1] == ["3"]:
            version = tuple(int(part) for part in probe.stdout.split())
            if version < (3, 11):
                found.setdefault(version, name)
    chosen = sorted(found.items())
    return [name for _version, name in (chosen[:1] + chosen[-1:] if len(chosen) > 1 else chosen)]


OLD_PYTHONS = _real_old_pythons()
needs_old_python = pytest.mark.skipif(not OLD_PYTHONS, reason="no CPython below 3.11 on this machine")


def _fake_old_python(tmp_path) -> Path:
    """An executable standing in for a 3.9 interpreter in the installed hook command
    (`PY -I -S -c LAUNCHER PYZ verb`): this Python with sys.version_info faked before LAUNCHER runs."""
    script = tmp_path / "python3.9"
    script.write_text(f'#!/bin/sh\nshift 3\nlauncher=$1\nshift\nexec {sys.executable} -I -S -c "{FAKE_OLD}$launcher" "$@"\n')
    script.chmod(0o755)
    return script


def _assert_one_line(err: str, found: str, suggestion: str) -> None:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"maestro needs Python 3.11 or newer, found Python {found} ("), err
    assert "Traceback" not in err and suggestion in lines[0], err


def test_a_verb_on_an_old_python_gets_one_line_and_the_named_exit_code(built_pyz, tmp_path):
    code = FAKE_OLD + "import runpy;sys.argv=sys.argv[1:];runpy.run_path(sys.argv[0], run_name='__main__')"
    result = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(built_pyz), "install"],
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == Exit.PYTHON_TOO_OLD == 6
    _assert_one_line(result.stderr, "3.9.18", f"run it with another interpreter, e.g. python3.11 {built_pyz} install")
    assert sys.executable in result.stderr
    assert result.stdout == ""


def test_the_gate_on_an_old_python_blocks_with_one_line(built_pyz, tmp_path):
    result = subprocess.run([sys.executable, "-I", "-S", "-c", FAKE_OLD + settings.LAUNCHER, str(built_pyz), "gate"],
                            capture_output=True, text=True, input="{}", cwd=tmp_path)
    assert result.returncode == Exit.HOOK_BLOCK
    _assert_one_line(result.stderr, "3.9.18", f"gate hook (call blocked): re-install maestro with another "
                                              f"interpreter, e.g. python3.11 {built_pyz} install")


@pytest.mark.parametrize("verb", HOOK_VERBS)
def test_an_installed_hook_on_an_old_python_answers_as_for_any_broken_state(built_pyz, tmp_path, verb):
    """The installed command shape (install/settings.py): the gate blocks with the version line only
    (not a second doctor line), session-start tells the model maestro is broken, inject and stop let
    the session go on."""
    python = _fake_old_python(tmp_path)
    command = settings.managed_command(str(python), str(built_pyz), verb)
    result = subprocess.run(["sh", "-c", command], capture_output=True, text=True, input="{}", cwd=tmp_path)
    _assert_one_line(result.stderr, "3.9.18", f"running its {verb} hook")
    if verb == "gate":
        assert result.returncode == Exit.HOOK_BLOCK and result.stdout == ""
    elif verb == "session-start":
        assert result.returncode == 0
        assert result.stdout.strip() == settings.broken_session_message(str(built_pyz))
    else:
        assert result.returncode == 0 and result.stdout == ""


@pytest.mark.source_only
def test_python_dash_m_maestro_on_an_old_python_gets_one_line(tmp_path):
    code = FAKE_OLD + "import runpy;sys.argv=['maestro','doctor'];runpy.run_module('maestro',run_name='__main__',alter_sys=True)"
    result = subprocess.run([sys.executable, "-I", "-c", f"import sys;sys.path.insert(0,{str(ROOT)!r});" + code],
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == Exit.PYTHON_TOO_OLD
    _assert_one_line(result.stderr, "3.9.18", "e.g. python3.11 -m maestro doctor")


@needs_old_python
@pytest.mark.parametrize("python", OLD_PYTHONS)
def test_a_real_old_python_runs_the_archive_into_one_line(built_pyz, tmp_path, python):
    result = subprocess.run([python, str(built_pyz), "install"], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == Exit.PYTHON_TOO_OLD, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"e.g. python3.11 {built_pyz} install" in result.stderr
    for verb in HOOK_VERBS:
        command = settings.managed_command(python, str(built_pyz), verb)
        hook = subprocess.run(["sh", "-c", command], capture_output=True, text=True, input="{}", cwd=tmp_path)
        assert hook.stderr.count("\n") == 1 and f"running its {verb} hook" in hook.stderr, hook.stderr
        assert hook.returncode == (Exit.HOOK_BLOCK if verb == "gate" else 0), hook.stderr


@needs_old_python
@pytest.mark.source_only
@pytest.mark.parametrize("python", OLD_PYTHONS)
def test_a_real_old_python_runs_python_dash_m_maestro_into_one_line(tmp_path, python):
    result = subprocess.run([python, "-m", "maestro", "install"], capture_output=True, text=True, cwd=tmp_path,
                            env={"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    assert result.returncode == Exit.PYTHON_TOO_OLD, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
