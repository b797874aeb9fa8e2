"""Outcome records (maestro/memory/project/outcomes.py) and `maestro memory outcome save | list`.

The pure helpers (failure_signature, plan_title, task_id_for_plan, validate, load_all) are called
in-process; the verbs run black-box against the selected target through the `maestro` fixture.
"""

import json
import os

import pytest

from maestro.memory.project import outcomes
from maestro.memory.project import files as project
from maestro.memory.store.errors import StoreError

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def proj(tmp_path):
    path = tmp_path / "proj"
    path.mkdir()
    return path


def memory_for(proj):
    return project.ProjectMemory.for_cwd(str(proj))


def make(task_id="task-a", started="2024-05-01T10:00:00Z", **kw):
    fields = dict(kind="manual", task_id=task_id, state="STUCK", started_at=started, ended_at=started)
    fields.update(kw)
    return outcomes.record(**fields)


# ------------------------------------------------------------------------------- failure_signature


def test_signature_of_the_same_failing_check_is_equal_across_runs():
    run1 = ("collected 12 items\n"
            "FAILED tests/test_a.py::test_x - assert 3 == 4 (took 0.31s) at 0xdeadbeef line:42 in 1.5 ms\n"
            "=== 1 failed in 2.01s ===\n")
    run2 = ("collected 99 items\n"
            "FAILED tests/test_a.py::test_x - assert 7 == 8 (took 12.9s) at 0x7fff1234 line:108 in 33 ms\n"
            "=== 1 failed in 9.44s ===\n")
    first, second = outcomes.failure_signature("pytest -q", run1), outcomes.failure_signature("pytest  -q", run2)
    assert first == second
    assert first == ("pytest -q :: FAILED tests/test_a.py::test_x - assert <n> == <n> (took <time>) at <addr> "
                     "line:<n> in <time>")


@pytest.mark.parametrize("a, b", [
    ("error at commit 1a2b3c4d5e", "error at commit 9f8e7d6c5b"),            # hashes
    ("src/app.py:12: AssertionError", "src/app.py:345: AssertionError"),    # line numbers
    ("Traceback (most recent call last) 3 frames", "Traceback (most recent call last) 17 frames"),  # counts
    ("test timed out: FAILED after 300 seconds", "test timed out: FAILED after 7 seconds"),  # durations
    ("FAILED at 0xABCDEF01", "FAILED at 0x00000010"),                        # addresses
])
def test_volatile_parts_are_normalised(a, b):
    assert outcomes.failure_signature("check", a) == outcomes.failure_signature("check", b)


def test_different_failures_keep_different_signatures():
    a = outcomes.failure_signature("check", "FAILED test_login")
    b = outcomes.failure_signature("check", "FAILED test_logout")
    assert a != b


def test_signature_picks_the_first_line_that_names_a_failure():
    output = "starting\nok 1\nERROR: db not reachable\nFAILED: second\nsummary line\n"
    assert outcomes.failure_signature("make test", output) == "make test :: ERROR: db not reachable"


def test_signature_falls_back_to_the_last_non_empty_line():
    output = "building\n  step one\n  last word here  \n\n   \n"
    assert outcomes.failure_signature("make", output) == "make :: last word here"


@pytest.mark.parametrize("output", ["", "\n\n", "   \n\t\n"])
def test_signature_of_no_output(output):
    assert outcomes.failure_signature("  make check ", output) == "make check :: (no output)"


def test_no_output_signature_normalises_and_bounds_the_command_like_the_others():
    assert outcomes.failure_signature("make   check", "") == "make check :: (no output)"
    command, _, _ = outcomes.failure_signature("c" * 1000, "").partition(" :: ")
    assert len(command) <= 120


def test_signature_is_one_bounded_line():
    signature = outcomes.failure_signature("cmd " * 100, "FAILED " + "x " * 500)
    assert "\n" not in signature
    command, _, line = signature.partition(" :: ")
    assert len(command) <= 120 and len(line) <= 160


