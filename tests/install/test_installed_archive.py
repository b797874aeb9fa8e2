"""The installed copy runs the maintenance verbs: `python3 ~/.claude/hooks/maestro.pyz uninstall|doctor|install`.

That archive is the only copy most users have, and uninstall deletes it while running from it (issue 17, item 10):
every module it needs must be loaded before anything goes, the archive last. These tests install (either target),
then run the INSTALLED archive as a real process, so they exercise a real zip import on both targets.
"""

import os
import subprocess
import sys

from testing import install as H
from testing.grants import flag_path, make_flag


def _run_installed(home, *args):
    """`python3 ~/.claude/hooks/maestro.pyz <args>` as the user runs it: a real process, the real archive."""
    env = dict(os.environ, HOME=str(home))
    proc = subprocess.run([sys.executable, str(H.installed_pyz(home)), *args], capture_output=True, env=env,
                          cwd=str(home), timeout=120)
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")


def test_uninstall_run_from_the_installed_archive_removes_everything(maestro, home):
    H.assert_ok(maestro("install"))
    grant = make_flag(home, "11111111-2222-3333-4444-555555555555")
    assert (home / ".maestro" / "ask-on-start").is_file()

    rc, out, err = _run_installed(home, "uninstall")

    assert (rc, err) == (0, ""), out + err
    assert "Traceback" not in out + err
    lines = out.splitlines()
    for key in H.BASE_KEYS:
        assert f"[maestro] removed {key}" in lines, key
        assert not H.key_path(home, key).exists(), key
    # the archive it ran from goes last: after the private state, right before the leftovers and the closing line
    archive_line = lines.index("[maestro] removed hooks/maestro.pyz")
    assert not any(line.startswith(("[maestro] removed", "[maestro] purged")) for line in lines[archive_line + 1:])
    assert lines[archive_line + 1] == "[maestro] left behind (remove what you no longer want):"
    assert lines[-1] == "[maestro] done. ~/.codex was left as it is: it holds your Codex config."
    assert "[maestro] removed ~/.maestro/ask-on-start" in lines
    assert "[maestro] removed the private direct-edit authorization markers" in lines
    assert not grant.exists() and not flag_path(home, "x").parent.exists()
    assert not (home / ".maestro").exists()  # ask-on-start, grants, manifest and its lock all gone
    assert not H.settings_path(home).exists()  # it did not exist before install
    assert sorted(p.name for p in (home / ".claude").iterdir()) == ["settings.json.maestro-uninstall.bak"]


def test_uninstall_from_the_installed_archive_restores_settings_bytes(maestro, home):
    original = b'{\n  "theme": "dark",\n  "n": 1.50\n}'
    H.write_settings(home, None, original)
    H.assert_ok(maestro("install"))

    rc, out, err = _run_installed(home, "uninstall")

    assert (rc, err) == (0, ""), out + err
    assert H.settings_path(home).read_bytes() == original
    assert not H.installed_pyz(home).exists()
    assert not (home / ".maestro").exists()


def test_uninstall_from_the_installed_archive_keeps_a_modified_archive(maestro, home):
    """Not removed last when it is not ours any more: kept and named, like any modified file."""
    H.assert_ok(maestro("install"))
    copy = home / "elsewhere.pyz"
    copy.write_bytes(H.installed_pyz(home).read_bytes())
    with open(H.installed_pyz(home), "ab") as handle:
        handle.write(b"\n")  # still a runnable zip (trailing bytes), but not the recorded bytes
    env = dict(os.environ, HOME=str(home))

    proc = subprocess.run([sys.executable, str(copy), "uninstall"], capture_output=True, env=env, timeout=120)

    assert proc.returncode == 0, proc.stderr
    assert b"[maestro] kept hooks/maestro.pyz" in proc.stdout
    assert H.installed_pyz(home).is_file()


def test_doctor_run_from_the_installed_archive(maestro, home):
    H.assert_ok(maestro("install"))

    rc, out, err = _run_installed(home, "doctor")

    assert "Traceback" not in out + err
    assert rc in (0, 1), out + err  # 1: the Codex companion is not installed here
    assert f"ok   archive: {H.installed_pyz(home)} matches the manifest" in out
    assert any(line.startswith("ok   archive code: compiled for the bytecode version of ") for line in out.splitlines())
    assert any(line.startswith("ok   hook gate: ") for line in out.splitlines())
    assert H.installed_pyz(home).is_file()


def test_install_run_from_the_installed_archive(maestro, home):
    H.assert_ok(maestro("install"))
    archive = H.installed_pyz(home).read_bytes()
    before = H.snapshot(home / ".claude")

    rc, out, err = _run_installed(home, "install")

    assert rc == 0, out + err
    assert "Traceback" not in out + err
    assert "[maestro] hooks/maestro.pyz, rules and skills already matched the installed bytes" in out.splitlines()
    assert H.snapshot(home / ".claude") == before

    rc, out, err = _run_installed(home, "install", "--with-workflow")  # the payload read from the installed copy

    assert rc == 0, out + err
    assert H.installed_pyz(home).read_bytes() == archive
    for key in H.WORKFLOW_KEYS:
        assert H.key_path(home, key).is_file(), key
    rc, out, err = _run_installed(home, "uninstall")
    assert (rc, err) == (0, ""), out + err
    assert not (home / ".claude" / "hooks").exists()
