"""The command line surface: verb list, --version, per-verb --help, error shape."""

import subprocess
import sys

import pytest
from testing import PYZ, TARGET

from maestro import __version__
from maestro.cli import VERBS


def test_help_lists_every_verb_with_one_line_each(maestro):
    result = maestro("--help")
    assert result.rc == 0
    for verb, (_module, summary) in VERBS.items():
        lines = [line for line in result.out.splitlines() if line.strip().startswith(verb + " ")]
        assert len(lines) == 1, verb
        assert summary in lines[0]


def test_version_prints_the_package_version(maestro):
    result = maestro("--version")
    assert (result.rc, result.out) == (0, f"maestro {__version__}\n")


def test_no_verb_prints_usage_and_exits_3(maestro):
    result = maestro()
    assert result.rc == 3
    assert "usage: maestro" in result.out


def test_unknown_verb_is_one_line_and_exit_3(maestro):
    result = maestro("frobnicate")
    assert result.rc == 3
    assert result.err == "maestro: unknown verb 'frobnicate' (see maestro --help)\n"


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_every_verb_has_help(maestro, verb):
    result = maestro(verb, "--help")
    assert result.rc == 0, result.err
    assert f"maestro {verb}" in result.out or "usage" in result.out.lower()
    assert "Traceback" not in result.out + result.err


def test_bad_option_is_one_clear_line_with_exit_3(maestro):
    result = maestro("doctor", "--bogus")
    assert result.rc == 3
    assert result.err.count("\n") == 1
    assert "unrecognized arguments: --bogus" in result.err


@pytest.mark.source_only
def test_unexpected_error_becomes_one_line_and_a_crash_note(maestro, monkeypatch, home):
    if maestro.target == "pyz":
        pytest.skip("needs monkeypatching")
    from maestro.commands import doctor

    def boom(argv):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(doctor, "main", boom)
    result = maestro("doctor")
    assert result.rc == 4
    assert result.err.startswith("maestro doctor: internal error: RuntimeError: kaboom; details in ")
    assert "Traceback" not in result.err
    log = (home / ".maestro" / "logs" / "crashes.log").read_text()
    assert "RuntimeError: kaboom" in log and "verb=doctor" in log


@pytest.mark.skipif(not PYZ.is_file(), reason="dist/maestro.pyz not built")
def test_archive_runs_air_gapped_with_isolated_mode_and_no_site():
    result = subprocess.run([sys.executable, "-I", "-S", str(PYZ), "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    assert "verbs:" in result.stdout


@pytest.mark.skipif(not PYZ.is_file(), reason="dist/maestro.pyz not built")
def test_archive_gate_imports_neither_json_nor_re_nor_argparse():
    """The gate is a hot path: `-X importtime` lists every module the real run imports."""
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", str(PYZ), "gate"], input=b"{}", capture_output=True
    )
    assert result.returncode == 2  # no session id: fail closed
    imported = {line.split("|")[-1].strip() for line in result.stderr.decode().splitlines() if "|" in line}
    assert "maestro.hooks.gate" in imported
    assert not imported & {"json", "re", "argparse", "tomllib", "subprocess"}


def test_target_is_known():
    assert TARGET in ("source", "pyz")


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_every_verb_is_documented_in_the_readme(verb):
    from testing import ROOT

    readme = (ROOT / "README.md").read_text()
    assert f"| `{verb}" in readme, f"README's verb table lacks {verb}"
