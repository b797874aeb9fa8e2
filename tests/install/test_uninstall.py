"""`maestro uninstall`: remove exactly what install published and restore settings.json."""

import json
import os

import pytest
from testing import install as H
from testing.archive_cases import first_on_archive

DONE = "[maestro] done. ~/.codex was left as it is: it holds your Codex config."


def _installed(maestro, home, settings=None, *args):
    if settings is not None:
        H.write_settings(home, settings)
    H.assert_ok(maestro("install", *args))


# --- t4: a modified installed file survives uninstall ---------------------------------------------

def test_t4_modified_file_survives_while_unmodified_ones_are_removed(maestro, home):
    _installed(maestro, home, {})
    modified = H.key_path(home, "rules/orchestrator-implementer.md")
    modified.write_bytes(b"USER MODIFIED AFTER INSTALL\n")
    recorded = H.read_json(H.manifest_path(home))["files"]["rules/orchestrator-implementer.md"]

    result = H.assert_ok(maestro("uninstall"))

    assert modified.read_bytes() == b"USER MODIFIED AFTER INSTALL\n"
    assert "[maestro] kept rules/orchestrator-implementer.md — its bytes changed after installation" in H.out_lines(result)
    for key in H.BASE_KEYS:
        if key != "rules/orchestrator-implementer.md":
            assert not H.key_path(home, key).exists(), key
            assert f"[maestro] removed {key}" in H.out_lines(result)
    # the kept file stays owned (by its recorded hash) so a later uninstall can still judge it
    manifest = H.read_json(H.manifest_path(home))
    assert manifest == {"version": 1, "files": {"rules/orchestrator-implementer.md": recorded}}
    assert H.mode(H.manifest_path(home)) == 0o600
    assert not (home / ".claude" / "hooks").exists()  # emptied directories are pruned
    assert not (home / ".claude" / "skills").exists()
    assert (home / ".claude" / "rules").is_dir()
    assert H.maestro_entries(home, H.read_json(H.settings_path(home))) == []


def test_t4_modified_archive_survives_uninstall(maestro, home):
    _installed(maestro, home, {})
    H.installed_pyz(home).write_bytes(b"PK patched\n")

    result = H.assert_ok(maestro("uninstall"))

    assert H.installed_pyz(home).read_bytes() == b"PK patched\n"
    assert "[maestro] kept hooks/maestro.pyz — its bytes changed after installation" in H.out_lines(result)
    assert not H.key_path(home, "rules/coding-discipline.md").exists()


# --- t6: uninstall trusts the manifest hash, not the current source --------------------------------

def test_t6_file_matching_recorded_hash_is_removed_even_if_source_differs(maestro, home):
    _installed(maestro, home, {})
    rule = H.key_path(home, "rules/coding-discipline.md")
    rule.write_bytes(b"BYTES FROM INSTALLED VERSION A\n")
    manifest = H.read_json(H.manifest_path(home))
    manifest["files"]["rules/coding-discipline.md"] = H.sha256(b"BYTES FROM INSTALLED VERSION A\n")
    H.manifest_path(home).write_bytes((json.dumps(manifest, indent=2) + "\n").encode())

    result = H.assert_ok(maestro("uninstall"))

    assert not rule.exists()
    assert "[maestro] removed rules/coding-discipline.md" in H.out_lines(result)
    assert not H.manifest_path(home).exists()


def test_t6_file_matching_source_but_not_recorded_hash_is_kept(maestro, home, built_pyz):
    _installed(maestro, home, {})
    manifest = H.read_json(H.manifest_path(home))
    manifest["files"]["rules/coding-discipline.md"] = H.sha256(b"some other version\n")
    H.manifest_path(home).write_bytes((json.dumps(manifest, indent=2) + "\n").encode())
    rule = H.key_path(home, "rules/coding-discipline.md")

    result = H.assert_ok(maestro("uninstall"))

    assert rule.read_bytes() == H.source_bytes("rules/coding-discipline.md", built_pyz)
    assert "[maestro] kept rules/coding-discipline.md — its bytes changed after installation" in H.out_lines(result)


