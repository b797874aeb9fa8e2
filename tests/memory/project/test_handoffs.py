"""Handoffs (maestro/memory/project/handoffs.py): unfinished work, written where it stops and surfaced at
the next session start (spec memory.md §4 scenarios 45–46, adapted to maestro's task handoffs).

The module's logic is called in-process; `session-start` and `stop` run black-box through the
`maestro` fixture (source or pyz target).
"""

import json
import os

import pytest
from testing.git import git_repo

from maestro.memory.project import handoffs
from maestro.memory.project import files as project
from maestro.memory.store.errors import StoreError

pytestmark = pytest.mark.timeout(60)

SID = "sess-handoff-1"
STOP_OUTPUT = '{"continue": true}\n'


@pytest.fixture
def repo(tmp_path):
    return git_repo(tmp_path / "repo")


def memory_for(path):
    return project.ProjectMemory.for_cwd(str(path))


def write_task(memory, task_id, state="NEEDS_ANSWERS", title=None, plan="/plans/a.md", iterations=2, **kw):
    return handoffs.write(memory, task_id=task_id, kind="loop", title=title or f"Task {task_id}", state=state,
                          plan=plan, iterations=iterations,
                          next_command=handoffs.next_step(state, plan, "make test"), **kw)


def handoff_files(memory):
    return sorted(os.listdir(memory.handoffs)) if os.path.isdir(memory.handoffs) else []


# ------------------------------------------------------------------------------ write / load / remove


def test_write_load_open_remove_round_trip(repo):
    memory = memory_for(repo)
    path = write_task(memory, "a", questions="1. which file?", files=["b.py", "a.py", "a.py", 7],
                      updated_at="2024-05-01T10:00:00Z")
    assert path == os.path.join(memory.handoffs, "a.json")
    assert os.stat(path).st_mode & 0o077 == 0
    [value] = handoffs.load_open(memory)
    assert value["task_id"] == "a" and value["kind"] == "loop" and value["state"] == "NEEDS_ANSWERS"
    assert value["title"] == "Task a" and value["plan"] == "/plans/a.md" and value["iterations"] == 2
    assert value["files"] == ["a.py", "b.py"] and value["questions"] == "1. which file?"
    assert value["next_command"] == "answer QUESTIONS in /plans/a.md, then run: maestro loop --plan /plans/a.md " \
                                    "--verify 'make test'"
    assert handoffs.remove(memory, "a") is True
    assert handoffs.load_open(memory) == [] and handoff_files(memory) == []
    assert handoffs.remove(memory, "a") is False


def test_load_open_is_newest_first(repo):
    memory = memory_for(repo)
    write_task(memory, "old", updated_at="2024-05-01T10:00:00Z")
    write_task(memory, "new", updated_at="2024-05-03T10:00:00Z")
    write_task(memory, "mid", updated_at="2024-05-02T10:00:00Z")
    assert [v["task_id"] for v in handoffs.load_open(memory)] == ["new", "mid", "old"]


@pytest.mark.parametrize("state", ["VERIFIED_DONE", "DONE", "SOMETHING", None])
@pytest.mark.in_process
def test_a_finished_or_unknown_state_is_not_open(repo, state):
    memory = memory_for(repo)
    write_task(memory, "b", state=state)
    assert os.path.exists(os.path.join(memory.handoffs, "b.json"))
    assert handoffs.load_open(memory) == []


@pytest.mark.parametrize("state", ["NEEDS_ANSWERS", "BLOCKED", "STUCK", "FAILED", "INTERRUPTED", "POISONED"])
@pytest.mark.in_process
def test_every_open_state_is_open(repo, state):
    memory = memory_for(repo)
    write_task(memory, "c", state=state)
    assert [v["state"] for v in handoffs.load_open(memory)] == [state]


@pytest.mark.parametrize("task_id", ["../x", "a/b", "..", "x" * 65, "", ".hidden"])
@pytest.mark.in_process
def test_write_and_remove_refuse_an_invalid_task_id(repo, task_id):
    memory = memory_for(repo)
    with pytest.raises(StoreError):
        write_task(memory, task_id)
    with pytest.raises(StoreError):
        handoffs.remove(memory, task_id)
    assert handoff_files(memory) == []


