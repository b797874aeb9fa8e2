"""The search index after review (issue 11 §2): progress that survives a short budget, one read
transaction per search, git's racy rule, bounded work under the store lock, no host parameter per file,
a planner order that cannot flip, a busy timeout the recall chooses, `warm`, and the entries' branches."""

import os
import sqlite3
import time

import pytest

from maestro.memory.store import index, index_connect, index_corpus, index_files, index_rows
from maestro.memory.store import search as memsearch
from testing.memory import same_as_files as agrees, write_track as write_entries

pytestmark = pytest.mark.in_process


class CutShort(BaseException):
    """What a deadline or a kill does to a refresh: nothing after it runs."""


@pytest.fixture(autouse=True)
def index_on(monkeypatch):
    monkeypatch.delenv("MAESTRO_MEMORY_INDEX", raising=False)


def files_rows(root):
    conn = sqlite3.connect(index.index_path(str(root)))
    try:
        return {path: (size, count) for path, size, count in conn.execute("SELECT path, size, doc_count FROM files")}
    finally:
        conn.close()


def counting_analyzer(monkeypatch):
    analyzed = []
    real = index_files.analyze
    monkeypatch.setattr(index_files, "analyze", lambda text: analyzed.append(text) or real(text))
    return analyzed


def test_a_refresh_cut_short_keeps_each_file_and_each_chunk_it_committed(store, mem_root, monkeypatch):
    store.add("global", "seed entry")
    memsearch.search(str(mem_root), "seed")  # the index exists
    write_entries(mem_root / "USER.md", ["user note about chunks"])
    daily = mem_root / "daily" / "2024-05-01.md"
    write_entries(daily, [f"daily note {i} about chunks" for i in range(10)])
    monkeypatch.setattr(index_rows, "CHUNK_ENTRIES", 3)
    analyzed = counting_analyzer(monkeypatch)
    real, calls = index._reindex, []

    def deadline(*args):
        calls.append(args[2].rel)
        if len(calls) == 4:  # USER.md with 2 daily entries, then 3 more were committed (3 a transaction)
            raise CutShort
        return real(*args)

    monkeypatch.setattr(index, "_reindex", deadline)
    items = index_files.wanted(str(mem_root))
    with pytest.raises(CutShort):  # was: one transaction, all of it rolled back at every cut
        index.open_corpus(str(mem_root), items)
    rows = files_rows(mem_root)
    assert rows["USER.md"] == (os.path.getsize(mem_root / "USER.md"), 1)
    assert rows["daily/2024-05-01.md"][0] is None, "a file indexed in part stays stale until its last chunk"
    assert len(analyzed) == 6
    monkeypatch.setattr(index, "_reindex", real)
    index.open_corpus(str(mem_root), items).close()
    assert len(analyzed) == 11, "the next refresh goes on from the committed chunks"
    assert len(agrees(mem_root, "chunks", monkeypatch, limit=20)) == 11
    assert files_rows(mem_root)["daily/2024-05-01.md"] == (os.path.getsize(daily), 10)


def test_a_search_reads_one_state_of_the_index_whatever_commits_meanwhile(store, mem_root):
    store.add("global", "snapshot entry about isolation")
    root = str(mem_root)
    corpus = index.open_corpus(root, index_files.wanted(root))
    try:
        before = (corpus.n_docs, corpus.df("isol"))
        other = sqlite3.connect(index.index_path(root), timeout=0, isolation_level=None)
        try:  # another process's commit: blocked by the read transaction (was: committed under the search)
            other.execute("BEGIN IMMEDIATE")
            other.execute("INSERT OR REPLACE INTO bits(term, seg, one) VALUES ('isol', 0, x'00000000ff')")
            other.execute("UPDATE files SET doc_count = doc_count + 5")
            with pytest.raises(sqlite3.OperationalError):
                other.execute("COMMIT")
            other.execute("ROLLBACK")
        finally:
            other.close()
        assert (corpus.n_docs, corpus.df("isol"), corpus.df("snapshot")) == (*before, 1) == (1, 1, 1)
    finally:
        corpus.close()


