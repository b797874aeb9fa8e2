"""doctor proves the gate holds: it checks what Claude Code would do with the installation and runs
the registered gate command on synthetic source writes. Every broken state fails with its fix."""

import json
import os
import shlex
import zipfile

import pytest
from testing import install as H
from testing.archive_cases import first_on_archive

HELP_WITH_WRITE = "import sys; print('usage: codex-companion task [--background] [--write] [--model M] [--effort E] prompt')"


@pytest.fixture
def managed(tmp_path, monkeypatch):
    """Managed settings live here for the test (never the machine's /etc/claude-code)."""
    path = tmp_path / "managed" / "managed-settings.json"
    path.parent.mkdir()
    monkeypatch.setenv("MAESTRO_MANAGED_SETTINGS", str(path))
    return path


@pytest.fixture
def installed(maestro, home, tmp_path, managed, monkeypatch):
    """A healthy installation whose hooks use a stable interpreter alias, and a write-capable companion."""
    companion = tmp_path / "companion.py"
    companion.write_text(HELP_WITH_WRITE + "\n")
    monkeypatch.setenv("MAESTRO_COMPANION", str(companion))
    H.write_settings(home, {})
    H.assert_ok(maestro("install"))
    monkeypatch.setenv("PATH", f"{home / '.local' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")  # its launcher
    alias = tmp_path / "stable-bin" / "python3"
    alias.parent.mkdir()
    alias.symlink_to(os.path.realpath(H.PYTHON))
    _edit_settings(home, lambda value: _repoint(home, value, str(alias)))
    return home


def _edit_settings(home, change):
    value = H.read_json(H.settings_path(home))
    change(value)
    H.write_settings(home, value)


def _repoint(home, value, python):
    for blocks in value["hooks"].values():
        for block in blocks:
            for hook in block["hooks"]:
                verb = hook["command"].rpartition("# maestro-managed:")[2]
                hook["command"] = H.managed_command(home, verb, python=python)


def _gate_entry(value):
    return value["hooks"]["PreToolUse"][0]["hooks"][0]


def doctor(maestro):
    result = maestro("doctor", "--json")
    envelope = json.loads(result.out)
    assert envelope["version"] == 1 and envelope["command"] == "doctor"
    return result, {c["name"]: c for c in envelope["checks"]}


def assert_fails(maestro, name, detail, fix):
    result, checks = doctor(maestro)
    assert result.rc == 1
    check = checks[name]
    assert check["status"] == "fail", check
    assert detail in check["detail"], check
    assert fix in check["fix"], check
    return checks


# --- a healthy installation ------------------------------------------------------------------------

def test_a_healthy_installation_passes_every_check_and_proves_the_gate(maestro, installed):
    # Needs the Bash gate (issue 14 part 1) for `gate probe bash`: until it is integrated the gate may
    # answer a Bash payload either way; the lead runs this after integration.
    result, checks = doctor(maestro)
    assert [c for c in checks.values() if c["status"] != "ok"] == []
    assert result.rc == 0
    assert checks["gate probe edit"]["detail"] == (
        "a synthetic Edit of /nonexistent-maestro-doctor/src/app.py is blocked (exit 2)")
    assert checks["gate probe bash"]["detail"] == (
        "a synthetic Bash `sed -i 's/a/b/' src/app.py` in /nonexistent-maestro-doctor is blocked (exit 2)")
    for name in ("gate event", "gate matcher", "gate timeout", "gate async", "disableAllHooks", "manifest",
                 "archive", "grant dir", "~/.claude", "interpreter"):
        assert checks[name]["status"] == "ok", checks[name]


def test_the_edit_probe_proves_a_working_gate(maestro, installed):
    _result, checks = doctor(maestro)
    assert checks["gate probe edit"]["status"] == "ok"


def test_text_output_keeps_one_line_per_check_with_its_fix(maestro, installed):
    _edit_settings(installed, lambda v: _gate_entry(v).update(timeout=2))
    result = maestro("doctor")
    assert result.rc == 1
    line = next(line for line in result.out.splitlines() if " gate timeout:" in line)
    assert line.startswith("fail gate timeout: timeout 2: a timed-out PreToolUse hook does not block — fix: re-run install")
    assert result.out.splitlines()[-1] == "doctor: some checks failed"


