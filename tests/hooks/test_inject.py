"""`maestro inject` — the UserPromptSubmit hook (spec §1.9, §2.7, §4; original tests/gate.sh 15–27, 29–35, 37–39).

It sets this session's direct-edit flag on an unguarded "edit it yourself", keeps it on a short
acknowledgement, revokes it on any other prompt, answers model-setup requests, and adds the loop
directive only when the prompt carries a code/design signal. Malformed payloads revoke every grant.
"""

import json
import os

from testing import grants
import pytest

SID = "injecttest-1234"
OTHER = "other-session"
REPO = "/nonexistent-maestro/repo"

LOOP_FIRST_LINE = "ORCHESTRATOR/IMPLEMENTER LOOP — this prompt carries a code/design signal.\n"
SETUP_FIRST_LINE = (
    "CODEX MODEL SETUP — ask the user for the debate model, the implementation model, and separate role-specific "
    "efforts\n"
)
REVOKED_TAIL = "; direct-edit authorization revoked.\n"
APPROVALS = ["onayl", "onay", "evet", "devam", "tamam", "olur", "approve", "ok", "okay", "go", "yes", "proceed"]


# --------------------------------------------------------------------------------------------- helpers


def flag_path(home, sid=SID):
    return grants.flag_path(home, sid)


def make_flag(home, sid=SID, **options):
    return grants.make_flag(home, sid, **options)


def inject(maestro, prompt, sid=SID, **extra):
    body = {"session_id": sid, "prompt": prompt}
    body.update(extra)
    return maestro("inject", stdin=json.dumps(body))


def assert_flag_set(home, sid=SID):
    flag = flag_path(home, sid)
    assert not flag.is_symlink()
    assert flag.read_bytes() == b"1\n"
    assert os.stat(flag).st_mode & 0o777 == 0o600
    assert os.stat(home / ".maestro").st_mode & 0o777 == 0o700
    assert os.stat(flag.parent).st_mode & 0o777 == 0o700


def assert_no_flag(home, sid=SID):
    assert not os.path.lexists(flag_path(home, sid))


def assert_quiet_ok(result):
    assert (result.rc, result.out, result.err) == (0, "", "")


def assert_loop(result):
    assert result.rc == 0 and result.err == ""
    assert result.out.startswith(LOOP_FIRST_LINE), result.out
    assert "CODEX MODEL SETUP" not in result.out


def assert_setup(result):
    assert result.rc == 0 and result.err == ""
    assert result.out.startswith(SETUP_FIRST_LINE), result.out
    assert "ORCHESTRATOR/IMPLEMENTER LOOP" not in result.out


def flat(text):
    return " ".join(text.split())


def gate_blocks(maestro, path=f"{REPO}/src/app.ts", sid=SID):
    body = json.dumps({"session_id": sid, "cwd": REPO, "hook_event_name": "PreToolUse", "tool_name": "Edit",
                       "tool_input": {"file_path": path, "old_string": "a", "new_string": "b"}})
    return maestro("gate", stdin=body).rc == 2


# ------------------------------------------------------------------------ original gate.sh scenarios


def test_15_direct_imperative_sets_the_flag(maestro, home):
    assert_quiet_ok(inject(maestro, "edit it yourself"))
    assert_flag_set(home)


def test_15_flag_from_inject_opens_the_gate(maestro, home):
    assert gate_blocks(maestro)
    inject(maestro, "edit it yourself")
    assert not gate_blocks(maestro)
    assert gate_blocks(maestro, sid=OTHER)


def test_16_polite_direct_imperative_sets_the_flag(maestro, home):
    assert_quiet_ok(inject(maestro, "please edit it yourself this time"))
    assert_flag_set(home)


def test_17_do_not_negation_does_not_set_the_flag(maestro, home):
    assert_quiet_ok(inject(maestro, "do not edit it yourself"))
    assert_no_flag(home)


def test_18_contraction_negation_does_not_set_the_flag(maestro, home):
    inject(maestro, "don't edit it yourself")
    inject(maestro, "dont edit it yourself")
    assert_no_flag(home)


