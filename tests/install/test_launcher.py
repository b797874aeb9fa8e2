"""The `maestro` launcher (issue 16 item 4): `install` writes ~/.local/bin/maestro (or `--bin-dir DIR`, or
nothing with `--no-launcher`), a sh script that execs the installed archive with the recorded interpreter;
it never replaces a file maestro did not write, `uninstall` removes it when unchanged, `doctor` reports it,
and every user-facing command is spelled `maestro <verb>`."""

import json
import os
import re
import stat
import subprocess
from pathlib import Path

import pytest
from testing import install as H
from testing.paths import ROOT

ADVICE = 'export PATH="$HOME/.local/bin:$PATH"'


def launcher_path(home: Path) -> Path:
    return home / ".local" / "bin" / "maestro"


def record_path(home: Path) -> Path:
    return home / ".maestro" / "launcher.json"


def expected_script(python: str, pyz: Path) -> bytes:
    from maestro.install import launcher

    return launcher.script(python, str(pyz))


def install(maestro, home, *args, path=None):
    H.write_settings(home, {})
    return maestro("install", *args, env={"PATH": path} if path is not None else None)


def test_install_writes_the_launcher_that_runs_the_installed_archive(maestro, home):
    result = H.assert_ok(install(maestro, home, path="/usr/bin:/bin"))

    launcher = launcher_path(home)
    data = launcher.read_bytes()
    assert data == expected_script(H.PYTHON, H.installed_pyz(home))
    assert data.startswith(b"#!/bin/sh\n")
    # absolute paths, no PATH lookup; the archive's entry module as the hooks run it (no runpy)
    assert (f"exec {H.PYTHON} -I -S -c 'import sys;sys.path[:0]=sys.argv[1:2];import maestro_hook' "
            f"{H.installed_pyz(home)} \"$@\"\n").encode() in data
    assert H.mode(launcher) == 0o755
    record = json.loads(record_path(home).read_bytes())
    assert record["path"] == str(launcher) and record["sha256"] == H.sha256(data)
    assert H.mode(record_path(home)) == 0o600
    assert "[maestro] installed the `maestro` launcher: ~/.local/bin/maestro" in H.out_lines(result)
    not_on_path = [line for line in H.out_lines(result) if "is not on PATH" in line]
    assert len(not_on_path) == 1 and ADVICE in not_on_path[0], result.out
    # it really runs the installed archive, with the recorded interpreter, from any PATH
    proc = subprocess.run([str(launcher), "uninstall", "--help"], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, HOME=str(home), PATH="/nonexistent"))
    assert proc.returncode == 0 and "usage: maestro uninstall" in proc.stdout, proc.stdout + proc.stderr


def test_install_says_when_the_launcher_directory_is_on_path(maestro, home):
    bin_dir = home / ".local" / "bin"
    result = H.assert_ok(install(maestro, home, path=f"{bin_dir}:/usr/bin:/bin"))

    assert "[maestro] ~/.local/bin is on PATH: run `maestro <verb>` (`maestro doctor` checks the install)" \
        in H.out_lines(result)
    assert "is not on PATH" not in result.out


def test_install_honours_claude_config_dir_and_bin_dir(maestro, home, tmp_path):
    config, bin_dir = tmp_path / "claude-config", tmp_path / "my bin"
    H.write_settings(home, {})

    H.assert_ok(maestro("install", "--bin-dir", str(bin_dir), env={"CLAUDE_CONFIG_DIR": str(config)}))

    assert (bin_dir / "maestro").read_bytes() == expected_script(H.PYTHON, config / "hooks" / "maestro.pyz")
    assert not (home / ".local").exists()


def test_no_launcher_installs_no_launcher(maestro, home):
    H.assert_ok(install(maestro, home, "--no-launcher"))

    assert not (home / ".local").exists() and not record_path(home).exists()
    assert H.installed_pyz(home).is_file()


@pytest.mark.parametrize("args", [["--bin-dir"], ["--bin-dir", "--no-launcher"], ["--bin-dir", "/x", "--no-launcher"]])
def test_bad_launcher_options_change_nothing(maestro, home, args):
    before = H.snapshot(home)
    result = maestro("install", *args)
    assert result.rc == 1 and "usage: maestro install" in result.err
    assert H.snapshot(home) == before


