"""install publishes the archive with its code compiled by the interpreter the hooks will run with
(maestro/install/archive_code.py): a Python of another bytecode version than the builder's would
otherwise compile every module from source on every hook (~100 ms of a gate call on 3.12)."""

import glob
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from maestro import bundle
from maestro.install import archive_code


def magic_of(data: bytes) -> bytes:
    at = data.index(bundle.TAG) + len(bundle.TAG)
    return data[at:at + 4]


def as_built_by_another_python(data: bytes, monkeypatch) -> bytes:
    """The archive as a Python of another bytecode version would have built it (its bundle and .pyc
    files carry that version's magic): re-assembled as that Python's install would."""
    monkeypatch.setattr(bundle, "bytecode_magic", lambda: b"\x00\x00\r\n")
    try:
        return archive_code.for_this_python(data)
    finally:
        monkeypatch.undo()


def test_an_archive_of_this_python_is_published_as_it_is(built_pyz):
    data = Path(built_pyz).read_bytes()
    assert archive_code.for_this_python(data) is data
    assert magic_of(data) == importlib.util.MAGIC_NUMBER


def code_of(data: bytes) -> tuple:
    """What an archive runs: its shebang, every zip entry (a .pyc as its header and code object), and
    its bundle's index and code objects. (marshal's bytes for equal code depend on the refcounts of the
    process that wrote them: a build is byte-identical to a build, not to a test process's compile.)"""
    import io
    import marshal
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        entries = {info.filename: archive.read(info) for info in archive.infolist()}
    for name, value in entries.items():
        if name.endswith(".pyc"):
            entries[name] = (value[:16], marshal.loads(value[16:]))
    magic, index, base = bundle.read_index(lambda length, offset: data[offset:offset + length])
    codes = {module: (marshal.loads(data[base + entry[0]:base + entry[0] + entry[1]]),
                      data[base + entry[4]:base + entry[4] + entry[5]]) for module, entry in index.items()}
    return data[:data.index(b"\n")], magic, entries, index.keys(), codes


def test_an_archive_of_another_python_is_recompiled_into_what_this_one_builds(built_pyz, monkeypatch):
    data = Path(built_pyz).read_bytes()
    foreign = as_built_by_another_python(data, monkeypatch)
    assert magic_of(foreign) == b"\x00\x00\r\n" and code_of(foreign) != code_of(data)
    assert code_of(archive_code.for_this_python(foreign)) == code_of(data)


def test_install_from_another_pythons_archive_publishes_one_whose_modules_come_from_the_bundle(
        built_pyz, tmp_path, home, monkeypatch):
    foreign = tmp_path / "maestro.pyz"
    foreign.write_bytes(as_built_by_another_python(Path(built_pyz).read_bytes(), monkeypatch))
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    done = subprocess.run([sys.executable, "-I", "-S", str(foreign), "install"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    installed = home / ".claude" / "hooks" / "maestro.pyz"
    assert magic_of(installed.read_bytes()) == importlib.util.MAGIC_NUMBER
    probe = ("import sys; sys.path.insert(0, %r + '/site-packages'); import maestro.hooks.gate;"
             "print(type(maestro.hooks.gate.__loader__).__name__)") % str(installed)
    loader = subprocess.run([sys.executable, "-I", "-S", "-c", probe], capture_output=True, text=True, timeout=60)
    assert loader.stdout.strip() == "Bundle", loader.stderr


def _candidates():
    """Interpreters named python3.11 and later on PATH, then in pyenv's versions (not on PATH unless chosen)."""
    names = ("python3.13", "python3.12", "python3.11", "python3.14")
    yield from filter(None, map(shutil.which, names))
    root = os.environ.get("PYENV_ROOT") or "/root/.pyenv"
    for version in sorted(glob.glob(os.path.join(root, "versions", "3.1[1-9]*"))):
        yield from (path for path in (os.path.join(version, "bin", name) for name in names) if os.path.isfile(path))


def _other_python():
    """An interpreter of another bytecode version than this one, if the machine has one (3.11+)."""
    for found in _candidates():
        check = subprocess.run([found, "-I", "-S", "-c", "import sys, importlib.util; sys.stdout.buffer.write("
                                "importlib.util.MAGIC_NUMBER)"], capture_output=True, timeout=60)
        if check.returncode == 0 and check.stdout and check.stdout != importlib.util.MAGIC_NUMBER:
            return found
    return None


@pytest.mark.skipif(_other_python() is None, reason="no Python 3.11+ of another bytecode version here")
def test_install_run_by_another_python_publishes_code_that_python_runs_from_the_bundle(built_pyz, home):
    python = _other_python()
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    done = subprocess.run([python, "-I", "-S", str(built_pyz), "install"], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    installed = home / ".claude" / "hooks" / "maestro.pyz"
    probe = ("import sys, importlib.util; sys.path.insert(0, %r + '/site-packages'); import maestro.hooks.gate;"
             "print(type(maestro.hooks.gate.__loader__).__name__, importlib.util.MAGIC_NUMBER == %r)") % (
        str(installed), magic_of(installed.read_bytes()))
    loader = subprocess.run([python, "-I", "-S", "-c", probe], capture_output=True, text=True, timeout=60)
    assert loader.stdout.split() == ["Bundle", "True"], loader.stderr
    gate = subprocess.run([python, "-I", "-S", "-c", "import sys;sys.path[:0]=sys.argv[1:2];import maestro_hook",
                           str(installed), "gate"], input='{"session_id": "s-1", "tool_name": "Bash", '
                          '"tool_input": {"command": "ls"}, "cwd": "/"}', capture_output=True, text=True, env=env,
                          timeout=60)
    assert gate.returncode == 0, gate.stderr


def test_doctor_warns_when_the_installed_code_is_not_the_hooks_pythons(maestro, home, monkeypatch):
    """After the hooks' Python was upgraded to another minor version, doctor says so and names the fix —
    asked of the interpreter the hooks run with, not of the one running doctor."""
    from testing import install as H

    from maestro.install import doctor_checks

    assert archive_code.bytecode_of("/nonexistent/python3") is None
    H.assert_ok(maestro("install"))
    gate = ("PreToolUse", {}, {}, H.PYTHON, True)
    check = doctor_checks._archive_code_check(gate)
    assert (check.name, check.status) == ("archive code", "ok") and H.PYTHON in check.detail
    monkeypatch.setattr(archive_code, "bytecode_of", lambda python: b"\x00\x00\r\n")  # what a 3.12 would say
    check = doctor_checks._archive_code_check(gate)
    assert check.status == "warn" and "compiled for another Python version" in check.detail
    assert check.fix.startswith(H.PYTHON) and check.fix.endswith(" install")
