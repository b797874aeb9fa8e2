"""The interpreter path install records: absolute, the same binary, and one that survives a patch upgrade.

Each case builds a fake install tree (executable files and symlinks; nothing is run)."""

import os
import sys

import pytest

from maestro.install import interpreter

MINOR = "python3.12"


def _binary(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"#!fake interpreter\n")
    path.chmod(0o755)
    return path


def _link(path, target):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    return path


def _choose(executable, *path_dirs):
    return interpreter.choose(str(executable), os.pathsep.join(str(d) for d in path_dirs), MINOR)


def test_homebrew_cellar_binary_is_recorded_through_its_bin_alias(tmp_path):
    real = _binary(tmp_path / "opt/homebrew/Cellar/python@3.12/3.12.1/bin/python3.12")
    bin_dir = tmp_path / "opt/homebrew/bin"
    _link(bin_dir / "python3", real)
    _link(bin_dir / "python3.12", real)

    assert _choose(real, bin_dir) == (str(bin_dir / "python3.12"), True)


def test_the_versioned_alias_wins_over_python3_but_python3_is_taken_when_alone(tmp_path):
    real = _binary(tmp_path / "nix/store/abc123-python3-3.12.1/bin/python3.12")
    profile = tmp_path / "home/.nix-profile/bin"
    _link(profile / "python3", real)

    assert _choose(real, profile) == (str(profile / "python3"), True)


def test_an_executable_invoked_through_a_stable_path_is_kept_as_invoked(tmp_path):
    real = _binary(tmp_path / "usr/bin/python3.12")
    invoked = _link(tmp_path / "usr/bin/python3", real)

    assert _choose(invoked) == (str(invoked), True)


def test_pyenv_shims_are_scripts_not_the_binary_so_the_real_path_is_recorded_as_unstable(tmp_path):
    real = _binary(tmp_path / "home/.pyenv/versions/3.12.1/bin/python3.12")
    shims = tmp_path / "home/.pyenv/shims"
    _binary(shims / "python3")
    _binary(shims / "python3.12")

    assert _choose(real, shims) == (str(real), False)


@pytest.mark.parametrize("tree", ["home/.asdf/installs/python/3.12.1", "home/.local/share/mise/installs/python/3.12.1",
                                  "home/.local/share/uv/python/cpython-3.12.1-linux-x86_64-gnu"])
def test_other_version_managers_are_versioned_trees(tmp_path, tree):
    real = _binary(tmp_path / tree / "bin/python3.12")
    assert _choose(real) == (str(real), False)


def test_a_python_of_the_same_name_that_is_another_binary_is_never_chosen(tmp_path):
    real = _binary(tmp_path / "opt/homebrew/Cellar/python@3.12/3.12.1/bin/python3.12")
    other = tmp_path / "usr/bin"
    _binary(other / "python3.12")
    _binary(other / "python3")

    assert _choose(real, other) == (str(real), False)


def test_a_hard_link_is_the_same_binary(tmp_path):
    real = _binary(tmp_path / "home/.pyenv/versions/3.12.1/bin/python3.12")
    (tmp_path / "usr/bin").mkdir(parents=True)
    os.link(real, tmp_path / "usr/bin/python3")

    assert _choose(real, tmp_path / "usr/bin") == (str(tmp_path / "usr/bin/python3"), True)


def test_a_virtual_environment_records_the_base_interpreter_not_the_venv(tmp_path):
    real = _binary(tmp_path / "usr/bin/python3.12")
    venv = tmp_path / "project/.venv"
    invoked = _link(venv / "bin/python", real)
    _link(venv / "bin/python3.12", real)
    (venv / "pyvenv.cfg").write_text(f"home = {tmp_path / 'usr/bin'}\n")
    other_venv = tmp_path / "other/venv"
    _link(other_venv / "bin/python3", real)
    (other_venv / "pyvenv.cfg").write_text("home = /usr/bin\n")

    assert _choose(invoked, venv / "bin", other_venv / "bin", tmp_path / "usr/bin") == (
        str(tmp_path / "usr/bin/python3.12"), True)
    # nothing outside a venv: the real binary (a venv is deleted more often than a Python)
    assert _choose(invoked, venv / "bin", other_venv / "bin") == (str(real), True)


def test_a_venv_made_with_copies_has_no_stable_path(tmp_path):
    venv = tmp_path / "project/.venv"
    copy = _binary(venv / "bin/python3.12")
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")

    assert _choose(copy, venv / "bin") == (str(copy), False)


def test_relative_path_entries_are_skipped(tmp_path, monkeypatch):
    real = _binary(tmp_path / "home/.pyenv/versions/3.12.1/bin/python3.12")
    stale = tmp_path / "usr/bin"
    stale.mkdir(parents=True)
    os.link(real, stale / "python3")
    monkeypatch.chdir(tmp_path)
    os.link(real, tmp_path / "python3.12")

    assert _choose(real, ".", "usr/bin", "") == (str(real), False)  # relative PATH entries never count
    assert _choose(real, ".", stale) == (str(stale / "python3"), True)


def test_no_executable_gives_no_path():
    assert interpreter.choose("", "/usr/bin") == ("", False)
    assert interpreter.choose("python3", "/usr/bin") == ("", False)


def test_the_running_test_interpreter_is_never_recorded_inside_its_venv():
    path, _stable = interpreter.stable_interpreter()
    assert not interpreter.in_virtualenv(path) or path == os.path.realpath(sys.executable)


def test_the_running_interpreter_gets_an_absolute_path_to_itself():
    path, _stable = interpreter.stable_interpreter()
    assert os.path.isabs(path) and os.path.samefile(path, sys.executable)


@pytest.mark.source_only
@pytest.mark.parametrize("stable", [True, False])
def test_install_warns_only_when_no_stable_path_exists(maestro, home, monkeypatch, stable):
    if maestro.target == "pyz":
        pytest.skip("monkeypatching the interpreter choice needs the in-process runner")
    chosen = os.path.realpath(sys.executable)
    monkeypatch.setattr(interpreter, "stable_interpreter", lambda: (chosen, stable))

    result = maestro("install")

    assert result.rc == 0, result.err
    warned = [line for line in result.err.splitlines() if "lives in a versioned Python install" in line]
    assert warned == ([] if stable else [
        f"[maestro] WARN: {chosen} lives in a versioned Python install and no stable alias (such as /usr/bin/python3) "
        "points at it: after upgrading that Python, re-run install (doctor reports it)"])


@pytest.mark.source_only
def test_install_refuses_without_a_known_interpreter(maestro, home, monkeypatch):
    if maestro.target == "pyz":
        pytest.skip("monkeypatching the interpreter choice needs the in-process runner")
    monkeypatch.setattr(interpreter, "stable_interpreter", lambda: ("", False))
    before = sorted(p.name for p in home.iterdir())

    result = maestro("install")

    assert result.rc == 1 and "cannot tell which Python runs this install" in result.err
    assert sorted(p.name for p in home.iterdir()) == before
