"""Re-installing over an older maestro (matcher `Edit|Write|MultiEdit`, the fail-open command shape)
upgrades its entries in place; uninstall after the upgrade still restores settings.json byte for byte."""

import json

import pytest
from testing import install as H

FOREIGN_EDIT = {"type": "command", "command": "echo my-edit-hook"}
FOREIGN_START = {"type": "command", "command": "echo hi"}
TIMEOUTS = {verb: timeout for _, verb, timeout in H.VERBS}


def _legacy(home, verb, python=H.PYTHON):
    return {"type": "command", "command": H.legacy_command(home, verb, python), "timeout": TIMEOUTS[verb]}


def _fresh(home, verb):
    return {"type": "command", "command": H.managed_command(home, verb), "timeout": TIMEOUTS[verb]}


def _older_maestro_install(maestro, home, original: dict, older: dict) -> bytes:
    """`original` = settings.json before maestro ever ran; `older` = what the older maestro left.
    The first install records the pre-install snapshot exactly as the older maestro's did."""
    original_raw = H.write_settings(home, original)
    H.assert_ok(maestro("install"))
    H.write_settings(home, older)
    return original_raw


def test_older_install_alone_in_its_block_is_retargeted_in_place(maestro, home):
    original = {"theme": "dark"}
    older = {"theme": "dark", "hooks": {
        "PreToolUse": [{"matcher": H.OLD_PRETOOL_MATCHER, "hooks": [_legacy(home, "gate")]}],
        "UserPromptSubmit": [{"hooks": [_legacy(home, "inject")]}],
        "SessionStart": [{"hooks": [_legacy(home, "session-start")]}],
        "Stop": [{"hooks": [_legacy(home, "stop")]}],
    }}
    original_raw = _older_maestro_install(maestro, home, original, older)

    result = H.assert_ok(maestro("install"))

    assert "[maestro] registered 4 maestro hook entries in settings.json" in H.out_lines(result)
    assert H.read_json(H.settings_path(home))["hooks"] == {
        "PreToolUse": [{"matcher": H.PRETOOL_MATCHER, "hooks": [_fresh(home, "gate")]}],
        "UserPromptSubmit": [{"hooks": [_fresh(home, "inject")]}],
        "SessionStart": [{"hooks": [_fresh(home, "session-start")]}],
        "Stop": [{"hooks": [_fresh(home, "stop")]}],
    }
    again = H.assert_ok(maestro("install"))
    assert "[maestro] settings.json already had every maestro hook entry" in H.out_lines(again)

    out = H.assert_ok(maestro("uninstall"))
    assert "[maestro] restored settings.json to its exact pre-install bytes" in H.out_lines(out)
    assert H.settings_path(home).read_bytes() == original_raw


def test_foreign_hooks_sharing_the_old_block_keep_their_matcher(maestro, home):
    original = {"hooks": {"PreToolUse": [{"matcher": H.OLD_PRETOOL_MATCHER, "hooks": [FOREIGN_EDIT]}],
                          "SessionStart": [{"hooks": [FOREIGN_START]}]}}
    older = {"hooks": {
        "PreToolUse": [{"matcher": H.OLD_PRETOOL_MATCHER, "hooks": [FOREIGN_EDIT, _legacy(home, "gate")]}],
        "SessionStart": [{"hooks": [FOREIGN_START, _legacy(home, "session-start")]}],
        "UserPromptSubmit": [{"hooks": [_legacy(home, "inject")]}],
        "Stop": [{"hooks": [_legacy(home, "stop")]}],
    }}
    original_raw = _older_maestro_install(maestro, home, original, older)

    H.assert_ok(maestro("install"))

    hooks = H.read_json(H.settings_path(home))["hooks"]
    assert hooks["PreToolUse"] == [{"matcher": H.OLD_PRETOOL_MATCHER, "hooks": [FOREIGN_EDIT]},
                                   {"matcher": H.PRETOOL_MATCHER, "hooks": [_fresh(home, "gate")]}]
    assert hooks["SessionStart"] == [{"hooks": [FOREIGN_START, _fresh(home, "session-start")]}]
    assert H.legacy_command(home, "gate") not in H.settings_path(home).read_text()

    H.assert_ok(maestro("uninstall"))
    assert H.settings_path(home).read_bytes() == original_raw


def test_the_moved_gate_joins_an_existing_block_with_the_new_matcher(maestro, home):
    foreign_new = {"type": "command", "command": "echo already-on-the-new-matcher"}
    original = {"hooks": {"PreToolUse": [{"matcher": H.OLD_PRETOOL_MATCHER, "hooks": [FOREIGN_EDIT]},
                                         {"matcher": H.PRETOOL_MATCHER, "hooks": [foreign_new]}]}}
    older = json.loads(json.dumps(original))
    older["hooks"]["PreToolUse"][0]["hooks"].append(_legacy(home, "gate", "/opt/old/bin/python3"))
    original_raw = _older_maestro_install(maestro, home, original, older)

    H.assert_ok(maestro("install"))

    pre = H.read_json(H.settings_path(home))["hooks"]["PreToolUse"]
    assert pre == [{"matcher": H.OLD_PRETOOL_MATCHER, "hooks": [FOREIGN_EDIT]},
                   {"matcher": H.PRETOOL_MATCHER, "hooks": [foreign_new, _fresh(home, "gate")]}]
    H.assert_ok(maestro("uninstall"))
    assert H.settings_path(home).read_bytes() == original_raw


