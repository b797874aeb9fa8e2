"""Migration from an original (Bash/Node) Maestro install to maestro, done by `install`."""

import errno
import json
import os

import pytest
from testing import install as H

ORIGINAL_HOOKS = (
    "orchestrator-gate.mjs", "orchestrator-inject.mjs", "session-start.mjs",
    "maestro-policy.mjs", "implementer-loop.sh", "lib-companion.sh",
)
ORIGINAL_RULES = {
    "rules/orchestrator-implementer.md": b"# original orchestrator rule\n",
    "rules/coding-discipline.md": b"# original coding discipline\n",
}
MODIFIED = "lib-companion.sh"
FOREIGN = {"type": "command", "command": "node /home/me/my-own-gate.mjs"}
FOREIGN_PROMPT = {"type": "command", "command": "echo prompt-hook"}


def _original_install(home, modify=True):
    """Fabricate what the original Maestro leaves behind; return (settings bytes, file bytes by key)."""
    hooks = home / ".claude" / "hooks"
    hooks.mkdir(parents=True)
    files = {}
    for name in ORIGINAL_HOOKS:
        data = f"// original maestro {name}\n".encode()
        (hooks / name).write_bytes(data)
        (hooks / name).chmod(0o755 if name.endswith(".sh") else 0o644)
        files[f"hooks/{name}"] = data
    (home / ".claude" / "rules").mkdir()
    for key, data in ORIGINAL_RULES.items():
        H.key_path(home, key).write_bytes(data)
        files[key] = data
    (home / ".maestro").mkdir(mode=0o700)
    manifest = {"version": 1, "files": {key: H.sha256(data) for key, data in sorted(files.items())}}
    H.manifest_path(home).write_bytes((json.dumps(manifest, indent=2) + "\n").encode())
    H.manifest_path(home).chmod(0o600)
    hook_dir = home / ".claude" / "hooks"
    settings = {
        "theme": "dark",
        "hooks": {
            "PreToolUse": [{"matcher": "Edit|Write|MultiEdit", "hooks": [
                FOREIGN,
                {"type": "command",
                 "command": f'node "{hook_dir / "orchestrator-gate.mjs"}" # maestro-managed:orchestrator-gate.mjs'},
            ]}],
            "UserPromptSubmit": [
                {"hooks": [{"type": "command",
                            "command": f'node "{hook_dir / "orchestrator-inject.mjs"}" # maestro-managed:orchestrator-inject.mjs'}]},
                {"hooks": [FOREIGN_PROMPT]},
            ],
            "SessionStart": [{"hooks": [{"type": "command", "command": f'node "{hook_dir / "session-start.mjs"}"'}]}],
        },
    }
    raw = H.write_settings(home, settings)
    if modify:
        (hooks / MODIFIED).write_bytes(b"// original maestro lib, patched by the user\n")
    return raw, files


def _expected_hooks(home):
    timeouts = {verb: timeout for _, verb, timeout in H.VERBS}

    def ours(verb):
        return {"type": "command", "command": H.managed_command(home, verb), "timeout": timeouts[verb]}

    return {
        # the original's gate leaves FOREIGN alone under the old matcher; maestro's gate gets its own block
        "PreToolUse": [{"matcher": "Edit|Write|MultiEdit", "hooks": [FOREIGN]},
                       {"matcher": H.PRETOOL_MATCHER, "hooks": [ours("gate")]}],
        # the original's emptied block is dropped; inject joins the remaining matcherless block
        "UserPromptSubmit": [{"hooks": [FOREIGN_PROMPT, ours("inject")]}],
        "SessionStart": [{"hooks": [ours("session-start")]}],
        "Stop": [{"hooks": [ours("stop")]}],
    }


def test_install_migrates_an_original_maestro_install(maestro, home, built_pyz):
    settings_raw, _ = _original_install(home)
    hooks = home / ".claude" / "hooks"

    result = H.assert_ok(maestro("install"))

    # byte-identical original hook files are gone, the user-modified one is kept and named
    assert sorted(p.name for p in hooks.iterdir()) == [MODIFIED, "maestro.pyz"]
    assert (hooks / MODIFIED).read_bytes() == b"// original maestro lib, patched by the user\n"
    assert f"[maestro] WARN: kept {hooks / MODIFIED}: it changed after the original Maestro installed it" in H.err_lines(result)
    assert ("[maestro] migrated from the original Maestro: removed 5 unmodified hook file(s) and 3 of its hook command(s)"
            in H.out_lines(result))
    # maestro's files replace the original's rules
    for key in H.BASE_KEYS:
        assert H.key_path(home, key).read_bytes() == H.source_bytes(key, built_pyz), key
    # settings: original commands gone, foreign kept, exactly maestro's four present
    value = H.read_json(H.settings_path(home))
    assert value["theme"] == "dark"
    assert value["hooks"] == _expected_hooks(home)
    text = H.settings_path(home).read_text()
    for script in ("orchestrator-gate.mjs", "orchestrator-inject.mjs", "session-start.mjs"):
        assert script not in text, script
    assert H.settings_path(home).with_name("settings.json.maestro.bak").read_bytes() == settings_raw
    # the manifest now owns only maestro's files
    manifest = H.read_json(H.manifest_path(home))
    assert list(manifest["files"]) == sorted(H.BASE_KEYS)
    assert not any(key.endswith((".mjs", ".sh")) for key in manifest["files"])
    # an existing (original) manifest means this is not a fresh install: no ask-on-start arming
    assert not (home / ".maestro" / "ask-on-start").exists()