# --- t7: invalid settings prevent a partial uninstall ---------------------------------------------

@pytest.mark.parametrize("case", ["not-json", "bad-schema", "symlink"])
def test_t7_invalid_or_symlinked_settings_change_nothing(maestro, home, case):
    _installed(maestro, home, {})
    settings = H.settings_path(home)
    if case == "not-json":
        settings.write_bytes(b"{not-json\n")
    elif case == "bad-schema":
        settings.write_bytes(b'{"hooks": {"PreToolUse": {}}}\n')
    else:
        real = home / "dotfiles" / "settings.json"
        real.parent.mkdir()
        real.write_bytes(settings.read_bytes())
        settings.unlink()
        settings.symlink_to(real)
    before = H.snapshot(home)

    result = maestro("uninstall")

    assert result.rc == 1
    assert result.err.startswith("[maestro] WARN: settings.json ")
    assert "refusing a partial uninstall." in result.err
    assert H.snapshot(home) == before


# --- t14: uninstall removes private authorization state -------------------------------------------

def test_t14_uninstall_removes_direct_edit_markers_and_empty_maestro_dir(maestro, home):
    _installed(maestro, home, {})
    markers = home / ".maestro" / "direct-edit"
    markers.mkdir(mode=0o700)
    for sid in ("session-test", "other_session"):
        flag = markers / f"maestro-direct-{sid}.flag"
        flag.write_bytes(b"1\n")
        flag.chmod(0o600)

    result = H.assert_ok(maestro("uninstall"))

    assert not markers.exists()
    assert not (home / ".maestro").exists()
    assert "[maestro] removed the private direct-edit authorization markers" in H.out_lines(result)
    assert "[maestro] removed ~/.maestro/ask-on-start" in H.out_lines(result)
    assert H.out_lines(result)[-1] == DONE


def test_t14_non_empty_maestro_dir_is_kept(maestro, home):
    _installed(maestro, home, {})
    (home / ".maestro" / "discussions").mkdir()
    (home / ".maestro" / "discussions" / "repo.md").write_bytes(b"# talk\n")

    H.assert_ok(maestro("uninstall"))

    assert sorted(p.name for p in (home / ".maestro").iterdir()) == ["discussions"]
    assert (home / ".maestro" / "discussions" / "repo.md").read_bytes() == b"# talk\n"


# --- settings restoration -------------------------------------------------------------------------

def test_settings_restored_byte_identical_when_nothing_else_changed(maestro, home):
    original = (
        '{\n    "zeta": 1,\n    "theme": "d\u00e4rk \u2713",\n    "hooks": {\n        "Stop": [\n'
        '            {"hooks": [{"type": "command", "command": "echo bye"}]}\n        ]\n    },\n'
        '    "alpha": [1,2,3]\n}'  # no trailing newline, odd key order and spacing
    ).encode()
    H.write_settings(home, None, original)
    os.chmod(H.settings_path(home), 0o640)
    H.assert_ok(maestro("install"))
    installed = H.settings_path(home).read_bytes()
    assert installed != original

    result = H.assert_ok(maestro("uninstall"))

    assert H.settings_path(home).read_bytes() == original
    assert H.mode(H.settings_path(home)) == 0o640
    backup = H.settings_path(home).with_name("settings.json.maestro-uninstall.bak")
    assert backup.read_bytes() == installed
    assert any("settings.json" in line for line in H.out_lines(result))
    assert not (home / ".maestro").exists()
    for key in H.BASE_KEYS:
        assert not H.key_path(home, key).exists(), key


def test_settings_absent_before_install_is_removed(maestro, home):
    H.assert_ok(maestro("install"))
    assert H.settings_path(home).is_file()

    result = H.assert_ok(maestro("uninstall"))

    assert not H.settings_path(home).exists()
    assert "[maestro] removed settings.json: it did not exist before maestro was installed" in H.out_lines(result)
    assert sorted(p.name for p in (home / ".claude").iterdir()) == ["settings.json.maestro-uninstall.bak"]


