"""`maestro install`: the original install suite (t1–t14, adapted) plus the installer's details.

t13 (session-start wording for unpinned vs complete pins) belongs to the session-start suite.
"""

import errno
import json
import os
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest
from testing import install as H
from testing.archive_cases import first_on_archive

NOTHING_PUBLISHED = "hooks/maestro.pyz, rules and skills already matched the installed bytes"
SETTINGS_UNCHANGED = "settings.json already had every maestro hook entry"


def _prefixed(result):
    """Every output line is `[maestro] …`; warnings are `[maestro] WARN: …` on stderr."""
    for line in H.out_lines(result):
        assert line.startswith("[maestro] "), line
    for line in H.err_lines(result):
        assert line.startswith("[maestro] WARN: "), line


def _seed_user_state(home):
    """Unrelated user state that a refused install must leave exactly as it is."""
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_bytes(b'model = "gpt-x"\n')
    (home / ".claude" / "hooks").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "hooks" / "user-hook.sh").write_bytes(b"#!/bin/sh\necho mine\n")
    (home / ".claude" / "rules").mkdir(exist_ok=True)
    (home / ".claude" / "rules" / "mine.md").write_bytes(b"# my rule\n")


# --- t1: settings schema validated before any mutation ------------------------------------------

INVALID_SETTINGS = {
    "hooks-array": (b'{"hooks":[]}\n', "hooks must be an object"),
    "hooks-null": (b'{"hooks":null}\n', "hooks must be an object"),
    "event-not-array": (b'{"hooks":{"PreToolUse":{}}}\n', "hooks.PreToolUse must be an array"),
    "block-not-object": (b'{"hooks":{"UserPromptSubmit":["node x"]}}\n', "hooks.UserPromptSubmit contains a non-object block"),
    "hook-not-object": (
        b'{"hooks":{"PreToolUse":[{"matcher":"Edit","hooks":["node x"]}]}}\n',
        "hooks.PreToolUse block hooks must be an array of objects",
    ),
    "block-hooks-not-array": (
        b'{"hooks":{"SessionStart":[{"hooks":{"type":"command"}}]}}\n',
        "hooks.SessionStart block hooks must be an array of objects",
    ),
    "root-array": (b"[]\n", "root must be an object"),
    "not-json": (b"{not-json\n", "not valid JSON"),
    "not-utf8": (b'\xff{"a":1}\n', "not valid JSON"),
}


@pytest.mark.parametrize("case", first_on_archive(sorted(INVALID_SETTINGS)))  # one validator (testing/archive_cases.py)
def test_t1_invalid_settings_schema_mutates_nothing(maestro, home, case):
    raw, reason = INVALID_SETTINGS[case]
    H.write_settings(home, None, raw)
    _seed_user_state(home)
    before = H.snapshot(home)

    result = maestro("install")

    assert result.rc == 1
    assert result.err.startswith("[maestro] WARN: settings.json ")
    assert reason in H.err_lines(result)[0]
    assert "no files were changed" in result.err
    assert "published" not in result.out
    assert H.snapshot(home) == before


def test_t1_symlinked_settings_refused_and_nothing_changes(maestro, home):
    real = home / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_bytes(b"{}\n")
    (home / ".claude").mkdir()
    H.settings_path(home).symlink_to(real)
    before = H.snapshot(home)

    result = maestro("install")

    assert result.rc == 1
    assert "settings.json is a symlink; refusing to replace it" in result.err
    assert H.snapshot(home) == before


# --- t2: unowned same-named destination refused -------------------------------------------------

@pytest.mark.parametrize(
    "key",
    ["hooks/maestro.pyz", "rules/orchestrator-implementer.md", "rules/coding-discipline.md",
     "skills/plan-authoring/SKILL.md", "rules/workflow.md", "skills/ralph-protocol/SKILL.md"],
)
def test_t2_unowned_same_named_file_is_refused(maestro, home, key):
    H.write_settings(home, {"theme": "dark"})
    target = H.key_path(home, key)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"FOREIGN BYTES\n")
    before = H.snapshot(home)

    result = maestro("install", "--with-workflow")

    assert result.rc == 1
    assert f"[maestro] WARN: refusing to overwrite a file maestro did not install: {target}" in H.err_lines(result)
    assert H.err_lines(result)[-1] == ("[maestro] WARN: no files were changed. Move it away, or replace it with "
                                       "`maestro install --force` (each is backed up first)")
    assert H.snapshot(home) == before
    assert not H.manifest_path(home).exists()


def test_t2_file_modified_since_install_is_kept_on_reinstall(maestro, home, built_pyz):
    """Issue 16 item 3: the edit stays, the new version lands beside it, the rest installs (exit 0).
    The upgrade cases themselves: tests/install/test_upgrade_files.py."""
    H.write_settings(home, {})
    H.assert_ok(maestro("install"))
    rule = H.key_path(home, "rules/coding-discipline.md")
    rule.write_bytes(b"my local edits\n")

    result = H.assert_ok(maestro("install"))

    assert rule.read_bytes() == b"my local edits\n"
    new = Path(f"{rule}.maestro-new")
    assert new.read_bytes() == H.source_bytes("rules/coding-discipline.md", built_pyz)
    assert any(line.startswith(f"[maestro] WARN: kept {rule}: it changed after install.") for line in H.err_lines(result))


