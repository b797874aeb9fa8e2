"""settings.json through install and uninstall (issue 17, item 11): whatever Claude Code accepted must come back
as Claude Code can still read it, and — when nothing else changed it — byte for byte; an install killed at any
point must neither cost that nor leave its temp files behind; a relative CLAUDE_CONFIG_DIR is made absolute.
"""

import json
import os
import subprocess
import sys

import pytest
from testing import install as H
from testing.paths import PYZ, ROOT, TARGET

from maestro.install import settings as settings_module


def _no_infinity_or_nan(raw: bytes):
    """Parse as a strict JSON parser (Claude Code's) does: Infinity and NaN are not JSON."""
    def refuse(name):
        raise ValueError(name)
    return json.loads(raw.decode("utf-8"), parse_constant=refuse)


# --- numbers keep their text ------------------------------------------------------------------------

def test_a_huge_number_is_not_rewritten_as_infinity(maestro, home):
    original = b'{"big": 1e400, "tiny": -2.5E-400, "price": 1.50, "list": [0.1, 3]}\n'
    H.write_settings(home, None, original)

    H.assert_ok(maestro("install"))

    raw = H.settings_path(home).read_bytes()
    assert b"Infinity" not in raw
    value = _no_infinity_or_nan(raw)  # Claude Code can still parse it
    assert b'"big": 1e400' in raw and b'"tiny": -2.5E-400' in raw and b'"price": 1.50' in raw
    assert value["list"] == [0.1, 3]
    assert len(H.maestro_entries(home, value)) == 4

    H.assert_ok(maestro("uninstall"))

    assert H.settings_path(home).read_bytes() == original


def test_a_huge_number_survives_an_uninstall_that_keeps_other_changes(maestro, home):
    H.write_settings(home, None, b'{"big": 1e400}\n')
    H.assert_ok(maestro("install"))
    raw = H.settings_path(home).read_bytes().replace(b'"big": 1e400', b'"big": 1e400, "theme": "dark"')
    H.settings_path(home).write_bytes(raw)

    H.assert_ok(maestro("uninstall"))

    raw = H.settings_path(home).read_bytes()
    assert b"Infinity" not in raw
    assert b'"big": 1e400' in raw
    assert _no_infinity_or_nan(raw)["theme"] == "dark"


def test_an_existing_float_timeout_is_not_a_change(maestro, home):
    """A Number equals the number it denotes: a maestro entry with `"timeout": 10.0` is up to date."""
    H.assert_ok(maestro("install"))
    raw = H.settings_path(home).read_bytes().replace(b'"timeout": 10\n', b'"timeout": 10.0\n')
    H.settings_path(home).write_bytes(raw)

    result = H.assert_ok(maestro("install"))

    assert "[maestro] settings.json already had every maestro hook entry" in H.out_lines(result)
    assert H.settings_path(home).read_bytes() == raw


def test_number_literals_round_trip_through_dumps():
    value = settings_module.loads_strict(b'{"a": 1e400, "b": [1.0, 2.50e+3, -0.0], "c": 7}', exact_numbers=True)
    assert settings_module.dumps(value) == b'{\n  "a": 1e400,\n  "b": [\n    1.0,\n    2.50e+3,\n    -0.0\n  ],\n  "c": 7\n}\n'
    assert value["b"][0] == 1 and value["c"] == 7
    assert value["a"] == settings_module.Number("1e400") != settings_module.Number("1e500")  # both inf as floats
    assert settings_module.Number("10.0") == 10 and 10 == settings_module.Number("10.0")


# --- a lone surrogate ---------------------------------------------------------------------------------

def test_a_lone_surrogate_does_not_crash_install_and_round_trips(maestro, home):
    original = b'{"theme": "dark \\ud800 mode", "pair": "\\ud83d\\ude00"}\n'
    H.write_settings(home, None, original)

    result = maestro("install")

    assert result.rc == 0, result.err
    assert "internal error" not in result.err
    raw = H.settings_path(home).read_bytes()
    raw.decode("utf-8")  # valid UTF-8
    value = _no_infinity_or_nan(raw)
    assert value["theme"] == "dark \ud800 mode" and value["pair"] == "\U0001F600"
    assert len(H.maestro_entries(home, value)) == 4

    H.assert_ok(maestro("uninstall"))

    assert H.settings_path(home).read_bytes() == original


# --- hook structures that hold no hook ------------------------------------------------------------------

@pytest.mark.parametrize("original", [
    b'{"hooks": {"Stop": [{"hooks": []}]}}',
    b'{"hooks": {"Stop": []}}',
    b'{"hooks": {"PreToolUse": [{"matcher": "^(Edit|Write|MultiEdit|NotebookEdit|Bash|mcp__.*)$", "hooks": []}],'
    b' "UserPromptSubmit": [{"hooks": []}]}, "x": 1}\n',
], ids=["empty-block", "empty-event", "empty-blocks-maestro-joins"])
def test_empty_hook_blocks_are_restored_byte_for_byte(maestro, home, original):
    H.write_settings(home, None, original)
    H.assert_ok(maestro("install"))
    assert len(H.maestro_entries(home, H.read_json(H.settings_path(home)))) == 4

    result = H.assert_ok(maestro("uninstall"))

    assert H.settings_path(home).read_bytes() == original
    assert "[maestro] restored settings.json to its exact pre-install bytes" in H.out_lines(result)