def test_settings_absent_before_but_user_added_keys_is_kept(maestro, home):
    H.assert_ok(maestro("install"))
    value = H.read_json(H.settings_path(home))
    value["theme"] = "dark"
    H.write_settings(home, value)

    H.assert_ok(maestro("uninstall"))

    assert H.read_json(H.settings_path(home)) == {"theme": "dark", "hooks": {}}


def test_user_changes_after_install_stay_and_maestro_entries_go(maestro, home):
    H.write_settings(home, {"theme": "dark", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo bye"}]}]}})
    H.assert_ok(maestro("install"))
    value = H.read_json(H.settings_path(home))
    value["model"] = "opus"
    value["hooks"]["PreToolUse"][0]["hooks"].append({"type": "command", "command": "echo mine"})
    value["hooks"]["Notification"] = [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]
    H.write_settings(home, value)

    result = H.assert_ok(maestro("uninstall"))

    assert "[maestro] removed maestro's hook entries from settings.json (other hooks kept)" in H.out_lines(result)
    assert H.read_json(H.settings_path(home)) == {
        "theme": "dark",
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "echo bye"}]}],
            "PreToolUse": [{"matcher": H.PRETOOL_MATCHER, "hooks": [{"type": "command", "command": "echo mine"}]}],
            "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
        },
        "model": "opus",
    }


def test_uninstall_strips_stale_interpreter_entries_too(maestro, home):
    H.write_settings(home, {"theme": "dark"})
    H.assert_ok(maestro("install"))
    raw = H.settings_path(home).read_text().replace(H.PYTHON, "/opt/old/bin/python3")
    H.settings_path(home).write_text(raw)

    H.assert_ok(maestro("uninstall"))

    assert H.read_json(H.settings_path(home)) == {"theme": "dark"}
    assert "maestro-managed" not in H.settings_path(home).read_text()


# --- manifest trust ---------------------------------------------------------------------------------

def test_no_manifest_keeps_files_but_strips_hooks(maestro, home, built_pyz):
    _installed(maestro, home, {"theme": "dark"})
    H.manifest_path(home).unlink()

    result = H.assert_ok(maestro("uninstall"))

    assert "[maestro] no ownership manifest — kept all installed files" in H.out_lines(result)
    for key in H.BASE_KEYS:
        assert H.key_path(home, key).read_bytes() == H.source_bytes(key, built_pyz), key
    assert H.maestro_entries(home, H.read_json(H.settings_path(home))) == []
    assert H.read_json(H.settings_path(home))["theme"] == "dark"


@pytest.mark.parametrize("raw", first_on_archive(  # one manifest check (testing/archive_cases.py)
    [b"{broken\n", b'{"version": 2, "files": {}}\n', b'{"version": 1, "files": {"hooks/maestro.pyz": "x"}}\n']))
def test_invalid_manifest_keeps_all_files(maestro, home, built_pyz, raw):
    _installed(maestro, home, {})
    H.manifest_path(home).write_bytes(raw)

    result = H.assert_ok(maestro("uninstall"))

    assert "[maestro] ownership manifest invalid — kept all installed files; deleting by name alone is not safe" in H.out_lines(result)
    for key in H.BASE_KEYS:
        assert H.key_path(home, key).read_bytes() == H.source_bytes(key, built_pyz), key
    assert H.manifest_path(home).read_bytes() == raw