def test_t2_unowned_file_with_identical_bytes_is_adopted_untouched(maestro, home, built_pyz):
    H.write_settings(home, {})
    key = "rules/coding-discipline.md"
    target = H.key_path(home, key)
    target.parent.mkdir(parents=True)
    target.write_bytes(H.source_bytes(key, built_pyz))
    identity = (os.stat(target).st_ino, os.stat(target).st_mtime_ns)

    H.assert_ok(maestro("install"))

    assert (os.stat(target).st_ino, os.stat(target).st_mtime_ns) == identity
    assert H.read_json(H.manifest_path(home))["files"][key] == H.sha256(target.read_bytes())


def test_t2_destination_that_is_a_directory_is_refused(maestro, home):
    H.write_settings(home, {})
    target = H.key_path(home, "rules/coding-discipline.md")
    target.mkdir(parents=True)
    before = H.snapshot(home)

    result = maestro("install")

    assert result.rc == 1
    assert f"managed destination is not a regular file: {target}" in result.err
    assert H.snapshot(home) == before


# --- t3: only exactly-marked commands are maestro's ---------------------------------------------

def test_t3_foreign_similar_commands_survive_install_and_uninstall(maestro, home):
    pyz = str(H.installed_pyz(home))
    foreign = [
        "node /tmp/orchestrator-gate.mjs.backup",
        f"{H.PYTHON} -I -S /tmp/elsewhere/maestro.pyz gate # maestro-managed:gate",  # marked, other archive
        f"{H.PYTHON} -I -S {pyz} gate",  # right archive, no marker
        f"python3 -I -S {pyz} inject # maestro-managed:inject",  # relative interpreter
        f"{H.PYTHON} -I -S {pyz} gate --verbose # maestro-managed:gate",  # extra argument
        f"{H.PYTHON} -I -S {pyz} gate # maestro-managed:inject",  # marker names another verb
        f"{H.PYTHON} -I {pyz} session-start # maestro-managed:session-start",  # not -I -S
    ]
    original = H.write_settings(home, {"hooks": {
        "PreToolUse": [{"matcher": "Edit|Write|MultiEdit",
                        "hooks": [{"type": "command", "command": c} for c in foreign]}],
    }})

    H.assert_ok(maestro("install"))

    value = H.read_json(H.settings_path(home))
    commands = [c for _, _, _, c in H.all_commands(value)]
    for command in foreign:
        assert commands.count(command) == 1, command
    ours = [c for c in commands if c not in foreign]
    assert sorted(ours) == sorted(H.managed_command(home, verb) for _, verb, _ in H.VERBS)
    assert len(H.maestro_entries(home, value)) == len(H.VERBS)

    H.assert_ok(maestro("uninstall"))

    value = H.read_json(H.settings_path(home))
    commands = [c for _, _, _, c in H.all_commands(value)]
    assert commands == foreign
    assert H.maestro_entries(home, value) == []
    assert H.settings_path(home).read_bytes() == original


def test_t3_exactly_three_marked_commands_after_install_none_after_uninstall(maestro, home):
    foreign = "node /tmp/orchestrator-gate.mjs.backup"
    H.write_settings(home, {"hooks": {"PreToolUse": [
        {"matcher": "Edit|Write|MultiEdit", "hooks": [{"type": "command", "command": foreign}]}]}})

    H.assert_ok(maestro("install"))
    value = H.read_json(H.settings_path(home))
    assert sorted(H.marked_commands(value)) == sorted(H.managed_command(home, verb) for _, verb, _ in H.VERBS)
    assert [c for _, _, _, c in H.all_commands(value)].count(foreign) == 1

    H.assert_ok(maestro("uninstall"))
    value = H.read_json(H.settings_path(home))
    assert H.marked_commands(value) == []
    assert [c for _, _, _, c in H.all_commands(value)] == [foreign]


# --- t5: settings backup refreshed before each merge --------------------------------------------

def test_t5_settings_backup_holds_exact_pre_merge_bytes_each_time(maestro, home):
    first_raw = H.write_settings(home, None, b'{"theme":"one"}\n')
    backup = H.settings_path(home).with_name("settings.json.maestro.bak")

    first = H.assert_ok(maestro("install"))

    assert "[maestro] backed up settings.json → settings.json.maestro.bak" in H.out_lines(first)
    assert backup.read_bytes() == first_raw

    value = H.read_json(H.settings_path(home))
    value["theme"] = "two"
    value["hooks"]["SessionStart"] = []
    second_raw = H.write_settings(home, None, json.dumps(value, indent=4).encode() + b"\n")

    second = H.assert_ok(maestro("install"))

    assert "[maestro] backed up settings.json → settings.json.maestro.bak" in H.out_lines(second)
    assert "[maestro] registered 1 maestro hook entry in settings.json" in H.out_lines(second)
    assert backup.read_bytes() == second_raw
    merged = H.read_json(H.settings_path(home))
    assert merged["theme"] == "two"
    assert len(H.maestro_entries(home, merged)) == len(H.VERBS)


