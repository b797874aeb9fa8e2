"""Todos (spec memory.md §2.12): the file format, statuses, due dates, Eisenhower quadrants and the
default ranked view of at most 8, all written through the store's transaction."""

import datetime
import json

import pytest
from testing.memory import CANONICAL_TIME

from maestro.memory.store import entry as grammar
from maestro.memory.store import todos as todo_mod
from maestro.memory.store.errors import StoreError
from maestro.memory.store.todos import Todos

TODAY = CANONICAL_TIME.date().isoformat()
YESTERDAY = (CANONICAL_TIME.date() - datetime.timedelta(days=1)).isoformat()
TOMORROW = (CANONICAL_TIME.date() + datetime.timedelta(days=1)).isoformat()


@pytest.fixture
def todos(store):
    return Todos(store)


def test_an_added_todo_is_stored_canonically_with_the_spec_header(todos, mem_root):
    todo, duplicate = todos.add("call the plumber", "work", due=TOMORROW, quadrant_="q2", cat="home")
    assert not duplicate
    raw = (mem_root / "TODOS-work.md").read_text()
    assert grammar.is_canonical(raw)
    entries = grammar.parse_entries(raw)
    assert entries[0].startswith("<!--") and entries[0].endswith("-->")
    assert entries[1] == (f"[2024-05-01 10:07] [id: {todo.id}] [q2] [due: {TOMORROW}] [status: open] [cat: home]\n"
                          "call the plumber")
    assert todo_mod.parse(entries[1]) == todo_mod.Todo(todo.id, "call the plumber", "2024-05-01 10:07", "open", 2,
                                                      TOMORROW, "home")


