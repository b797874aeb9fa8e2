"""The suggestion queue (spec memory.md §2.12): `memory suggest` enqueues instead of writing;
`queue approve N` writes through the store (the only way a model's key entry lands), reject and
archive leave the track untouched; numbers are stable; write-block and the lock apply."""

import json
import os

import pytest
from testing.memory import key_file, leftovers, spawn

from maestro.memory.store import entry as grammar
from maestro.memory.store.errors import StoreError
from maestro.memory.store.queue import Queue


@pytest.fixture
def queue(store):
    return Queue(store)


def lines(mem_root):
    path = mem_root / "SUGGESTIONS.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_suggest_queues_a_line_with_the_dsh_fields_and_writes_no_track(queue, mem_root, project):
    item, again = queue.suggest("key", "use pnpm", cwd=str(project), branches=["main"], reason="seen twice",
                                session_id="s1")
    assert not again and item["n"] == 1
    [line] = lines(mem_root)
    assert {"time", "target", "content", "reason", "cwd", "sessionId", "hits", "firstSeen", "lastSeen"} <= set(line)
    assert line["target"] == "key" and line["content"] == "use pnpm" and line["branches"] == ["main"]
    assert line["cwd"] == os.path.realpath(project) and line["hits"] == 1 and line["sessionId"] == "s1"
    assert not key_file(mem_root, project).exists()


def test_the_same_target_and_normalised_content_raises_hits(queue, mem_root):
    queue.suggest("user", "Likes tea")
    item, again = queue.suggest("user", "  likes   TEA ")
    assert again and item["hits"] == 2 and item["n"] == 1
    assert len(lines(mem_root)) == 1
    queue.suggest("memory", "likes tea")  # another target: another suggestion
    assert len(lines(mem_root)) == 2


def test_a_secret_in_a_suggestion_is_filtered_before_it_is_queued(queue, mem_root):
    item, _ = queue.suggest("user", "deploy with password=hunter2 on fridays")
    assert "hunter2" not in item["content"]
    assert b"hunter2" not in (mem_root / "SUGGESTIONS.jsonl").read_bytes()
    with pytest.raises(StoreError):
        queue.suggest("user", "sk-abcdefgh12345678")
    assert len(lines(mem_root)) == 1


def test_approve_writes_exactly_one_entry_and_removes_it_from_the_queue(queue, mem_root, project):
    queue.suggest("key", "use pnpm", cwd=str(project), branches=["main"])
    queue.suggest("user", "likes tea")
    decision = queue.approve(1)
    assert decision.action == "approved"
    entries = grammar.parse_entries(key_file(mem_root, project).read_text())
    assert len(entries) == 1
    assert entries[0].startswith("[id:") and "[branch:main]" in entries[0] and entries[0].endswith("use pnpm")
    assert [i["n"] for i in lines(mem_root)] == [2]


def test_approve_with_edits_stores_the_edited_text(queue, mem_root):
    queue.suggest("user", "likes tea")
    assert queue.approve(1, text="likes green tea").action == "approved"
    assert grammar.parse_entries((mem_root / "USER.md").read_text())[0].endswith("likes green tea")


def test_approving_what_is_already_stored_drops_it_from_the_queue(queue, store, mem_root):
    store.add("user", "likes tea")
    queue.suggest("user", "likes tea")
    assert queue.approve(1).action == "duplicate"
    assert lines(mem_root) == [] and len(grammar.parse_entries((mem_root / "USER.md").read_text())) == 1


def test_a_failed_approve_stays_queued(queue, mem_root, project):
    queue.suggest("key", "use pnpm", cwd=str(project))
    project.rmdir()  # the project directory is gone: the write fails
    with pytest.raises(StoreError):
        queue.approve(1)
    assert [i["n"] for i in lines(mem_root)] == [1]


def test_reject_and_archive_leave_the_track_untouched(queue, mem_root, project):
    queue.suggest("key", "use pnpm", cwd=str(project))
    queue.suggest("key", "use yarn", cwd=str(project))
    assert queue.reject(1).action == "rejected"
    decision = queue.archive(2)
    assert decision.action == "archived"
    assert not key_file(mem_root, project).exists()
    archive = key_file(mem_root, project).parent / "KEY-archive.md"
    [archived] = grammar.parse_entries(archive.read_text())
    assert archived.startswith("[id:") and archived.endswith("use yarn")
    assert lines(mem_root) == []


def test_archive_of_a_track_without_an_archive_is_refused_and_stays_queued(queue, mem_root):
    queue.suggest("daily", "stand-up at ten")
    with pytest.raises(StoreError) as err:
        queue.archive(1)
    assert err.value.code == 3 and len(lines(mem_root)) == 1