# --- broken states ------------------------------------------------------------------------------------

def test_missing_interpreter(maestro, installed, tmp_path):
    os.unlink(tmp_path / "stable-bin" / "python3")
    checks = assert_fails(maestro, "hook gate", "interpreter", "re-run install with a working python3")
    assert "is missing" in checks["hook gate"]["detail"]
    assert checks["gate probe edit"]["status"] == "fail"
    assert checks["gate probe edit"]["detail"] == "the gate cannot run: it blocks every call (fails closed)"


def test_missing_archive(maestro, installed):
    H.installed_pyz(installed).unlink()
    checks = assert_fails(maestro, "hook gate", "is missing", "re-run install")
    assert checks["archive"]["status"] == "fail" and checks["archive"]["fix"] == "re-run install"


def test_modified_archive(maestro, installed):
    pyz = H.installed_pyz(installed)
    pyz.write_bytes(pyz.read_bytes() + b"\0")  # still runs; no longer the installed bytes
    assert_fails(maestro, "archive", "changed after install", f"mv {pyz} {pyz}.modified, then re-run install")


def test_archive_whose_gate_allows_fails_both_probes(maestro, installed):
    pyz = H.installed_pyz(installed)
    pyz.unlink()
    with zipfile.ZipFile(pyz, "w") as archive:
        archive.writestr("__main__.py", "import sys\nsys.exit(0)\n")
        archive.writestr("maestro_hook.py", "import sys\nsys.exit(0)\n")  # what the hook command imports
    checks = assert_fails(maestro, "gate probe edit", "got exit 0: Claude Code lets it through", "re-run install")
    assert checks["gate probe bash"]["status"] == "fail" and "got exit 0" in checks["gate probe bash"]["detail"]


def test_corrupt_manifest(maestro, installed):
    path = H.manifest_path(installed)
    path.write_bytes(b"{not json\n")
    checks = assert_fails(maestro, "manifest", "ownership manifest is unreadable", f"mv {path} {path}.bad")
    assert checks["archive"]["status"] == "warn"


def test_manifest_missing_the_archive(maestro, installed):
    path = H.manifest_path(installed)
    value = H.read_json(path)
    del value["files"]["hooks/maestro.pyz"]
    path.write_text(json.dumps(value, indent=2) + "\n")
    assert_fails(maestro, "archive", "the manifest has no record of hooks/maestro.pyz", "re-run install")


@pytest.mark.parametrize("constant", first_on_archive(["NaN", "Infinity"]))  # one check (testing/archive_cases.py)
def test_nan_in_settings_json(maestro, installed, constant):
    path = H.settings_path(installed)
    path.write_text(path.read_text().replace("{", '{"x": %s, ' % constant, 1))
    checks = assert_fails(maestro, "settings.json", "not valid JSON", "NaN and Infinity are not JSON")
    assert "hook gate" not in checks  # nothing more to say about hooks Claude Code cannot load


def test_symlinked_settings_json(maestro, installed, tmp_path):
    path = H.settings_path(installed)
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(real)
    assert_fails(maestro, "settings.json", "is a symlink", f"cp {real} {path}.tmp && mv {path}.tmp {path}")


def test_directory_settings_json(maestro, installed):
    path = H.settings_path(installed)
    path.unlink()
    path.mkdir()
    assert_fails(maestro, "settings.json", "not a regular file", f"mv {path} {path}.old, then re-run install")


def test_unwritable_claude_dir(maestro, installed):
    claude = installed / ".claude"
    claude.chmod(0o500)
    try:
        assert_fails(maestro, "~/.claude", "is not writable", f"chmod u+rwx {claude}")
    finally:
        claude.chmod(0o755)


@pytest.mark.parametrize("matcher", first_on_archive([  # one check (testing/archive_cases.py)
    "Edit|Write|MultiEdit", "Edit|Write|MultiEdit|NotebookEdit|Bash", "Bash", "^(Edit|Write)$", "mcp__.*"]))
