"""The index's views (maestro/memory/store/index_views.py): a search whose files all still have the stat
signatures a view recorded reads that one row instead of the files table, and that never changes an answer
— after appends, hand edits, vanished and new files, racy files, a writer between the search and its view,
a busy index and a damaged view row."""

import os
import random
import sqlite3

import pytest

from maestro.memory.store import index, index_files, index_rows, index_views
from maestro.memory.store import search as memsearch
from testing.memory import same_as_files

pytestmark = pytest.mark.in_process

HOUR_NS = 3600 * 10**9


@pytest.fixture(autouse=True)
def index_on(monkeypatch):
    monkeypatch.delenv("MAESTRO_MEMORY_INDEX", raising=False)


def age(root) -> None:
    """Every track file last modified an hour ago (no longer racy: index_rows.RACY_NS)."""
    for folder, _dirs, names in os.walk(root):
        for name in names:
            if name.endswith(".md"):
                path = os.path.join(folder, name)
                st = os.stat(path)
                os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - HOUR_NS))


def views(root) -> list:
    conn = sqlite3.connect(index.index_path(str(root)))
    try:
        return conn.execute("SELECT scope, stamp FROM views").fetchall()
    finally:
        conn.close()


@pytest.fixture
def statements(monkeypatch):
    """Every SQL statement the index's connections run from now on."""
    seen = []
    real = index._connect

    def traced(*args, **kwargs):
        conn = real(*args, **kwargs)
        conn.set_trace_callback(seen.append)
        return conn

    monkeypatch.setattr(index, "_connect", traced)
    return seen


def fill(store, count=12):
    for n in range(count):
        store.add("global", f"decision {n}: the lock file stays under the store root")
        store.add("daily", f"daily note {n}: the lock was slow today")


def test_a_search_leaves_a_view_and_the_next_one_reads_only_that(store, mem_root, statements):
    fill(store)
    age(mem_root)
    memsearch.search(str(mem_root), "lock slow")  # re-indexes the aged files (their mtimes changed)
    first = memsearch.search(str(mem_root), "lock slow")  # finds them fresh: leaves the view
    assert [scope for scope, _stamp in views(mem_root)] == [index_views.scope_of(
        [item.rel for item in index_files.wanted(str(mem_root))])]
    statements.clear()
    assert memsearch.search(str(mem_root), "lock slow") == first
    assert any("FROM views" in sql for sql in statements)
    assert not any("FROM files" in sql for sql in statements), statements  # the rows were not read


def test_no_view_is_left_while_a_file_is_racy(store, mem_root, monkeypatch):
    fill(store, 3)
    racy_ns = index_rows.RACY_NS
    monkeypatch.setattr(index_rows, "RACY_NS", HOUR_NS)  # (however slow the machine, the files stay racy)
    memsearch.search(str(mem_root), "lock")  # the files were just written: racy
    memsearch.search(str(mem_root), "lock")
    assert views(mem_root) == []
    monkeypatch.setattr(index_rows, "RACY_NS", racy_ns)
    age(mem_root)
    memsearch.search(str(mem_root), "lock")  # re-reads the aged files (their mtimes changed)
    memsearch.search(str(mem_root), "lock")  # rows fresh and not racy: leaves the view
    assert len(views(mem_root)) == 1


def test_views_never_change_an_answer_whatever_happens_to_the_files(store, mem_root, monkeypatch):
    rng = random.Random(3)
    fill(store, 20)
    age(mem_root)
    daily = mem_root / "daily"
    queries = ["lock", "decision store root", "daily slow", "hand edit", "new day"]
    for step in range(40):
        action = rng.choice(["append", "hand", "same-size", "new-day", "drop-day", "touch", "replace", "none"])
        memory = mem_root / "MEMORY.md"
        if action == "append":
            store.add("global", f"decision {step}: a hand edit of the lock")
        elif action == "hand":
            memory.write_text(memory.read_text() + f"§\nhand edit {step} of the lock\n")
        elif action == "same-size":  # same size and mtime: ctime (and the racy digest) still tell
            before = memory.stat()
            text = memory.read_text()
            memory.write_text(text.replace("decision", "Decision", 1))
            os.utime(memory, ns=(before.st_atime_ns, before.st_mtime_ns))
        elif action == "new-day":
            (daily / f"2024-06-{1 + step % 28:02d}.md").write_text(f"new day {step}: the lock again\n")
        elif action == "drop-day":
            days = sorted(daily.iterdir())
            if days:
                days[0].unlink()
        elif action == "touch":
            os.utime(memory)
        elif action == "replace":  # another inode, same bytes
            data = memory.read_bytes()
            (mem_root / "MEMORY.md.new").write_bytes(data)
            os.replace(mem_root / "MEMORY.md.new", memory)
        if rng.random() < 0.5:
            age(mem_root)
        for query in queries:
            same_as_files(mem_root, query, monkeypatch)
    assert views(mem_root), "views were in play"