@pytest.mark.parametrize("prompt", ["don’t edit it yourself", "won’t you edit it yourself", "you can’t edit it yourself",
                                    "you mustn’t edit it yourself", "you didn’t edit it yourself"])
def test_18_typographic_apostrophe_negation_does_not_set_the_flag(maestro, home, prompt):
    make_flag(home)
    assert_quiet_ok(inject(maestro, prompt))
    assert_no_flag(home)


def test_19_never_negation_does_not_set_the_flag(maestro, home):
    inject(maestro, "never edit it yourself")
    assert_no_flag(home)


@pytest.mark.parametrize(
    "prompt",
    ['what does "edit it yourself" do?', "what does `edit it yourself` do?", "what does “edit it yourself” do?",
     "what does 'edit it yourself' do?", "what does ‘edit it yourself’ do", "«edit it yourself» is the phrase",
     "「edit it yourself」", 'he said "edit it yourself" and left'],
)
def test_20_quoted_mention_does_not_set_the_flag(maestro, home, prompt):
    assert_quiet_ok(inject(maestro, prompt))
    assert_no_flag(home)


QUOTED_ALONE = ['"edit it yourself"', "`edit it yourself`", "\u201cedit it yourself\u201d", "'edit it yourself'",
                "\u2018edit it yourself\u2019", "\u00abedit it yourself\u00bb", "\u300cedit it yourself\u300d",
                "\u201eedit it yourself\u201c", "\u2039edit it yourself\u203a", "\u300eedit it yourself\u300f"]


def test_20_the_phrase_quoted_alone_never_sets_the_flag_and_bare_it_does(maestro, home):
    """Nothing but the quotes tells these prompts from the directive itself, so only the quotation rule keeps
    the flag down: asserted after every prompt (a flag set by one would otherwise hide behind the next)."""
    for prompt in QUOTED_ALONE:
        assert_quiet_ok(inject(maestro, prompt))
        assert not os.path.lexists(flag_path(home)), f"the flag was set by {prompt!r}"
    inject(maestro, "edit it yourself")  # the control: the same words, unquoted, are the directive
    assert_flag_set(home)


def test_21_mention_context_does_not_set_the_flag(maestro, home):
    inject(maestro, "does saying edit it yourself open the gate?")
    assert_no_flag(home)


def test_22_turkish_imperative_sets_and_its_negation_does_not(maestro, home):
    inject(maestro, "sen yap")
    assert_flag_set(home)
    flag_path(home).unlink()
    inject(maestro, "sen yapma")
    assert_no_flag(home)
    inject(maestro, "kendin yapma")
    assert_no_flag(home)
    inject(maestro, "kendin yap")
    assert_flag_set(home)
    flag_path(home).unlink()
    inject(maestro, "sen düzenle")
    assert_flag_set(home)


def test_23_negative_form_directive_sets_the_flag(maestro, home):
    inject(maestro, "don't delegate")
    assert_flag_set(home)
    for prompt in ("no codex", "skip codex", "do it yourself", "write it yourself", "dont delegate"):
        flag_path(home).unlink()
        inject(maestro, prompt)
        assert_flag_set(home)


def test_24_new_task_resets_the_flag_and_emits_the_directive(maestro, home):
    make_flag(home)
    assert_loop(inject(maestro, "now fix the other bug in auth.scala"))
    assert_no_flag(home)


def test_25_short_continuation_preserves_the_flag(maestro, home):
    flag = make_flag(home)
    inode = os.stat(flag).st_ino
    assert_quiet_ok(inject(maestro, "ok"))
    assert flag.read_bytes() == b"1\n" and os.stat(flag).st_ino == inode


def test_26_markdown_only_prompt_stays_silent(maestro, home):
    assert_quiet_ok(inject(maestro, "update README.md please"))


def test_27_numeric_tokens_stay_silent(maestro, home):
    assert_quiet_ok(inject(maestro, "bump the price to 3.5 dollars"))


def test_29_bounded_adverb_after_negator_does_not_set_the_flag(maestro, home):
    for prompt in ("don't ever edit it yourself", "never just edit it yourself", "do not simply edit it yourself"):
        inject(maestro, prompt)
    assert_no_flag(home)


