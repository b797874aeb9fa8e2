"""What a finished `loop` / `watchdog` run leaves in project memory (maestro/workflow/run_record.py):
one outcome record per run, a handoff while the task is open, nothing when MAESTRO_MEMORY_RECORD=0,
and never a changed result when recording fails. Real processes, a real git repo, the fake companion.
"""

import json
import os

import pytest
from testing.archive_cases import first_on_archive
from testing.processes import run

from maestro.memory.project import outcomes

pytestmark = pytest.mark.timeout(90)

# What a run records is decided by run_record.py inside the verb's own process, the same module in the archive. The
# archive run keeps one end-to-end record per terminal state, the watchdog record and the failure-is-a-warning
# rule; the variations below (handoff bookkeeping, session ids, file lists, filtering) run on the source tree.
SOURCE_ONLY_LOGIC = pytest.mark.source_only

VERIFY_OK = "grep -q 'VALUE = 2' app.py"
VERIFY_FAIL = "echo 'FAILED check_value: VALUE is not 2 (took 0.31s)'; exit 1"
DONE_EDIT = {"final_message": "Edited app.py.\nRESULT: DONE", "turn_seconds": 0, "edits": {"app.py": "VALUE = 2\n"}}
QUESTIONS = "RESULT: NEEDS_ANSWERS\nQUESTIONS:\n1. Which module owns VALUE?"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in ("MAESTRO_MEMORY_DIR", "MAESTRO_MEMORY_RECORD", "MAESTRO_SESSION_ID"):
        monkeypatch.delenv(name, raising=False)


def write_plan(repo, name="plan.md", text="# Set the value\n\nSet VALUE to 2 in app.py.\n"):
    path = repo.parent / name
    path.write_text(text)
    return path


def loop(repo, plan_path, verify=VERIFY_OK, *extra, **kw):
    return run("loop", "--plan", str(plan_path), "--verify", verify, "--poll", "1", *extra, cwd=repo, **kw)


def project_dir(home):
    projects = home / ".maestro" / "memory" / "projects"
    found = list(projects.iterdir()) if projects.exists() else []
    assert len(found) <= 1, found
    return found[0] if found else None


def read_outcomes(home):
    directory = project_dir(home)
    files = sorted((directory / "outcomes").glob("*.json")) if directory else []
    return [json.loads(p.read_text()) for p in files]


def read_handoffs(home):
    directory = project_dir(home)
    files = sorted((directory / "handoffs").glob("*.json")) if directory else []
    return {p.stem: json.loads(p.read_text()) for p in files}


def assert_final(result, scope, state, rc):
    assert result.rc == rc, result.out + result.err
    assert result.lines[-1] == f"MAESTRO_FINAL: {scope} {state} rc={rc}"
    assert sum(line.startswith("MAESTRO_FINAL:") for line in result.lines) == 1


CASES = {
    "VERIFIED_DONE": (DONE_EDIT, VERIFY_OK, (), 0, 1),
    "NEEDS_ANSWERS": ({"final_message": QUESTIONS, "turn_seconds": 0}, VERIFY_OK, (), 10, 1),
    "BLOCKED": ({"final_message": "RESULT: BLOCKED — needs the production token", "turn_seconds": 0}, VERIFY_OK, (),
                11, 1),
    "STUCK": ({"final_message": "Did it.\nRESULT: DONE", "turn_seconds": 0}, VERIFY_FAIL, ("--max-iters", "2"), 12, 2),
}