@pytest.mark.in_process
def test_text_fields_are_sanitized_and_bounded(repo):
    memory = memory_for(repo)
    path = handoffs.write(memory, task_id="s", kind="loop", title="deploy password: hunter2 " + "t" * 500,
                          state="BLOCKED", next_command="x" * 2000, questions="token=abcdef123456secret " + "q" * 5000,
                          doing="d" * 2000, files=[f"f{i}.py" for i in range(80)])
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    assert "hunter2" not in text and "abcdef123456secret" not in text
    value = json.loads(text)
    assert len(value["title"]) == 200 and len(value["next_command"]) == 500 and len(value["doing"]) == 500
    assert len(value["questions"]) == handoffs.FIELD_LIMIT and len(value["files"]) == 50


def test_next_step_per_state():
    assert handoffs.next_step("NEEDS_ANSWERS", "p.md") == "answer QUESTIONS in p.md, then run: maestro loop --plan p.md"
    assert handoffs.next_step("STUCK", "p.md", "a b").startswith("re-plan or debate the root cause")
    assert handoffs.next_step("STUCK", "p.md", "a b").endswith("maestro loop --plan p.md --verify 'a b'")
    assert handoffs.next_step("BLOCKED", "p.md").startswith("check `maestro status`")
    assert handoffs.next_step("POISONED", "p.md").startswith("check `maestro status`")
    assert handoffs.next_step("FAILED", "p.md") == "run again: maestro loop --plan p.md"


# ------------------------------------------------------------------------------------- resume lines


def test_resume_line_for_needs_answers():
    value = {"kind": "loop", "title": "Rename the value", "state": "NEEDS_ANSWERS", "iterations": 2,
             "plan": "/p/plan.md", "next_command": "ignored"}
    assert handoffs.resume_line(value) == ("Resuming: Rename the value — NEEDS_ANSWERS after 2 iterations; "
                                           "answer QUESTIONS in /p/plan.md")
    assert handoffs.resume_line(dict(value, iterations=1)).endswith("after 1 iteration; answer QUESTIONS in /p/plan.md")
    assert handoffs.resume_line(dict(value, state="STUCK")).endswith(
        "STUCK after 2 iterations; re-plan or debate the root cause (attempt history in /p/plan.md)")
    assert handoffs.resume_line(dict(value, state="STUCK", plan=None)).endswith("STUCK after 2 iterations; ignored")
    assert "after" not in handoffs.resume_line(dict(value, iterations=None))


def test_resume_line_is_one_bounded_line_for_hostile_values():
    value = {"kind": "loop", "title": ("line one\nline two\r\x1b[2J" * 1000)[:10_000], "state": "STUCK\nEVIL",
             "iterations": 3, "plan": "/p\n/plan.md", "next_command": "n\n" * 5000}
    line = handoffs.resume_line(value)
    assert "\n" not in line and "\r" not in line and line.isprintable()
    assert len(line) <= handoffs.LINE_LIMIT
    session = handoffs.resume_line({"kind": "session", "doing": "x\n" * 5000, "state": "s\n" * 500,
                                    "next_command": "y\n" * 500})
    assert "\n" not in session and len(session) <= handoffs.LINE_LIMIT


@pytest.mark.in_process
def test_resume_lines_show_five_tasks_then_a_count_then_the_session_note(repo):
    memory = memory_for(repo)
    for i in range(8):
        write_task(memory, f"t{i}", state="STUCK", updated_at=f"2024-05-01T10:00:0{i}Z")
    handoffs.write(memory, task_id="session-s1", kind="session", title="session s1", state="1 open task(s)",
                   next_command="maestro status", doing="refactoring")
    lines = handoffs.resume_lines(memory)
    assert len(lines) == 7
    assert [line.split(" — ")[0] for line in lines[:5]] == [f"Resuming: Task t{i}" for i in (7, 6, 5, 4, 3)]
    assert lines[5] == "(+3 more open task(s): maestro memory outcome list)"
    assert lines[6].startswith("Last session stopped with work open: refactoring — 1 open task(s); next: maestro status")


# ------------------------------------------------------------------ scenario 45 (adapted): session-start


def scenario_45(repo, outside):
    memory = memory_for(repo)
    plan = str(repo.parent / "plan-a.md")
    write_task(memory, "a", state="NEEDS_ANSWERS", title="Answer me", plan=plan, iterations=2)
    write_task(memory, "b", state="VERIFIED_DONE", title="Finished work")
    directory = memory.handoffs
    evil = {"version": 1, "task_id": "../x", "kind": "loop", "title": "Traversal", "state": "STUCK",
            "iterations": 1, "next_command": "evil", "plan": "/p"}
    with open(os.path.join(directory, "x.json"), "w") as handle:
        json.dump(evil, handle)
    with open(os.path.join(directory, "..json"), "w") as handle:
        json.dump(dict(evil, task_id=".", title="DotDot"), handle)
    with open(os.path.join(directory, "junk.json"), "wb") as handle:
        handle.write(b"\xff\xfe not json {")
    with open(os.path.join(directory, "notes.txt"), "w") as handle:
        handle.write("not a handoff")
    secret = outside / "secret.json"
    secret.write_text("SECRET-OUTSIDE-CONTENT\n")
    os.symlink(secret, os.path.join(directory, "link.json"))
    return memory, plan