def test_t5_no_backup_written_when_settings_did_not_exist(maestro, home):
    H.assert_ok(maestro("install"))
    assert H.settings_path(home).is_file()
    assert not H.settings_path(home).with_name("settings.json.maestro.bak").exists()
    assert H.mode(H.settings_path(home)) == 0o600
    manifest = H.read_json(H.manifest_path(home))
    assert manifest["settings_before"] == {"existed": False}


# --- t8: only a true top-level web_search counts ------------------------------------------------

def _install_with_config(maestro, home, raw: bytes):
    H.write_settings(home, {})
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_bytes(raw)
    return config, H.assert_ok(maestro("install"))


ADDED = '[maestro] added web_search = "disabled" to ~/.codex/config.toml (prevents hung jobs; MCP servers unaffected)'


def test_t8_multiline_and_nested_web_search_do_not_count(maestro, home):
    raw = (
        b'notes = """\nweb_search = "live"\n"""\n'
        b"literal = '''\nweb_search = 'live'\n'''\n"
        b'tools.web_search = "live"\n'
        b"\n  [mcp_servers.example.env]\n  web_search = \"live\"\n"
    )
    config, result = _install_with_config(maestro, home, raw)

    assert ADDED in H.out_lines(result)
    new = config.read_bytes()
    assert new.endswith(raw)
    assert new.startswith(b"# maestro:")
    data = tomllib.loads(new.decode())
    assert data["web_search"] == "disabled"
    assert data["notes"] == 'web_search = "live"\n'
    assert data["tools"] == {"web_search": "live"}
    assert data["mcp_servers"]["example"]["env"] == {"web_search": "live"}
    preamble = new.split(b"\n  [mcp_servers.example.env]", 1)[0].decode().splitlines()
    assert 'web_search = "disabled"' in preamble
    assert (home / ".codex" / "config.toml.maestro.bak").read_bytes() == raw

    again = H.assert_ok(maestro("install"))
    assert "[maestro] ~/.codex/config.toml already sets web_search (no change)" in H.out_lines(again)
    assert config.read_bytes() == new


def test_t8_real_top_level_web_search_is_left_unchanged(maestro, home):
    raw = b'model = "gpt-x"\nweb_search = "live"\n\n[profiles.fast]\nmodel = "gpt-y"\n'
    config, result = _install_with_config(maestro, home, raw)

    assert "[maestro] ~/.codex/config.toml already sets web_search (no change)" in H.out_lines(result)
    assert config.read_bytes() == raw
    assert not (home / ".codex" / "config.toml.maestro.bak").exists()


def test_t8_invalid_toml_is_left_unchanged_with_a_message(maestro, home):
    raw = b'model = "gpt-x\n[broken\n'
    config, result = _install_with_config(maestro, home, raw)

    lines = [line for line in H.out_lines(result) if "config.toml is not valid TOML" in line]
    assert len(lines) == 1 and lines[0].endswith("left it unchanged")
    assert config.read_bytes() == raw
    assert not (home / ".codex" / "config.toml.maestro.bak").exists()


@pytest.mark.parametrize(
    "raw",
    first_on_archive([  # one TOML edit (testing/archive_cases.py); the archive gets the row with both
        b'\xef\xbb\xbfmodel = "gpt-x"\r\n[profiles.fast]\r\nweb_search = "live"\r\n',
        b'model = "gpt-x"\r\n\r\n[profiles.fast]\r\nweb_search = "live"\r\n',
        b'\xef\xbb\xbfmodel = "gpt-x"\n[profiles.fast]\nweb_search = "live"\n',
    ], ids=["bom-crlf", "crlf", "bom"]),
)
def test_bom_and_crlf_configs_stay_valid_toml_after_web_search_edit(maestro, home, raw):
    config, result = _install_with_config(maestro, home, raw)

    assert ADDED in H.out_lines(result)
    new = config.read_bytes()
    bom = b"\xef\xbb\xbf"
    assert new.count(bom) == (1 if raw.startswith(bom) else 0)
    assert new.startswith(bom) == raw.startswith(bom)
    data = tomllib.loads(new.decode("utf-8-sig"))
    assert data["web_search"] == "disabled"
    assert data["model"] == "gpt-x"
    assert data["profiles"]["fast"] == {"web_search": "live"}
    if b"\r\n" in raw:
        assert new.count(b"\n") == new.count(b"\r\n"), "mixed line endings introduced"
    assert new.endswith(raw[len(bom):] if raw.startswith(bom) else raw)

    H.assert_ok(maestro("install"))
    assert config.read_bytes() == new


def test_unreadable_codex_config_is_refused_before_any_change(maestro, home):
    H.write_settings(home, {})
    config = home / ".codex" / "config.toml"
    config.mkdir(parents=True)  # reading it fails (EISDIR), as an unreadable file would
    before = H.snapshot(home)

    result = maestro("install")

    assert result.rc == 1
    assert f"[maestro] WARN: cannot read the Codex config (Is a directory): {config}; no files were changed" in H.err_lines(result)
    assert "internal error" not in result.err
    assert H.snapshot(home) == before


