"""doctor: one line per check, a fix for each failure, exit 0 only when nothing fails."""

import json
import os
import sys

import pytest

HELP_WITH_WRITE = "import sys; print('usage: codex-companion task [--background] [--write] [--model M] [--effort E] prompt')"
HELP_WITHOUT_WRITE = "import sys; print('usage: codex-companion task [--background] prompt')"


def companion(tmp_path, body):
    path = tmp_path / "companion.py"
    path.write_text(body + "\n")
    return str(path)


def install(maestro, home):
    (home / ".claude").mkdir(exist_ok=True)
    result = maestro("install")
    assert result.rc == 0, result.err


def checks_by_name(result):
    return {c["name"]: c for c in json.loads(result.out)["checks"]}


def test_fresh_machine_fails_on_missing_companion_and_hooks_with_fixes(maestro):
    result = maestro("doctor")
    assert result.rc == 1
    lines = result.out.splitlines()
    assert lines[-1] == "doctor: some checks failed"
    companion_line = next(line for line in lines if " companion:" in line)
    assert companion_line.startswith("fail") and "fix: install the Codex plugin in Claude Code: /plugin marketplace add openai/codex-plugin-cc, then /plugin install codex@openai-codex" in companion_line
    assert any(line.startswith("fail hook gate: not registered — fix:") for line in lines)
    assert any(line.startswith("ok   python:") for line in lines)


def test_installed_with_a_write_capable_companion_passes(maestro, home, tmp_path):
    install(maestro, home)
    result = maestro("doctor", "--json", env={"MAESTRO_COMPANION": companion(tmp_path, HELP_WITH_WRITE)})
    envelope = json.loads(result.out)
    failing = [c for c in envelope["checks"] if c["status"] == "fail"]
    assert failing == [] and envelope["ok"] is True and result.rc == 0
    checks = checks_by_name(result)
    assert "via MAESTRO_COMPANION" in checks["companion"]["detail"]
    assert checks["hook gate"]["status"] == "ok"


def test_companion_whose_task_synopsis_lacks_write_fails_the_probe(maestro, tmp_path):
    result = maestro("doctor", "--json", env={"MAESTRO_COMPANION": companion(tmp_path, HELP_WITHOUT_WRITE)})
    check = checks_by_name(result)["companion"]
    assert check["status"] == "fail" and "lacks --write" in check["detail"]


def test_newest_plugin_cache_version_is_reported(maestro, home):
    base = home / ".claude" / "plugins" / "cache" / "openai-codex" / "codex"
    for version in ("1.0.9", "1.0.10", "1.0.10-rc1", "v0.9"):
        scripts = base / version / "scripts"
        scripts.mkdir(parents=True)
        (scripts / "codex-companion.mjs").write_text("// fake\n")
    from maestro.codex import discovery as companion_discovery

    found = companion_discovery.find_companion()
    assert found.version == "1.0.10" and found.source == "plugin cache"


@pytest.mark.parametrize(
    "a, b, expected",
    [("1.0.10", "1.0.9", 1), ("1.0", "1.0.0", 0), ("1.0.0", "1.0.0-rc1", 1), ("v2", "1.9.9", 1),
     ("1.0.0-rc1", "1.0.0-rc2", -1), ("1.x", "1.2", 1)],
)
def test_companion_version_order(a, b, expected):
    from maestro.codex.discovery import compare_versions

    assert compare_versions(a, b) == expected
    assert compare_versions(b, a) == -expected


def test_hook_pointing_at_a_missing_archive_fails(maestro, home, tmp_path):
    install(maestro, home)
    os.unlink(home / ".claude" / "hooks" / "maestro.pyz")
    result = maestro("doctor", "--json", env={"MAESTRO_COMPANION": companion(tmp_path, HELP_WITH_WRITE)})
    check = checks_by_name(result)["hook gate"]
    assert check["status"] == "fail" and "is missing" in check["detail"] and check["fix"] == "re-run install"
    assert result.rc == 1


def test_group_readable_maestro_dir_fails_with_chmod_fix(maestro, home):
    (home / ".maestro").mkdir(mode=0o755)
    os.chmod(home / ".maestro", 0o755)
    check = checks_by_name(maestro("doctor", "--json"))["~/.maestro"]
    assert check["status"] == "fail" and check["fix"].startswith("chmod 700 ")


def test_invalid_settings_json_fails(maestro, home):
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text("{nope")
    check = checks_by_name(maestro("doctor", "--json"))["settings.json"]
    assert check["status"] == "fail" and "not valid JSON" in check["detail"]


def test_original_maestro_install_is_a_warning(maestro, home):
    (home / ".maestro").mkdir(mode=0o700)
    manifest = {"version": 1, "files": {"hooks/orchestrator-gate.mjs": "a" * 64}}
    (home / ".maestro" / "install-manifest.json").write_text(json.dumps(manifest))
    check = checks_by_name(maestro("doctor", "--json"))["original Maestro"]
    assert check["status"] == "warn" and "migrates it" in check["fix"]


def test_python_check_names_the_real_interpreter(maestro):
    check = checks_by_name(maestro("doctor", "--json"))["python"]
    assert check["status"] == "ok" and os.path.realpath(sys.executable) in check["detail"]
