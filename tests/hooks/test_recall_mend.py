"""Recall's mends after review (issue 11 §4; maestro/hooks/recall.py, recall_refresh.py, inject.py,
session_start.py): a held index lock, the index of a big store filled outside the prompt, key entries of
another branch, FIFOs and symlinks where recall reads and writes, the config scan's blind spots, a broken
recall module, a corrupt index, handoffs read once."""

import fcntl
import io
import json
import os
import sys

import pytest

from maestro.hooks import inject, recall, recall_refresh
from testing.memory import project_dir, write_track as write

pytestmark = [pytest.mark.in_process, pytest.mark.timeout(30)]
SID = "recall-mend-1"
QUESTION = "why does the websocket reconnect need jitter in its backoff?"


@pytest.fixture(autouse=True)
def patient(monkeypatch):
    """No test here depends on how fast the machine is: the search budget is generous (one test sets its own)."""
    monkeypatch.setenv("MAESTRO_RECALL_BUDGET_SEC", "60")


@pytest.fixture
def store(mem_root, project):
    write(mem_root / "MEMORY.md", [f"[2024-03-{day:02d} 09:00] routine note {day} about the dashboard colours"
                                   for day in range(1, 21)])
    write(project_dir(mem_root, project) / "KEY.md",
          ["[id:0000000a] [2024-02-01] decided: the websocket reconnect uses exponential backoff with jitter",
           "[id:0000000b] [2024-02-03] [branch:feature-ws] decided: the websocket reconnect jitter is capped "
           "at thirty seconds of backoff"])
    write(project_dir(mem_root, project) / "MEMORY.md",
          ["[2024-02-02 10:00] websocket reconnect storms took the gateway down; backoff jitter fixed it"])
    return mem_root


def ask(project, text=QUESTION, sid=SID):
    return recall.block({"session_id": sid, "prompt": text, "cwd": str(project)})


# 1. a held index lock must not hold the prompt: SQLite's busy wait is bounded by the budget


def test_the_index_is_opened_with_a_busy_wait_within_the_budget(monkeypatch, store, project):
    from maestro.memory.store import index

    index_file = store / ".maestro-memory" / "index.sqlite3"
    index_file.parent.mkdir(parents=True, exist_ok=True)
    index_file.write_bytes(b"x")
    asked = []

    def spy(root, items, **options):
        asked.append(options.get("busy_ms"))
        return None

    monkeypatch.setattr(index, "open_corpus", spy)
    monkeypatch.setattr(recall_refresh, "start", lambda root, key: 0)
    monkeypatch.setenv("MAESTRO_RECALL_BUDGET_SEC", "0.5")
    ask(project)
    assert len(asked) == 1 and asked[0] is not None and 0 <= asked[0] <= 500


# 2. the index of a big store is filled by one detached refresher, then the prompt gets its block


def test_a_big_store_without_an_index_starts_one_refresher_and_then_recalls(monkeypatch, store, project):
    monkeypatch.setattr(recall, "FALLBACK_MAX_BYTES", 10)
    started = []
    real = recall_refresh.start

    def counted(root, key):
        pid = real(root, key)
        started.append(pid)
        return pid

    monkeypatch.setattr(recall_refresh, "start", counted)
    assert ask(project) == ""  # too big to parse on the prompt, no index yet
    assert len(started) == 1 and started[0] > 0
    _, status = os.waitpid(started[0], 0)  # the refresher is this process's child here
    assert os.waitstatus_to_exitcode(status) == 0
    assert (store / ".maestro-memory" / "index.sqlite3").is_file()
    block = ask(project)
    assert block.startswith(recall.TITLE) and "reconnect storms took the gateway down" in block
    assert len(started) == 1  # the index served: no second refresher
    assert not (store.parent / "logs").exists()  # and nothing crashed


def test_only_one_refresher_runs_and_a_failing_one_is_not_restarted_on_every_prompt(monkeypatch, mem_root):
    mem_root.mkdir(parents=True)
    spawned = []
    monkeypatch.setattr(os, "posix_spawn", lambda *args, **kwargs: spawned.append(args) or 4242)
    lock = recall_refresh.lock_path(str(mem_root))
    os.makedirs(os.path.dirname(lock), mode=0o700)
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a refresher runs
        assert recall_refresh.start(str(mem_root), "") == 0
    assert spawned == []
    assert recall_refresh.start(str(mem_root), "") == 4242
    assert recall_refresh.start(str(mem_root), "") == 0  # started a moment ago: the cooldown
    old = os.stat(lock).st_mtime - recall_refresh.COOLDOWN_SEC - 1
    os.utime(lock, (old, old))
    assert recall_refresh.start(str(mem_root), "") == 4242
    assert len(spawned) == 2


