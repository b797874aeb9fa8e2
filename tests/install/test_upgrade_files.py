"""Installing a newer maestro over an older one (issue 16 item 3): what happens to each published file.

Unmodified files are replaced; a rule or skill the user edited is kept and the new version written beside it as
`<name>.maestro-new` (recorded, so uninstall removes it; replaced or removed by the next install), and install
exits 0; a file maestro never installed, a changed `.maestro-new` or a changed archive is refused (nothing
changes); `--force` replaces after a private backup; a symlink is never followed. The last test upgrades from
the previous release's real archive.
"""

import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from testing import install as H
from testing.paths import ROOT

RULE = "rules/coding-discipline.md"
SKILL = "skills/plan-authoring/SKILL.md"
USER_EDIT = b"# my coding discipline, edited\n"
FORCE_HINT = "`maestro install --force`"


def _new_copy(home, key=RULE) -> Path:
    return H.key_path(home, key + ".maestro-new")


def _files(home) -> dict:
    return H.read_json(H.manifest_path(home))["files"]


def _pretend_older(home, key, data: bytes) -> None:
    """What an older maestro leaves: other bytes at `key`, recorded as its own in the manifest."""
    H.key_path(home, key).write_bytes(data)
    record = H.read_json(H.manifest_path(home))
    record["files"][key] = H.sha256(data)
    H.manifest_path(home).write_text(json.dumps(record, indent=2) + "\n")


def _installed_with_an_edit(maestro, home, key=RULE):
    H.write_settings(home, {})
    H.assert_ok(maestro("install"))
    installed = H.key_path(home, key).read_bytes()
    H.key_path(home, key).write_bytes(USER_EDIT)
    return installed


def _backups(home):
    root = home / ".maestro" / "backups"
    return sorted(root.iterdir()) if root.is_dir() else []


def test_unmodified_files_of_an_older_install_are_replaced_silently(maestro, home, built_pyz):
    H.write_settings(home, {})
    H.assert_ok(maestro("install"))
    _pretend_older(home, RULE, b"# coding discipline, the older release\n")
    _pretend_older(home, SKILL, b"# plan authoring, the older release\n")

    result = H.assert_ok(maestro("install"))

    for key in H.BASE_KEYS:
        assert H.key_path(home, key).read_bytes() == H.source_bytes(key, built_pyz), key
        assert _files(home)[key] == H.sha256(H.source_bytes(key, built_pyz)), key
        assert not _new_copy(home, key).exists()
    assert f"[maestro] published 2 changed files into {home / '.claude'}" in H.out_lines(result)
    assert not any(".maestro-new" in line or "kept" in line for line in H.out_lines(result) + H.err_lines(result))


def test_an_edited_rule_is_kept_and_the_new_version_lands_beside_it(maestro, home, built_pyz):
    installed = _installed_with_an_edit(maestro, home)
    rule, new_copy = H.key_path(home, RULE), _new_copy(home)

    result = H.assert_ok(maestro("install"))  # exit 0: everything else upgraded, the edit is the user's

    assert rule.read_bytes() == USER_EDIT
    assert new_copy.read_bytes() == H.source_bytes(RULE, built_pyz)
    assert H.mode(new_copy) == 0o644
    # Claude Code loads *.md rules only: the new copy must not become a second, conflicting rule
    assert not new_copy.name.endswith(".md")
    assert sorted(p.name for p in rule.parent.glob("*.md")) == ["coding-discipline.md", "orchestrator-implementer.md"]
    files = _files(home)
    assert files[RULE] == H.sha256(installed)  # still not maestro's bytes: the next install keeps it again
    assert files[RULE + ".maestro-new"] == H.sha256(new_copy.read_bytes())
    kept = [line for line in H.err_lines(result) if line.startswith(f"[maestro] WARN: kept {rule}")]
    assert kept == [f"[maestro] WARN: kept {rule}: it changed after install. The new version is beside it: "
                    f"{new_copy} — merge by hand (diff {rule} {new_copy}), or replace yours with {FORCE_HINT} "
                    "(backed up first)"]
    assert H.out_lines(result)[-1] == "[maestro] done. Restart Claude Code so the rules and hooks load."

    # uninstall removes the new copy (recorded) and keeps the edit (not maestro's bytes)
    H.assert_ok(maestro("uninstall"))
    assert not new_copy.exists()
    assert rule.read_bytes() == USER_EDIT