def test_numbers_are_stable_across_lists_and_decisions_and_never_reused(queue):
    for text in ("a1", "b2", "c3"):
        queue.suggest("user", text)
    first = [(i["n"], i["content"]) for i in queue.items()]
    assert first == [(1, "a1"), (2, "b2"), (3, "c3")]
    assert [(i["n"], i["content"]) for i in queue.items()] == first
    queue.reject(2)
    assert [(i["n"], i["content"]) for i in queue.items()] == [(1, "a1"), (3, "c3")]
    queue.reject(3)
    queue.reject(1)
    item, _ = queue.suggest("user", "d4")
    assert item["n"] == 4
    with pytest.raises(StoreError) as err:
        queue.approve(1)
    assert err.value.reason == "no_match"


def test_dsh_lines_without_numbers_are_numbered_in_file_order(queue, mem_root):
    mem_root.mkdir(parents=True)
    (mem_root / "SUGGESTIONS.jsonl").write_text(
        '{"time":"t","target":"user","content":"one","hits":1}\n{"time":"t","target":"memory","content":"two"}\n')
    assert [(i["n"], i["content"]) for i in queue.items()] == [(1, "one"), (2, "two")]
    queue.approve(2)
    assert [(i["n"], i["content"]) for i in lines(mem_root)] == [(1, "one")]
    assert (mem_root / "MEMORY.md").read_text().rstrip().endswith("two")


def test_a_malformed_queue_is_backed_up_and_the_write_refused(queue, mem_root):
    mem_root.mkdir(parents=True)
    (mem_root / "SUGGESTIONS.jsonl").write_text("not json\n")
    with pytest.raises(StoreError) as err:
        queue.suggest("user", "x")
    assert err.value.reason == "drift"
    assert (mem_root / "SUGGESTIONS.jsonl").read_text() == "not json\n"
    assert list(mem_root.glob("SUGGESTIONS.jsonl.bak.*"))


def test_the_write_block_refuses_suggest_and_decisions(queue, mem_root):
    queue.suggest("user", "likes tea")
    before = (mem_root / "SUGGESTIONS.jsonl").read_bytes()
    (mem_root / ".maestro-memory" / "write-block.json").write_text('{"blocked": true}')
    for call in (lambda: queue.suggest("user", "x"), lambda: queue.approve(1), lambda: queue.reject(1),
                 lambda: queue.archive(1)):
        with pytest.raises(StoreError) as err:
            call()
        assert err.value.reason == "blocked"
    assert (mem_root / "SUGGESTIONS.jsonl").read_bytes() == before
    assert not (mem_root / "USER.md").exists()
    assert [i["n"] for i in queue.items()] == [1]


# ---------------------------------------------------------------------------- the commands


def test_cli_suggest_list_approve(maestro, mem_root, project):
    queued = maestro("memory", "suggest", "key", "prefer uv", "--cwd", str(project), "--branch", "dev")
    assert queued.rc == 0, queued.err
    assert "queued 1" in queued.out
    listed = maestro("memory", "queue", "list")
    assert listed.rc == 0 and "1. key" in listed.out and "prefer uv" in listed.out
    assert json.loads(maestro("memory", "queue", "list", "--json").out)["suggestions"][0]["n"] == 1
    approved = maestro("memory", "queue", "approve", "1")
    assert approved.rc == 0, approved.err
    [entry] = grammar.parse_entries(key_file(mem_root, project).read_text())
    assert "[branch:dev]" in entry and entry.endswith("prefer uv")
    again = maestro("memory", "queue", "approve", "1")
    assert again.rc == 4 and "no suggestion 1" in again.err
    assert "the queue is empty" in maestro("memory", "queue", "list").out


def test_cli_reject_and_bad_numbers(maestro, mem_root):
    assert maestro("memory", "suggest", "user", "likes tea").rc == 0
    assert maestro("memory", "queue", "approve", "x").rc == 3
    assert maestro("memory", "queue", "approve").rc == 3
    assert maestro("memory", "queue", "reject", "1").rc == 0
    assert not (mem_root / "USER.md").exists()


def test_cli_write_block(maestro, mem_root):
    assert maestro("memory", "suggest", "user", "likes tea").rc == 0
    (mem_root / ".maestro-memory" / "write-block.json").write_text('{"blocked": true}')
    result = maestro("memory", "queue", "approve", "1")
    assert result.rc == 4 and "blocked" in result.err
    assert maestro("memory", "queue", "list").rc == 0


def test_concurrent_approve_of_the_same_number_lands_once(maestro, mem_root, project):
    assert maestro("memory", "suggest", "key", "one decision", "--cwd", str(project)).rc == 0
    assert maestro("memory", "suggest", "key", "another decision", "--cwd", str(project)).rc == 0
    procs = [spawn("memory", "queue", "approve", "1") for _ in range(2)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=30)
        results.append((proc.returncode, err.decode()))
    assert sorted(rc for rc, _ in results) == [0, 4], results
    entries = grammar.parse_entries(key_file(mem_root, project).read_text())
    assert len(entries) == 1 and entries[0].endswith("one decision")
    assert [i["n"] for i in lines(mem_root)] == [2]
    assert leftovers(mem_root) == []