def test_29_negator_and_adverb_guard_even_across_a_line_break(maestro, home):
    # the clause guard stops at the newline; only the prefix rule (negator [+ adverb] + whitespace) applies
    for prompt in ("don't ever\nedit it yourself", "never\nedit it yourself", "said\n  edit it yourself"):
        inject(maestro, prompt)
        assert_no_flag(home)
    inject(maestro, "don't worry\nedit it yourself")
    assert_flag_set(home)


def test_30_adverb_without_negator_still_sets_the_flag(maestro, home):
    inject(maestro, "please just edit it yourself")
    assert_flag_set(home)


def test_31_only_a_standalone_acknowledgement_preserves_authorization(maestro, home):
    make_flag(home)
    assert_loop(inject(maestro, "ok fix auth bug"))
    assert_no_flag(home)
    assert gate_blocks(maestro, path=f"{REPO}/src/auth.ts")


def test_32_malformed_input_fails_closed_and_revokes_stale_flags(maestro, home):
    inject(maestro, "edit it yourself")
    assert_flag_set(home)
    result = maestro("inject", stdin="not-json")
    assert (result.rc, result.out) == (2, "")
    assert result.err == "ORCHESTRATOR INJECT: invalid hook JSON; direct-edit authorization revoked.\n"
    assert_no_flag(home)
    assert gate_blocks(maestro)


def test_33_missing_session_id_fails_closed(maestro, home):
    make_flag(home)
    make_flag(home, sid="default")
    result = maestro("inject", stdin=json.dumps({"prompt": "edit it yourself"}))
    assert result.rc == 2
    assert result.err == "ORCHESTRATOR INJECT: invalid hook payload; direct-edit authorization revoked.\n"
    assert_no_flag(home)
    assert_no_flag(home, "default")


def test_33_invalid_session_id_fails_closed_and_creates_nothing(maestro, home):
    result = inject(maestro, "edit it yourself", sid="../bad")
    assert result.rc == 2
    assert result.err == "ORCHESTRATOR INJECT: invalid hook payload; direct-edit authorization revoked.\n"
    assert not (home / ".maestro").exists()
    assert not (home / "bad.flag").exists()


def test_34_negation_applies_across_the_current_clause(maestro, home):
    inject(maestro, "do not under any circumstances edit it yourself")
    assert_no_flag(home)


def test_34_negation_in_a_previous_clause_does_not_guard(maestro, home):
    inject(maestro, "I do not like this. edit it yourself")
    assert_flag_set(home)


def test_34_any_unguarded_occurrence_opens(maestro, home):
    inject(maestro, "don't edit it yourself; ok fine, edit it yourself")
    assert_flag_set(home)


def test_35_quoted_and_reported_mentions_cannot_authorize(maestro, home):
    inject(maestro, 'what does "please edit it yourself" mean?')
    assert_no_flag(home)
    inject(maestro, "I said please edit it yourself yesterday")
    assert_no_flag(home)
    inject(maestro, 'he wrote "ok then, please edit it yourself')  # unbalanced quote in the clause
    assert_no_flag(home)


@pytest.mark.parametrize(
    "prompt",
    ["why did you edit it yourself", "can you edit it yourself", "edit it yourself?", "stop trying to do it yourself",
     "no need to edit it yourself", "> edit it yourself", "```\nedit it yourself\n```", "    edit it yourself"],
)
def test_35_questions_stops_block_quotes_and_code_cannot_authorize(maestro, home, prompt):
    make_flag(home)
    assert_quiet_ok(inject(maestro, prompt))
    assert_no_flag(home)
    assert gate_blocks(maestro)


@pytest.mark.parametrize("prompt", ["\nedit it yourself\n", "  edit it yourself  ", "Please edit it yourself.",
                                    "just do it yourself, Codex is down"])
def test_35_an_instruction_with_surrounding_whitespace_still_authorizes(maestro, home, prompt):
    assert_quiet_ok(inject(maestro, prompt))
    assert_flag_set(home)
    assert not gate_blocks(maestro)