@pytest.mark.parametrize("state", list(CASES))
def test_each_loop_terminal_state_writes_exactly_one_outcome(repo, fake, home, state):
    knobs, verify, extra, rc, iterations = CASES[state]
    fake.set(**knobs)
    plan_path = write_plan(repo)
    result = loop(repo, plan_path, verify, *extra)
    assert_final(result, "LOOP", state, rc)
    assert result.lines[-2].startswith(f"LOOP_STATE: {state}")
    [outcome] = read_outcomes(home)
    assert outcome["kind"] == "loop" and outcome["state"] == state and outcome["rc"] == rc
    assert outcome["iterations"] == iterations
    assert outcome["task_id"] == outcomes.task_id_for_plan(str(plan_path))
    assert outcome["plan"] == str(plan_path) and outcome["plan_title"] == "Set the value"
    assert outcome["verify"]["command"] == verify
    outcomes.validate(outcome)
    recorded = [line for line in result.lines if line.startswith("LOOP_OUTCOME:")]
    assert len(recorded) == 1 and recorded[0].startswith(f"LOOP_OUTCOME: {state} recorded in ")
    assert result.lines.index(recorded[0]) < len(result.lines) - 2
    handoffs = read_handoffs(home)
    if state == "VERIFIED_DONE":
        assert handoffs == {}
        assert outcome["verify"]["last_state"] == "passed" and outcome["verify"]["last_rc"] == 0
        assert outcome["files_changed"] == ["app.py"]
    else:
        assert list(handoffs) == [outcome["task_id"]]
        handoff = handoffs[outcome["task_id"]]
        assert handoff["state"] == state and handoff["kind"] == "loop" and handoff["outcome"] == outcome["id"]
        assert handoff["iterations"] == iterations and handoff["plan"] == str(plan_path)
        assert f"maestro loop --plan {plan_path}" in handoff["next_command"]
        assert "app.py" in handoff["files"]  # named by the plan
    if state == "NEEDS_ANSWERS":
        assert "1. Which module owns VALUE?" in outcome["questions"]
        assert "Which module owns VALUE?" in handoffs[outcome["task_id"]]["questions"]
    if state == "STUCK":
        assert [a["result"] for a in outcome["attempts"]] == ["verify-failed", "verify-failed"]
        assert outcome["attempts"][0]["check"] == outcome["attempts"][1]["check"]
        assert "FAILED check_value: VALUE is not <n> (took <time>)" in outcome["attempts"][0]["check"]
        assert outcome["verify"]["last_state"] == "failed" and outcome["verify"]["last_rc"] == 1


@SOURCE_ONLY_LOGIC
def test_verified_done_removes_the_earlier_handoff_of_the_same_plan(repo, fake, home):
    plan_path = write_plan(repo)
    fake.set(final_message=QUESTIONS, turn_seconds=0)
    assert loop(repo, plan_path).rc == 10
    task_id = outcomes.task_id_for_plan(str(plan_path))
    assert list(read_handoffs(home)) == [task_id]
    other = write_plan(repo, "other.md", "# Another task\n")
    fake.set(final_message="RESULT: BLOCKED — no", turn_seconds=0)
    assert loop(repo, other).rc == 11
    fake.set(**DONE_EDIT)
    result = loop(repo, plan_path)
    assert_final(result, "LOOP", "VERIFIED_DONE", 0)
    assert list(read_handoffs(home)) == [outcomes.task_id_for_plan(str(other))]  # only the other task stays open
    states = sorted((o["task_id"] == task_id, o["state"]) for o in read_outcomes(home))
    assert states == [(False, "BLOCKED"), (True, "NEEDS_ANSWERS"), (True, "VERIFIED_DONE")]


def test_watchdog_writes_a_watchdog_outcome(repo, fake, home):
    fake.set(final_message="Edited.\nRESULT: DONE", turn_seconds=0, edits={"app.py": "VALUE = 2\n"})
    plan_path = write_plan(repo, "wd.md", "# Watchdog task\nSet VALUE to 2.\n")
    result = run("watchdog", "--file", str(plan_path), "5", "1", cwd=repo)
    assert_final(result, "WATCHDOG", "DONE", 0)
    [outcome] = read_outcomes(home)
    assert outcome["kind"] == "watchdog" and outcome["state"] == "DONE" and outcome["rc"] == 0
    assert outcome["iterations"] == 1 and outcome["verify"] is None
    assert outcome["task_id"] == outcomes.task_id_for_plan(str(plan_path))
    assert outcome["plan_title"] == "Watchdog task" and outcome["files_changed"] == ["app.py"]
    assert read_handoffs(home) == {}
    assert any(line.startswith("WATCHDOG_OUTCOME: DONE recorded in ") for line in result.lines)


