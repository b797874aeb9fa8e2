"""The "edit it yourself" grant, phrasing by phrasing (issue 14 §5).

Each row is a prompt and whether it grants direct edits. Every row runs twice: against
`directive.opens_gate` itself, and end to end — an older grant exists, `maestro inject` gets the
prompt, then `maestro gate` judges a source edit: allowed exactly when the row says it grants.
Against the archive the end-to-end rows are judged by the archive's code in one process, each row in
a session of its own (tests/testing/archive_batch.py); the hook tests start a process per case.
"""

import json

from testing import grants
from testing.paths import TARGET
import pytest

SID = "tablesession-1"
REPO = "/nonexistent-maestro/repo"

GRANTS = [
    "edit it yourself",
    "Edit it yourself",
    "EDIT IT YOURSELF",
    "Please edit it yourself.",
    "please edit it yourself this time",
    "ok, edit it yourself this time",
    "just do it yourself, Codex is down",
    "please just edit it yourself",
    "do it yourself",
    "write it yourself",
    "fix it yourself this time",
    "do edit it yourself",
    "Codex is down.\nEdit it yourself.",
    "edit it yourself: fix the crash in app.py",
    "edit it yourself — Codex keeps timing out",
    "edit it yourself!",
    "you can edit it yourself",
    "I do not like this. edit it yourself",
    "don't edit it yourself; ok fine, edit it yourself",
    "don’t edit it yourself. Actually, edit it yourself",
    "don't worry\nedit it yourself",
    '"foo" is the wrong name, edit it yourself',
    "```\nprint('x')\n```\nedit it yourself",
    "> the old plan\nedit it yourself",
    "It's a one-liner, edit it yourself",
    "Touch only app.py, edit it yourself",
    "don't delegate",
    "dont delegate",
    "don’t delegate",
    "no codex",
    "skip codex",
    "no codex for this one, do it yourself",
    "sen yap",
    "kendin yap",
    "sen düzenle",
    "KENDİN YAP",
    "edit it yourself\n\nwhy is the build slow",
    "if Codex fails again, edit it yourself",
    "edit it yourself, then run the tests",
    "the fix is small. please edit it yourself",
    "When you're done reviewing, edit it yourself",
    "so, do it yourself",
    "Is Codex down? Then edit it yourself.",
    "Codex keeps failing. Just edit it yourself.",
    "It's 'urgent', edit it yourself",
    "edit it yourself\n```\nthe diff\n```",
    "Edit it yourself; don't wait for Codex",
    "I'd rather you edit it yourself",
]

NO_GRANT = [
    # negations, typographic apostrophes included
    "do not edit it yourself",
    "don't edit it yourself",
    "dont edit it yourself",
    "don’t edit it yourself",
    "don‘t edit it yourself",
    "donʼt edit it yourself",
    "don′t edit it yourself",
    "never edit it yourself",
    "won’t you just edit it yourself",
    "you can't edit it yourself",
    "you cannot edit it yourself",
    "you can not edit it yourself",
    "you mustn't edit it yourself",
    "you didn't edit it yourself, right",
    "it doesn't mean edit it yourself",
    "that isn't edit it yourself",
    "you won't edit it yourself",
    "you wouldn't edit it yourself",
    "you shouldn't edit it yourself",
    "you shouldn’t ever edit it yourself",
    "no need to edit it yourself",
    "don't ever edit it yourself",
    "do not under any circumstances edit it yourself",
    "don't ever\nedit it yourself",
    "never\nedit it yourself",
    "never\n\nedit it yourself",
    "sen yapma",
    "kendin yapma",
    # stop
    "stop trying to do it yourself",
    "stop, edit it yourself was a mistake",
    "please stop and don't do it yourself",
    "stop editing it yourself",
    "Stop. Edit it yourself.",
    "STOP! Codex is down, edit it yourself",
    "> note\nstop\nedit it yourself",
    # questions
    "why did you edit it yourself",
    "ok, why did you edit it yourself",
    "how come you edit it yourself",
    "edit it yourself?",
    "edit it yourself, right?",
    "edit it yourself!?",
    "can you edit it yourself",
    "could you edit it yourself",
    "would you edit it yourself",
    "should you edit it yourself",
    "did I say edit it yourself",
    "do you edit it yourself",
    "is edit it yourself allowed",
    "are you allowed to edit it yourself",
    "what does edit it yourself do",
    "how do I make you edit it yourself",
    "ok so can you edit it yourself",
    "have you tried to edit it yourself",
    "does saying edit it yourself open the gate?",
    "when will you edit it yourself",
    "where did I say edit it yourself",
    "how about you edit it yourself",
    # reported and mentioned
    "I said please edit it yourself yesterday",
    "he wrote: edit it yourself",
    "the phrase edit it yourself opens the gate",
    # quoted
    'what does "edit it yourself" do?',
    '"edit it yourself"',
    "'edit it yourself'",
    "‘edit it yourself’",
    "“edit it yourself”",
    "”edit it yourself”",
    "„edit it yourself“",
    "«edit it yourself»",
    "»edit it yourself«",
    "‹edit it yourself›",
    "「edit it yourself」",
    "『edit it yourself』",
    "`edit it yourself`",
    'he wrote "ok then, please edit it yourself',
    'the note said "Codex is down.\nedit it yourself" last week',
    "> edit it yourself",
    "   > edit it yourself",
    "> > edit it yourself",
    # code
    "```\nedit it yourself\n```",
    "~~~\nedit it yourself\n~~~",
    "```text\nok\n\nedit it yourself\n```",
    "```\nedit it yourself",
    "    edit it yourself",
    "\tedit it yourself",
    "look at this:\n\n    # edit it yourself\n    x = 1",
]