def test_untrusted_manifest_keys_are_never_followed(maestro, home):
    _installed(maestro, home, {})
    outside = home / "precious.txt"
    outside.write_bytes(b"precious\n")
    (home / ".claude" / "notes.txt").write_bytes(b"precious\n")
    manifest = H.read_json(H.manifest_path(home))
    digest = H.sha256(b"precious\n")
    manifest["files"].update({"hooks/../../precious.txt": digest, "/etc/passwd": digest, "notes.txt": digest})
    H.manifest_path(home).write_bytes((json.dumps(manifest, indent=2) + "\n").encode())

    result = H.assert_ok(maestro("uninstall"))

    assert outside.read_bytes() == b"precious\n"
    assert (home / ".claude" / "notes.txt").read_bytes() == b"precious\n"
    assert "[maestro] kept untrusted manifest entry hooks/../../precious.txt" in H.out_lines(result)
    assert set(H.read_json(H.manifest_path(home))["files"]) == {"hooks/../../precious.txt", "/etc/passwd", "notes.txt"}
    for key in H.BASE_KEYS:
        assert not H.key_path(home, key).exists(), key


def test_symlink_at_owned_path_is_kept(maestro, home):
    _installed(maestro, home, {})
    rule = H.key_path(home, "rules/coding-discipline.md")
    copy = home / "copy.md"
    copy.write_bytes(rule.read_bytes())
    rule.unlink()
    rule.symlink_to(copy)

    result = H.assert_ok(maestro("uninstall"))

    assert rule.is_symlink() and copy.is_file()
    assert "[maestro] kept rules/coding-discipline.md — it is not a regular owned file" in H.out_lines(result)


def test_user_files_keep_their_directories(maestro, home):
    _installed(maestro, home, {})
    (home / ".claude" / "rules" / "mine.md").write_bytes(b"# mine\n")

    H.assert_ok(maestro("uninstall"))

    assert sorted(p.name for p in (home / ".claude" / "rules").iterdir()) == ["mine.md"]
    assert not (home / ".claude" / "hooks").exists()
    assert (home / ".claude").is_dir()


def test_second_uninstall_is_a_no_op(maestro, home):
    original = H.write_settings(home, {"theme": "dark"})
    _installed(maestro, home)
    H.assert_ok(maestro("uninstall"))
    before = H.snapshot(home)

    result = H.assert_ok(maestro("uninstall"))

    assert "[maestro] no ownership manifest — kept all installed files" in H.out_lines(result)
    assert H.snapshot(home) == before
    assert H.settings_path(home).read_bytes() == original


def test_codex_config_and_pins_are_left_alone(maestro, home):
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_bytes(b'model = "gpt-x"\n')
    (home / ".codex" / "maestro-impl-effort").write_bytes(b"high\n")
    _installed(maestro, home, {})
    config = (home / ".codex" / "config.toml").read_bytes()
    assert b'web_search = "disabled"' in config

    H.assert_ok(maestro("uninstall"))

    assert (home / ".codex" / "config.toml").read_bytes() == config
    assert (home / ".codex" / "maestro-impl-effort").read_bytes() == b"high\n"


@pytest.mark.parametrize("args", first_on_archive([["--force"], ["--with-workflow"], ["-y", "extra"]]))  # one option parser
def test_unknown_option_changes_nothing(maestro, home, args):
    _installed(maestro, home, {})
    before = H.snapshot(home)

    result = maestro("uninstall", *args)

    assert result.rc == 1
    assert f"[maestro] WARN: unknown option: {', '.join(args)}" in H.err_lines(result)
    assert "usage: maestro uninstall" in result.err
    assert H.snapshot(home) == before


def test_uninstall_help_changes_nothing(maestro, home):
    _installed(maestro, home, {})
    before = H.snapshot(home)
    result = maestro("uninstall", "--help")
    assert result.rc == 0 and "usage: maestro uninstall" in result.out
    assert H.snapshot(home) == before


def test_reinstall_after_uninstall_round_trips(maestro, home, built_pyz):
    original = H.write_settings(home, {"theme": "dark"})
    _installed(maestro, home, None, "--with-workflow")
    H.assert_ok(maestro("uninstall"))
    assert H.settings_path(home).read_bytes() == original

    _installed(maestro, home, None, "--with-workflow")

    for key in H.BASE_KEYS + H.WORKFLOW_KEYS:
        assert H.key_path(home, key).read_bytes() == H.source_bytes(key, built_pyz), key
    assert len(H.maestro_entries(home, H.read_json(H.settings_path(home)))) == len(H.VERBS)
    assert (home / ".maestro" / "ask-on-start").is_file()