@SOURCE_ONLY_LOGIC
def test_watchdog_needs_answers_leaves_a_watchdog_handoff(repo, fake, home):
    fake.set(final_message=QUESTIONS, turn_seconds=0)
    result = run("watchdog", "Inline plan: set VALUE to 2.", "5", "1", cwd=repo)
    assert_final(result, "WATCHDOG", "NEEDS_ANSWERS", 10)
    [outcome] = read_outcomes(home)
    assert outcome["kind"] == "watchdog" and outcome["plan"] is None and outcome["state"] == "NEEDS_ANSWERS"
    assert outcome["task_id"].startswith("inline-plan-set-value-to-2-")
    [handoff] = read_handoffs(home).values()
    assert handoff["kind"] == "watchdog" and handoff["state"] == "NEEDS_ANSWERS"
    assert handoff["next_command"].startswith(f"answer the QUESTIONS (maestro memory outcome list --task "
                                              f"{outcome['task_id']}), then run: maestro watchdog")


@pytest.mark.parametrize("value", first_on_archive(["0", "false", "OFF", " no "]))  # one config reader (testing/archive_cases.py)
def test_memory_record_off_writes_nothing(repo, fake, home, value):
    fake.set(**DONE_EDIT)
    result = loop(repo, write_plan(repo), env={"MAESTRO_MEMORY_RECORD": value})
    assert_final(result, "LOOP", "VERIFIED_DONE", 0)
    assert not (home / ".maestro" / "memory").exists()
    assert not any("_OUTCOME" in line or "_WARNING" in line for line in result.lines)


@SOURCE_ONLY_LOGIC
def test_memory_record_off_writes_no_handoff_for_an_open_task(repo, fake, home):
    fake.set(final_message=QUESTIONS, turn_seconds=0)
    result = loop(repo, write_plan(repo), env={"MAESTRO_MEMORY_RECORD": "0"})
    assert_final(result, "LOOP", "NEEDS_ANSWERS", 10)
    assert not (home / ".maestro" / "memory").exists()


def test_an_unwritable_memory_dir_is_a_warning_not_a_changed_result(repo, fake, home, tmp_path):
    blocker = tmp_path / "a-regular-file"
    blocker.write_text("not a directory\n")
    fake.set(**DONE_EDIT)
    result = loop(repo, write_plan(repo), env={"MAESTRO_MEMORY_DIR": str(blocker / "memory")})
    assert_final(result, "LOOP", "VERIFIED_DONE", 0)
    assert result.lines[-2].startswith("LOOP_STATE: VERIFIED_DONE")
    warnings = [line for line in result.lines if line.startswith("LOOP_WARNING: could not record the outcome")]
    assert len(warnings) == 1, result.out
    assert not any(line.startswith("LOOP_OUTCOME:") for line in result.lines)
    assert blocker.read_text() == "not a directory\n"
    crashes = home / ".maestro" / "logs" / "crashes.log"
    assert crashes.exists() and "loop:outcome" in crashes.read_text()


@SOURCE_ONLY_LOGIC
def test_an_unwritable_memory_dir_keeps_an_open_state_too(repo, fake, home, tmp_path):
    blocker = tmp_path / "a-regular-file"
    blocker.write_text("x")
    fake.set(final_message=QUESTIONS, turn_seconds=0)
    result = loop(repo, write_plan(repo), env={"MAESTRO_MEMORY_DIR": str(blocker / "memory")})
    assert_final(result, "LOOP", "NEEDS_ANSWERS", 10)
    assert result.lines[-2].startswith("LOOP_STATE: NEEDS_ANSWERS")
    assert any(line.startswith("LOOP_WARNING: could not record the outcome") for line in result.lines)