def test_large_counts_normalise_like_small_ones():
    a = outcomes.failure_signature("check", "FAILED: processed 999999 rows")
    b = outcomes.failure_signature("check", "FAILED: processed 1000000 rows")
    assert a == b


# ------------------------------------------------------------------------------------- plan_title


def test_plan_title_prefers_the_first_heading():
    assert outcomes.plan_title("intro text\n\n## Fix the login\n# Other\n") == "Fix the login"


def test_plan_title_falls_back_to_the_first_non_empty_line():
    assert outcomes.plan_title("\n\n   Set VALUE to 2  \nmore\n") == "Set VALUE to 2"


@pytest.mark.parametrize("text", ["", "\n \n", "#\n", "###   \n"])
def test_plan_title_of_nothing(text):
    assert outcomes.plan_title(text) == "(untitled plan)"


def test_plan_title_is_bounded():
    title = outcomes.plan_title("# " + "x" * 500)
    assert len(title) == 120 and title.endswith("…")
    assert len(outcomes.plan_title("y" * 50, limit=10)) == 10
    assert outcomes.plan_title("z" * 120) == "z" * 120


def test_plan_title_replaces_non_printables():
    title = outcomes.plan_title("# Head\x1b[31ming\x07 with\ttab\x00\n")
    assert title.isprintable()
    assert title.startswith("Head") and "with" in title and "\x1b" not in title and "\t" not in title


# ------------------------------------------------------------------------------- task_id_for_plan


def test_task_id_is_stable_for_the_same_path_and_valid(tmp_path, monkeypatch):
    plan = tmp_path / "My Plan! (v2).md"
    first = outcomes.task_id_for_plan(str(plan))
    monkeypatch.chdir(tmp_path)
    assert outcomes.task_id_for_plan("My Plan! (v2).md") == first  # the absolute path decides
    assert first.startswith("my-plan-v2-") and project.is_valid_id(first)
    assert project.check_id(first) == first


def test_task_id_differs_for_different_paths(tmp_path):
    assert outcomes.task_id_for_plan(str(tmp_path / "a" / "plan.md")) != outcomes.task_id_for_plan(
        str(tmp_path / "b" / "plan.md"))


@pytest.mark.parametrize("name", ["!!!.md", ".md", "..md", "x" * 300 + ".md", "ünïcødé.md", "-lead.md", "a..b.md"])
def test_task_id_is_valid_for_odd_names(tmp_path, name):
    task_id = outcomes.task_id_for_plan(str(tmp_path / name))
    assert project.is_valid_id(task_id), task_id


# ---------------------------------------------------------------------------------------- validate


def test_record_builds_a_valid_record():
    value = make(files_changed=["b.py", "a.py", "a.py"])
    assert outcomes.validate(value) is value
    assert value["version"] == 1 and value["files_changed"] == ["a.py", "b.py"]
    assert project.is_valid_id(value["id"]) and value["id"].startswith("20240501T100000Z-manual-task-a-")


@pytest.mark.parametrize("change", [
    {"version": 2}, {"version": None}, {"kind": "robot"}, {"state": "MAYBE"}, {"state": None},
    {"id": "../x"}, {"id": "a/b"}, {"id": "a" * 65}, {"id": ".."}, {"id": ""}, {"id": 7},
    {"task_id": "../x"}, {"task_id": "a/b"}, {"task_id": "t" * 65}, {"task_id": ".."}, {"task_id": None},
    {"attempts": "x"}, {"files_changed": {}}, {"what_didnt": "nope"},
])
def test_validate_rejects(change):
    value = dict(make(), **change)
    with pytest.raises(StoreError):
        outcomes.validate(value)


def test_validate_rejects_a_non_object():
    for value in (None, [], "x", 1):
        with pytest.raises(StoreError):
            outcomes.validate(value)


def test_64_char_ids_are_accepted_65_are_not():
    assert project.is_valid_id("a" * 64) and not project.is_valid_id("a" * 65)
    for bad in ("../x", "a/b", "..", "a..b", ".x", "-x", "a b", "a\\b", ""):
        assert not project.is_valid_id(bad), bad