def test_wrong_matcher(maestro, installed, matcher):
    _edit_settings(installed, lambda v: v["hooks"]["PreToolUse"][0].update(matcher=matcher))
    assert_fails(maestro, "gate matcher", "through ungated", "re-run install (it sets ^(Edit|Write|")


def test_an_unanchored_matcher_over_matches_and_warns(maestro, installed):
    unanchored = "Edit|Write|MultiEdit|NotebookEdit|Bash|mcp__.*"
    _edit_settings(installed, lambda v: v["hooks"]["PreToolUse"][0].update(matcher=unanchored))
    _result, checks = doctor(maestro)
    check = checks["gate matcher"]
    assert check["status"] == "warn" and "TodoWrite" in check["detail"] and "BashOutput" in check["detail"]


@pytest.mark.parametrize("timeout", first_on_archive([0, 3, 4.9, "10", True]))  # one check (testing/archive_cases.py)
def test_gate_timeout_below_five_seconds(maestro, installed, timeout):
    _edit_settings(installed, lambda v: _gate_entry(v).update(timeout=timeout))
    assert_fails(maestro, "gate timeout", f"timeout {timeout!r}", "at least 5")


@pytest.mark.parametrize("flag", first_on_archive([{"async": True}, {"asyncRewake": True}, {"if": "Bash(git *)"}]))  # one check
def test_async_gate(maestro, installed, flag):
    _edit_settings(installed, lambda v: _gate_entry(v).update(flag))
    assert_fails(maestro, "gate async", f"the entry sets {next(iter(flag))}", "re-run install")


def test_gate_under_another_event(maestro, installed):
    def move(value):
        value["hooks"]["PostToolUse"] = value["hooks"].pop("PreToolUse")

    _edit_settings(installed, move)
    assert_fails(maestro, "gate event", "registered under PostToolUse", "install")


def test_gate_in_the_old_fail_open_shape(maestro, installed, tmp_path):
    alias = str(tmp_path / "stable-bin" / "python3")
    _edit_settings(installed, lambda v: _gate_entry(v).update(command=H.legacy_command(installed, "gate", alias)))
    assert_fails(maestro, "hook gate", "old command shape", "re-run install (it upgrades the entry in place)")


@pytest.mark.parametrize("scope", ["user", "project", "local", "managed"])
def test_disable_all_hooks_in_any_settings_file(maestro, installed, tmp_path, managed, scope):
    if scope == "user":
        path = H.settings_path(installed)
        _edit_settings(installed, lambda v: v.update(disableAllHooks=True))
    else:
        path = {"project": tmp_path / ".claude" / "settings.json", "local": tmp_path / ".claude" / "settings.local.json",
                "managed": managed}[scope]
        path.parent.mkdir(exist_ok=True)
        path.write_text('{"disableAllHooks": true}\n')
    checks = assert_fails(maestro, "disableAllHooks", f"disableAllHooks is true in the {scope} settings {path}",
                          f'remove "disableAllHooks": true from {path}')
    assert checks["disableAllHooks"]["detail"].endswith("no maestro hook runs")


def test_project_settings_are_found_at_the_git_toplevel(maestro, installed, tmp_path):
    import subprocess

    repo = tmp_path / "repo"
    (repo / "sub" / "dir").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text('{"disableAllHooks": true}\n')
    result = maestro("doctor", "--json", cwd=str(repo / "sub" / "dir"))
    check = {c["name"]: c for c in json.loads(result.out)["checks"]}["disableAllHooks"]
    assert check["status"] == "fail" and str(repo / ".claude" / "settings.local.json") in check["detail"]


def test_managed_settings_allowing_only_managed_hooks(maestro, installed, managed):
    managed.write_text('{"allowManagedHooksOnly": true}\n')
    assert_fails(maestro, "disableAllHooks", "allowManagedHooksOnly is true in the managed settings",
                 "(ask the administrator)")


def test_disable_all_hooks_false_is_fine(maestro, installed, tmp_path, managed):
    managed.write_text('{"disableAllHooks": false}\n')
    _result, checks = doctor(maestro)
    assert checks["disableAllHooks"]["status"] == "ok"