def test_manifest_lock_relocks_when_the_lock_file_was_removed_while_waiting(home):
    """uninstall removes the lock file holding the lock; a waiter that wakes on the removed inode
    must lock the new file instead, or two writers would hold "the" lock at once."""
    import threading

    from maestro.install import manifest

    entered, held = [], manifest.locked(5.0)  # kept referenced: collecting it would release the lock
    with manifest.locked(1.0) as path:
        waiter = threading.Thread(target=lambda: entered.append(held.__enter__()))
        waiter.start()
        waiter.join(0.2)
        assert not entered  # blocked behind us
        os.unlink(path)  # what uninstall's drop_lock_file does, under the lock
    waiter.join(5)
    assert entered == [path] and os.path.exists(path)  # re-created and locked afresh
    import fcntl

    probe = os.open(path, os.O_RDWR)
    try:
        with pytest.raises(BlockingIOError):  # the live file is the one the waiter holds
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(probe)
        held.__exit__(None, None, None)


# --- what uninstall leaves behind, and --purge (issue 16 item 12) ------------------------------------

LEFT_BEHIND = "[maestro] left behind (remove what you no longer want):"
CODEX_CONFIG = b'model = "gpt-x"\nmodel_reasoning_effort = "high"\n'


def _installed_and_used(maestro, home):
    """An install that was used: a codex config with pins, pin files, a memory entry, a settings backup."""
    codex = home / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_bytes(CODEX_CONFIG)
    (codex / "maestro-impl-effort").write_bytes(b"high\n")
    _installed(maestro, home, {"theme": "dark"})
    H.assert_ok(maestro("memory", "add", "daily", "remember the launcher work"))
    assert (home / ".maestro" / "memory").is_dir()
    assert (home / ".claude" / "settings.json.maestro.bak").is_file()
    return (codex / "config.toml").read_bytes()


def _left(result):
    lines = H.out_lines(result)
    return lines[lines.index(LEFT_BEHIND) + 1:]


def test_uninstall_lists_what_it_leaves_and_how_to_remove_each(maestro, home):
    config = _installed_and_used(maestro, home)

    result = H.assert_ok(maestro("uninstall"))

    left = "\n".join(_left(result))
    maestro_dir, codex = home / ".maestro", home / ".codex"
    assert f"~/.maestro: maestro's state — the memory store ~/.maestro/memory (your notes)" in left
    assert f"rm -rf {maestro_dir}" in left
    assert f"rm {home / '.claude' / 'settings.json.maestro.bak'}" in left
    assert f"rm {home / '.claude' / 'settings.json.maestro-uninstall.bak'}" in left
    assert '~/.codex/config.toml: the `web_search = "disabled"` line install added' in left
    assert "the Codex pins model and model_reasoning_effort" in left
    assert f"rm {codex / 'maestro-impl-effort'} {codex / 'config.toml.maestro.bak'}" in left
    assert ".git/maestro-*" in left
    assert H.out_lines(result)[-1] == DONE
    # listing is all it does: the state and ~/.codex stay
    assert (maestro_dir / "memory").is_dir()
    assert (codex / "config.toml").read_bytes() == config and (codex / "maestro-impl-effort").is_file()