def test_a_same_size_edit_in_the_clock_tick_of_the_indexing_read_is_caught(store, mem_root, monkeypatch):
    """Git's racy rule: a row stored while its file's mtime was within RACY_NS of the read keeps the
    digest of the bytes, and the stat check compares it while the file stays that young."""
    memory = mem_root / "MEMORY.md"
    write_entries(memory, ["racy original note"])
    now = time.time()
    os.utime(memory, (now, now))  # modified just now: racy
    assert agrees(mem_root, "racy", monkeypatch) == ["racy original note"]
    memory.write_text(memory.read_text().replace("original", "replaced"))  # same size, in place
    st = os.stat(memory)
    conn = sqlite3.connect(index.index_path(str(mem_root)))
    with conn:  # the edit fell in the same tick: its stat is the one indexed
        conn.execute("UPDATE files SET size = ?, mtime_ns = ?, ctime_ns = ?, inode = ? WHERE path = 'MEMORY.md'",
                     (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    conn.close()
    assert agrees(mem_root, "racy", monkeypatch) == ["racy replaced note"]  # was: the stale row's text
    old = now - 3600
    os.utime(memory, (old, old))
    seen = []
    real = index._reindex
    monkeypatch.setattr(index, "_reindex", lambda *args: seen.append(args[2].rel) or real(*args))
    assert agrees(mem_root, "racy", monkeypatch) == ["racy replaced note"]
    assert agrees(mem_root, "racy", monkeypatch) == ["racy replaced note"]
    assert seen == ["MEMORY.md"] and not index._known(sqlite3.connect(index.index_path(str(mem_root))))["MEMORY.md"][2]


def test_a_store_write_indexes_at_most_one_chunk_of_a_file_under_the_store_lock(store, mem_root, monkeypatch):
    store.add("global", "seed entry")
    memsearch.search(str(mem_root), "seed")
    write_entries(mem_root / "USER.md", [f"bulk note {i}" for i in range(10)])
    monkeypatch.setattr(index_rows, "CHUNK_ENTRIES", 3)
    analyzed = counting_analyzer(monkeypatch)
    index.refresh_written(str(mem_root), [str(mem_root / "USER.md")])
    assert len(analyzed) == 3, "was: every entry of the file analyzed under the store lock"
    assert files_rows(mem_root)["USER.md"][0] is None
    assert len(agrees(mem_root, "bulk", monkeypatch, limit=20)) == 10


def test_file_ids_need_no_host_parameter_per_file(store, mem_root):
    for day in range(1, 9):
        store.add("daily", f"day {day} note about limits", date=f"2024-05-0{day}")
    root = str(mem_root)
    assert len(memsearch.search(root, "limits")) == 8
    conn = index._open(sqlite3, root, create=False)
    conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 5)  # as 999 is on SQLite < 3.32 for 1,000 files
    corpus = index_corpus.IndexCorpus(conn, [item.rel for item in index_files.wanted(root)])
    try:  # was: OperationalError, too many SQL variables
        assert corpus.n_docs == 8 and len(corpus.candidates(["limit"], 100)) == 8
    finally:
        corpus.close()


def test_a_busy_index_costs_the_recall_no_wait_and_warm_brings_it_up_to_date(store, mem_root, monkeypatch):
    store.add("global", "busy entry about locks")
    root = str(mem_root)
    items = index_files.wanted(root)
    index.open_corpus(root, items).close()
    write_entries(mem_root / "USER.md", ["user entry about locks"])
    holder = sqlite3.connect(index.index_path(root), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process's index transaction
    try:
        assert index.open_corpus(root, items, busy_ms=0) is None  # no wait: the recall parses or skips
        monkeypatch.setattr(index_connect, "BUSY_MS", 0)  # the refresher waits BUSY_MS, then gives up
        assert index.warm(root, items) is False
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert index.warm(root, items) is True
    seen = []
    real = index._reindex
    monkeypatch.setattr(index, "_reindex", lambda *args: seen.append(args[2].rel) or real(*args))
    corpus = index.open_corpus(root, items, busy_ms=0)
    corpus.close()
    assert seen == []


def test_each_document_carries_its_branches_in_both_corpora(store, mem_root):
    write_entries(mem_root / "MEMORY.md", ["[branch:feat-x, fix/y] scoped note about the parser",
                                           "unscoped note about the parser", "[branch:] empty tag parser note"])
    root = str(mem_root)
    items = index_files.wanted(root)
    corpus = index.open_corpus(root, items)
    try:
        fast = {doc.text: doc.branches for doc in corpus.candidates(["parser"], 10)}
    finally:
        corpus.close()
    slow = {doc.text: doc.branches for doc in memsearch.memory_corpus(root, items).candidates(["parser"], 10)}
    assert fast == slow == {"scoped note about the parser": ("feat-x", "fix/y"), "unscoped note about the parser": (),
                            "empty tag parser note": ()}