def test_a_planted_lock_file_starts_nothing(monkeypatch, mem_root, tmp_path):
    mem_root.mkdir(parents=True)
    monkeypatch.setattr(os, "posix_spawn", lambda *args, **kwargs: pytest.fail("started"))
    lock = recall_refresh.lock_path(str(mem_root))
    os.makedirs(os.path.dirname(lock), mode=0o700)
    target = tmp_path / "elsewhere"
    target.write_text("")
    os.symlink(target, lock)
    assert recall_refresh.start(str(mem_root), "") == 0
    os.unlink(lock)
    os.mkfifo(lock)
    assert recall_refresh.start(str(mem_root), "") == 0
    assert target.read_text() == ""


# 3. a key entry of another branch is hidden, as the snapshot hides it (both corpora)


@pytest.mark.parametrize("indexed", [False, True])
def test_key_entries_of_another_branch_are_not_recalled(store, project, indexed):
    if indexed:
        from maestro.memory.store import search

        search.search(str(store), "websocket", cwd=str(project))
        assert (store / ".maestro-memory" / "index.sqlite3").is_file()

    def texts(branch):
        return [doc.text for doc, _ in recall.hits(str(store), QUESTION, str(project), branch, set())]

    capped = "decided: the websocket reconnect jitter is capped at thirty seconds of backoff"
    assert capped in texts("feature-ws")
    assert capped in texts("")  # no branch known: every entry, as `memory list key`
    others = texts("main")
    assert capped not in others and "decided: the websocket reconnect uses exponential backoff with jitter" in others


# 4. a FIFO where recall reads never hangs the prompt


def test_a_fifo_at_the_record_path_reads_as_no_record(mem_root):
    path = mem_root / ".maestro-memory" / recall.RECORD_DIR / SID
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    assert recall.read_record(str(mem_root), SID) == ("", "", set())


def test_the_record_is_read_without_util_atomic_and_by_its_rules(mem_root, monkeypatch):
    """A prompt that shows no block never imports util/atomic (contextlib: ~1 ms): the record is read by
    recall_config.read_small — a regular file of ours at most MAX_RECORD_BYTES, never through a link."""
    from maestro.util import atomic

    recall.write_record(str(mem_root), SID, "/work/repo", "main", ["id:0000000a"])
    monkeypatch.setattr(atomic, "read_regular", None)  # not used on the way
    assert recall.read_record(str(mem_root), SID) == ("/work/repo", "main", {"id:0000000a"})
    path = mem_root / ".maestro-memory" / recall.RECORD_DIR / SID
    moved = path.with_name("elsewhere")
    path.rename(moved)
    path.symlink_to(moved)
    assert recall.read_record(str(mem_root), SID) == ("", "", set())
    path.unlink()
    moved.write_bytes(b"x" * (recall.MAX_RECORD_BYTES + 1))
    moved.rename(path)
    assert recall.read_record(str(mem_root), SID) == ("", "", set())


def test_a_fifo_as_the_config_is_the_default(tmp_path):
    os.mkfifo(tmp_path / "config.toml")
    assert recall.config(str(tmp_path / "config.toml")) == (True, recall.DEFAULT_CHARS)


def test_only_a_small_regular_config_is_read_and_not_through_util_atomic(tmp_path, monkeypatch):
    """The config is read by recall_config itself (util/atomic costs an import of contextlib, ~5 ms of a prompt
    with recall off), with atomic.read_regular's rules: a symlink, a directory or an oversized file is the default."""
    from maestro.hooks import recall_config
    from maestro.util import atomic

    monkeypatch.setattr(atomic, "read_regular", None)  # not used on the way
    real = tmp_path / "real.toml"
    real.write_text("[memory]\nrecall = false\n")
    assert recall.config(str(real)) == (False, recall.DEFAULT_CHARS)
    (tmp_path / "link.toml").symlink_to(real)
    (tmp_path / "dir.toml").mkdir()
    big = tmp_path / "big.toml"
    big.write_text("[memory]\nrecall = false\n" + "#" * recall_config.CONFIG_MAX_BYTES)
    for name in ("link.toml", "dir.toml", "big.toml", "absent.toml"):
        assert recall.config(str(tmp_path / name)) == (True, recall.DEFAULT_CHARS), name
    assert not hasattr(recall_config, "atomic")


def test_another_owners_record_is_not_read(mem_root, monkeypatch):
    recall.write_record(str(mem_root), SID, "/work/repo", "main", ["id:0000000a"])
    monkeypatch.setattr(os, "getuid", lambda: os.stat(mem_root).st_uid + 1)
    assert recall.read_record(str(mem_root), SID) == ("", "", set())


# 5. a symlinked recall directory is neither written through nor pruned through