def test_purge_with_yes_removes_exactly_maestros_own_state(maestro, home):
    config = _installed_and_used(maestro, home)
    (home / "keep.txt").write_bytes(b"mine\n")
    before = H.snapshot(home)

    result = H.assert_ok(maestro("uninstall", "--purge", "--yes"))

    for path in (home / ".maestro", home / ".claude" / "settings.json.maestro.bak",
                 home / ".claude" / "settings.json.maestro-uninstall.bak"):
        assert not os.path.lexists(path), path
        assert f"[maestro] purged {'~/' + str(path.relative_to(home))}" in H.out_lines(result)
    assert (home / ".codex" / "config.toml").read_bytes() == config  # the user's Codex config: byte-identical
    after = H.snapshot(home)
    gone = {rel for rel in before if rel not in after}
    maestro_state = {rel for rel in before if rel == ".maestro" or rel.startswith(".maestro" + os.sep)}
    published = tuple(os.path.join(".claude", name) for name in ("hooks", "rules", "skills")) + (".local",)
    installed = {rel for rel in before if rel.startswith(published)}
    assert gone == maestro_state | installed | {os.path.join(".claude", "settings.json.maestro.bak")}
    for rel, entry in after.items():  # everything else is byte-identical (settings.json: its pre-install bytes)
        if rel != os.path.join(".claude", "settings.json"):
            assert before.get(rel) == entry, rel
    assert (home / "keep.txt").read_bytes() == b"mine\n"
    assert not any(line.startswith("[maestro]   ~/.maestro") for line in _left(result))


def test_purge_without_yes_and_without_a_terminal_refuses_and_removes_nothing(maestro, home):
    _installed_and_used(maestro, home)
    before = H.snapshot(home)

    result = maestro("uninstall", "--purge")

    assert result.rc == 3
    assert "stdin is not a terminal: add --yes to confirm (nothing was removed)" in result.err
    assert H.snapshot(home) == before


def test_yes_without_purge_is_refused(maestro, home):
    _installed(maestro, home, {})
    before = H.snapshot(home)
    result = maestro("uninstall", "--yes")
    assert result.rc == 1 and "--yes confirms --purge" in result.err
    assert H.snapshot(home) == before


class _Terminal:
    """stdin on a terminal, answering `answer`."""

    def __init__(self, answer):
        self.answer = answer

    def isatty(self):
        return True

    def readline(self):
        return self.answer


@pytest.mark.source_only
@pytest.mark.parametrize("answer, purged", [("y\n", True), ("yes\n", True), ("n\n", False), ("\n", False), ("", False)])
def test_purge_on_a_terminal_asks_first(maestro, home, monkeypatch, capsys, answer, purged):
    import sys

    from maestro.commands import uninstall

    _installed_and_used(maestro, home)
    before = H.snapshot(home)
    monkeypatch.setattr(sys, "stdin", _Terminal(answer))

    rc = uninstall.main(["--purge"])

    out = capsys.readouterr().out
    assert f"[maestro]   {home / '.maestro'} (maestro's state: the memory store, discussions, plans, logs, Codex job data)" in out
    assert "[maestro] delete them? [y/N] " in out
    if purged:
        assert rc == 0 and not (home / ".maestro").exists()
    else:
        assert rc == 1 and "[maestro] nothing was removed" in out
        assert H.snapshot(home) == before


def test_purge_never_follows_a_symlinked_maestro_dir_nor_an_outside_memory_store(maestro, home, tmp_path):
    real = tmp_path / "real-maestro"
    real.mkdir(mode=0o700)
    (real / "data").write_bytes(b"keep\n")
    shared = tmp_path / "shared-memory"
    _installed(maestro, home, {})
    H.assert_ok(maestro("memory", "add", "daily", "shared note", env={"MAESTRO_MEMORY_DIR": str(shared)}))
    (home / ".maestro").rename(tmp_path / "old-maestro")
    (home / ".maestro").symlink_to(real)

    result = H.assert_ok(maestro("uninstall", "--purge", "--yes", env={"MAESTRO_MEMORY_DIR": str(shared)}))

    assert os.readlink(home / ".maestro") == str(real) and (real / "data").read_bytes() == b"keep\n"
    assert shared.is_dir() and any(shared.rglob("*.md"))
    left = "\n".join(_left(result))
    assert "(a symlink or not yours: --purge leaves it)" in left
    assert f"the memory store {shared} (MAESTRO_MEMORY_DIR; another tool may share it, so --purge leaves it)" in left