def test_record_refuses_an_invalid_task_id():
    with pytest.raises(StoreError):
        make(task_id="../x")


# ---------------------------------------------------------------------------------------- load_all


def test_load_all_skips_bad_files_reports_them_and_returns_the_rest_oldest_first(proj):
    memory = memory_for(proj)
    newer = make("task-new", "2024-05-03T00:00:00Z")
    older = make("task-old", "2024-05-01T00:00:00Z")
    middle = make("task-mid", "2024-05-02T00:00:00Z")
    for value in (newer, older, middle):
        outcomes.save(memory, value)
    directory = memory.outcomes
    with open(os.path.join(directory, "broken.json"), "w") as handle:
        handle.write("{not json")
    renamed = make("task-x", "2024-04-01T00:00:00Z")
    project.write_json(os.path.join(directory, "other-name.json"), renamed)  # name does not match its id
    project.write_json(os.path.join(directory, "bad-version.json"), dict(make("task-v"), version=9))
    with open(os.path.join(directory, "notes.txt"), "w") as handle:
        handle.write("ignored: not .json")
    errors = []
    found = outcomes.load_all(memory, errors)
    assert [item["task_id"] for item in found] == ["task-old", "task-mid", "task-new"]
    assert len(errors) == 3
    assert any("broken.json" in e for e in errors)
    assert any("other-name.json" in e and "does not match" in e for e in errors)
    assert any("bad-version.json" in e for e in errors)
    assert outcomes.load_all(memory) == found  # errors is optional


def test_load_all_of_a_project_without_outcomes_is_empty(proj):
    assert outcomes.load_all(memory_for(proj), []) == []


def test_save_writes_one_private_file_named_by_id(proj):
    memory = memory_for(proj)
    value = make()
    path = outcomes.save(memory, value)
    assert path == os.path.join(memory.outcomes, value["id"] + ".json")
    with open(path) as handle:
        assert json.loads(handle.read()) == value
    assert os.stat(path).st_mode & 0o077 == 0


# ------------------------------------------------------------------------------- memory outcome verbs


def outcome_files(mem_root):
    return sorted((mem_root / "projects").rglob("outcomes/*.json")) if (mem_root / "projects").exists() else []


def test_save_and_list_round_trip(maestro, proj, mem_root):
    saved = maestro("memory", "outcome", "save", "--title", "Fix the login", "--state", "STUCK",
                    "--didnt", "raising the timeout", "--didnt", "retrying", "--worked", "bisecting",
                    "--file", "src/b.py", "--file", "src/a.py", "--iterations", "3", "--verify", "make test",
                    "--task-id", "login-fix", "--cwd", str(proj))
    assert saved.rc == 0, saved.out + saved.err
    assert saved.out.startswith("saved outcome ") and "STUCK — Fix the login" in saved.out
    files = outcome_files(mem_root)
    assert len(files) == 1
    value = json.loads(files[0].read_text())
    assert value["kind"] == "manual" and value["state"] == "STUCK" and value["task_id"] == "login-fix"
    assert value["what_didnt"] == ["raising the timeout", "retrying"] and value["what_worked"] == ["bisecting"]
    assert value["files_changed"] == ["src/a.py", "src/b.py"] and value["iterations"] == 3
    assert value["verify"]["command"] == "make test"
    assert value["plan_title"] == "Fix the login"

    listed = maestro("memory", "outcome", "list", "--cwd", str(proj))
    assert listed.rc == 0
    lines = listed.out.splitlines()
    assert len(lines) == 1
    assert "STUCK" in lines[0] and "manual" in lines[0] and "it=3" in lines[0] and "files=2" in lines[0]
    assert "login-fix" in lines[0] and lines[0].endswith("Fix the login")

    envelope = json.loads(maestro("memory", "outcome", "list", "--cwd", str(proj), "--json").out)
    assert envelope["ok"] is True and envelope["skipped"] == []
    assert [o["id"] for o in envelope["outcomes"]] == [value["id"]]
    assert envelope["project"] == os.path.realpath(proj)


