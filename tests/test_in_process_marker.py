"""The `in_process` marker (tests/testing/in_process.py): what it skips against the archive, and that a wrong marker
fails the source run instead of silently dropping a test of the archive."""

import os
import subprocess
import sys

import pytest

from testing import in_process
from testing.paths import ROOT


def test_a_module_that_launches_nothing_is_in_process():
    assert in_process.violation("from maestro.util import text\n", 0, ["tmp_path"]) == ""


@pytest.mark.parametrize("text", ["from testing.paths import PYZ\n", "if TARGET == 'pyz':\n",
                                  "from testing.processes import run\n", "from testing import processes\n",
                                  "def test(built_pyz):\n"])
def test_a_module_that_names_the_archive_or_the_target_is_not(text):
    assert "names the archive" in in_process.violation(text, 0, [])


def test_a_test_that_launched_maestro_is_not():
    assert "ran maestro through the selected target 2 time(s)" in in_process.violation("", 2, [])


def test_a_test_that_uses_the_built_archive_is_not():
    assert "built_pyz" in in_process.violation("", 0, ["tmp_path", "built_pyz"])


def _pytest(tmp_path, target, *args):
    env = dict(os.environ, MAESTRO_TEST_TARGET=target, MAESTRO_TEST_PYZ=str(tmp_path / "absent.pyz"),
               PYTEST_DEBUG_TEMPROOT=str(tmp_path))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.source_only
def test_the_archive_run_deselects_marked_tests_and_the_source_run_keeps_them(tmp_path):
    marked = "tests/util/test_clock.py"
    pyz = _pytest(tmp_path, "pyz", "--collect-only", marked)
    source = _pytest(tmp_path, "source", "--collect-only", marked)
    assert "no tests collected" in pyz.stdout and "deselected" in pyz.stdout, pyz.stdout
    assert "deselected" not in source.stdout and "test_clock.py::" in source.stdout, source.stdout


@pytest.mark.source_only
@pytest.mark.parametrize("body, why", [
    ("def test_runs_maestro(maestro):\n    maestro('--help')\n", "it uses the built_pyz fixture"),
    ("from testing.memory import command\n\n\ndef test_runs_maestro():\n    command('--help')\n",
     "it ran maestro through the selected target 1 time(s) (the `maestro` fixture or a process runner)"),
])
def test_a_marked_test_that_runs_maestro_fails_the_source_run(tmp_path, body, why):
    wrong = ROOT / "tests" / f"test_zz_wrong_marker_{os.getpid()}.py"
    wrong.write_text("import pytest\n\npytestmark = pytest.mark.in_process\n\n\n" + body)
    try:
        run = _pytest(tmp_path, "source", str(wrong))
    finally:
        wrong.unlink()
    assert run.returncode == 1, run.stdout
    assert f"marked in_process, but {why}: remove the marker" in run.stdout, run.stdout
