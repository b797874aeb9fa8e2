"""doctor knows the tested companion range (issue 12 §1.7): a plugin version outside 1.0.5–1.0.6 is a warning that
names the version found; inside it, or unknown (an override with no plugin.json), the check stays ok."""

import json

import pytest

from maestro.codex.discovery import Companion, outside_tested_range, plugin_version

HELP = "print('usage: codex-companion task [--background] [--write] [--model M] [--effort E] prompt')\n"


def companion_check(maestro, tmp_path, version):
    root = tmp_path / "plugin"
    (root / "scripts").mkdir(parents=True)
    script = root / "scripts" / "companion.py"
    script.write_text(HELP)
    if version is not None:
        (root / ".claude-plugin").mkdir()
        (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "codex", "version": version}))
    result = maestro("doctor", "--json", env={"MAESTRO_COMPANION": str(script)})
    return {c["name"]: c for c in json.loads(result.out)["checks"]}["companion"]


@pytest.mark.parametrize("version", ["1.0.7", "1.0.4", "2.0.0"])
def test_a_version_outside_the_tested_range_warns_and_names_it(maestro, tmp_path, version):
    check = companion_check(maestro, tmp_path, version)
    assert check["status"] == "warn"
    assert f"plugin version {version} found, outside the tested range 1.0.5–1.0.6" in check["detail"]


@pytest.mark.parametrize("version, shown", [("1.0.5", "1.0.5"), ("1.0.6", "1.0.6"), (None, "unknown")])
def test_a_tested_or_unknown_version_is_ok(maestro, tmp_path, version, shown):
    check = companion_check(maestro, tmp_path, version)
    assert check["status"] == "ok" and f"plugin version {shown} (tested: 1.0.5–1.0.6)" in check["detail"]


def test_the_plugin_json_wins_over_the_cache_directory_name(tmp_path):
    root = tmp_path / "1.0.5"
    (root / "scripts").mkdir(parents=True)
    found = Companion(str(root / "scripts" / "codex-companion.mjs"), "1.0.5", "plugin cache")
    assert plugin_version(found) == "1.0.5"  # no plugin.json: the directory's name
    (root / ".claude-plugin").mkdir()
    cases = (('{"version": "1.0.8"}', "1.0.8"), ("[1]", "1.0.5"), ('{"version": "\\u001b[2J"}', "1.0.5"))
    for manifest, expected in cases:
        (root / ".claude-plugin" / "plugin.json").write_text(manifest)
        assert plugin_version(found) == expected
    assert not outside_tested_range("") and outside_tested_range("1.0.6-rc1") is False
    assert outside_tested_range("1.0.5-rc1")