def test_save_json_envelope(maestro, proj):
    result = maestro("memory", "outcome", "save", "--title", "T", "--state", "DONE", "--cwd", str(proj), "--json")
    assert result.rc == 0
    envelope = json.loads(result.out)
    assert envelope["ok"] is True and envelope["outcome"]["state"] == "DONE"
    assert os.path.isfile(envelope["path"]) and envelope["id"] == envelope["outcome"]["id"]
    assert envelope["outcome"]["task_id"] == "t"  # a slug of the title by default


def test_secrets_in_title_and_notes_never_reach_disk(maestro, proj, mem_root):
    result = maestro("memory", "outcome", "save", "--title", "Rotate creds password: hunter2", "--state", "DONE",
                     "--notes", "used password: hunter2 on staging", "--didnt", "token=abcdef123456secret",
                     "--worked", "password: hunter2", "--cwd", str(proj))
    assert result.rc == 0, result.out + result.err
    assert "hunter2" not in result.out + result.err
    files = outcome_files(mem_root)
    assert len(files) == 1
    for path in (mem_root).rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert b"hunter2" not in data and b"abcdef123456secret" not in data, path
    value = json.loads(files[0].read_text())
    assert "[Filtered:password]" in value["plan_title"] and "[Filtered:password]" in value["notes"]
    assert "hunter2" not in value["task_id"]


def test_a_secret_in_the_verify_command_never_reaches_disk(maestro, proj, mem_root):
    result = maestro("memory", "outcome", "save", "--title", "T", "--state", "DONE",
                     "--verify", "DB_PASSWORD=x password: hunter2 make test", "--cwd", str(proj))
    assert result.rc == 0
    assert all(b"hunter2" not in p.read_bytes() for p in outcome_files(mem_root))


def test_a_title_that_is_only_a_secret_keeps_no_secret(maestro, proj, mem_root):
    result = maestro("memory", "outcome", "save", "--title", "password: hunter2", "--state", "DONE", "--cwd", str(proj))
    assert "hunter2" not in result.out + result.err
    assert all(b"hunter2" not in p.read_bytes() for p in outcome_files(mem_root))


@pytest.mark.parametrize("task_id", ["../x", "a/b", "..", "t" * 65, "-x", "a b"])
def test_an_invalid_task_id_is_a_usage_error_and_writes_nothing(maestro, proj, mem_root, task_id):
    result = maestro("memory", "outcome", "save", "--title", "T", "--state", "DONE", f"--task-id={task_id}",
                     "--cwd", str(proj))
    assert result.rc == 3
    assert "invalid task id" in result.err
    assert outcome_files(mem_root) == []
    assert not (mem_root.parent / "x").exists() and not (mem_root / "projects" / "x").exists()


def test_an_invalid_task_id_json_envelope(maestro, proj, mem_root):
    result = maestro("memory", "outcome", "save", "--title", "T", "--state", "DONE", "--task-id", "../x",
                     "--cwd", str(proj), "--json")
    assert result.rc == 3
    envelope = json.loads(result.out)
    assert envelope["ok"] is False and envelope["error"]["reason"] == "usage"
    assert outcome_files(mem_root) == []


@pytest.mark.parametrize("args", [
    ["--state", "MAYBE", "--title", "T"], ["--state", "done", "--title", "T"], ["--title", "T"],
    ["--state", "DONE"], ["--state", "DONE", "--title", "T", "--iterations", "-1"],
    ["--state", "DONE", "--title", "   "],
])
def test_bad_save_arguments_fail_and_write_nothing(maestro, proj, mem_root, args):
    result = maestro("memory", "outcome", "save", *args, "--cwd", str(proj))
    assert result.rc == 3, (result.rc, result.out, result.err)
    assert outcome_files(mem_root) == []


def test_list_of_an_empty_project(maestro, proj):
    result = maestro("memory", "outcome", "list", "--cwd", str(proj))
    assert (result.rc, result.out) == (0, "no outcomes recorded for this project\n")
    envelope = json.loads(maestro("memory", "outcome", "list", "--cwd", str(proj), "--json").out)
    assert envelope["ok"] is True and envelope["outcomes"] == [] and envelope["skipped"] == []