def test_a_repeated_directive_sets_the_grant_again_with_a_fresh_clock(maestro, home):
    import time

    flag = make_flag(home)
    os.utime(flag, (time.time() - 3600, time.time() - 3600))
    inject(maestro, "edit it yourself")
    assert_flag_set(home)
    assert os.stat(flag).st_mtime > time.time() - 60


def test_37_flag_creation_never_follows_a_symlink(maestro, home):
    victim = home / "victim"
    victim.write_text("DO NOT OVERWRITE\n")
    directory = home / ".maestro" / "direct-edit"
    directory.mkdir(parents=True)
    flag_path(home).symlink_to(victim)
    result = inject(maestro, "edit it yourself")
    assert (result.rc, result.out) == (2, "")
    assert result.err == (
        "ORCHESTRATOR INJECT: could not create a safe authorization marker; direct-edit authorization revoked.\n"
    )
    assert victim.read_text() == "DO NOT OVERWRITE\n"
    assert not os.path.lexists(flag_path(home))


def test_37_symlinked_maestro_dir_is_refused(maestro, home):
    elsewhere = home / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (home / ".maestro").symlink_to(elsewhere)
    result = inject(maestro, "edit it yourself")
    assert result.rc == 2
    assert result.err.startswith("ORCHESTRATOR INJECT: could not create a safe authorization marker;")
    assert list(elsewhere.iterdir()) == []


def test_38_model_setup_asks_for_role_specific_efforts(maestro, home):
    result = inject(maestro, "codex model")
    assert_setup(result)
    text = flat(result.out)
    assert "separate role-specific efforts" in text
    assert "<model> <debate-effort> <impl-effort> <impl-model>" in text
    assert text.index("separate role-specific efforts") < text.index("<model> <debate-effort> <impl-effort>")
    assert "maestro model-select --show\n" in result.out
    assert "One setting feeds both loops" not in result.out


def test_39_loop_directive_bounds_autonomous_answers(maestro, home):
    result = inject(maestro, "fix the auth bug")
    assert_loop(result)
    text = result.out
    assert "mechanically necessary adjacent file" in text
    assert "equally strong verifier" in text
    assert text.index("mechanically necessary adjacent file") < text.index("equally strong verifier")
    assert 'maestro loop --plan <plan-file> --verify "<verify command>"' in text
    assert "0 VERIFIED_DONE · 10 NEEDS_ANSWERS · 11 BLOCKED · 12 STUCK" in text


# -------------------------------------------------------------------------------- approvals / resets


@pytest.mark.parametrize(
    "prompt", APPROVALS + [w.upper() for w in APPROVALS] + [w + "." for w in APPROVALS] + [w + "!" for w in APPROVALS]
    + ["  ok  ", "\tYes!\n", "Okay."],
)
def test_every_short_approval_keeps_the_flag(maestro, home, prompt):
    make_flag(home)
    assert_quiet_ok(inject(maestro, prompt))
    assert_flag_set(home)


@pytest.mark.parametrize(
    "prompt", ["ok thanks", "yes please", "ok!!", "ok..", "go ahead", "okay, now rename it", "ok?", "oké", "k", "",
               "   ", "proceed with the migration"],
)
def test_approval_with_trailing_text_or_other_prompt_resets_the_flag(maestro, home, prompt):
    make_flag(home)
    result = inject(maestro, prompt)
    assert result.rc == 0 and result.err == ""
    assert_no_flag(home)


def test_reset_only_touches_this_sessions_flag(maestro, home):
    make_flag(home)
    make_flag(home, OTHER)
    inject(maestro, "what time is it?")
    assert_no_flag(home)
    assert_flag_set(home, OTHER)


def test_directive_refreshes_a_tampered_flag(maestro, home):
    flag = make_flag(home)
    flag.write_bytes(b"0\n")
    os.chmod(flag, 0o644)
    os.chmod(home / ".maestro", 0o755)
    inject(maestro, "edit it yourself")
    assert_flag_set(home)


def test_directive_with_code_signal_sets_the_flag_and_emits_the_directive(maestro, home):
    assert_loop(inject(maestro, "edit it yourself: fix the crash in app.py"))
    assert_flag_set(home)