@pytest.mark.source_only  # directive.opens_gate of the source tree, whatever the target: the pyz run would repeat it
@pytest.mark.parametrize("prompt", GRANTS + NO_GRANT)
def test_opens_gate_table(prompt):
    from maestro.hooks import directive

    assert directive.opens_gate(prompt) is (prompt in GRANTS)


def test_the_table_is_big_enough_and_has_no_duplicates():
    assert len(GRANTS) + len(NO_GRANT) >= 60
    assert len(set(GRANTS + NO_GRANT)) == len(GRANTS) + len(NO_GRANT)


# ----------------------------------------------------------------------------------- end to end


def make_old_grant(home):
    return grants.make_flag(home, SID)


def source_edit(sid=SID):
    return json.dumps({
        "session_id": sid, "cwd": REPO, "hook_event_name": "PreToolUse", "tool_name": "Edit",
        "tool_input": {"file_path": f"{REPO}/src/app.py", "old_string": "a", "new_string": "b"},
    })


def gate_allows(result):
    assert result.rc in (0, 2), result
    return result.rc == 0


@pytest.fixture(scope="session")
def archive_table_judgements(tmp_path_factory):
    """Against the archive: every row's inject and then gate, judged by the archive's code in one process; row i
    is session `tablesession-1-i`, with an older grant of its own, so no row sees another's flag."""
    from testing import archive_batch

    base = tmp_path_factory.mktemp("directive-table")
    home = base / "home"
    home.mkdir()
    (base / "tmp").mkdir()
    cases = []
    for index, prompt in enumerate(GRANTS + NO_GRANT):
        sid = f"{SID}-{index}"
        grants.make_flag(home, sid)
        cases += [("inject", json.dumps({"session_id": sid, "prompt": prompt})), ("gate", source_edit(sid))]
    results = archive_batch.judge_cases(cases, env={"HOME": str(home), "TMPDIR": str(base / "tmp")}, cwd=str(base))
    return {prompt: (results[2 * i], results[2 * i + 1]) for i, prompt in enumerate(GRANTS + NO_GRANT)}


@pytest.mark.parametrize("prompt", GRANTS + NO_GRANT)
def test_inject_then_gate_table(request, home, prompt):
    if TARGET == "pyz":
        injected, gated = request.getfixturevalue("archive_table_judgements")[prompt]
    else:
        maestro = request.getfixturevalue("maestro")
        make_old_grant(home)  # whatever was granted before, this prompt alone decides
        injected = maestro("inject", stdin=json.dumps({"session_id": SID, "prompt": prompt}))
        gated = maestro("gate", stdin=source_edit())
    assert injected.rc == 0 and injected.err == "", injected
    assert gate_allows(gated) is (prompt in GRANTS)