def test_each_list_has_its_own_file(todos, mem_root, tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    todos.add("a", "life")
    todos.add("b", "project", cwd=str(project))
    todos.add("c", "daily")
    assert (mem_root / "TODOS-life.md").is_file()
    assert list(mem_root.glob("projects/*/TODOS.md"))
    assert (mem_root / "daily" / f"{TODAY}.todo.md").is_file()


def test_the_same_open_text_in_the_same_list_is_a_duplicate(todos, mem_root):
    first, _ = todos.add("water plants", "life")
    again, duplicate = todos.add("water   plants", "life")
    assert duplicate and again.id == first.id
    assert len(grammar.parse_entries((mem_root / "TODOS-life.md").read_text())) == 2


@pytest.mark.parametrize("due", ["2024-02-30", "2024-5-1", "tomorrow", "../../x"])
def test_an_invalid_due_date_is_refused_and_nothing_is_written(todos, mem_root, due):
    with pytest.raises(StoreError) as err:
        todos.add("x", "work", due=due)
    assert err.value.code == 3
    assert not (mem_root / "TODOS-work.md").exists()


@pytest.mark.parametrize("q", ["q5", "0", "urgent", "q"])
def test_an_invalid_quadrant_is_refused(todos, q):
    with pytest.raises(StoreError) as err:
        todos.add("x", "work", quadrant_=q)
    assert err.value.code == 3


def test_a_secret_in_a_todo_is_filtered_and_never_reaches_disk(todos, mem_root):
    todo, _ = todos.add("rotate ghp_abcdefghijklmnopqrstuvwxyz0123456789 today", "work")
    assert "ghp_" not in todo.text and "[Filtered:" in todo.text
    assert b"ghp_abcdef" not in (mem_root / "TODOS-work.md").read_bytes()


def test_a_pure_secret_todo_is_refused(todos, mem_root):
    with pytest.raises(StoreError) as err:
        todos.add("sk-abcdefgh12345678", "work")
    assert err.value.reason == "sensitive"
    assert not (mem_root / "TODOS-work.md").exists()


def test_done_drop_start_and_reopen_change_the_status_in_place(todos, clock):
    todo, _ = todos.add("ship it", "work", quadrant_=1)
    assert todos.set_status(todo.id, "doing").status == "doing"
    clock.now = CANONICAL_TIME + datetime.timedelta(hours=1)
    done = todos.set_status(todo.id[:5], "done")
    assert done.status == "done" and done.done == "2024-05-01 11:07"
    assert todos.set_status(todo.id, "open").done is None
    assert todos.set_status(todo.id, "dropped").status == "dropped"
    assert [t.status for t in todos.all()] == ["dropped"]


def test_an_unknown_id_is_no_match(todos):
    with pytest.raises(StoreError) as err:
        todos.set_status("deadbeef", "done")
    assert err.value.reason == "no_match" and err.value.code == 4


@pytest.mark.in_process
def test_ranking_is_overdue_then_today_then_quadrants_then_none(todos, tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    todos.add("none", "project", cwd=str(project))
    todos.add("q4 item", "project", cwd=str(project), quadrant_=4)
    todos.add("q2 item", "work", quadrant_=2)
    todos.add("q1 item", "life", quadrant_=1)
    todos.add("due today", "work", due=TODAY)
    todos.add("overdue", "life", due=YESTERDAY)
    view, more = todo_mod.default_view(todos.all(str(project)), TODAY)
    assert [t.text for t in view] == ["overdue", "due today", "q1 item", "q2 item", "q4 item", "none"]
    assert more == 0


def test_the_default_view_holds_at_most_eight_and_skips_what_does_not_qualify(todos):
    for i in range(10):
        todos.add(f"urgent {i}", "work", quadrant_=1)
    todos.add("someday", "life", quadrant_=4)  # life q4 with no due date: not in the view
    todos.add("tomorrow", "work", due=TOMORROW)  # not due yet, no quadrant: not in the view
    done, _ = todos.add("finished", "work", due=YESTERDAY)
    todos.set_status(done.id, "done")
    view, more = todo_mod.default_view(todos.all(), TODAY)
    assert len(view) == 8 and more == 2
    assert all(t.text.startswith("urgent ") for t in view)
    assert [t.text for t in view] == [f"urgent {i}" for i in range(8)]  # oldest first within a tier


def test_archive_moves_done_and_dropped_todos(todos, mem_root):
    keep, _ = todos.add("keep", "work")
    gone, _ = todos.add("gone", "work")
    todos.set_status(gone.id, "done")
    moved = todos.archive()
    assert [t.id for t in moved] == [gone.id]
    assert [t.id for t in todos.all()] == [keep.id]
    archived = grammar.parse_entries((mem_root / "TODO-archive.md").read_text())
    assert archived[0] == todo_mod.HEADER and gone.id in archived[1]


def test_a_drifted_todo_file_is_backed_up_and_the_write_refused(todos, mem_root):
    mem_root.mkdir(parents=True)
    (mem_root / "TODOS-work.md").write_text("A\n§\nB")  # no trailing newline: not canonical
    with pytest.raises(StoreError) as err:
        todos.add("x", "work")
    assert err.value.reason == "drift"
    assert (mem_root / "TODOS-work.md").read_text() == "A\n§\nB"
    assert list(mem_root.glob("TODOS-work.md.bak.*"))


# ---------------------------------------------------------------------------- the command


def test_cli_add_list_done(maestro, mem_root):
    added = maestro("memory", "todo", "add", "pay rent", "--quadrant", "q1", "--json")
    assert added.rc == 0, added.err
    todo_id = json.loads(added.out)["todo"]["id"]
    listed = maestro("memory", "todo", "list")
    assert listed.rc == 0 and todo_id in listed.out and "pay rent" in listed.out
    done = maestro("memory", "todo", "done", todo_id)
    assert done.rc == 0, done.err
    assert todo_id not in maestro("memory", "todo", "list").out
    every = json.loads(maestro("memory", "todo", "list", "--all", "--json").out)
    assert [t["status"] for t in every["todos"]] == ["done"]


def test_cli_list_caps_the_default_view_at_eight(maestro):
    for i in range(9):
        assert maestro("memory", "todo", "add", f"task {i}", "-q", "1").rc == 0
    view = json.loads(maestro("memory", "todo", "list", "--json").out)
    assert len(view["todos"]) == 8 and view["more"] == 1
    assert len(json.loads(maestro("memory", "todo", "list", "--all", "--json").out)["todos"]) == 9


def test_cli_invalid_due_date_exits_3(maestro, mem_root):
    result = maestro("memory", "todo", "add", "x", "--due", "2024-13-01")
    assert result.rc == 3 and "invalid due date" in result.err
    assert not (mem_root / "TODOS-work.md").exists()


def test_cli_todo_respects_the_write_block(maestro, mem_root):
    (mem_root / ".maestro-memory").mkdir(parents=True)
    (mem_root / ".maestro-memory" / "write-block.json").write_text('{"blocked": true}')
    result = maestro("memory", "todo", "add", "x")
    assert result.rc == 4 and "blocked" in result.err
    assert not (mem_root / "TODOS-work.md").exists()
    assert maestro("memory", "todo", "list").rc == 0


def test_list_view_counts_the_open_todos_the_default_view_leaves_out(todos):
    plain, _ = todos.add("plain work todo", "work")  # no due date, no quadrant: not in the default view
    todos.add("urgent", "work", quadrant_=1)
    finished, _ = todos.add("finished", "life")
    todos.set_status(finished.id, "done")
    view = todo_mod.list_view(todos.all(), TODAY)
    assert [t.text for t in view.shown] == ["urgent"] and view.more == 0
    assert [t.id for t in view.left_out] == [plain.id]  # done todos are not "left out"
    named = todo_mod.list_view(todos.all(), TODAY, "work")
    assert [t.text for t in named.shown] == ["urgent", "plain work todo"] and named.left_out == []


def test_cli_a_todo_just_added_is_listed_or_said_where_it_is(maestro):
    """Issue 16 item 6: `todo add` then `todo list` printed nothing; only --all showed it."""
    assert maestro("memory", "todo", "add", "water the plants").rc == 0
    listed = maestro("memory", "todo", "list")
    assert listed.rc == 0, listed.err
    lines = listed.out.splitlines()
    assert len(lines) == 1 and "1 open todo(s) not in this view" in lines[0]
    assert lines[0].endswith("(see them: todo list --list work)")
    as_json = json.loads(maestro("memory", "todo", "list", "--json").out)
    assert as_json["todos"] == [] and as_json["left_out"] == 1
    work = maestro("memory", "todo", "list", "--list", "work")
    assert work.rc == 0 and "water the plants" in work.out and "(work)" in work.out
    assert "not in this view" not in work.out
    assert maestro("memory", "todo", "list", "--list", "life").out == ""


def test_cli_left_out_todos_in_several_lists_point_at_all(maestro):
    assert maestro("memory", "todo", "add", "a work todo").rc == 0
    assert maestro("memory", "todo", "add", "a life todo", "--list", "life").rc == 0
    listed = maestro("memory", "todo", "list")
    assert "2 open todo(s) not in this view" in listed.out and "(see them: todo list --all)" in listed.out


def test_cli_a_named_list_over_the_cap_points_at_that_list_s_all(maestro):
    for i in range(9):
        assert maestro("memory", "todo", "add", f"chore {i}", "--list", "life").rc == 0
    listed = maestro("memory", "todo", "list", "--list", "life")
    lines = listed.out.splitlines()
    assert len(lines) == 9 and lines[-1] == "… 1 more (todo list --list life --all)"