def test_second_install_after_migration_changes_nothing(maestro, home):
    _original_install(home)
    H.assert_ok(maestro("install"))
    before = H.snapshot(home)
    ids = H.identities(home)

    result = H.assert_ok(maestro("install"))

    assert H.snapshot(home) == before
    assert H.identities(home) == ids
    assert "[maestro] hooks/maestro.pyz, rules and skills already matched the installed bytes" in H.out_lines(result)
    assert "[maestro] settings.json already had every maestro hook entry" in H.out_lines(result)
    assert "migrated" not in result.out
    assert "kept " not in result.err


def test_uninstall_after_migration_leaves_only_user_modified_file_and_foreign_hooks(maestro, home):
    _original_install(home)
    H.assert_ok(maestro("install"))

    H.assert_ok(maestro("uninstall"))

    files = sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())
    assert files == [
        f".claude/hooks/{MODIFIED}",
        ".claude/settings.json",
        ".claude/settings.json.maestro-uninstall.bak",
        ".claude/settings.json.maestro.bak",
    ]
    assert H.read_json(H.settings_path(home)) == {
        "theme": "dark",
        "hooks": {
            "PreToolUse": [{"matcher": "Edit|Write|MultiEdit", "hooks": [FOREIGN]}],
            "UserPromptSubmit": [{"hooks": [FOREIGN_PROMPT]}],
        },
    }
    assert not (home / ".maestro").exists()


def test_migration_without_user_changes_removes_every_original_file(maestro, home):
    _original_install(home, modify=False)

    result = H.assert_ok(maestro("install"))

    assert sorted(p.name for p in (home / ".claude" / "hooks").iterdir()) == ["maestro.pyz"]
    assert "removed 6 unmodified hook file(s) and 3 of its hook command(s)" in result.out
    assert "kept " not in result.err


def test_migration_keeps_an_original_rule_the_user_modified(maestro, home, built_pyz):
    """The original's manifest owns the rule, the user changed it: kept, maestro's version beside it
    (issue 16 item 3, the same upgrade path as from an older maestro); the migration goes ahead."""
    _original_install(home)
    rule = H.key_path(home, "rules/coding-discipline.md")
    rule.write_bytes(b"# my own discipline\n")

    result = H.assert_ok(maestro("install"))

    assert rule.read_bytes() == b"# my own discipline\n"
    new_copy = H.key_path(home, "rules/coding-discipline.md.maestro-new")
    assert new_copy.read_bytes() == H.source_bytes("rules/coding-discipline.md", built_pyz)
    assert any(line.startswith(f"[maestro] WARN: kept {rule}: it changed after install.") for line in H.err_lines(result))
    assert H.key_path(home, "rules/orchestrator-implementer.md").read_bytes() == H.source_bytes(
        "rules/orchestrator-implementer.md", built_pyz)
    files = H.read_json(H.manifest_path(home))["files"]
    assert files["rules/coding-discipline.md"] == H.sha256(ORIGINAL_RULES["rules/coding-discipline.md"])
    assert files["rules/coding-discipline.md.maestro-new"] == H.sha256(new_copy.read_bytes())
    assert [key for key in files if key.startswith("hooks/")] == ["hooks/maestro.pyz"]  # the original's migrated


def test_original_files_are_not_deleted_without_the_original_manifest(maestro, home):
    """Without the original's manifest nothing proves a file is the original's: every one stays."""
    _original_install(home, modify=False)
    H.manifest_path(home).unlink()
    for key in ORIGINAL_RULES:
        H.key_path(home, key).unlink()

    result = H.assert_ok(maestro("install"))

    # Its exact hook commands are superseded either way (two gates and two injectors would run);
    # its files stay, because nothing proves they are the original's bytes.
    assert "removed 0 unmodified hook file(s) and 3 of its hook command(s)" in result.out
    for name in ORIGINAL_HOOKS:
        assert (home / ".claude" / "hooks" / name).is_file(), name


@pytest.mark.source_only
def test_failed_migration_restores_original_files_and_settings(maestro, home, monkeypatch):
    if maestro.target == "pyz":
        pytest.skip("fault injection needs the in-process runner")
    _original_install(home)
    before = H.snapshot(home, dirs=False)
    from maestro.util import atomic

    real = atomic.write_atomic
    failed = []

    def flaky(path, data, mode=0o600):
        if os.path.basename(path) == "install-manifest.json" and not failed:
            failed.append(path)
            raise OSError(errno.ENOSPC, "injected failure", path)
        return real(path, data, mode)

    monkeypatch.setattr(atomic, "write_atomic", flaky)

    result = maestro("install")

    assert failed and result.rc == 1
    assert "installation failed; rolled back" in result.err
    assert "rollback incomplete" not in result.err
    assert H.snapshot(home, dirs=False) == before  # bytes and modes, .sh files back at 0755


def test_original_commands_go_even_when_their_files_are_already_gone(maestro, home):
    """Left behind, they would run a missing script on every edit and prompt."""
    _original_install(home, modify=False)
    for name in ORIGINAL_HOOKS:
        (home / ".claude" / "hooks" / name).unlink()

    result = H.assert_ok(maestro("install"))

    commands = [found[3] for found in H.all_commands(H.read_json(H.settings_path(home)))]
    assert not [c for c in commands if ".mjs" in c and "my-own-gate" not in c]
    assert "and 3 of its hook command(s)" in result.out
    recorded = H.read_json(H.manifest_path(home))["files"]
    assert not [key for key in recorded if key.endswith((".mjs", ".sh"))]
