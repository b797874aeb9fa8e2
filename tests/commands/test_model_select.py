"""model-select: the original selector's scenarios t1–t13 (t5 lives in test_model_select_race.py)
plus --show / --pin / --scout / --scout-pin / --ask-on-start, refusals, modes, backup, rollback."""

import fcntl
import os
import stat
import subprocess
import sys
import tomllib

import pytest
from testing import PYZ, ROOT, TARGET

from maestro.messages import PIN_MODELS

IMPL_MAX_REJECTED = (
    "SELECT_ERROR: implementation effort 'max' cannot be expressed per write job (the companion accepts "
    "none|minimal|low|medium|high|xhigh); max/ultra are usable only when the top-level debate effort is the "
    "same value, currently 'high'\n"
)
OLD_CONFIG = 'model = "old-model"\nmodel_reasoning_effort = "medium"\n'


@pytest.fixture
def codex(home):
    path = home / ".codex"
    path.mkdir()
    return path


def write(path, text, mode=0o600):
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    path.chmod(mode)
    return path


def mode_of(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def snapshot(codex):
    return {p.name: p.read_bytes() for p in sorted(codex.iterdir()) if p.is_file() and not p.name.endswith(".flock")}


def show_lines(maestro):
    result = maestro("model-select", "--show")
    assert result.rc == 0, result.err
    return result.out.splitlines()


def test_t1_selector_keeps_file_modes_and_nested_tables(maestro, codex):
    config = write(codex / "config.toml", OLD_CONFIG + '\n  [profiles.indented]\n  model = "nested-model"\n'
                   '  model_reasoning_effort = "low"\n')
    impl = write(codex / "maestro-impl-effort", "medium\n")
    result = maestro("model-select", "gpt-5.6-sol", "high", "low")
    assert result.rc == 0, result.err
    assert config.read_text() == ('model = "gpt-5.6-sol"\nmodel_reasoning_effort = "high"\n\n  [profiles.indented]\n'
                                  '  model = "nested-model"\n  model_reasoning_effort = "low"\n')
    assert (mode_of(config), mode_of(impl)) == (0o600, 0o600)
    assert impl.read_text() == "low\n"
    assert maestro("model-select", "--pin").out == "gpt-5.6-sol\thigh\tlow\tgpt-5.6-sol\n"


def test_t1_group_readable_config_mode_is_kept_too(maestro, codex):
    config = write(codex / "config.toml", OLD_CONFIG, 0o644)
    write(codex / "maestro-impl-model", "impl-x\n", 0o640)
    assert maestro("model-select", "m", "low").rc == 0
    assert (mode_of(config), mode_of(codex / "maestro-impl-model")) == (0o644, 0o640)
    assert mode_of(codex / "maestro-impl-effort") == 0o600  # new pin files are private


def test_t2_indented_table_keys_cannot_fake_a_top_level_pin(maestro, codex):
    write(codex / "config.toml", '  [profiles.only]\n  model = "nested-model"\n  model_reasoning_effort = "high"\n')
    write(codex / "maestro-impl-effort", "medium\n")
    result = maestro("model-select", "--pin")
    assert result.rc == 3
    assert result.err == ("SELECT_ERROR: Codex model and effort must both be pinned in the config.toml preamble; "
                          f"pin them with: {PIN_MODELS}\n")
    assert "model=(not pinned — Codex default)" in show_lines(maestro)


def test_t4_implementation_max_the_wrapper_cannot_express_is_rejected_exactly(maestro, codex):
    write(codex / "config.toml", OLD_CONFIG)
    write(codex / "maestro-impl-effort", "medium\n")
    before = snapshot(codex)
    result = maestro("model-select", "new-model", "high", "max")
    assert (result.rc, result.out, result.err) == (3, "", IMPL_MAX_REJECTED)
    assert snapshot(codex) == before


def test_t6_selector_publishes_and_shows_the_implementation_model(maestro, codex):
    write(codex / "config.toml", OLD_CONFIG)
    write(codex / "maestro-impl-effort", "medium\n")
    result = maestro("model-select", "gpt-5.6-sol", "max", "xhigh", "gpt-5.6-luna-max")
    assert result.rc == 0, result.err
    assert result.out.endswith("SELECT: Codex pin updated → model=gpt-5.6-sol debate-effort=max impl-effort=xhigh "
                               "impl-model=gpt-5.6-luna-max (applies from the next dispatch)\n")
    assert maestro("model-select", "--pin").out == "gpt-5.6-sol\tmax\txhigh\tgpt-5.6-luna-max\n"
    assert "impl-model=gpt-5.6-luna-max" in show_lines(maestro)


def test_t7_missing_implementation_model_inherits_the_debate_model(maestro, codex):
    write(codex / "config.toml", 'model = "gpt-5.6-sol"\nmodel_reasoning_effort = "high"\n')
    write(codex / "maestro-impl-effort", "high\n")
    assert maestro("model-select", "--pin").out == "gpt-5.6-sol\thigh\thigh\tgpt-5.6-sol\n"
    assert "impl-model=gpt-5.6-sol (inherited)" in show_lines(maestro)


def test_t8_corrupt_implementation_model_fails_closed(maestro, codex):
    write(codex / "config.toml", 'model = "gpt-5.6-sol"\nmodel_reasoning_effort = "high"\n')
    write(codex / "maestro-impl-effort", "high\n")
    write(codex / "maestro-impl-model", "bad model!\n")
    result = maestro("model-select", "--pin")
    assert result.rc == 3
    assert result.err == "SELECT_ERROR: invalid implementation model 'bad model!' (expected letters, digits, . _ -)\n"
    assert "impl-model=bad model! (invalid)" in show_lines(maestro)
    repin = maestro("model-select", "gpt-5.6-sol", "high")  # the corrupt file is not silently kept
    assert repin.rc == 3 and "invalid implementation model 'bad model!'" in repin.err


def test_t9_three_argument_repin_keeps_the_implementation_model(maestro, codex):
    write(codex / "config.toml", OLD_CONFIG)
    write(codex / "maestro-impl-effort", "medium\n")
    write(codex / "maestro-impl-model", "gpt-5.6-luna-max\n")
    assert maestro("model-select", "gpt-5.6-sol", "high", "low").rc == 0
    assert maestro("model-select", "--pin").out == "gpt-5.6-sol\thigh\tlow\tgpt-5.6-luna-max\n"


def test_two_argument_repin_keeps_the_stored_implementation_effort(maestro, codex):
    write(codex / "config.toml", OLD_CONFIG)
    write(codex / "maestro-impl-effort", "xhigh\n")
    assert maestro("model-select", "m2", "low").rc == 0
    assert maestro("model-select", "--pin").out == "m2\tlow\txhigh\tm2\n"


def test_first_pin_on_a_fresh_machine_defaults_implementation_effort_to_medium(maestro, home):
    result = maestro("model-select", "gpt-5.6-sol", "high")
    assert result.rc == 0, result.err
    codex = home / ".codex"
    assert (codex / "config.toml").read_text() == 'model = "gpt-5.6-sol"\nmodel_reasoning_effort = "high"\n'
    assert (codex / "maestro-impl-effort").read_text() == "medium\n"
    assert (codex / "maestro-impl-model").read_text() == "gpt-5.6-sol\n"
    assert not (codex / "config.toml.maestro.bak").exists()  # nothing to back up
    assert "backed up" not in result.out


def test_t11_implementation_max_equal_to_the_debate_effort_is_valid(maestro, codex):
    write(codex / "config.toml", OLD_CONFIG)
    write(codex / "maestro-impl-effort", "medium\n")
    result = maestro("model-select", "gpt-5.6-luna", "max", "max")
    assert result.rc == 0, result.err
    assert maestro("model-select", "--pin").out == "gpt-5.6-luna\tmax\tmax\tgpt-5.6-luna\n"
    assert "impl-effort=max (via top-level config)" in show_lines(maestro)


def test_t12_stored_implementation_max_mismatching_the_debate_effort_fails_pin(maestro, codex):
    write(codex / "config.toml", 'model = "gpt-5.6-sol"\nmodel_reasoning_effort = "high"\n')
    write(codex / "maestro-impl-effort", "max\n")
    result = maestro("model-select", "--pin")
    assert (result.rc, result.out, result.err) == (3, "", IMPL_MAX_REJECTED)
    assert "impl-effort=max (invalid — top-level effort is high)" in show_lines(maestro)


def test_t13_scout_keeps_the_strict_wrapper_effort_cap(maestro, codex):
    result = maestro("model-select", "--scout", "gpt-5.6-luna", "max")
    assert result.rc == 3
    assert result.err == "SELECT_ERROR: invalid scout effort 'max' (expected: none | minimal | low | medium | high | xhigh)\n"
    assert not (codex / "maestro-scout").exists()


# --- --show --------------------------------------------------------------------------------

def test_show_on_a_fresh_machine_names_every_default(maestro):
    assert show_lines(maestro) == [
        "model=(not pinned — Codex default)",
        "effort=(not pinned — Codex default)",
        "impl-effort=medium",
        "impl-model=(not pinned — Codex default) (inherited)",
        "scout=(not pinned — scout dispatch disabled)",
        "ask-on-start=off",
    ]


def test_show_reports_invalid_values_and_scout(maestro, codex, home):
    write(codex / "config.toml", "model = 'single-quoted'\nmodel_reasoning_effort = \"turbo\"\n")
    write(codex / "maestro-impl-effort", "bogus\n")
    write(codex / "maestro-scout", "model=scout-m\neffort=high\n")
    (home / ".maestro").mkdir()
    (home / ".maestro" / "ask-on-start").write_text("")
    assert show_lines(maestro) == [
        "model=single-quoted",
        "effort=turbo (invalid)",
        "impl-effort=bogus (invalid)",
        "impl-model=single-quoted (inherited)",
        "scout=scout-m/high",
        "ask-on-start=on",
    ]


def test_show_on_invalid_toml_says_so_and_exits_3(maestro, codex):
    write(codex / "config.toml", "model = \n")
    result = maestro("model-select", "--show")
    assert result.rc == 3
    assert result.out.splitlines()[0].startswith("model=(unknown — ") and "not valid TOML" in result.out
    assert result.err.startswith("SELECT_ERROR: ") and result.err.count("\n") == 1


# --- --pin and the setter's refusals ---------------------------------------------------------

@pytest.mark.parametrize(
    "config, message",
    [
        ("", f"Codex model and effort must both be pinned in the config.toml preamble; pin them with: {PIN_MODELS}"),
        ('model = "m"\n',
         f"Codex model and effort must both be pinned in the config.toml preamble; pin them with: {PIN_MODELS}"),
        ('model = "m"\nmodel_reasoning_effort = "turbo"\n',
         "invalid debate effort 'turbo' (expected: none | minimal | low | medium | high | xhigh | max | ultra); "
         f"re-pin with: {PIN_MODELS}"),
        ('model = "bad model"\nmodel_reasoning_effort = "low"\n',
         f"invalid model name 'bad model' in config.toml (expected letters, digits, . _ -); re-pin with: {PIN_MODELS}"),
    ],
)
def test_pin_refuses_an_unusable_pin(maestro, codex, config, message):
    write(codex / "config.toml", config)
    result = maestro("model-select", "--pin")
    assert (result.rc, result.out, result.err) == (3, "", f"SELECT_ERROR: {message}\n")


def test_the_command_pin_names_is_the_one_that_fixes_it(maestro, codex):
    """Issue 16 item 9: `--pin` on an unpinned config named no command. The one it names, filled in,
    makes `--pin` succeed."""
    refused = maestro("model-select", "--pin")
    assert refused.rc == 3 and refused.err.rstrip("\n").endswith(f"pin them with: {PIN_MODELS}")
    words = PIN_MODELS.split()
    assert words[:2] == ["maestro", "model-select"]
    filled = {"<model>": "gpt-5.6-sol", "<debate-effort>": "high", "<impl-effort>": "medium", "<impl-model>": "gpt-5.6-luna"}
    args = [filled.get(word, word) for word in words[1:]]
    assert maestro(*args).rc == 0
    assert maestro("model-select", "--pin").out == "gpt-5.6-sol\thigh\tmedium\tgpt-5.6-luna\n"


def test_the_session_start_model_suggestions_are_the_documented_model_names():
    """Issue 16 item 9: the setup question suggested model names no document mentioned."""
    import re

    from maestro.hooks import guidance

    suggested = set(re.findall(r"\bgpt-[0-9][\w.-]*[\w]", guidance.MODEL_PICKS))
    assert suggested, guidance.MODEL_PICKS
    docs = "\n".join(path.read_text(encoding="utf-8") for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
    assert {name for name in suggested if f"model-select {name}" not in docs and f"`{name}`" not in docs} == set()


@pytest.mark.parametrize(
    "args, message",
    [
        (("bad model!", "high"), "invalid model name 'bad model!' (expected e.g. gpt-5.6-sol — letters, digits, . _ -)"),
        (("m", "turbo"), "invalid effort 'turbo' (expected: none | minimal | low | medium | high | xhigh | max | ultra)"),
        (("m", "high", "ultra"), IMPL_MAX_REJECTED[len("SELECT_ERROR: "):-1].replace("'max'", "'ultra'", 1)),
        (("m", "high", "low", "bad/model"), "invalid implementation model 'bad/model' (expected letters, digits, . _ -)"),
    ],
)
def test_selector_refuses_invalid_values_and_writes_nothing(maestro, codex, args, message):
    write(codex / "config.toml", OLD_CONFIG)
    before = snapshot(codex)
    result = maestro("model-select", *args)
    assert (result.rc, result.out, result.err) == (3, "", f"SELECT_ERROR: {message}\n")
    assert snapshot(codex) == before


@pytest.mark.parametrize(
    "config, fragment",
    [
        ("model = \n", "not valid TOML"),
        ('[model]\nname = "x"\n', "'model' is defined as a table"),
        ('model.name = "x"\n', "dotted key 'model.name'"),
        (b"model = \"\xff\"\n", "not UTF-8"),
    ],
)
def test_selector_refuses_a_config_it_cannot_edit_safely(maestro, codex, config, fragment):
    write(codex / "config.toml", config)
    before = snapshot(codex)
    result = maestro("model-select", "m", "high")
    assert result.rc == 3 and result.out == ""
    assert result.err.startswith("SELECT_ERROR: ") and fragment in result.err and result.err.count("\n") == 1
    assert result.err.rstrip().endswith("no pin files were changed")
    assert snapshot(codex) == before


def test_usage_errors_exit_3_with_one_line(maestro):
    for args in ((), ("only-model",), ("a", "b", "c", "d", "e"), ("--show", "extra"), ("--ask-on-start", "maybe"),
                 ("--scout", "m")):
        result = maestro("model-select", *args)
        assert result.rc == 3 and result.out == "", args
        assert result.err.startswith("maestro model-select: ") and result.err.count("\n") == 1, args


def test_help_names_every_mode(maestro):
    result = maestro("model-select", "--help")
    assert result.rc == 0
    for word in ("--show", "--pin", "--scout", "--scout-pin", "--ask-on-start", "DEBATE_EFFORT"):
        assert word in result.out


# --- config editing as seen from the CLI -----------------------------------------------------

def test_backup_is_made_once_from_the_first_original(maestro, codex):
    original = OLD_CONFIG + "# mine\n"
    write(codex / "config.toml", original, 0o640)
    first = maestro("model-select", "m1", "low")
    assert first.out.startswith("SELECT: backed up config.toml → config.toml.maestro.bak\n")
    backup = codex / "config.toml.maestro.bak"
    assert backup.read_text() == original and mode_of(backup) == 0o640
    second = maestro("model-select", "m2", "high")
    assert second.rc == 0 and "backed up" not in second.out
    assert backup.read_text() == original


def test_crlf_bom_comments_and_missing_final_newline_survive(maestro, codex):
    original = b'\xef\xbb\xbf# top\r\nmodel = "old"  # why\r\n\r\n[t]\r\nmodel = "keep"'
    config = write(codex / "config.toml", original)
    assert maestro("model-select", "new", "xhigh").rc == 0
    assert config.read_bytes() == (b'\xef\xbb\xbf# top\r\nmodel = "new"  # why\r\nmodel_reasoning_effort = "xhigh"\r\n'
                                   b'\r\n[t]\r\nmodel = "keep"')


def test_repinning_the_same_values_leaves_the_files_untouched(maestro, codex):
    write(codex / "config.toml", OLD_CONFIG)
    assert maestro("model-select", "m", "low", "low", "m").rc == 0
    inodes = {p.name: os.stat(p).st_ino for p in codex.iterdir()}
    assert maestro("model-select", "m", "low", "low", "m").rc == 0
    assert {p.name: os.stat(p).st_ino for p in codex.iterdir()} == inodes


def test_a_symlinked_config_stays_a_symlink(maestro, codex, tmp_path):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = write(dotfiles / "codex.toml", OLD_CONFIG)
    (codex / "config.toml").symlink_to(target)
    assert maestro("model-select", "m", "high").rc == 0
    assert (codex / "config.toml").is_symlink()
    assert tomllib.loads(target.read_text())["model"] == "m"


# --- rollback (internals monkeypatched: source target only) ---------------------------------

def failing_write_atomic(monkeypatch, fail_name):
    """write_atomic fails once, on its first call for `fail_name`; restores then succeed."""
    from maestro.util import atomic

    real, failed = atomic.write_atomic, []

    def fake(path, data, mode=0o600):
        if os.path.basename(path) == fail_name and not failed:
            failed.append(path)
            raise OSError(5, "Input/output error")
        return real(path, data, mode)

    monkeypatch.setattr(atomic, "write_atomic", fake)


@pytest.mark.source_only
def test_t3_failed_implementation_effort_publish_rolls_back_config(maestro, codex, monkeypatch):
    if maestro.target == "pyz":
        pytest.skip("monkeypatches internals")
    write(codex / "config.toml", OLD_CONFIG, 0o640)
    write(codex / "maestro-impl-effort", "medium\n")
    before = snapshot(codex)
    failing_write_atomic(monkeypatch, "maestro-impl-effort")
    result = maestro("model-select", "new-model", "high", "low")
    assert result.rc == 3 and "Codex pin updated" not in result.out
    assert result.err == ("SELECT_ERROR: could not publish implementation effort (Input/output error); "
                          "previous pin restored\n")
    after = snapshot(codex)
    assert after.pop("config.toml.maestro.bak") == before["config.toml"]
    assert after == before and mode_of(codex / "config.toml") == 0o640


@pytest.mark.source_only
def test_t10_failed_implementation_model_publish_rolls_back_all_files(maestro, codex, monkeypatch):
    if maestro.target == "pyz":
        pytest.skip("monkeypatches internals")
    write(codex / "config.toml", OLD_CONFIG)
    write(codex / "maestro-impl-effort", "medium\n")
    write(codex / "maestro-impl-model", "old-impl-model\n")
    before = snapshot(codex)
    failing_write_atomic(monkeypatch, "maestro-impl-model")
    result = maestro("model-select", "new-model", "high", "low", "new-impl-model")
    assert result.rc == 3
    assert result.err == ("SELECT_ERROR: could not publish implementation model (Input/output error); "
                          "previous pin restored\n")
    after = snapshot(codex)
    after.pop("config.toml.maestro.bak")
    assert after == before


@pytest.mark.source_only
def test_rollback_removes_pin_files_that_did_not_exist_before(maestro, codex, monkeypatch):
    if maestro.target == "pyz":
        pytest.skip("monkeypatches internals")
    write(codex / "config.toml", OLD_CONFIG)
    failing_write_atomic(monkeypatch, "maestro-impl-model")
    assert maestro("model-select", "m", "high").rc == 3
    assert not (codex / "maestro-impl-effort").exists() and not (codex / "maestro-impl-model").exists()
    assert (codex / "config.toml").read_text() == OLD_CONFIG


@pytest.mark.source_only
def test_failed_first_publish_changes_nothing(maestro, codex, monkeypatch):
    if maestro.target == "pyz":
        pytest.skip("monkeypatches internals")
    write(codex / "config.toml", OLD_CONFIG)
    write(codex / "config.toml.maestro.bak", "older\n")
    failing_write_atomic(monkeypatch, "config.toml")
    result = maestro("model-select", "m", "high")
    assert result.err == "SELECT_ERROR: could not publish config.toml (Input/output error); no pin files were changed\n"
    assert (codex / "config.toml").read_text() == OLD_CONFIG and not (codex / "maestro-impl-effort").exists()


@pytest.mark.source_only
def test_a_failed_restore_is_named(maestro, codex, monkeypatch):
    if maestro.target == "pyz":
        pytest.skip("monkeypatches internals")
    from maestro.util import atomic

    write(codex / "config.toml", OLD_CONFIG)
    write(codex / "config.toml.maestro.bak", "older\n")
    real, config_writes = atomic.write_atomic, []

    def fake(path, data, mode=0o600):
        name = os.path.basename(path)
        config_writes.append(name)
        if name == "maestro-impl-effort":
            raise OSError(5, "Input/output error")
        if name == "config.toml" and config_writes.count("config.toml") == 2:  # the restore
            raise OSError(28, "No space left on device")
        return real(path, data, mode)

    monkeypatch.setattr(atomic, "write_atomic", fake)
    result = maestro("model-select", "m", "high")
    assert result.rc == 3 and result.err.count("\n") == 1
    assert result.err.startswith("SELECT_ERROR: could not publish implementation effort (Input/output error) and "
                                 "could not restore config.toml (No space left on device)")


@pytest.mark.source_only
def test_a_busy_pin_lock_times_out_without_writing(maestro, codex, monkeypatch):
    if maestro.target == "pyz":
        pytest.skip("monkeypatches internals")
    from maestro.commands import model_select

    monkeypatch.setattr(model_select, "LOCK_WAIT_SEC", 0.2)
    write(codex / "config.toml", OLD_CONFIG)
    with open(codex / "maestro-pin.lock.flock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        result = maestro("model-select", "m", "high")
    assert result.rc == 3
    assert result.err == "SELECT_ERROR: another model selection is still active; no pin files were changed\n"
    assert (codex / "config.toml").read_text() == OLD_CONFIG


def test_a_selector_waits_for_the_lock_holder_then_publishes(codex):
    write(codex / "config.toml", OLD_CONFIG)
    if TARGET == "pyz":
        command = [sys.executable, "-I", "-S", str(PYZ)]
    else:
        code = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from maestro.cli import main; "
        command = [sys.executable, "-c", code + "raise SystemExit(main(sys.argv[1:]))"]
    with open(codex / "maestro-pin.lock.flock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = subprocess.Popen([*command, "model-select", "waited", "low"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=1.0)
        assert (codex / "config.toml").read_text() == OLD_CONFIG
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert tomllib.loads((codex / "config.toml").read_text())["model"] == "waited"


# --- scout and ask-on-start ------------------------------------------------------------------

def test_scout_pin_round_trips(maestro, codex):
    result = maestro("model-select", "--scout", "gpt-5.6-luna", "low")
    assert result.out == "SELECT: scout pin updated → model=gpt-5.6-luna effort=low (applies from the next scout dispatch)\n"
    assert (codex / "maestro-scout").read_text() == "model=gpt-5.6-luna\neffort=low\n"
    assert mode_of(codex / "maestro-scout") == 0o600
    assert maestro("model-select", "--scout-pin").out == "gpt-5.6-luna\tlow\n"
    assert "scout=gpt-5.6-luna/low" in show_lines(maestro)


def test_scout_rejects_an_invalid_model(maestro, codex):
    result = maestro("model-select", "--scout", "a b", "low")
    assert result.err == "SELECT_ERROR: invalid scout model 'a b' (expected letters, digits, . _ -)\n"
    assert not (codex / "maestro-scout").exists()


HOWTO = "; pin with: maestro model-select --scout <model> <effort>\n"


@pytest.mark.parametrize(
    "content, message, shown",
    [
        (None, "SELECT_ERROR: scout pin is missing" + HOWTO, "scout=(not pinned — scout dispatch disabled)"),
        ("model=a b\neffort=low\n", "SELECT_ERROR: invalid scout model 'a b'" + HOWTO, "scout=a b/low (invalid)"),
        ("model=m\neffort=max\n",
         "SELECT_ERROR: invalid scout effort 'max' (expected: none | minimal | low | medium | high | xhigh)" + HOWTO,
         "scout=m/max (invalid)"),
        ("model=m\neffort=low\nextra\n", "SELECT_ERROR: malformed scout pin" + HOWTO, "scout=m/low (invalid)"),
        ("effort=low\nmodel=m\n", "SELECT_ERROR: malformed scout pin" + HOWTO, "scout=m/low (invalid)"),
        ("model=m\n", "SELECT_ERROR: malformed scout pin" + HOWTO, "scout=m/? (invalid)"),
    ],
)
def test_scout_pin_fails_closed_on_a_bad_file(maestro, codex, content, message, shown):
    if content is not None:
        write(codex / "maestro-scout", content)
    result = maestro("model-select", "--scout-pin")
    assert (result.rc, result.out, result.err) == (3, "", message)
    assert shown in show_lines(maestro)


def test_ask_on_start_on_off_status(maestro, home):
    flag = home / ".maestro" / "ask-on-start"
    assert maestro("model-select", "--ask-on-start", "status").out == "ask-on-start=off\n"
    on = maestro("model-select", "--ask-on-start", "on")
    assert (on.rc, on.out) == (0, "ask-on-start=on — the setup prompt fires at each new session\n")
    assert flag.read_bytes() == b"" and mode_of(flag) == 0o600 and mode_of(flag.parent) == 0o700
    assert maestro("model-select", "--ask-on-start", "on").rc == 0  # idempotent
    assert maestro("model-select", "--ask-on-start", "status").out == "ask-on-start=on\n"
    off = maestro("model-select", "--ask-on-start", "off")
    assert (off.rc, off.out) == (0, "ask-on-start=off — session start shows a status line only\n")
    assert not flag.exists()
    assert maestro("model-select", "--ask-on-start", "off").rc == 0  # idempotent
    assert not (home / ".codex").exists()  # ask-on-start never touches the Codex pins


def test_a_codex_path_that_is_not_a_directory_is_refused_in_one_line(maestro, home):
    (home / ".codex").write_text("not a directory\n")
    result = maestro("model-select", "m", "high")
    assert result.rc == 3 and result.err.startswith("SELECT_ERROR: cannot open the pin lock ")
    assert result.err.count("\n") == 1
    show = maestro("model-select", "--show")  # reading still answers, naming the problem
    assert show.rc == 3 and "Not a directory" in show.err and show.out.count("\n") == 6