@pytest.mark.parametrize("matcher", ["Edit|Write", "Edit", "*", ""])
def test_a_gate_under_any_other_matcher_is_brought_to_the_gated_tools(maestro, home, matcher):
    H.write_settings(home, {})
    H.assert_ok(maestro("install"))
    value = H.read_json(H.settings_path(home))
    value["hooks"]["PreToolUse"][0]["matcher"] = matcher
    H.write_settings(home, value)

    result = H.assert_ok(maestro("install"))

    assert "[maestro] registered 1 maestro hook entry in settings.json" in H.out_lines(result)
    assert H.read_json(H.settings_path(home))["hooks"]["PreToolUse"] == [
        {"matcher": H.PRETOOL_MATCHER, "hooks": [_fresh(home, "gate")]}]


def test_an_entry_moved_to_another_event_comes_back_and_leaves_nothing_behind(maestro, home):
    original = {"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [FOREIGN_EDIT]}]}}
    original_raw = H.write_settings(home, original)
    H.assert_ok(maestro("install"))
    value = H.read_json(H.settings_path(home))
    gate = value["hooks"].pop("PreToolUse")[0]["hooks"][0]
    value["hooks"]["PostToolUse"][0]["hooks"].append(gate)  # beside a foreign hook
    value["hooks"]["Notification"] = [{"hooks": [dict(gate)]}]  # alone: its block and event go
    H.write_settings(home, value)

    H.assert_ok(maestro("install"))

    hooks = H.read_json(H.settings_path(home))["hooks"]
    assert hooks["PostToolUse"] == [{"matcher": "Bash", "hooks": [FOREIGN_EDIT]}]
    assert "Notification" not in hooks
    assert hooks["PreToolUse"] == [{"matcher": H.PRETOOL_MATCHER, "hooks": [_fresh(home, "gate")]}]
    H.assert_ok(maestro("uninstall"))
    assert H.settings_path(home).read_bytes() == original_raw


def test_uninstall_of_an_older_install_that_was_never_upgraded_restores_bytes(maestro, home):
    original = {"hooks": {"PreToolUse": [{"matcher": H.OLD_PRETOOL_MATCHER, "hooks": [FOREIGN_EDIT]}]}}
    older = {"hooks": {
        "PreToolUse": [{"matcher": H.OLD_PRETOOL_MATCHER, "hooks": [FOREIGN_EDIT, _legacy(home, "gate")]}],
        "UserPromptSubmit": [{"hooks": [_legacy(home, "inject")]}],
        "SessionStart": [{"hooks": [_legacy(home, "session-start")]}],
        "Stop": [{"hooks": [_legacy(home, "stop")]}],
    }}
    original_raw = _older_maestro_install(maestro, home, original, older)

    H.assert_ok(maestro("uninstall"))

    assert H.settings_path(home).read_bytes() == original_raw


def test_foreign_look_alikes_of_the_new_shape_are_never_touched(maestro, home):
    pyz = str(H.installed_pyz(home))
    ours = H.managed_command(home, "gate")
    foreign = [
        ours.replace(H.PYTHON, "python3"),  # relative interpreter
        ours.replace(pyz, "/tmp/elsewhere/maestro.pyz"),  # another archive
        ours.replace("exit 2; }", "exit 0; }"),  # fails open
        ours.replace(f"[ -x {H.PYTHON} ] && ", ""),  # no interpreter guard
        ours.replace(" gate || ", " gate --verbose || "),  # extra argument
        ours.replace("maestro-managed:gate", "maestro-managed:inject"),  # marker names another verb
        ours + " ",  # anything after the marker
    ]
    original = H.write_settings(home, {"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": c} for c in foreign]}]}})

    H.assert_ok(maestro("install"))

    commands = [c for _, _, _, c in H.all_commands(H.read_json(H.settings_path(home)))]
    for command in foreign:
        assert commands.count(command) == 1, command
    assert commands.count(ours) == 1
    H.assert_ok(maestro("uninstall"))
    assert H.settings_path(home).read_bytes() == original


@pytest.mark.parametrize("raw", [b'{"theme": NaN}\n', b'{"a": Infinity}\n', b'{"a": -Infinity}\n'])
def test_settings_json_that_claude_code_cannot_parse_is_refused(maestro, home, raw):
    """Python's json takes NaN/Infinity; Claude Code's JSON.parse does not (and then loads no hook)."""
    H.write_settings(home, None, raw)
    before = H.snapshot(home)

    result = maestro("install")

    assert result.rc == 1 and "settings.json is not valid JSON" in result.err
    assert H.snapshot(home) == before


@pytest.mark.in_process
def test_recognising_commands_never_raises_on_hostile_text(home):
    """Seeded fuzz: mutations of maestro's own commands are either exactly ours or foreign — no exception."""
    import random

    from maestro.install import settings

    rng = random.Random(14)
    seeds = [H.managed_command(home, verb) for _, verb, _ in H.VERBS] + [H.legacy_command(home, "gate")]
    alphabet = "'\"\\ $(){}[];|&#\n\0-ISx/~"
    for _ in range(3000):
        text = list(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            position = rng.randrange(len(text) + 1)
            if rng.random() < 0.5 and text:
                del text[min(position, len(text) - 1)]
            else:
                text.insert(position, rng.choice(alphabet))
        command = "".join(text)
        hook = {"type": "command", "command": command}
        verb = settings.managed_verb(hook)
        if verb:  # still exactly one of our shapes (a mutated interpreter path is another interpreter)
            _verb, python, current = settings.parse_managed(hook)
            assert (H.managed_command if current else H.legacy_command)(home, verb, python) == command
    assert settings.managed_verb({"type": "command", "command": None}) == ""
    assert settings.managed_verb(["not", "a", "hook"]) == ""