def session_start(maestro, cwd, sid="s45"):
    return maestro("session-start", stdin=json.dumps({"session_id": sid, "source": "startup", "cwd": str(cwd)}))


def test_45_session_start_lists_open_work_and_ignores_done_and_hostile_files(maestro, repo, outside_tmp):
    memory, plan = scenario_45(repo, outside_tmp)
    assert [v["task_id"] for v in handoffs.load_open(memory)] == ["a"]
    result = session_start(maestro, repo)
    assert result.rc == 0, result.err
    assert f"Resuming: Answer me — NEEDS_ANSWERS after 2 iterations; answer QUESTIONS in {plan}\n" in result.out
    assert result.out.startswith("Open work (maestro project memory):\n")
    assert "Finished work" not in result.out and "Traversal" not in result.out and "DotDot" not in result.out
    assert "SECRET-OUTSIDE-CONTENT" not in result.out
    assert "Maestro: Codex pin is" in result.out.splitlines()[-1]
    assert len(result.out) < 10_000


def test_session_start_survives_a_symlinked_handoff_to_a_record_outside(maestro, repo, outside_tmp):
    memory = memory_for(repo)
    write_task(memory, "a", title="Real task")
    target = outside_tmp / "planted.json"
    target.write_text(json.dumps({"version": 1, "task_id": "planted", "kind": "loop", "title": "Planted task",
                                  "state": "STUCK", "iterations": 1, "next_command": "x", "plan": "/p"}))
    os.symlink(target, os.path.join(memory.handoffs, "planted.json"))
    result = session_start(maestro, repo)
    assert result.rc == 0 and "Resuming: Real task" in result.out
    assert "Planted task" not in result.out


@pytest.mark.in_process
def test_load_open_does_not_follow_a_symlink_out_of_the_store(repo, outside_tmp):
    memory = memory_for(repo)
    write_task(memory, "a", title="Real task")
    target = outside_tmp / "planted.json"
    target.write_text(json.dumps({"version": 1, "task_id": "planted", "kind": "loop", "title": "Planted task",
                                  "state": "STUCK", "iterations": 1, "next_command": "x", "plan": "/p"}))
    os.symlink(target, os.path.join(memory.handoffs, "planted.json"))
    assert [v["task_id"] for v in handoffs.load_open(memory)] == ["a"]


def test_session_start_resume_line_is_bounded_with_a_huge_multiline_title(maestro, repo):
    memory = memory_for(repo)
    title = ("Huge title line\n" * 700)[:10_000]
    path = handoffs.write(memory, task_id="big", kind="loop", title="x", state="STUCK", plan="/p.md",
                          iterations=4, next_command="do it\nnow")
    with open(path, encoding="utf-8") as handle:  # bypass write()'s bound: a hostile file on disk
        value = json.load(handle)
    project.write_json(path, dict(value, title=title, next_command="n\n" * 3000))
    result = session_start(maestro, repo)
    assert result.rc == 0
    lines = [line for line in result.out.splitlines() if line.startswith("Resuming:")]
    assert len(lines) == 1 and len(lines[0]) <= 300
    assert lines[0].startswith("Resuming: Huge title line Huge title line")
    assert "Huge title line" not in result.out.replace(lines[0], "")


def test_session_start_shows_five_open_tasks_and_a_count(maestro, repo):
    memory = memory_for(repo)
    for i in range(9):
        write_task(memory, f"t{i}", state="BLOCKED", title=f"Open task {i}", updated_at=f"2024-05-01T10:00:0{i}Z")
    result = session_start(maestro, repo)
    assert result.rc == 0
    assert sum(line.startswith("Resuming: ") for line in result.out.splitlines()) == 5
    assert "(+4 more open task(s): maestro memory outcome list)\n" in result.out
    assert "Open task 8" in result.out and "Open task 3" not in result.out


def test_session_start_without_handoffs_prints_no_open_work_block(maestro, repo):
    memory = memory_for(repo)
    write_task(memory, "b", state="VERIFIED_DONE")
    result = session_start(maestro, repo)
    assert result.rc == 0 and "Open work" not in result.out and "Resuming" not in result.out