def test_grant_dir_readable_by_others(maestro, installed):
    grants = installed / ".maestro" / "direct-edit"
    grants.mkdir(mode=0o700)
    grants.chmod(0o755)
    assert_fails(maestro, "grant dir", "is mode 0755", f"chmod 700 {grants}")


def test_grant_dir_symlink(maestro, installed, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    grants = installed / ".maestro" / "direct-edit"
    grants.symlink_to(elsewhere)
    assert_fails(maestro, "grant dir", "is a symlink", f"rm {grants}")


def test_a_versioned_interpreter_is_a_warning(maestro, installed, tmp_path):
    versioned = tmp_path / ".pyenv" / "versions" / "3.11.7" / "bin" / "python3.11"
    versioned.parent.mkdir(parents=True)
    versioned.symlink_to(os.path.realpath(H.PYTHON))
    _edit_settings(installed, lambda v: _repoint(installed, v, str(versioned)))
    _result, checks = doctor(maestro)
    assert checks["interpreter"]["status"] == "warn" and "re-run install" in checks["interpreter"]["fix"]
    assert checks["hook gate"]["status"] == "ok"


# --- the matcher, evaluated as Claude Code evaluates it --------------------------------------------

@pytest.mark.parametrize("matcher, tool, expected", [
    (None, "Bash", True), ("", "Read", True), ("*", "Read", True),
    ("Edit|Write", "Write", True), ("Edit|Write", "TodoWrite", False), ("Edit, Write", "Write", True),
    ("Edit|Write", "NotebookEdit", False),
    ("Edit.*", "NotebookEdit", True),  # a regex is unanchored
    ("Write|mcp__.*", "TodoWrite", True),
    ("^(Edit|Write|MultiEdit|NotebookEdit|Bash|mcp__.*)$", "TodoWrite", False),
    ("^(Edit|Write|MultiEdit|NotebookEdit|Bash|mcp__.*)$", "BashOutput", False),
    ("^(Edit|Write|MultiEdit|NotebookEdit|Bash|mcp__.*)$", "mcp__serena__replace_symbol_body", True),
    ("^(Edit|Write|MultiEdit|NotebookEdit|Bash|mcp__.*)$", "NotebookEdit", True),
    ("(unclosed", "Edit", False), (42, "Edit", False),
])
def test_matcher_semantics(matcher, tool, expected):
    from maestro.install.doctor_checks import matcher_matches

    assert matcher_matches(matcher, tool) is expected


def test_the_installed_matcher_covers_every_gated_tool_and_nothing_read_only():
    from maestro.install import settings
    from maestro.install.doctor_checks import MUST_GATE, NEED_NOT_GATE, matcher_matches

    assert all(matcher_matches(settings.PRETOOL_MATCHER, tool) for tool in MUST_GATE)
    assert not any(matcher_matches(settings.PRETOOL_MATCHER, tool) for tool in NEED_NOT_GATE)


def test_the_probe_runs_the_registered_command_through_sh(maestro, installed, tmp_path):
    """Exactly as registered: a command that records its stdin proves doctor fed it the payloads."""
    from maestro.install import doctor_checks

    log = tmp_path / "probe.log"
    command = f"cat >> {shlex.quote(str(log))}; echo >> {shlex.quote(str(log))}; exit 2"
    for kind in ("edit", "bash"):
        rc, _err = doctor_checks.run_gate_probe(command, doctor_checks.probe_payload(kind, "maestro-doctor-x"))
        assert rc == 2
    edit, bash = [json.loads(line) for line in log.read_text().splitlines()]
    assert edit["tool_name"] == "Edit" and edit["tool_input"]["file_path"] == "/nonexistent-maestro-doctor/src/app.py"
    assert bash["tool_name"] == "Bash" and bash["tool_input"]["command"] == "sed -i 's/a/b/' src/app.py"
    assert edit["cwd"] == bash["cwd"] == "/nonexistent-maestro-doctor" and not os.path.exists(edit["cwd"])