def test_the_next_install_keeps_an_identical_new_copy_and_replaces_an_older_one(maestro, home, built_pyz):
    _installed_with_an_edit(maestro, home)
    H.assert_ok(maestro("install"))
    new_copy = _new_copy(home)
    identity = (os.stat(new_copy).st_ino, os.stat(new_copy).st_mtime_ns)

    again = H.assert_ok(maestro("install"))
    assert (os.stat(new_copy).st_ino, os.stat(new_copy).st_mtime_ns) == identity
    assert any(line.startswith(f"[maestro] WARN: kept {H.key_path(home, RULE)}") for line in H.err_lines(again))

    _pretend_older(home, RULE + ".maestro-new", b"# the copy an older upgrade left\n")
    H.assert_ok(maestro("install"))
    assert new_copy.read_bytes() == H.source_bytes(RULE, built_pyz)
    assert H.key_path(home, RULE).read_bytes() == USER_EDIT


def test_once_merged_the_new_copy_is_removed_and_forgotten(maestro, home):
    _installed_with_an_edit(maestro, home)
    H.assert_ok(maestro("install"))
    new_copy = _new_copy(home)
    shutil.copyfile(new_copy, H.key_path(home, RULE))  # the user took maestro's version

    result = H.assert_ok(maestro("install"))

    assert not new_copy.exists()
    assert RULE + ".maestro-new" not in _files(home)
    assert f"[maestro] removed {new_copy}: the file beside it is maestro's again" in H.out_lines(result)
    assert "kept" not in result.err


def test_a_new_copy_the_user_changed_is_refused_and_nothing_changes(maestro, home):
    _installed_with_an_edit(maestro, home)
    H.assert_ok(maestro("install"))
    new_copy = _new_copy(home)
    new_copy.write_bytes(b"half-merged by the user\n")
    before = H.snapshot(home)

    result = maestro("install")

    assert result.rc == 1
    assert (f"[maestro] WARN: refusing to overwrite {new_copy}: it is not the copy install wrote there"
            in H.err_lines(result))
    assert FORCE_HINT in H.err_lines(result)[-1]
    assert H.snapshot(home) == before


@pytest.mark.parametrize("force", [False, True])
def test_a_symlink_planted_at_the_new_copy_is_never_followed(maestro, home, outside_tmp, force):
    _installed_with_an_edit(maestro, home)
    victim = outside_tmp / "victim.md"
    victim.write_bytes(b"not yours\n")
    _new_copy(home).symlink_to(victim)
    before = H.snapshot(home)

    result = maestro("install", *(["--force"] if force else []))

    assert victim.read_bytes() == b"not yours\n"
    assert os.readlink(_new_copy(home)) == str(victim)
    if force:  # the edited rule is replaced after its backup; the planted link is left alone
        H.assert_ok(result)
        assert H.key_path(home, RULE).read_bytes() != USER_EDIT
    else:
        assert result.rc == 1
        assert f"[maestro] WARN: managed destination is a symlink; refusing to replace it: {_new_copy(home)}" in H.err_lines(result)
        assert "not even with --force" in H.err_lines(result)[-1]
        assert H.snapshot(home) == before