def test_missing_codex_config_gives_a_warning_only(maestro, home):
    H.write_settings(home, {})

    result = H.assert_ok(maestro("install"))

    assert ('[maestro] WARN: ~/.codex/config.toml not found; after `codex login`, add:  web_search = "disabled"'
            in H.err_lines(result))
    assert not (home / ".codex").exists()
    assert H.installed_pyz(home).is_file()


# --- t9: unknown option fails before anything -----------------------------------------------------

@pytest.mark.parametrize("args", first_on_archive([["--with-workfow"], ["--with-workflow", "--forse"], ["-x"], ["extra"]]))
def test_t9_unknown_option_fails_before_mutation(maestro, home, args):
    H.write_settings(home, None, b'{"theme":"unchanged"}\n')
    _seed_user_state(home)
    before = H.snapshot(home)

    result = maestro("install", *args)

    assert result.rc == 1
    bad = [a for a in args if a != "--with-workflow"]
    assert f"[maestro] WARN: unknown option: {', '.join(bad)}" in H.err_lines(result)
    assert "usage: maestro install [--with-workflow]" in result.err
    assert result.out == ""
    assert H.snapshot(home) == before


def test_t9_unknown_option_is_reported_before_settings_validation(maestro, home):
    H.write_settings(home, None, b'{"hooks":[]}\n')
    before = H.snapshot(home)

    result = maestro("install", "--bogus")

    assert result.rc == 1
    assert "unknown option: --bogus" in result.err
    assert "hooks must be an object" not in result.err
    assert H.snapshot(home) == before


def test_install_help_prints_usage_and_changes_nothing(maestro, home):
    before = H.snapshot(home)
    result = maestro("install", "--help")
    assert result.rc == 0
    assert "usage: maestro install [--with-workflow]" in result.out
    assert H.snapshot(home) == before


# --- t10: ask-on-start removed by the user stays removed -----------------------------------------

def test_t10_reinstall_does_not_rearm_ask_on_start(maestro, home):
    H.write_settings(home, {})
    flag = home / ".maestro" / "ask-on-start"

    first = H.assert_ok(maestro("install"))
    assert flag.is_file() and flag.read_bytes() == b""
    assert H.mode(flag) == 0o600
    assert any("armed the session-start Codex model/effort question" in line for line in H.out_lines(first))

    flag.unlink()  # what `--ask-on-start off` does
    second = H.assert_ok(maestro("install"))

    assert not flag.exists()
    assert "[maestro] kept ask-on-start=off from the previous installation" in H.out_lines(second)
    assert not any("armed" in line for line in H.out_lines(second))


# --- t11: identical reinstall is a no-op on disk --------------------------------------------------

@pytest.mark.parametrize("args", [[], ["--with-workflow"]])
def test_t11_identical_reinstall_keeps_inode_and_mtime(maestro, home, args):
    H.write_settings(home, {"theme": "dark"})
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_bytes(b'model = "gpt-x"\n')
    H.assert_ok(maestro("install", *args))
    before_ids = H.identities(home)
    before = H.snapshot(home)
    expected = set(H.BASE_KEYS) | (set(H.WORKFLOW_KEYS) if args else set())
    for key in expected:
        assert os.path.relpath(H.key_path(home, key), home) in before_ids
    assert ".claude/settings.json" in before_ids

    result = H.assert_ok(maestro("install", *args))

    assert H.identities(home) == before_ids
    assert H.snapshot(home) == before
    lines = H.out_lines(result)
    assert f"[maestro] {NOTHING_PUBLISHED}" in lines
    assert f"[maestro] {SETTINGS_UNCHANGED}" in lines
    assert "[maestro] ~/.codex/config.toml already sets web_search (no change)" in lines
    assert not any("published" in line or "registered" in line or "backed up" in line for line in lines)


# --- t12: a late failure rolls back every published path ------------------------------------------

def _inject_write_failure(monkeypatch, basename):
    from maestro.util import atomic

    real = atomic.write_atomic
    failed = []

    def flaky(path, data, mode=0o600):
        if os.path.basename(path) == basename and not failed:
            failed.append(path)
            raise OSError(errno.EIO, "injected failure", path)
        return real(path, data, mode)

    monkeypatch.setattr(atomic, "write_atomic", flaky)
    return failed


@pytest.mark.source_only
@pytest.mark.parametrize("failing", ["settings.json", "install-manifest.json", "ask-on-start"])
def test_t12_late_failure_rolls_back_every_published_path(maestro, home, monkeypatch, failing):
    if maestro.target == "pyz":
        pytest.skip("fault injection needs the in-process runner")
    settings_raw = H.write_settings(home, None, b'{"theme":"keep"}\n')
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_bytes(b'model = "gpt-x"\n')
    before = H.snapshot(home, dirs=False)
    failed = _inject_write_failure(monkeypatch, failing)

    result = maestro("install", "--with-workflow")

    assert failed, "the injected failure never fired"
    assert result.rc == 1
    assert any(line.startswith("[maestro] WARN: installation failed; rolled back ") and "injected failure" in line
               for line in H.err_lines(result)), result.err
    assert "rollback incomplete" not in result.err
    assert "done." not in result.out
    assert not H.installed_pyz(home).exists()
    assert not (home / ".claude" / "rules" / "coding-discipline.md").exists()
    assert not (home / ".claude" / "skills" / "plan-authoring" / "SKILL.md").exists()
    assert H.settings_path(home).read_bytes() == settings_raw
    assert not H.manifest_path(home).exists()
    assert not (home / ".maestro" / "ask-on-start").exists()
    assert H.snapshot(home, dirs=False) == before