def test_reset_with_a_directory_in_place_of_the_flag_fails_closed(maestro, home):
    make_flag(home, OTHER)
    (home / ".maestro" / "direct-edit").joinpath(flag_path(home).name).mkdir()
    result = inject(maestro, "what time is it?")
    assert result.rc == 2
    assert result.err == "ORCHESTRATOR INJECT: could not revoke direct-edit authorization; direct-edit authorization revoked.\n"
    assert_no_flag(home, OTHER)


def test_direct_edit_path_that_is_a_file_fails_closed(maestro, home):
    (home / ".maestro").mkdir(mode=0o700)
    (home / ".maestro" / "direct-edit").write_text("not a directory\n")
    result = inject(maestro, "edit it yourself")
    assert result.rc == 2
    assert result.err.startswith("ORCHESTRATOR INJECT: could not create a safe authorization marker;")
    result = maestro("inject", stdin="not-json")
    assert result.rc == 2
    assert (home / ".maestro" / "direct-edit").read_text() == "not a directory\n"


# ------------------------------------------------------------------------ malformed payloads revoke all


@pytest.mark.parametrize(
    "raw, reason",
    [
        (b"not-json", "invalid hook JSON"),
        (b"", "invalid hook JSON"),
        (b"{", "invalid hook JSON"),
        (b"\xff\xfe", "invalid hook JSON"),
        (b"[]", "invalid hook payload"),
        (b'["edit it yourself"]', "invalid hook payload"),
        (b"null", "invalid hook payload"),
        (b'{"session_id":"injecttest-1234"}', "invalid hook payload"),
        (b'{"session_id":"injecttest-1234","prompt":5}', "invalid hook payload"),
        (b'{"session_id":"injecttest-1234","prompt":null}', "invalid hook payload"),
        (b'{"session_id":"injecttest-1234","prompt":["ok"]}', "invalid hook payload"),
        (b'{"session_id":"a;rm -rf /","prompt":"ok"}', "invalid hook payload"),
        (b'{"session_id":"","prompt":"ok"}', "invalid hook payload"),
        (b'{"session_id":7,"prompt":"ok"}', "invalid hook payload"),
        (('{"session_id":"%s","prompt":"ok"}' % ("a" * 65)).encode(), "invalid hook payload"),
        (b'{"session_id":"injecttest-1234","prompt":"ok"} {}', "invalid hook JSON"),
        (b'{"session_id":"injecttest-1234","prompt":"ok","x":Infinity}', "invalid hook JSON"),
    ],
)
def test_malformed_payload_exits_2_and_revokes_every_sessions_flag(maestro, home, raw, reason):
    make_flag(home)
    make_flag(home, OTHER)
    unrelated = home / ".maestro" / "direct-edit" / "notes.txt"
    unrelated.write_text("keep\n")
    result = maestro("inject", stdin=raw)
    assert (result.rc, result.out) == (2, "")
    assert result.err.startswith("ORCHESTRATOR INJECT: ") and result.err.endswith(REVOKED_TAIL)
    assert result.err.count("\n") == 1
    if reason:
        assert result.err == f"ORCHESTRATOR INJECT: {reason}{REVOKED_TAIL}"
    assert_no_flag(home)
    assert_no_flag(home, OTHER)
    assert unrelated.read_text() == "keep\n"
    assert not (home / ".maestro" / "logs").exists()  # an expected condition leaves no crash note


def test_malformed_payload_without_any_flag_state_still_exits_2(maestro, home):
    result = maestro("inject", stdin="not-json")
    assert result.rc == 2
    assert not (home / ".maestro").exists()


# --------------------------------------------------------------------------------------- context text


@pytest.mark.parametrize(
    "prompt",
    ["codex model", "Codex Settings please", "change the codex effort to high", "CODEX CONFIG", "pick the codex model",
     "pick codex", "change codex to luna", "set codex to max", "codex model, then fix the crash in app.py"],
)
def test_model_setup_phrases_produce_the_setup_text_not_the_loop(maestro, home, prompt):
    assert_setup(inject(maestro, prompt))


