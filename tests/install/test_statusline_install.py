"""`install --statusline` (issue 12 §2): maestro's statusLine is registered only where the user has none, never
replaces theirs, is kept current by a later install, and uninstall removes exactly it — settings.json then comes back
byte for byte. The registered command really prints the status line."""

import json
import subprocess

from testing import install as H

from maestro.install import statusline

USER_STATUSLINE = {"type": "command", "command": "~/.claude/my-status.sh", "padding": 1}


def settings(home):
    return json.loads(H.settings_path(home).read_text())


def test_registered_when_there_is_none_and_removed_exactly_by_uninstall(maestro, home):
    original = b'{\n  "theme": "dark"\n}\n'
    H.write_settings(home, None, original)
    result = maestro("install", "--statusline")
    H.assert_ok(result)
    assert "registered the maestro statusLine in settings.json" in result.out
    value = settings(home)["statusLine"]
    pyz = str(H.installed_pyz(home))
    assert value == {"type": "command", "command": statusline.command(H.PYTHON, pyz), "padding": 0}
    assert value["command"].endswith(" # maestro-managed:statusline")
    H.assert_ok(maestro("install"))  # a later plain install keeps it
    assert settings(home)["statusLine"] == value
    H.assert_ok(maestro("uninstall"))
    assert H.settings_path(home).read_bytes() == original


def test_the_users_own_statusline_is_never_replaced_nor_removed(maestro, home):
    original = json.dumps({"statusLine": USER_STATUSLINE}, indent=2).encode() + b"\n"
    H.write_settings(home, None, original)
    result = maestro("install", "--statusline")
    H.assert_ok(result)
    assert "kept your own statusLine in settings.json; maestro's was not registered" in result.out + result.err
    assert settings(home)["statusLine"] == USER_STATUSLINE
    H.assert_ok(maestro("uninstall"))
    assert H.settings_path(home).read_bytes() == original


def test_a_statusline_added_by_a_later_install_goes_with_uninstall(maestro, home):
    H.assert_ok(maestro("install"))  # first install: no statusline, settings.json did not exist
    assert "statusLine" not in settings(home)
    H.assert_ok(maestro("install", "--statusline"))
    assert statusline.is_ours(settings(home)["statusLine"])
    H.assert_ok(maestro("uninstall"))
    assert not H.settings_path(home).exists()


def test_a_hand_edited_lookalike_is_the_users(maestro, home):
    H.assert_ok(maestro("install", "--statusline"))
    data = settings(home)
    data["statusLine"]["padding"] = 2  # the user tuned it: it is theirs now
    H.settings_path(home).write_text(json.dumps(data))
    H.assert_ok(maestro("uninstall"))
    assert settings(home)["statusLine"]["padding"] == 2


def test_the_registered_command_prints_one_line(maestro, home, tmp_path):
    H.assert_ok(maestro("install", "--statusline"))
    command = settings(home)["statusLine"]["command"]
    payload = json.dumps({"session_id": "s1", "workspace": {"current_dir": str(tmp_path)}})
    done = subprocess.run(["sh", "-c", command], input=payload, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout == "maestro: no git repository\n", done.stderr
    H.installed_pyz(home).unlink()  # broken install: the bar still reads sensibly
    done = subprocess.run(["sh", "-c", command], input=payload, capture_output=True, text=True, timeout=30)
    assert done.stdout == f"{statusline.BROKEN}\n"