@pytest.mark.source_only
def test_t12_late_failure_restores_previous_versions(maestro, home, monkeypatch):
    if maestro.target == "pyz":
        pytest.skip("fault injection needs the in-process runner")
    H.write_settings(home, {"theme": "keep"})
    H.assert_ok(maestro("install"))
    # Make it look like an older maestro: other rule bytes (recorded), an old interpreter.
    rule = H.key_path(home, "rules/coding-discipline.md")
    rule.write_bytes(b"OLD RULE\n")
    manifest = H.read_json(H.manifest_path(home))
    manifest["files"]["rules/coding-discipline.md"] = H.sha256(b"OLD RULE\n")
    H.manifest_path(home).write_bytes((json.dumps(manifest, indent=2) + "\n").encode())
    settings = H.read_json(H.settings_path(home))
    for blocks in settings["hooks"].values():
        for block in blocks:
            for hook in block["hooks"]:
                hook["command"] = hook["command"].replace(H.PYTHON, "/opt/old/bin/python3", 1)
    H.write_settings(home, settings)
    before = H.snapshot(home, dirs=False)
    failed = _inject_write_failure(monkeypatch, "install-manifest.json")

    result = maestro("install")

    assert failed and result.rc == 1
    assert "rollback incomplete" not in result.err
    assert rule.read_bytes() == b"OLD RULE\n"
    assert H.snapshot(home, dirs=False) == before


def test_t12_late_failure_from_a_symlinked_maestro_dir_rolls_back(maestro, home):
    """A real (not injected) late failure, so the archive target exercises rollback too."""
    settings_raw = H.write_settings(home, None, b'{"theme":"keep"}\n')
    elsewhere = home / "elsewhere"
    elsewhere.mkdir()
    (home / ".maestro").symlink_to(elsewhere)
    before = H.snapshot(home, dirs=False)

    result = maestro("install")

    assert result.rc == 1
    failure = [line for line in H.err_lines(result) if "installation failed; rolled back" in line]
    assert failure == [f"[maestro] WARN: installation failed; rolled back 4 published path(s): "
                       f"not a private directory: {home / '.maestro'}"]
    assert "rollback incomplete" not in result.err
    assert not H.installed_pyz(home).exists()
    assert H.settings_path(home).read_bytes() == settings_raw
    assert list(elsewhere.iterdir()) == []
    assert H.snapshot(home, dirs=False) == before


# --- install details --------------------------------------------------------------------------

def test_fresh_install_publishes_archive_and_payload_bytes(maestro, home, built_pyz):
    H.write_settings(home, {})

    result = H.assert_ok(maestro("install"))

    _prefixed(result)
    assert f"[maestro] published 4 changed files into {home / '.claude'}" in H.out_lines(result)
    assert H.installed_pyz(home).read_bytes() == Path(built_pyz).read_bytes()
    assert H.mode(H.installed_pyz(home)) == 0o755
    for key in H.BASE_KEYS:
        assert H.key_path(home, key).read_bytes() == H.source_bytes(key, built_pyz), key
        if key != "hooks/maestro.pyz":
            assert H.mode(H.key_path(home, key)) == 0o644, key
    for key in H.WORKFLOW_KEYS:
        assert not H.key_path(home, key).exists()
    assert ("[maestro] skipped rules/workflow.md and the ralph-protocol skill; add them with: install --with-workflow"
            in H.out_lines(result))
    assert H.out_lines(result)[-1] == "[maestro] done. Restart Claude Code so the rules and hooks load."
    # the published archive really runs under the registered interpreter flags
    proc = subprocess.run([H.PYTHON, "-I", "-S", str(H.installed_pyz(home)), "--version"],
                          capture_output=True, timeout=30)
    assert proc.returncode == 0 and proc.stdout.startswith(b"maestro ")


def test_with_workflow_adds_the_two_extra_files(maestro, home, built_pyz):
    H.write_settings(home, {})

    result = H.assert_ok(maestro("install", "--with-workflow"))

    assert f"[maestro] published 6 changed files into {home / '.claude'}" in H.out_lines(result)
    assert not any("skipped rules/workflow.md" in line for line in H.out_lines(result))
    for key in H.BASE_KEYS + H.WORKFLOW_KEYS:
        assert H.key_path(home, key).read_bytes() == H.source_bytes(key, built_pyz), key
    assert set(H.read_json(H.manifest_path(home))["files"]) == set(H.BASE_KEYS + H.WORKFLOW_KEYS)

    # a later plain install keeps them owned, so uninstall still removes them
    H.assert_ok(maestro("install"))
    assert set(H.read_json(H.manifest_path(home))["files"]) == set(H.BASE_KEYS + H.WORKFLOW_KEYS)
    H.assert_ok(maestro("uninstall"))
    for key in H.BASE_KEYS + H.WORKFLOW_KEYS:
        assert not H.key_path(home, key).exists(), key