# ---------------------------------------------------------------- scenario 46 (adapted): from_stop, in-process


def stop_payload(cwd, sid=SID, **extra):
    return dict({"session_id": sid, "transcript_path": "/nonexistent/t.jsonl", "cwd": str(cwd),
                 "hook_event_name": "Stop", "stop_hook_active": False}, **extra)


def session_note(memory, sid=SID):
    path = os.path.join(memory.handoffs, f"session-{sid}.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


@pytest.mark.in_process
def test_46_from_stop_with_an_open_task_writes_the_session_note(repo):
    memory = memory_for(repo)
    plan = str(repo.parent / "plan-a.md")
    write_task(memory, "a", state="NEEDS_ANSWERS", title="Answer me", plan=plan, questions="1. which module?",
               files=["app.py"])
    action = handoffs.from_stop(stop_payload(repo), last_prompt=lambda path: "refactor the value")
    assert action == "written"
    note = session_note(memory)
    assert note["kind"] == "session" and note["task_id"] == f"session-{SID}" and note["session_id"] == SID
    assert note["state"] == "1 open task(s): Answer me (NEEDS_ANSWERS)"
    assert note["next_command"] == handoffs.next_step("NEEDS_ANSWERS", plan, "make test")
    assert note["questions"] == "1. which module?" and note["files"] == ["app.py"]
    assert note["doing"] == "refactor the value"
    line = handoffs.resume_lines(memory)[-1]
    assert line.startswith("Last session stopped with work open: refactor the value — 1 open task(s): Answer me")


@pytest.mark.in_process
def test_46_from_stop_session_note_records_the_open_tasks_state(repo):
    memory = memory_for(repo)
    write_task(memory, "a", state="STUCK", title="Answer me")
    handoffs.from_stop(stop_payload(repo))
    assert "STUCK" in session_note(memory)["state"]


@pytest.mark.in_process
def test_from_stop_from_a_subdirectory_uses_the_project_root(repo):
    memory = memory_for(repo)
    write_task(memory, "a")
    sub = repo / "pkg"
    sub.mkdir()
    assert handoffs.from_stop(stop_payload(sub)) == "written"
    assert session_note(memory) is not None


@pytest.mark.in_process
def test_from_stop_with_no_open_work_clears_a_previous_note(repo):
    memory = memory_for(repo)
    write_task(memory, "a")
    assert handoffs.from_stop(stop_payload(repo)) == "written"
    handoffs.remove(memory, "a")
    write_task(memory, "b", state="VERIFIED_DONE")
    assert handoffs.from_stop(stop_payload(repo)) == "cleared"
    assert session_note(memory) is None
    assert handoffs.from_stop(stop_payload(repo)) == ""  # nothing left to clear


@pytest.mark.in_process
def test_from_stop_with_a_held_lease_records_the_lease_and_status_step(repo):
    memory = memory_for(repo)
    (repo / ".git" / "maestro-write.lock").mkdir()
    assert handoffs.from_stop(stop_payload(repo)) == "written"
    note = session_note(memory)
    assert "write dispatch holds the lease" in note["state"]
    assert note["next_command"].startswith("maestro status")
    assert note["files"] == []


@pytest.mark.in_process
def test_from_stop_keeps_one_session_note_per_project(repo):
    memory = memory_for(repo)
    write_task(memory, "a")
    handoffs.from_stop(stop_payload(repo, sid="first"))
    handoffs.from_stop(stop_payload(repo, sid="second"))
    assert [n for n in handoff_files(memory) if n.startswith("session-")] == ["session-second.json"]
    assert [v["task_id"] for v in handoffs.load_open(memory) if v["kind"] == "session"] == ["session-second"]


@pytest.mark.parametrize("payload", [
    {"agent_id": "sub-1"}, {"session_id": "bad id!"}, {"session_id": "../x"}, {"session_id": None},
    {"cwd": "relative/dir"}, {"cwd": "/nonexistent/dir"}, {"cwd": 7},
])
@pytest.mark.in_process
def test_from_stop_ignores_subagents_and_bad_payloads(repo, payload):
    memory = memory_for(repo)
    write_task(memory, "a")
    assert handoffs.from_stop(dict(stop_payload(repo), **payload)) == ""
    assert handoff_files(memory) == ["a.json"]


def test_from_stop_outside_git_only_counts_open_tasks(tmp_path):
    plain = (tmp_path / "plain").resolve()
    plain.mkdir()
    memory = memory_for(plain)
    assert handoffs.from_stop(stop_payload(plain)) == ""
    write_task(memory, "a")
    assert handoffs.from_stop(stop_payload(plain)) == "written"


def test_session_task_id_is_always_a_valid_id():
    for sid in ("a" * 64, "A-b_c", "x"):
        task_id = handoffs.session_task_id(sid)
        assert project.is_valid_id(task_id) and task_id.startswith("session-")


# ------------------------------------------------------------- scenario 46 (adapted): the `stop` hook, e2e
# These exercise the hook end to end; they need maestro/hooks/stop.py's handoff step to call
# handoffs.from_stop (being wired separately).


def stop(maestro, payload):
    return maestro("stop", stdin=json.dumps(payload) if not isinstance(payload, (str, bytes)) else payload)


def test_stop_hook_with_an_open_task_writes_the_session_handoff(maestro, repo):
    memory = memory_for(repo)
    plan = str(repo.parent / "plan-a.md")
    write_task(memory, "a", state="NEEDS_ANSWERS", title="Answer me", plan=plan)
    result = stop(maestro, stop_payload(repo))
    assert (result.rc, result.out) == (0, STOP_OUTPUT)
    note = session_note(memory)
    assert note is not None and note["kind"] == "session"
    assert note["state"] == "1 open task(s): Answer me (NEEDS_ANSWERS)"
    assert note["next_command"] == handoffs.next_step("NEEDS_ANSWERS", plan, "make test")


def test_stop_hook_with_no_open_work_removes_a_previous_session_handoff(maestro, repo):
    memory = memory_for(repo)
    handoffs.write(memory, task_id=f"session-{SID}", kind="session", title=f"session {SID}", state="old",
                   next_command="old step")
    result = stop(maestro, stop_payload(repo))
    assert (result.rc, result.out) == (0, STOP_OUTPUT)
    assert session_note(memory) is None


def test_stop_hook_with_a_held_lease_records_the_lease(maestro, repo):
    memory = memory_for(repo)
    (repo / ".git" / "maestro-write.lock").mkdir()
    result = stop(maestro, stop_payload(repo))
    assert (result.rc, result.out) == (0, STOP_OUTPUT)
    note = session_note(memory)
    assert note is not None and "lease" in note["state"] and note["next_command"].startswith("maestro status")


def test_stop_hook_for_a_subagent_writes_nothing(maestro, repo):
    memory = memory_for(repo)
    write_task(memory, "a")
    result = stop(maestro, stop_payload(repo, agent_id="agent-7"))
    assert (result.rc, result.out) == (0, STOP_OUTPUT)
    assert handoff_files(memory) == ["a.json"]


@pytest.mark.parametrize("raw", [b"", b"not json", b"[1,2]", b"\xff\xfe", b'{"session_id": 5, "cwd": []}'])
def test_stop_hook_with_garbage_stdin_continues(maestro, repo, raw):
    result = stop(maestro, raw)
    assert (result.rc, result.out) == (0, STOP_OUTPUT)


def test_next_step_quotes_a_hostile_plan_path_and_knows_the_watchdog():
    plan = """/tmp/my plan's "x" $(touch pwned).md"""
    step = handoffs.next_step("NEEDS_ANSWERS", plan, "make test")
    import shlex

    command = step.split("then run: ", 1)[1]
    assert shlex.split(command) == ["maestro", "loop", "--plan", plan, "--verify", "make test"]
    watch = handoffs.next_step("NEEDS_ANSWERS", plan, None, "watchdog", "fix-1")
    assert "maestro memory outcome list --task fix-1" in watch
    assert shlex.split(watch.split("then run: ", 1)[1]) == ["maestro", "watchdog", "--file", plan]
    line = handoffs.resume_line({"kind": "watchdog", "title": "Fix", "state": "NEEDS_ANSWERS", "iterations": 1,
                                 "plan": "/p.md", "task_id": "fix-1"})
    assert "answer the QUESTIONS (maestro memory outcome list --task fix-1)" in line and "QUESTIONS in /p.md" not in line


def test_a_fifo_among_the_handoffs_never_blocks_session_start(maestro, repo):
    memory = memory_for(repo)
    write_task(memory, "a", title="Real task")
    os.mkfifo(os.path.join(memory.handoffs, "fifo.json"))
    assert [v["task_id"] for v in handoffs.load_open(memory)] == ["a"]
    result = session_start(maestro, repo)
    assert result.rc == 0 and "Resuming: Real task" in result.out