# --- an install killed part-way ---------------------------------------------------------------------------

KILLED_INSTALL = r"""
import os, sys
sys.path.insert(0, sys.argv[1])
from maestro import runtime
from maestro.util import atomic

archive, kill_at = sys.argv[2], int(sys.argv[3])
runtime.archive_path = lambda: archive
real_write, writes = atomic.write_atomic, [0]

def write_then_die(path, data, mode=0o600, durable=True):
    writes[0] += 1
    if writes[0] == kill_at:  # SIGKILL-like: the temp file is complete, the rename never happens
        os.replace = lambda src, dst: os._exit(9)
    return real_write(path, data, mode, durable)

atomic.write_atomic = write_then_die
from maestro import cli
raise SystemExit(cli.main(["install"]))
"""


def _killed_install(home, built_pyz, kill_at: int) -> int:
    source = str(PYZ) + "/site-packages" if TARGET == "pyz" else str(ROOT)
    env = dict(os.environ, HOME=str(home))
    return subprocess.run([sys.executable, "-c", KILLED_INSTALL, source, str(built_pyz), str(kill_at)],
                          capture_output=True, env=env, timeout=120).returncode


def _temp_files(home):
    return sorted(str(p.relative_to(home)) for p in home.rglob("*") if ".maestro-tmp-" in p.name)


# Every case kills an install of the selected target's own modules (inside the archive for the pyz run) at each
# write; which settings existed and what cleans up are classes of the installer's logic, the same bytes on both
# targets. The archive run keeps the case that exercises the most (settings existed, install then uninstall);
# the other three launch ~90 processes more for no archive-specific behaviour, so they run on the source tree.
KILLED_INSTALL_CASES = [
    pytest.param(True, "install-then-uninstall", id="install-then-uninstall-settings-existed"),
    pytest.param(False, "install-then-uninstall", id="install-then-uninstall-no-settings",
                 marks=pytest.mark.source_only),
    pytest.param(True, "uninstall", id="uninstall-settings-existed", marks=pytest.mark.source_only),
    pytest.param(False, "uninstall", id="uninstall-no-settings", marks=pytest.mark.source_only),
]


@pytest.mark.parametrize(("existed", "then"), KILLED_INSTALL_CASES)
def test_an_install_killed_at_any_write_still_restores_settings_and_leaves_no_temp_files(
        maestro, home, built_pyz, existed, then):
    original = b'{\n    "theme": "dark",   "n": 1.50\n}'  # odd spacing: only the exact bytes restore it
    killed_at = []
    for kill_at in range(1, 30):
        for child in list(home.iterdir()):
            subprocess.run(["rm", "-rf", str(child)], check=True)
        if existed:
            H.write_settings(home, None, original)
        rc = _killed_install(home, built_pyz, kill_at)
        if rc == 0:
            break  # fewer writes than kill_at: the install ran to the end
        assert rc == 9, f"kill at write {kill_at}: rc {rc}"
        killed_at.append(kill_at)
        assert _temp_files(home), f"kill at write {kill_at} left no temp file: the test proves nothing"
        if then == "install-then-uninstall":
            H.assert_ok(maestro("install"))
            assert _temp_files(home) == [], f"kill at write {kill_at}"
        H.assert_ok(maestro("uninstall"))

        assert _temp_files(home) == [], f"kill at write {kill_at}"
        if existed:
            assert H.settings_path(home).read_bytes() == original, f"kill at write {kill_at}"
        else:
            assert not H.settings_path(home).exists(), f"kill at write {kill_at}"
    assert len(killed_at) >= 6, killed_at  # archive, rules, skill, manifest, settings.json, ask-on-start…


def test_uninstall_leaves_a_live_writers_temp_file_alone(maestro, home):
    H.assert_ok(maestro("install"))
    live = H.settings_path(home).with_name(f".settings.json.maestro-tmp-{os.getppid()}")  # a running process
    live.write_bytes(b"{}")
    dead = H.settings_path(home).with_name(".settings.json.maestro-tmp-999999999")
    dead.write_bytes(b"{}")
    foreign = H.settings_path(home).with_name(".settings.json.other-tmp-999999999")
    foreign.write_bytes(b"{}")

    H.assert_ok(maestro("uninstall"))

    assert live.exists() and foreign.exists() and not dead.exists()


# --- a relative CLAUDE_CONFIG_DIR ---------------------------------------------------------------------------

def test_a_relative_claude_config_dir_is_made_absolute(maestro, home, tmp_path):
    work = tmp_path / "work"
    work.mkdir()

    H.assert_ok(maestro("install", env={"CLAUDE_CONFIG_DIR": "rel-claude"}, cwd=str(work)))

    config = work / "rel-claude"
    value = H.read_json(config / "settings.json")
    pyz = config / "hooks" / "maestro.pyz"
    assert pyz.is_file()
    commands = H.marked_commands(value)
    assert len(commands) == 4
    for command in commands:
        assert f"[ -f {pyz} ]" in command, command  # absolute: the gate runs from every project directory
        assert " rel-claude/" not in command