def test_a_foreign_file_at_the_launcher_path_is_never_replaced(maestro, home):
    launcher = launcher_path(home)
    launcher.parent.mkdir(parents=True)
    launcher.write_bytes(b"#!/bin/sh\necho my own maestro\n")

    result = H.assert_ok(install(maestro, home))

    assert launcher.read_bytes() == b"#!/bin/sh\necho my own maestro\n"
    refusals = [line for line in H.err_lines(result) if "launcher" in line]
    assert refusals == [f"[maestro] WARN: skipped the `maestro` launcher: {launcher} exists and maestro did not write "
                        "it; left it alone (remove it, or choose another place with --bin-dir DIR)"]
    assert not record_path(home).exists()
    assert H.installed_pyz(home).is_file()  # the rest installed
    assert len(H.maestro_entries(home, H.read_json(H.settings_path(home)))) == len(H.VERBS)

    H.assert_ok(maestro("uninstall"))
    assert launcher.read_bytes() == b"#!/bin/sh\necho my own maestro\n"  # still not ours


def test_a_symlink_at_the_launcher_path_is_refused_not_followed(maestro, home, tmp_path):
    target = tmp_path / "target"
    target.write_bytes(b"keep me\n")
    launcher = launcher_path(home)
    launcher.parent.mkdir(parents=True)
    launcher.symlink_to(target)

    result = H.assert_ok(install(maestro, home))

    assert os.readlink(launcher) == str(target) and target.read_bytes() == b"keep me\n"
    assert any("is a symlink; refusing to replace it" in line for line in H.err_lines(result))
    assert H.installed_pyz(home).is_file()


def test_reinstall_updates_an_older_launcher_and_leaves_a_current_one_untouched(maestro, home):
    H.assert_ok(install(maestro, home))
    launcher = launcher_path(home)
    identity = H.identities(home / ".local")
    H.assert_ok(maestro("install"))
    assert H.identities(home / ".local") == identity  # identical re-install: not rewritten

    older = expected_script("/old/python3.11", H.installed_pyz(home))  # what an earlier install recorded
    launcher.write_bytes(older)
    record = json.loads(record_path(home).read_bytes())
    record["sha256"] = H.sha256(older)
    record_path(home).write_text(json.dumps(record))

    H.assert_ok(maestro("install"))

    assert launcher.read_bytes() == expected_script(H.PYTHON, H.installed_pyz(home))
    assert json.loads(record_path(home).read_bytes())["sha256"] == H.sha256(launcher.read_bytes())


def test_a_new_bin_dir_moves_the_launcher(maestro, home, tmp_path):
    H.assert_ok(install(maestro, home))
    result = H.assert_ok(maestro("install", "--bin-dir", str(tmp_path / "bin")))

    assert not launcher_path(home).exists()
    assert (tmp_path / "bin" / "maestro").is_file()
    assert "[maestro] removed the launcher an earlier install wrote at ~/.local/bin/maestro" in H.out_lines(result)


def test_uninstall_removes_the_launcher_and_the_directories_install_made(maestro, home):
    original = H.write_settings(home, {"theme": "dark"})
    before = H.snapshot(home)
    H.assert_ok(maestro("install"))

    result = H.assert_ok(maestro("uninstall"))

    assert "[maestro] removed the `maestro` launcher ~/.local/bin/maestro" in H.out_lines(result)
    assert not (home / ".local").exists() and not record_path(home).exists()
    assert H.settings_path(home).read_bytes() == original
    after = H.snapshot(home)
    after.pop(os.path.join(".claude", "settings.json.maestro-uninstall.bak"), None)
    after.pop(os.path.join(".claude", "settings.json.maestro.bak"), None)
    assert after == before


def test_uninstall_keeps_an_edited_launcher_and_says_so(maestro, home):
    (home / ".local" / "bin").mkdir(parents=True)  # not made by install: stays
    H.assert_ok(install(maestro, home))
    launcher = launcher_path(home)
    launcher.write_bytes(launcher.read_bytes() + b"# my edit\n")

    result = H.assert_ok(maestro("uninstall"))

    assert launcher.read_bytes().endswith(b"# my edit\n")
    assert "[maestro] kept ~/.local/bin/maestro — it changed after install wrote it" in H.out_lines(result)
    assert any(f"rm {launcher}" in line for line in H.out_lines(result))
    assert not record_path(home).exists()


def test_a_tampered_record_cannot_make_uninstall_delete_another_file(maestro, home):
    H.assert_ok(install(maestro, home))
    victim = home / "notes.txt"
    victim.write_bytes(b"precious\n")
    record_path(home).write_text(json.dumps({"version": 1, "path": str(victim), "sha256": H.sha256(b"precious\n"),
                                             "created_dirs": [str(home)]}))

    H.assert_ok(maestro("uninstall"))

    assert victim.read_bytes() == b"precious\n" and home.is_dir()