def test_hook_commands_use_absolute_interpreter_and_isolated_flags(maestro, home):
    H.write_settings(home, {})

    result = H.assert_ok(maestro("install"))

    value = H.read_json(H.settings_path(home))
    assert set(value["hooks"]) == {"PreToolUse", "UserPromptSubmit", "SessionStart", "Stop"}
    pyz = str(H.installed_pyz(home))
    for event, verb, timeout in H.VERBS:
        blocks = value["hooks"][event]
        assert len(blocks) == 1
        block = blocks[0]
        if event == "PreToolUse":
            assert block["matcher"] == "^(Edit|Write|MultiEdit|NotebookEdit|Bash|mcp__.*)$"
        else:
            assert "matcher" not in block
        assert block["hooks"] == [{"type": "command", "command": H.managed_command(home, verb), "timeout": timeout}]
        command = block["hooks"][0]["command"]
        head, marker = command.rsplit(" # ", 1)
        words = shlex.split(head)
        assert os.path.isabs(words[2]) and words[2] == H.PYTHON
        # guard, then the run itself: the interpreter is absolute and the archive runs isolated
        assert words[:11] == ["[", "-x", H.PYTHON, "]", "&&", "[", "-f", pyz, "]", "&&", H.PYTHON]
        launcher = "import sys;sys.path[:0]=sys.argv[1:2];import maestro_hook"
        assert words[11:17] == ["-I", "-S", "-c", launcher, pyz, verb] and words[17] == "||"
        assert marker == f"maestro-managed:{verb}"
    assert "[maestro] registered 4 maestro hook entries in settings.json" in H.out_lines(result)
    assert (f"[maestro] hooks run: {shlex.quote(H.PYTHON)} -I -S -c "
            f"'import sys;sys.path[:0]=sys.argv[1:2];import maestro_hook' {shlex.quote(pyz)} gate "
            "(when that cannot run, the gate blocks and names doctor)") in H.out_lines(result)


def test_hooks_join_existing_matching_blocks(maestro, home):
    foreign = {"type": "command", "command": "echo user-gate"}
    H.write_settings(home, {"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo bash"}]},
                       {"matcher": H.PRETOOL_MATCHER, "hooks": [foreign]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}],
    }})

    H.assert_ok(maestro("install"))

    value = H.read_json(H.settings_path(home))
    pre = value["hooks"]["PreToolUse"]
    assert len(pre) == 2 and pre[0]["hooks"] == [{"type": "command", "command": "echo bash"}]
    assert [h["command"] for h in pre[1]["hooks"]] == ["echo user-gate", H.managed_command(home, "gate")]
    start = value["hooks"]["SessionStart"]
    assert len(start) == 1
    assert [h["command"] for h in start[0]["hooks"]] == ["echo hi", H.managed_command(home, "session-start")]


def test_a_fresh_gate_never_joins_a_block_with_another_matcher(maestro, home):
    """A foreign block under the old maestro matcher stays as it is; the gate gets its own block."""
    foreign = {"type": "command", "command": "echo user-gate"}
    H.write_settings(home, {"hooks": {"PreToolUse": [{"matcher": H.OLD_PRETOOL_MATCHER, "hooks": [foreign]}]}})

    H.assert_ok(maestro("install"))

    pre = H.read_json(H.settings_path(home))["hooks"]["PreToolUse"]
    assert pre == [{"matcher": H.OLD_PRETOOL_MATCHER, "hooks": [foreign]},
                   {"matcher": H.PRETOOL_MATCHER,
                    "hooks": [{"type": "command", "command": H.managed_command(home, "gate"), "timeout": 10}]}]


@pytest.mark.parametrize("shape", ["current", "legacy"])
@pytest.mark.parametrize("old_python", ["/opt/old/bin/python3", "/opt/my python/bin/python3.10"])
def test_reinstall_with_other_interpreter_updates_entries_in_place(maestro, home, old_python, shape):
    build = H.managed_command if shape == "current" else H.legacy_command
    before_hook = {"type": "command", "command": "echo before"}
    after_hook = {"type": "command", "command": "echo after"}
    stale = {event: {"type": "command", "command": build(home, verb, python=old_python), "timeout": 99}
             for event, verb, _ in H.VERBS}
    H.write_settings(home, {"hooks": {
        "PreToolUse": [{"matcher": H.PRETOOL_MATCHER, "hooks": [before_hook, stale["PreToolUse"], after_hook]}],
        "UserPromptSubmit": [{"hooks": [stale["UserPromptSubmit"]]}],
        "SessionStart": [{"hooks": [before_hook, stale["SessionStart"]]}],
        "Stop": [{"hooks": [stale["Stop"]]}],
    }})

    result = H.assert_ok(maestro("install"))

    assert "[maestro] registered 4 maestro hook entries in settings.json" in H.out_lines(result)
    value = H.read_json(H.settings_path(home))
    timeouts = {event: timeout for event, _, timeout in H.VERBS}
    fresh = {event: {"type": "command", "command": H.managed_command(home, verb), "timeout": timeouts[event]}
             for event, verb, _ in H.VERBS}
    assert value["hooks"] == {
        "PreToolUse": [{"matcher": H.PRETOOL_MATCHER, "hooks": [before_hook, fresh["PreToolUse"], after_hook]}],
        "UserPromptSubmit": [{"hooks": [fresh["UserPromptSubmit"]]}],
        "SessionStart": [{"hooks": [before_hook, fresh["SessionStart"]]}],
        "Stop": [{"hooks": [fresh["Stop"]]}],
    }
    assert old_python not in H.settings_path(home).read_text()