def test_a_commit_after_the_search_began_leaves_no_view(store, mem_root):
    fill(store, 4)
    age(mem_root)
    memsearch.search(str(mem_root), "lock")
    memsearch.search(str(mem_root), "lock")  # settles
    root = str(mem_root)
    conn = sqlite3.connect(index.index_path(root))
    conn.execute("DELETE FROM views")
    conn.commit()
    corpus = index.open_corpus(root, index_files.wanted(root))
    assert corpus._view_left is not None  # this search would leave one
    corpus.conn.execute("ROLLBACK")  # its read is done (a commit would wait for it otherwise)
    conn.execute("INSERT INTO meta VALUES ('probe', 'another connection committed')")
    conn.commit()
    conn.close()
    corpus.close()  # writes the view unless a commit came in between: one did
    assert views(mem_root) == []
    memsearch.search(root, "lock")
    assert len(views(mem_root)) == 1


def test_a_busy_index_leaves_no_view_and_costs_the_search_no_wait(store, mem_root):
    fill(store, 4)
    age(mem_root)
    root = str(mem_root)
    memsearch.search(root, "lock")
    memsearch.search(root, "lock")
    writer = sqlite3.connect(index.index_path(root), isolation_level=None)
    writer.execute("DELETE FROM views")
    writer.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
    try:
        assert [hit.text for hit in memsearch.search(root, "lock")]
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert views(mem_root) == []


def test_the_files_are_stat_ed_inside_the_read_that_fixes_the_indexs_state(store, mem_root, monkeypatch):
    """A writer cannot commit between the view's read and the stats (it would otherwise change rows a view
    then vouches for): while the files are being stat-ed, a commit from another connection is refused."""
    fill(store, 4)
    age(mem_root)
    root = str(mem_root)
    memsearch.search(root, "lock")
    memsearch.search(root, "lock")
    tried = []
    real = index_rows.signatures

    def commit_in_between(*args):
        other = sqlite3.connect(index.index_path(root), timeout=0, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            other.execute("INSERT OR REPLACE INTO meta VALUES ('probe', 'x')")
            other.execute("COMMIT")
            tried.append("committed")
        except sqlite3.OperationalError as exc:
            tried.append(str(exc))
            if other.in_transaction:
                other.execute("ROLLBACK")
        finally:
            other.close()
        return real(*args)

    monkeypatch.setattr(index_rows, "signatures", commit_in_between)
    memsearch.search(root, "lock")
    assert tried and all("locked" in outcome for outcome in tried), tried


@pytest.mark.parametrize("column,value", [("ids", "1,x,3"), ("ids", ""), ("paths", "only-one"),
                                          ("corpus", b"\xff\xff\xff\x7f\x01"), ("doc_count", -4),
                                          ("term_total", "many"), ("ids", b"1,2,3"), ("paths", b"MEMORY.md"),
                                          ("corpus", "text"), ("corpus", 7)])
def test_a_damaged_view_is_a_damaged_index(store, mem_root, monkeypatch, column, value):
    fill(store, 4)
    age(mem_root)
    root = str(mem_root)
    expected = same_as_files(mem_root, "lock", monkeypatch)
    memsearch.search(root, "lock")
    assert len(views(mem_root)) == 1
    conn = sqlite3.connect(index.index_path(root))
    conn.execute(f"UPDATE views SET {column} = ?", (value,))
    conn.commit()
    conn.close()
    assert same_as_files(mem_root, "lock", monkeypatch) == expected
    assert views(mem_root) == []  # rebuilt: the damaged row is gone


def test_a_view_serves_only_its_own_set_of_files(store, mem_root, project, statements):
    fill(store, 6)
    store.add("project", "project note: the lock of this project", cwd=str(project))
    age(mem_root)
    root = str(mem_root)
    everywhere = memsearch.search(root, "lock", cwd=str(project))
    memsearch.search(root, "lock", cwd=str(project))
    only_global = memsearch.search(root, "lock")
    assert only_global != everywhere
    memsearch.search(root, "lock", tracks=["daily"])
    statements.clear()
    assert memsearch.search(root, "lock", cwd=str(project)) == everywhere
    assert memsearch.search(root, "lock") == only_global
    assert not any("FROM files" in sql for sql in statements)
    assert len(views(mem_root)) == 3  # with the project, without it, daily only


def test_files_no_longer_racy_settle_in_one_transaction(mem_root, statements, monkeypatch):
    """A year of daily files written at once (a sync, a restore) is racy together and settles together: one
    write transaction, not one per file (each a commit on the prompt's budget)."""
    daily = mem_root / "daily"
    daily.mkdir(parents=True)
    for day in range(1, 29):
        (daily / f"2024-02-{day:02d}.md").write_text(f"note of day {day} about the lock\n")
    monkeypatch.setattr(index_rows, "RACY_NS", HOUR_NS)  # indexed while racy: rows keep a digest
    memsearch.search(str(mem_root), "lock")
    monkeypatch.setattr(index_rows, "RACY_NS", 0)  # now long enough ago
    statements.clear()
    assert len(memsearch.search(str(mem_root), "lock")) == 10
    assert sum(1 for sql in statements if sql == "COMMIT") == 1, [sql for sql in statements if sql == "COMMIT"]
    memsearch.search(str(mem_root), "lock")  # settled: the rows path, which leaves the view
    statements.clear()
    memsearch.search(str(mem_root), "lock")
    assert not any("FROM files" in sql for sql in statements)