def test_force_backs_up_the_edit_privately_then_replaces_it(maestro, home, built_pyz):
    _installed_with_an_edit(maestro, home)
    H.assert_ok(maestro("install"))  # leaves a .maestro-new that --force makes unnecessary
    rule = H.key_path(home, RULE)

    result = H.assert_ok(maestro("install", "--force"))

    assert rule.read_bytes() == H.source_bytes(RULE, built_pyz)
    assert _files(home)[RULE] == H.sha256(rule.read_bytes())
    assert not _new_copy(home).exists() and RULE + ".maestro-new" not in _files(home)
    [directory] = _backups(home)
    saved = directory / "rules" / "coding-discipline.md"
    assert saved.read_bytes() == USER_EDIT
    assert H.mode(saved) == 0o600
    for private in (home / ".maestro" / "backups", directory, directory / "rules"):
        assert H.mode(private) == 0o700, private
    assert f"[maestro] replaced {rule} (--force); the version it replaced is backed up at {saved}" in H.out_lines(result)

    # a second forced replacement gets its own directory: the older backup is never overwritten
    rule.write_bytes(b"edited again\n")
    H.assert_ok(maestro("install", "--force"))
    assert len(_backups(home)) == 2
    assert saved.read_bytes() == USER_EDIT
    assert {p.read_bytes() for p in (home / ".maestro" / "backups").glob("*/rules/coding-discipline.md")} == {
        USER_EDIT, b"edited again\n"}

    # uninstall leaves the backups: they are the user's bytes
    H.assert_ok(maestro("uninstall"))
    assert saved.read_bytes() == USER_EDIT


def test_a_foreign_file_is_refused_and_force_adopts_it_after_a_backup(maestro, home, built_pyz):
    H.write_settings(home, {})
    foreign = H.key_path(home, SKILL)
    foreign.parent.mkdir(parents=True)
    foreign.write_bytes(b"someone else's skill\n")

    refused = maestro("install")
    assert refused.rc == 1
    assert f"[maestro] WARN: refusing to overwrite a file maestro did not install: {foreign}" in H.err_lines(refused)
    assert not _new_copy(home, SKILL).exists()

    H.assert_ok(maestro("install", "--force"))
    assert foreign.read_bytes() == H.source_bytes(SKILL, built_pyz)
    assert [p.read_bytes() for p in (home / ".maestro" / "backups").glob("*/skills/plan-authoring/SKILL.md")] == [
        b"someone else's skill\n"]
    assert _files(home)[SKILL] == H.sha256(foreign.read_bytes())


def test_a_changed_archive_is_refused_and_force_replaces_it(maestro, home, built_pyz):
    H.write_settings(home, {})
    H.assert_ok(maestro("install"))
    pyz = H.installed_pyz(home)
    pyz.write_bytes(b"not the archive install wrote\n")
    before = H.snapshot(home)

    refused = maestro("install")
    assert refused.rc == 1
    assert (f"[maestro] WARN: refusing to replace the installed archive: it changed after install: {pyz}"
            in H.err_lines(refused))
    assert H.snapshot(home) == before
    assert not _new_copy(home, "hooks/maestro.pyz").exists()

    H.assert_ok(maestro("install", "--force"))
    assert pyz.read_bytes() == Path(built_pyz).read_bytes() and H.mode(pyz) == 0o755


def test_force_refuses_a_symlinked_backup_directory_and_changes_nothing(maestro, home, outside_tmp):
    _installed_with_an_edit(maestro, home)
    (home / ".maestro" / "backups").symlink_to(outside_tmp)
    before = H.snapshot(home)

    result = maestro("install", "--force")

    assert result.rc == 1
    assert "backup directory is a symlink" in result.err
    assert H.snapshot(home) == before
    assert list(outside_tmp.iterdir()) == []


@pytest.mark.source_only
def test_backup_directories_never_reuse_a_name_nor_follow_one(home, outside_tmp):
    from maestro.install import backup

    moment = 1_800_000_000.0
    first = backup.new_directory(moment)
    Path(first + "-1").symlink_to(outside_tmp)  # planted where the next one would go
    second = backup.new_directory(moment)

    assert os.path.basename(first) == "install-20270115T080000Z"
    assert second == first + "-2"
    assert stat.S_ISDIR(os.lstat(second).st_mode) and H.mode(Path(second)) == 0o700
    backup.save(second, RULE, b"x")
    with pytest.raises(FileExistsError):
        backup.save(second, RULE, b"y")  # exclusive: an existing backup file is never overwritten
    assert Path(second, RULE).read_bytes() == b"x"
    assert list(outside_tmp.iterdir()) == []


# --- the upgrade from the previous release's archive --------------------------------------------------------

PREVIOUS_RELEASE = "5f4e3ff"  # the last commit before the upgrade path: what an existing user upgrades from