@SOURCE_ONLY_LOGIC
def test_watchdog_with_an_unwritable_memory_dir_warns(repo, fake, home, tmp_path):
    blocker = tmp_path / "a-regular-file"
    blocker.write_text("x")
    fake.set(final_message="Edited.\nRESULT: DONE", turn_seconds=0)
    plan_path = write_plan(repo)
    result = run("watchdog", "--file", str(plan_path), "5", "1", cwd=repo,
                 env={"MAESTRO_MEMORY_DIR": str(blocker / "memory")})
    assert_final(result, "WATCHDOG", "DONE", 0)
    assert any(line.startswith("WATCHDOG_WARNING: could not record the outcome") for line in result.lines)


@SOURCE_ONLY_LOGIC
def test_a_valid_session_id_is_recorded(repo, fake, home):
    fake.set(final_message=QUESTIONS, turn_seconds=0)
    result = loop(repo, write_plan(repo), env={"MAESTRO_SESSION_ID": "valid-id"})
    assert result.rc == 10
    [outcome] = read_outcomes(home)
    assert outcome["session_id"] == "valid-id"
    [handoff] = read_handoffs(home).values()
    assert handoff["session_id"] == "valid-id"


@pytest.mark.parametrize("sid", first_on_archive(["bad id", "../x", "x" * 65]))  # one id check (testing/archive_cases.py)
def test_an_invalid_session_id_is_not_recorded(repo, fake, home, sid):
    fake.set(**DONE_EDIT)
    assert loop(repo, write_plan(repo), env={"MAESTRO_SESSION_ID": sid}).rc == 0
    [outcome] = read_outcomes(home)
    assert outcome["session_id"] is None


@SOURCE_ONLY_LOGIC
def test_files_changed_lists_exactly_the_files_the_fake_edited(repo, fake, home):
    (repo / "untouched.py").write_text("A = 1\n")
    (repo / "gone.py").write_text("B = 1\n")
    fake.set(final_message="Edited.\nRESULT: DONE", turn_seconds=0,
             edits={"app.py": "VALUE = 2\n", "pkg/new_module.py": "NEW = 1\n", "gone.py": None})
    result = loop(repo, write_plan(repo))
    assert_final(result, "LOOP", "VERIFIED_DONE", 0)
    [outcome] = read_outcomes(home)
    assert outcome["files_changed"] == ["app.py", "gone.py", "pkg/new_module.py"]


@SOURCE_ONLY_LOGIC
def test_no_edit_records_no_files(repo, fake, home):
    fake.set(final_message="RESULT: BLOCKED — no", turn_seconds=0)
    assert loop(repo, write_plan(repo)).rc == 11
    [outcome] = read_outcomes(home)
    assert outcome["files_changed"] == []


@SOURCE_ONLY_LOGIC
def test_secrets_in_the_verify_output_are_filtered(repo, fake, home):
    fake.set(final_message="Did it.\nRESULT: DONE", turn_seconds=0)
    verify = "printf 'FAILED login with pass%s: hunter%s\\n' word 2; exit 1"  # the command holds no secret
    result = loop(repo, write_plan(repo), verify, "--max-iters", "1")
    assert_final(result, "LOOP", "STUCK", 12)
    [outcome] = read_outcomes(home)
    assert "hunter2" not in outcome["verify"]["last_output_tail"]
    assert "hunter2" not in json.dumps(outcome["attempts"])


@SOURCE_ONLY_LOGIC
def test_outcomes_live_under_the_project_of_the_repo_root(repo, fake, home):
    sub = repo / "pkg"
    sub.mkdir()
    fake.set(**DONE_EDIT)
    plan_path = write_plan(repo)
    result = run("loop", "--plan", str(plan_path), "--verify", VERIFY_OK, "--poll", "1", cwd=sub)
    assert result.rc == 0, result.out + result.err
    listed = run("memory", "outcome", "list", "--cwd", str(repo), "--json", cwd=repo)
    assert [o["state"] for o in json.loads(listed.out)["outcomes"]] == ["VERIFIED_DONE"]
    assert os.path.isdir(home / ".maestro" / "memory" / "projects")