def test_a_symlinked_record_skips_the_launcher_step_only(maestro, home, tmp_path):
    (home / ".maestro").mkdir(mode=0o700)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(b"{}")
    record_path(home).symlink_to(elsewhere)

    result = H.assert_ok(install(maestro, home))

    assert not launcher_path(home).exists() and elsewhere.read_bytes() == b"{}"
    assert any("skipped the `maestro` launcher" in line for line in H.err_lines(result))
    assert H.installed_pyz(home).is_file()


def test_doctor_reports_the_launcher(maestro, home):
    H.assert_ok(install(maestro, home))
    bin_dir = home / ".local" / "bin"

    on_path = maestro("doctor", "--json", env={"PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"})
    off_path = maestro("doctor", "--json", env={"PATH": "/usr/bin:/bin"})

    check = {c["name"]: c for c in json.loads(on_path.out)["checks"]}["launcher"]
    assert (check["status"], check["detail"]) == ("ok", f"{launcher_path(home)} (on PATH)")
    check = {c["name"]: c for c in json.loads(off_path.out)["checks"]}["launcher"]
    assert check["status"] == "warn" and ADVICE in check["fix"]
    stale = expected_script("/nonexistent/python3.11", H.installed_pyz(home))  # its Python was upgraded away
    launcher_path(home).write_bytes(stale)
    record = json.loads(record_path(home).read_bytes())
    record_path(home).write_text(json.dumps(dict(record, sha256=H.sha256(stale))))
    check = {c["name"]: c for c in json.loads(maestro("doctor", "--json").out)["checks"]}["launcher"]
    assert check["status"] == "fail" and "/nonexistent/python3.11, which is gone" in check["detail"]
    launcher_path(home).write_bytes(b"#!/bin/sh\n")
    check = {c["name"]: c for c in json.loads(maestro("doctor", "--json").out)["checks"]}["launcher"]
    assert check["status"] == "warn" and "changed after install" in check["detail"]


def _record_as_installed(home, data: bytes) -> None:
    """What an earlier install left: `data` at the launcher path, recorded as its bytes."""
    launcher_path(home).write_bytes(data)
    record = json.loads(record_path(home).read_bytes())
    record_path(home).write_text(json.dumps(dict(record, sha256=H.sha256(data))))


def test_a_launcher_of_the_older_runpy_shape_is_still_ours(maestro, home):
    """An older install wrote `exec PY -I -S PYZ "$@"`: doctor names it, install upgrades it, uninstall removes it."""
    from maestro.install import launcher

    H.assert_ok(install(maestro, home))
    older = launcher.legacy_script(H.PYTHON, str(H.installed_pyz(home)))
    assert older == launcher.HEADER + f'exec {H.PYTHON} -I -S {H.installed_pyz(home)} "$@"\n'.encode()
    assert launcher.is_legacy_shape(older) and not launcher.is_legacy_shape(launcher_path(home).read_bytes())
    _record_as_installed(home, older)

    check = {c["name"]: c for c in json.loads(maestro("doctor", "--json").out)["checks"]}["launcher"]
    assert check["status"] == "warn" and "older launcher" in check["detail"] and "re-run install" in check["fix"]
    H.assert_ok(maestro("install"))
    assert launcher_path(home).read_bytes() == expected_script(H.PYTHON, H.installed_pyz(home))
    check = {c["name"]: c for c in json.loads(maestro("doctor", "--json").out)["checks"]}["launcher"]
    assert "older launcher" not in check["detail"]

    _record_as_installed(home, older)
    result = H.assert_ok(maestro("uninstall"))
    assert "[maestro] removed the `maestro` launcher ~/.local/bin/maestro" in H.out_lines(result)
    assert not launcher_path(home).exists()