def test_duplicate_managed_entries_collapse_to_one(maestro, home):
    H.write_settings(home, {})
    H.assert_ok(maestro("install"))
    value = H.read_json(H.settings_path(home))
    gate = value["hooks"]["PreToolUse"][0]["hooks"][0]
    inject = value["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    value["hooks"]["PreToolUse"].append({"matcher": H.PRETOOL_MATCHER, "hooks": [dict(gate), {"type": "command", "command": "echo keep"}]})
    value["hooks"]["UserPromptSubmit"][0]["hooks"].append(dict(inject, command=H.managed_command(home, "inject", "/usr/bin/python3")))
    H.write_settings(home, value)

    result = H.assert_ok(maestro("install"))

    assert "[maestro] registered 2 maestro hook entries in settings.json" in H.out_lines(result)
    value = H.read_json(H.settings_path(home))
    entries = H.maestro_entries(home, value)
    assert sorted(event for event, _, _ in entries) == ["PreToolUse", "SessionStart", "Stop", "UserPromptSubmit"]
    assert [c for _, _, _, c in H.all_commands(value) if "maestro-managed" in c] == [
        H.managed_command(home, "gate"), H.managed_command(home, "inject"), H.managed_command(home, "session-start"),
        H.managed_command(home, "stop")]
    assert "echo keep" in [c for _, _, _, c in H.all_commands(value)]

    again = H.assert_ok(maestro("install"))
    assert f"[maestro] {SETTINGS_UNCHANGED}" in H.out_lines(again)


@pytest.mark.parametrize("what", ["pyz-symlink", "rules-dir-symlink", "skill-dir-symlink", "hooks-dir-symlink"])
def test_symlinked_destination_is_refused(maestro, home, built_pyz, what):
    H.write_settings(home, {})
    elsewhere = home / "elsewhere"
    elsewhere.mkdir()
    claude = home / ".claude"
    if what == "pyz-symlink":
        (claude / "hooks").mkdir()
        (elsewhere / "maestro.pyz").write_bytes(Path(built_pyz).read_bytes())  # identical bytes still refused
        H.installed_pyz(home).symlink_to(elsewhere / "maestro.pyz")
        label, path = "managed destination", H.installed_pyz(home)
    elif what == "rules-dir-symlink":
        (claude / "rules").symlink_to(elsewhere)
        label, path = "managed directory", claude / "rules"
    elif what == "skill-dir-symlink":
        (claude / "skills").mkdir()
        (claude / "skills" / "plan-authoring").symlink_to(elsewhere)
        label, path = "managed directory", claude / "skills" / "plan-authoring"
    else:
        (claude / "hooks").symlink_to(elsewhere)
        label, path = "managed directory", claude / "hooks"
    before = H.snapshot(home)

    result = maestro("install")

    assert result.rc == 1
    assert f"[maestro] WARN: {label} is a symlink; refusing to replace it: {path}" in H.err_lines(result)
    assert H.snapshot(home) == before
    assert list(elsewhere.iterdir()) == ([elsewhere / "maestro.pyz"] if what == "pyz-symlink" else [])


@pytest.mark.parametrize(
    "relative,label",
    first_on_archive([  # one symlink refusal (testing/archive_cases.py)
        (".codex/config.toml", "Codex config"), (".codex/config.toml.maestro.bak", "Codex config backup"),
        (".claude/settings.json.maestro.bak", "settings backup"), (".maestro/ask-on-start", "ask-on-start preference"),
        (".maestro/settings-before-install.json", "settings snapshot")]),
)
def test_symlinked_config_backup_or_flag_is_refused(maestro, home, relative, label):
    H.write_settings(home, {})
    victim = home / "victim.txt"
    victim.write_bytes(b"do not touch\n")
    link = home / relative
    link.parent.mkdir(parents=True, exist_ok=True)
    if relative.startswith(".codex/config.toml."):
        (home / ".codex" / "config.toml").write_bytes(b'model = "gpt-x"\n')
    link.symlink_to(victim)
    before = H.snapshot(home)

    result = maestro("install")

    assert result.rc == 1
    assert f"[maestro] WARN: {label} is a symlink; refusing to replace it: {link}" in H.err_lines(result)
    assert H.snapshot(home) == before


BAD_MANIFESTS = {
    "invalid-json": (b"{not json\n", "ownership manifest is unreadable"),
    "wrong-version": (b'{"version": 2, "files": {}}\n', "unsupported schema"),
    "files-not-object": (b'{"version": 1, "files": []}\n', "unsupported schema"),
    "root-array": (b"[]\n", "unsupported schema"),
    "bad-hash": (b'{"version": 1, "files": {"rules/coding-discipline.md": "abc"}}\n', "invalid hash"),
    "uppercase-hash": (b'{"version": 1, "files": {"hooks/maestro.pyz": "' + b"A" * 64 + b'"}}\n', "invalid hash"),
}


@pytest.mark.parametrize("case", first_on_archive(sorted(BAD_MANIFESTS)))  # one manifest check (testing/archive_cases.py)
def test_invalid_manifest_refuses_install(maestro, home, case):
    raw, reason = BAD_MANIFESTS[case]
    H.write_settings(home, {})
    H.manifest_path(home).parent.mkdir(mode=0o700)
    H.manifest_path(home).write_bytes(raw)
    before = H.snapshot(home)

    result = maestro("install")

    assert result.rc == 1
    assert reason in result.err
    assert "refusing to overwrite managed files" in result.err
    assert H.snapshot(home) == before


def test_symlinked_manifest_refuses_install(maestro, home):
    H.write_settings(home, {})
    real = home / "manifest.json"
    real.write_bytes(b'{"version": 1, "files": {}}\n')
    H.manifest_path(home).parent.mkdir(mode=0o700)
    H.manifest_path(home).symlink_to(real)
    before = H.snapshot(home)

    result = maestro("install")

    assert result.rc == 1
    assert f"ownership manifest is not a regular file: {H.manifest_path(home)}" in result.err
    assert H.snapshot(home) == before


def test_manifest_is_private_two_space_json_with_installed_hashes(maestro, home):
    H.write_settings(home, {})

    H.assert_ok(maestro("install"))

    path = H.manifest_path(home)
    assert H.mode(path) == 0o600
    assert H.mode(path.parent) == 0o700
    raw = path.read_bytes()
    value = json.loads(raw)
    assert raw == (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode()
    assert value["version"] == 1
    assert list(value["files"]) == sorted(H.BASE_KEYS)
    for key, digest in value["files"].items():
        assert digest == H.sha256(H.key_path(home, key).read_bytes()), key
    assert value["settings_before"] == {"existed": True}


@pytest.mark.parametrize("file_mode", first_on_archive([0o644, 0o640, 0o600]))  # one chmod (testing/archive_cases.py)
def test_settings_mode_is_preserved(maestro, home, file_mode):
    H.write_settings(home, {"theme": "dark"})
    os.chmod(H.settings_path(home), file_mode)

    H.assert_ok(maestro("install"))

    assert H.mode(H.settings_path(home)) == file_mode
    assert H.mode(H.settings_path(home).with_name("settings.json.maestro.bak")) == file_mode


def test_settings_with_bom_and_unicode_is_merged(maestro, home):
    raw = b'\xef\xbb\xbf{"theme": "d\xc3\xa4rk", "note": "\xe2\x9c\x93"}\n'
    H.write_settings(home, None, raw)

    H.assert_ok(maestro("install"))

    text = H.settings_path(home).read_bytes()
    value = json.loads(text)  # no BOM left behind: plain json.loads accepts it
    assert value["theme"] == "d\u00e4rk" and value["note"] == "\u2713"
    assert "d\u00e4rk".encode() in text  # written as UTF-8, not \\u escapes
    assert len(H.maestro_entries(home, value)) == len(H.VERBS)
    assert H.settings_path(home).with_name("settings.json.maestro.bak").read_bytes() == raw


def test_no_claude_dir_at_all_is_created_from_scratch(maestro, home, built_pyz):
    result = H.assert_ok(maestro("install"))

    _prefixed(result)
    assert H.installed_pyz(home).read_bytes() == Path(built_pyz).read_bytes()
    assert len(H.maestro_entries(home, H.read_json(H.settings_path(home)))) == len(H.VERBS)


def test_companion_warning_only_when_plugin_missing(maestro, home):
    H.write_settings(home, {})
    missing = H.assert_ok(maestro("install"))
    assert "[maestro] WARN: the Codex plugin (openai/codex-plugin-cc) was not found; maestro needs it to run Codex." in H.err_lines(missing)
    assert ("[maestro] WARN: Install it in Claude Code:  /plugin marketplace add openai/codex-plugin-cc, then "
            "/plugin install codex@openai-codex; then sign in with `codex login`.") in H.err_lines(missing)

    script = home / ".claude/plugins/cache/openai-codex/codex/1.2.0/scripts/codex-companion.mjs"
    script.parent.mkdir(parents=True)
    script.write_bytes(b"// companion\n")
    present = H.assert_ok(maestro("install"))
    assert "Codex plugin" not in present.err


def test_reinstall_keeps_the_bytes_of_a_reformatted_but_complete_settings_file(maestro, home):
    """Content decides: a settings.json that already holds every entry is not rewritten."""
    H.assert_ok(maestro("install"))
    path = H.settings_path(home)
    reformatted = json.dumps(json.loads(path.read_bytes()), indent=4).encode() + b"\n"
    path.write_bytes(reformatted)
    result = H.assert_ok(maestro("install"))
    assert path.read_bytes() == reformatted
    assert "settings.json already had every maestro hook entry" in result.out
