"""What install says (issue 16 items 8 and 11): its --help about the hooks and `--with-workflow`, the ralph-loop
plugin warning, what a plain install does with an earlier `--with-workflow`'s files, and the real directories under
CLAUDE_CONFIG_DIR (and CODEX_HOME)."""

import json
import shlex

import pytest
from testing import install as H

from maestro.install.settings import HOOKS

RALPH_WARNING = ("[maestro] WARN: the ralph-loop plugin was not found; the workflow rule's outer loop (/ralph-loop, "
                 "/cancel-ralph) needs it. Install it in Claude Code:  /plugin install ralph-loop@claude-plugins-official")
SKIPPED = "[maestro] skipped rules/workflow.md and the ralph-protocol skill; add them with: install --with-workflow"


def _plugins_record(home, value) -> None:
    path = home / ".claude" / "plugins" / "installed_plugins.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value))


# --- --help -------------------------------------------------------------------------------------------------

def test_help_names_the_four_hooks_and_explains_with_workflow_and_force(maestro):
    result = H.assert_ok(maestro("install", "--help"))

    assert "registers four hooks" in result.out
    assert len(HOOKS) == 4
    for event, _matcher, verb, _timeout in HOOKS:
        assert f"  {event}" in result.out and f"{verb}:" in result.out, event
    assert "--with-workflow also installs rules/workflow.md and the ralph-protocol skill" in result.out
    assert "/plugin install ralph-loop@claude-plugins-official" in result.out
    assert ".maestro-new" in result.out
    assert "usage: maestro install [--with-workflow] [--statusline] [--force] [--bin-dir DIR] [--no-launcher]" in result.out
    for option in ("--with-workflow", "--force"):
        assert any(line.startswith(option + " ") for line in result.out.splitlines()), option


# --- the ralph-loop plugin ----------------------------------------------------------------------------------

def test_with_workflow_warns_when_the_ralph_loop_plugin_is_missing(maestro, home):
    H.write_settings(home, {})

    result = H.assert_ok(maestro("install", "--with-workflow"))

    assert RALPH_WARNING in H.err_lines(result)
    assert "[maestro] WARN: Continuing: until then, drive each plan by hand with `maestro loop`." in H.err_lines(result)
    assert H.key_path(home, "rules/workflow.md").is_file()


def test_a_plain_install_does_not_ask_for_the_plugin(maestro, home):
    H.write_settings(home, {})
    result = H.assert_ok(maestro("install"))
    assert "ralph-loop" not in result.err


@pytest.mark.parametrize("record", [
    {"version": 2, "plugins": {"ralph-loop@claude-plugins-official": [{"scope": "user", "installPath": "/x"}]}},
    {"version": 1, "plugins": {"ralph-wiggum@claude-code-plugins": {"version": "1.0.0"}}},  # its earlier name
])
def test_no_warning_when_claude_code_records_the_plugin(maestro, home, record):
    H.write_settings(home, {})
    _plugins_record(home, record)

    result = H.assert_ok(maestro("install", "--with-workflow"))

    assert "ralph-loop" not in result.err


def test_no_warning_when_the_plugin_is_in_the_plugin_cache(maestro, home):
    H.write_settings(home, {})
    (home / ".claude" / "plugins" / "cache" / "claude-plugins-official" / "ralph-loop" / "1.0.0").mkdir(parents=True)
    result = H.assert_ok(maestro("install", "--with-workflow"))
    assert "ralph-loop" not in result.err


@pytest.mark.parametrize("record", [
    "{not json", "[]", json.dumps({"version": 2, "plugins": []}),
    json.dumps({"version": 2, "plugins": {"other@market": [{}], "ralph-loop@m": []}}),  # recorded, but no install
])
def test_an_unusable_plugin_record_means_not_found_never_a_failure(maestro, home, record):
    H.write_settings(home, {})
    _plugins_record(home, record)
    result = H.assert_ok(maestro("install", "--with-workflow"))
    assert RALPH_WARNING in H.err_lines(result)


