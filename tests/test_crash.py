"""maestro/crash.py: a crash note lands in a private ~/.maestro/logs whatever the umask (issue 17, item 12)."""

import os
import stat
from pathlib import Path

import pytest

from maestro import crash

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)


def _mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def _note(verb="gate"):
    try:
        raise RuntimeError("boom")
    except RuntimeError as exc:
        return crash.record(verb, exc)


def test_a_crash_note_creates_private_directories_under_umask_zero(home):
    old = os.umask(0)
    try:
        path = _note()
    finally:
        os.umask(old)

    assert path == str(home / ".maestro" / "logs" / "crashes.log")
    assert _mode(home / ".maestro") == 0o700
    assert _mode(home / ".maestro" / "logs") == 0o700
    assert _mode(path) == 0o600
    text = Path(path).read_text(encoding="utf-8")
    assert "verb=gate" in text and "RuntimeError: boom" in text


def test_a_crash_note_closes_an_open_logs_directory(home):
    (home / ".maestro" / "logs").mkdir(parents=True)
    os.chmod(home / ".maestro", 0o777)
    os.chmod(home / ".maestro" / "logs", 0o777)

    assert _note()

    assert _mode(home / ".maestro") == 0o700
    assert _mode(home / ".maestro" / "logs") == 0o700


def test_a_symlinked_maestro_dir_gets_no_note(home, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, home / ".maestro")

    assert _note() == ""  # never raises; writes nothing through the link
    assert list(elsewhere.iterdir()) == []