@pytest.fixture(scope="session")
def previous_release_pyz(tmp_path_factory):
    """The archive the previous release builds: its tree from git, built by its own build.py."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed: the previous release cannot be built")
    probe = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{PREVIOUS_RELEASE}^{{commit}}"],
                           capture_output=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"commit {PREVIOUS_RELEASE} (the previous release) is not in this checkout's git history "
                    "(a shallow clone or a source tarball): the upgrade from it cannot be tested here")
    tree = tmp_path_factory.mktemp("previous-release")
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", PREVIOUS_RELEASE],
                         capture_output=True, check=True, timeout=120)
    with tarfile.open(fileobj=io.BytesIO(tar.stdout)) as archive:
        archive.extractall(tree, filter="data")
    built = tree / "dist" / "maestro.pyz"
    subprocess.run([sys.executable, str(tree / "build.py"), "--output", str(built)], cwd=tree, check=True,
                   capture_output=True, timeout=300)
    return built


def test_upgrade_from_the_previous_release_keeps_the_edit_and_upgrades_the_rest(
        maestro, home, built_pyz, previous_release_pyz):
    H.write_settings(home, {"theme": "dark"})
    old = subprocess.run([sys.executable, "-I", "-S", str(previous_release_pyz), "install"], capture_output=True,
                         cwd=home, timeout=120)
    assert old.returncode == 0, old.stderr.decode()
    old_rule = H.key_path(home, RULE).read_bytes()
    H.key_path(home, RULE).write_bytes(USER_EDIT)

    result = H.assert_ok(maestro("install"))

    assert H.key_path(home, RULE).read_bytes() == USER_EDIT
    assert _new_copy(home).read_bytes() == H.source_bytes(RULE, built_pyz)
    for key in H.BASE_KEYS:
        if key != RULE:
            assert H.key_path(home, key).read_bytes() == H.source_bytes(key, built_pyz), key
    assert any(line.startswith(f"[maestro] WARN: kept {H.key_path(home, RULE)}") for line in H.err_lines(result))
    expected = {key: H.sha256(H.source_bytes(key, built_pyz)) for key in H.BASE_KEYS}
    expected[RULE] = H.sha256(old_rule)
    expected[RULE + ".maestro-new"] = H.sha256(H.source_bytes(RULE, built_pyz))
    assert _files(home) == expected
    settings = H.read_json(H.settings_path(home))
    assert settings["theme"] == "dark"
    assert sorted(hook["command"] for _, _, hook in H.maestro_entries(home, settings)) == sorted(
        H.managed_command(home, verb) for _, verb, _ in H.VERBS)
    assert len(H.marked_commands(settings)) == len(H.VERBS)

    forced = H.assert_ok(maestro("install", "--force"))
    assert H.key_path(home, RULE).read_bytes() == H.source_bytes(RULE, built_pyz)
    assert not _new_copy(home).exists()
    assert [p.read_bytes() for p in (home / ".maestro" / "backups").glob("*/" + RULE)] == [USER_EDIT]
    assert any(line.startswith(f"[maestro] replaced {H.key_path(home, RULE)} (--force)") for line in H.out_lines(forced))


@pytest.mark.source_only
@pytest.mark.parametrize("force", [False, True])
def test_a_late_failure_rolls_back_the_new_copy_and_the_backup(maestro, home, monkeypatch, force):
    from maestro.util import atomic

    _installed_with_an_edit(maestro, home)
    H.write_settings(home, {"theme": "dark"})  # the hooks to register again: settings.json is the last write
    before = H.snapshot(home, dirs=False)
    real, failed = atomic.write_atomic, []

    def failing_settings(path, data, mode=0o600, durable=True):
        if os.path.basename(path) == "settings.json" and not failed:
            failed.append(path)
            raise OSError(28, "injected failure", path)
        return real(path, data, mode, durable)

    monkeypatch.setattr(atomic, "write_atomic", failing_settings)
    result = maestro("install", *(["--force"] if force else []))

    assert failed and result.rc == 1
    assert "installation failed; rolled back" in result.err and "rollback incomplete" not in result.err
    assert H.key_path(home, RULE).read_bytes() == USER_EDIT
    assert not _new_copy(home).exists()
    assert _backups(home) == []
    assert H.snapshot(home, dirs=False) == before