def test_a_symlinked_record_directory_is_refused_and_its_target_untouched(mem_root, tmp_path):
    from maestro.util import atomic

    target = tmp_path / "victim"
    target.mkdir()
    (target / "old-session").write_text("keep me")
    stale = os.stat(target / "old-session").st_mtime - recall.PRUNE_AGE_SEC - 60
    os.utime(target / "old-session", (stale, stale))
    (mem_root / ".maestro-memory").mkdir(parents=True)
    os.symlink(target, mem_root / ".maestro-memory" / recall.RECORD_DIR)
    with pytest.raises(atomic.NotPrivate):
        recall.write_record(str(mem_root), SID, "", "", [])
    assert sorted(os.listdir(target)) == ["old-session"]


def test_pruning_removes_only_old_records_named_like_session_ids(mem_root):
    recall.write_record(str(mem_root), "old-session", "", "", [])
    directory = mem_root / ".maestro-memory" / recall.RECORD_DIR
    (directory / "notes.txt").write_text("not a record")
    (directory / "a-dir").mkdir()
    stale = os.stat(directory / "old-session").st_mtime - recall.PRUNE_AGE_SEC - 60
    for name in ("old-session", "notes.txt", "a-dir"):
        os.utime(directory / name, (stale, stale))
    recall.write_record(str(mem_root), SID, "", "", [])
    assert sorted(os.listdir(directory)) == sorted([SID, "notes.txt", "a-dir"])


# 6. where the cheap config scan cannot be sure, tomllib decides (both must agree)


@pytest.mark.parametrize("text, expected", [
    ('["memory"]\nrecall = false\n', (False, 1200)),
    ("['memory']\nrecall_chars = 300\n", (True, 300)),
    ("[memory]\nrecall_chars = 0x3E8\n", (True, 1000)),
    ("[memory]\nrecall_chars = +500\n", (True, 500)),
    ("[memory]\nrecall_chars = 01000\n", (True, 1200)),  # not TOML: the default, as tomllib says
    ("[memory]\nrecall_chars = 1__000\n", (True, 1200)),
    ('x = """\n[memory]\nrecall = false\n"""\n', (True, 1200)),  # text inside a string, not a table
    ("[memory]\nnote = '''\nrecall = false\n'''\n", (True, 1200)),
])
def test_the_config_scan_defers_to_tomllib(tmp_path, text, expected):
    import tomllib

    path = tmp_path / "config.toml"
    path.write_text(text)
    assert recall.config(str(path)) == expected
    try:
        table = tomllib.loads(text).get("memory") or {}
    except tomllib.TOMLDecodeError:
        table = {}
    assert table.get("recall", True) is expected[0]


# 7. a broken recall module costs the prompt its block, never the prompt


def test_a_recall_module_that_cannot_be_imported_does_not_reject_the_prompt(monkeypatch, home):
    import maestro.hooks

    monkeypatch.delattr(maestro.hooks, "recall")
    monkeypatch.setitem(sys.modules, "maestro.hooks.recall", None)  # `import` of it raises ImportError
    payload = {"session_id": SID, "prompt": "edit it yourself: fix the parser"}
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode()), encoding="utf-8"))
    assert inject.main([]) == 0
    from maestro import direct_edit

    assert direct_edit.flag_is_valid(SID)
    assert "inject:recall" in (home / ".maestro" / "logs" / "crashes.log").read_text()


# 8. a corrupt index found mid-query is removed and the prompt goes without hits


def test_a_corrupt_index_mid_query_is_discarded(monkeypatch, store, project):
    import sqlite3

    from maestro.memory.store import rank, search

    search.search(str(store), "websocket", cwd=str(project))
    index_file = store / ".maestro-memory" / "index.sqlite3"
    assert index_file.is_file()

    def corrupt(*args, **kwargs):
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(rank, "search", corrupt)
    assert recall.hits(str(store), QUESTION, str(project), "", set()) == []
    assert not index_file.exists()  # the next search rebuilds it


# 9. session-start reads the open handoffs once


def test_session_start_reads_the_handoffs_once(monkeypatch, store, project):
    from maestro.hooks import session_start
    from maestro.memory.project import files, handoffs

    memory = files.ProjectMemory.for_cwd(str(project))
    handoffs.write(memory, task_id="fix-ws", kind="loop", title="Fix the websocket reconnect", state="STUCK",
                   plan="/p/plan.md", iterations=2, next_command="maestro loop --plan /p/plan.md",
                   files=["src/ws.py"])
    reads = []
    real = handoffs.load_open
    monkeypatch.setattr(handoffs, "load_open", lambda memory: reads.append(1) or real(memory))
    text = session_start.memory_context({"session_id": SID, "cwd": str(project)}, "")
    assert "Fix the websocket reconnect" in text
    assert len(reads) == 1