def test_list_filters_by_task_limits_and_shows_newest_first(maestro, proj):
    memory = memory_for(proj)
    for day, task in ((1, "alpha"), (2, "beta"), (3, "alpha"), (4, "alpha")):
        outcomes.save(memory, make(task, f"2024-05-0{day}T00:00:00Z", ended_at=f"2024-05-0{day}T01:00:00Z",
                                   title=f"{task} {day}"))
    every = json.loads(maestro("memory", "outcome", "list", "--cwd", str(proj), "--json").out)["outcomes"]
    assert [o["plan_title"] for o in every] == ["alpha 4", "alpha 3", "beta 2", "alpha 1"]
    alpha = json.loads(maestro("memory", "outcome", "list", "--task", "alpha", "--cwd", str(proj), "--json").out)
    assert [o["plan_title"] for o in alpha["outcomes"]] == ["alpha 4", "alpha 3", "alpha 1"]
    limited = maestro("memory", "outcome", "list", "--task", "alpha", "--limit", "2", "--cwd", str(proj))
    assert limited.rc == 0
    lines = limited.out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("2024-05-04T01:00:00Z") and lines[0].endswith("alpha 4")
    none = maestro("memory", "outcome", "list", "--task", "gamma", "--cwd", str(proj))
    assert none.out == "no outcomes recorded for this project\n"
    assert maestro("memory", "outcome", "list", "--limit", "0", "--cwd", str(proj)).rc == 3


def test_list_skips_a_malformed_outcome_and_names_it(maestro, proj):
    memory = memory_for(proj)
    outcomes.save(memory, make("good", title="good one"))
    with open(os.path.join(memory.outcomes, "zz-bad.json"), "w") as handle:
        handle.write("[1, 2")
    result = maestro("memory", "outcome", "list", "--cwd", str(proj))
    assert result.rc == 0
    assert result.out.splitlines()[-1].endswith("good one")
    assert "skipped" in result.err and "zz-bad.json" in result.err
    envelope = json.loads(maestro("memory", "outcome", "list", "--cwd", str(proj), "--json").out)
    assert len(envelope["outcomes"]) == 1 and len(envelope["skipped"]) == 1


def test_unknown_action_and_bare_verb(maestro, proj):
    assert maestro("memory", "outcome", "frobnicate").rc == 3
    assert maestro("memory", "outcome").rc == 3
    helped = maestro("memory", "outcome", "--help")
    assert helped.rc == 0 and helped.out.startswith("usage: maestro memory outcome")


def test_a_done_outcome_saved_by_hand_clears_the_tasks_open_handoff(maestro, proj):
    from maestro.memory.project import handoffs

    memory = project.ProjectMemory.for_cwd(str(proj))
    handoffs.write(memory, task_id="fix-login", kind="loop", title="Fix login", state="STUCK", next_command="x")
    still_open = maestro("memory", "outcome", "save", "--title", "Fix login", "--state", "BLOCKED",
                         "--task-id", "fix-login", "--cwd", str(proj))
    assert still_open.rc == 0 and "cleared" not in still_open.out
    assert [h["task_id"] for h in handoffs.load_open(memory)] == ["fix-login"]
    done = maestro("memory", "outcome", "save", "--title", "Fix login", "--state", "DONE", "--task-id", "fix-login",
                   "--cwd", str(proj))
    assert done.rc == 0 and "cleared the open handoff of task fix-login" in done.out
    assert handoffs.load_open(memory) == []


@pytest.mark.parametrize("text, title", [
    ("# Plan\nObjective: set VALUE to 3.\n", "set VALUE to 3."),
    ("# Plan\n## Rename the value\nbody", "Rename the value"),
    ("# Task:\nGoal: ship the login page\n", "ship the login page"),
    ("# Plan\n", "Plan"),
])
def test_a_generic_plan_heading_gives_way_to_the_line_that_says_what_the_task_is(text, title):
    assert outcomes.plan_title(text) == title