def test_a_symlinked_plugin_record_is_not_followed(maestro, home, outside_tmp):
    H.write_settings(home, {})
    real = outside_tmp / "installed_plugins.json"
    real.write_text(json.dumps({"version": 2, "plugins": {"ralph-loop@claude-plugins-official": [{}]}}))
    (home / ".claude" / "plugins").mkdir(parents=True)
    (home / ".claude" / "plugins" / "installed_plugins.json").symlink_to(real)
    result = H.assert_ok(maestro("install", "--with-workflow"))
    assert RALPH_WARNING in H.err_lines(result)


# --- a plain install after install --with-workflow ----------------------------------------------------------

def test_a_plain_install_keeps_and_updates_the_workflow_files_and_says_so(maestro, home, built_pyz):
    H.write_settings(home, {})
    H.assert_ok(maestro("install", "--with-workflow"))
    # what an older release left: other bytes, recorded as its own
    record = H.read_json(H.manifest_path(home))
    for key in H.WORKFLOW_KEYS:
        H.key_path(home, key).write_bytes(b"older " + key.encode() + b"\n")
        record["files"][key] = H.sha256(b"older " + key.encode() + b"\n")
    H.manifest_path(home).write_text(json.dumps(record))

    result = H.assert_ok(maestro("install"))

    paths = " ".join(shlex.quote(str(H.key_path(home, key))) for key in H.WORKFLOW_KEYS)
    assert (f"[maestro] kept and updated rules/workflow.md and skills/ralph-protocol/SKILL.md from an earlier "
            f"--with-workflow install; remove with: rm {paths} (the next install forgets them)") in H.out_lines(result)
    assert SKIPPED not in H.out_lines(result)
    for key in H.WORKFLOW_KEYS:
        assert H.key_path(home, key).read_bytes() == H.source_bytes(key, built_pyz), key
    assert RALPH_WARNING in H.err_lines(result)  # the kept rule still needs the plugin


def test_once_removed_the_workflow_files_are_forgotten_not_recreated(maestro, home):
    H.write_settings(home, {})
    H.assert_ok(maestro("install", "--with-workflow"))
    for key in H.WORKFLOW_KEYS:
        H.key_path(home, key).unlink()  # what the kept-line's `rm` does

    result = H.assert_ok(maestro("install"))

    assert SKIPPED in H.out_lines(result)
    assert not any("kept and updated" in line for line in H.out_lines(result))
    for key in H.WORKFLOW_KEYS:
        assert not H.key_path(home, key).exists(), key
    assert set(H.read_json(H.manifest_path(home))["files"]) == set(H.BASE_KEYS)


# --- CLAUDE_CONFIG_DIR ----------------------------------------------------------------------------------------

def test_output_under_claude_config_dir_names_the_real_directory(maestro, home, tmp_path):
    config = tmp_path / "claude-config"
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    (config).mkdir()
    (config / "settings.json").write_text("{}\n")

    result = H.assert_ok(maestro("install", "--with-workflow", env=env))
    edited = config / "rules" / "coding-discipline.md"
    edited.write_bytes(b"mine\n")
    again = H.assert_ok(maestro("install", env=env))

    for output in (result, again):
        text = output.out + output.err
        assert "~/.claude" not in text and str(home / ".claude") not in text
    assert f"[maestro] published 6 changed files into {config}" in H.out_lines(result)
    assert any(line.startswith(f"[maestro] WARN: kept {edited}: ") for line in H.err_lines(again))
    assert any(str(config / "rules" / "workflow.md") in line for line in H.out_lines(again))
    assert not (home / ".claude").exists()


def test_a_missing_codex_config_is_named_where_codex_home_puts_it(maestro, home, tmp_path):
    codex_home = tmp_path / "codex-home"
    H.write_settings(home, {})
    result = H.assert_ok(maestro("install", env={"CODEX_HOME": str(codex_home)}))
    assert (f'[maestro] WARN: {codex_home / "config.toml"} not found; after `codex login`, add:  web_search = "disabled"'
            in H.err_lines(result))