def test_the_launcher_on_an_old_python_gets_the_archives_one_line(built_pyz, tmp_path):
    """The launcher runs the hooks' entry module; a command-line verb there still gets the archive's own
    line and exit 6 (not the hooks' re-install line, not the gate's exit 2)."""
    import sys

    from maestro.errors import Exit
    from maestro.install import launcher

    fake_old = "import sys;sys.version_info=(3,9,18,'final',0);"
    for verb in ("doctor", "install"):
        command = launcher.argv(sys.executable, str(built_pyz))
        command[4] = fake_old + command[4]
        result = subprocess.run(command + [verb, "--json"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
        assert result.returncode == Exit.PYTHON_TOO_OLD, result.stderr
        assert result.stderr == (f"maestro needs Python 3.11 or newer, found Python 3.9.18 ({sys.executable}): run it "
                                 f"with another interpreter, e.g. python3.11 {built_pyz} {verb}\n")
        assert result.stdout == ""


# --- one name for the command ------------------------------------------------------------------------

OLD_SPELLING = re.compile(r"python3 (-I -S )?(~/\.claude/hooks/|dist/)?maestro\.pyz [a-z]")
FALLBACK = "run the same verb as `python3 ~/.claude/hooks/maestro.pyz <verb>`"


def _texts():
    from maestro import messages
    from maestro.commands.memory import mcp
    from maestro.hooks import gate, guidance

    yield "messages", "\n".join(str(v) for k, v in vars(messages).items() if k.isupper() and k != "ARCHIVE_FALLBACK")
    yield "guidance", "\n".join(str(v) for k, v in vars(guidance).items() if k.isupper())
    yield "gate", gate.BLOCK_GUIDANCE
    yield "mcp", mcp.__doc__
    for path in sorted(ROOT.glob("rules/*.md")) + sorted(ROOT.glob("skills/*/SKILL.md")):
        yield str(path.relative_to(ROOT)), path.read_text().replace(FALLBACK, "")


@pytest.mark.source_only
def test_every_command_the_user_or_model_is_shown_is_spelled_maestro_verb():
    from maestro import messages
    from maestro.commands.memory import mcp
    from maestro.hooks import guidance

    for name, text in _texts():
        assert not OLD_SPELLING.search(text), (name, OLD_SPELLING.search(text).group(0))
    assert guidance.MAESTRO == messages.MAESTRO == "maestro"  # the hooks' copy of the one constant
    assert messages.CLEAR_LEASE == "maestro loop --clear-lease" and messages.STATUS == "maestro status"
    assert messages.MEMORY_MCP in mcp.__doc__
    assert FALLBACK in (ROOT / "rules" / "orchestrator-implementer.md").read_text()  # where the launcher is missing


def test_install_output_spells_the_command_maestro_verb(maestro, home):
    result = H.assert_ok(install(maestro, home))
    assert "[maestro]   turn it off with:  maestro model-select --ask-on-start off" in H.out_lines(result)
    assert not OLD_SPELLING.search(result.out + result.err), result.out + result.err


def test_a_killed_installs_temp_file_beside_the_launcher_is_swept(maestro, home):
    bin_dir = home / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    stale = bin_dir / ".maestro.maestro-tmp-999999999"  # write_atomic's temp name; that pid is not running
    stale.write_bytes(b"#!/bin/sh\nexec half-writ")

    H.assert_ok(install(maestro, home))

    assert not stale.exists()
    assert launcher_path(home).read_bytes() == expected_script(H.PYTHON, H.installed_pyz(home))


@pytest.mark.parametrize("command", [
    'maestro loop --plan /tmp/p.md --verify "pytest -q" --max-iters 4',
    "maestro watchdog --file /tmp/p.md",
    "maestro status",
    "maestro model-select --show",
    'maestro memory add daily "what changed and why"',
    "python3 ~/.claude/hooks/maestro.pyz status",  # the rules' fallback where the launcher is missing
])
def test_the_gate_lets_the_model_run_the_commands_it_is_shown(maestro, home, command):
    payload = {"session_id": "launcher-1", "cwd": "/nonexistent-maestro/repo", "tool_name": "Bash",
               "tool_input": {"command": command}}
    result = maestro("gate", stdin=json.dumps(payload))
    assert (result.rc, result.err) == (0, ""), result


@pytest.mark.parametrize("kind", ["big binary", "directory", "fifo"])
def test_any_other_thing_at_the_launcher_path_is_left_alone(maestro, home, kind):
    launcher = launcher_path(home)
    launcher.parent.mkdir(parents=True)
    if kind == "big binary":
        launcher.write_bytes(b"\x7fELF" + b"\0" * 200_000)  # another tool's `maestro`
    elif kind == "directory":
        launcher.mkdir()
    else:
        os.mkfifo(launcher)
    before = H.snapshot(home / ".local") if kind != "fifo" else None  # reading a fifo would block

    result = H.assert_ok(install(maestro, home))

    if kind == "fifo":
        assert stat.S_ISFIFO(os.lstat(launcher).st_mode) and os.listdir(launcher.parent) == ["maestro"]
    else:
        assert H.snapshot(home / ".local") == before
    assert any("skipped the `maestro` launcher" in line for line in H.err_lines(result)), result.err
    assert H.installed_pyz(home).is_file()