def test_model_setup_text_is_exactly_the_setup_message(maestro, home):
    from maestro.hooks import guidance as messages

    assert inject(maestro, "codex model").out == messages.MODEL_SETUP


@pytest.mark.parametrize(
    "prompt",
    ["have codex look at this", "I'd like a second opinion", "let's debate the options", "ask codex about it",
     "grill me on this plan", "sanity check the approach", "sanity-check it", "talk to codex", "discuss with codex",
     "delegate to codex", "codex'e yaptır", "bunu tartışalım"],
)
def test_on_demand_phrases_produce_the_directive(maestro, home, prompt):
    assert_loop(inject(maestro, prompt))


@pytest.mark.parametrize(
    "prompt",
    ["giriş sayfası çalışmıyor", "bu hatayı düzelt", "mimari nasıl olmalı", "yeni bir özellik geliştir",
     "sorgu çok yavaş", "uygulama patlıyor", "ekran bozuldu", "bileşen ekle", "bunu kodla", "tasarla bunu"],
)
def test_turkish_stems_produce_the_directive(maestro, home, prompt):
    assert_loop(inject(maestro, prompt))


@pytest.mark.parametrize(
    "prompt",
    ["refactor the parser", "update app.py", "why is src/main.rs slow", "add feature flags", "the tests are red",
     "/code-review", "optimise the loop", "deploy it", "there is a regression"],
)
def test_code_signals_produce_the_directive(maestro, home, prompt):
    assert_loop(inject(maestro, prompt))


@pytest.mark.parametrize(
    "prompt",
    ["what time is it?", "how much does it cost", "thanks!", "summarise config.yaml and notes.txt", "hello", ""],
)
def test_plain_question_is_silent(maestro, home, prompt):
    assert_quiet_ok(inject(maestro, prompt))


def test_loop_directive_is_exactly_the_loop_message(maestro, home):
    from maestro.hooks import guidance as messages

    assert inject(maestro, "fix the auth bug").out == messages.LOOP_DIRECTIVE


# ------------------------------------------------------------------------------------- command line


def test_inject_help_exits_0(maestro):
    result = maestro("inject", "--help")
    assert result.rc == 0 and result.err == ""
    assert result.out.startswith("usage: maestro inject  (reads a Claude Code hook payload on stdin)\n")


def test_inject_with_an_extra_argument_exits_2_and_changes_nothing(maestro, home):
    make_flag(home)
    result = maestro("inject", "extra", stdin=json.dumps({"session_id": SID, "prompt": "hello"}))
    assert result.rc == 2
    assert result.err == "maestro inject: takes no arguments, only a hook payload on stdin (see --help)\n"
    assert_flag_set(home)


@pytest.mark.source_only
def test_crash_inside_inject_revokes_all_flags_and_leaves_a_crash_note(source_maestro, home, monkeypatch):
    from maestro.hooks import inject as inject_module

    def boom(payload):
        raise RuntimeError("inject-test-sentinel")

    monkeypatch.setattr(inject_module, "run", boom)
    make_flag(home)
    make_flag(home, OTHER)
    result = inject(source_maestro, "ok")
    assert (result.rc, result.out) == (2, "")
    assert result.err == "ORCHESTRATOR INJECT: internal error; direct-edit authorization revoked.\n"
    assert_no_flag(home)
    assert_no_flag(home, OTHER)
    text = (home / ".maestro" / "logs" / "crashes.log").read_text()
    assert " verb=inject " in text and "RuntimeError: inject-test-sentinel" in text


@pytest.mark.timeout(20)
def test_pathological_prompts_are_parsed_in_linear_time(maestro):
    """The original's patterns were quadratic: 40 KB of dot-less text took seconds, 1 MB minutes,
    long enough for the hook to time out (and a timed-out hook decides nothing)."""
    import time

    from maestro.hooks import directive

    started = time.process_time()  # CPU time: a busy machine does not count against the parser
    assert directive.has_work_signal("a" * 1_000_000 + " README.md") is False
    assert directive.opens_gate("don't edit it yourself " * 20_000) is False
    assert directive.opens_gate("don't edit it yourself. " * 20_000 + "edit it yourself") is True
    assert time.process_time() - started < 15
