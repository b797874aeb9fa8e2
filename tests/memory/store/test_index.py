"""The search index is a cache, never the truth (maestro/memory/store/index.py): private, fresh after every
kind of write (store writes refresh it in their transaction; hand edits are caught by the stat check),
rebuilt silently when damaged or planted, and never the reason a search or a store write fails."""

import os
import sqlite3
import stat

import pytest

from maestro.memory.store import index, index_corpus, index_files
from maestro.memory.store.analyze import terms as analyze_terms
from maestro.memory.store import search as memsearch
from maestro.util import atomic
from testing.memory import same_as_files

pytestmark = pytest.mark.in_process


@pytest.fixture(autouse=True)
def index_on(monkeypatch):
    monkeypatch.delenv("MAESTRO_MEMORY_INDEX", raising=False)


def texts(root, query, **kwargs):
    return [hit.text for hit in memsearch.search(str(root), query, **kwargs)]


def reindexed(monkeypatch):
    """The files re-indexed from now on (by relative path)."""
    seen = []
    real = index._reindex

    def spy(conn, root, item, known, *budget):
        seen.append(item.rel)
        return real(conn, root, item, known, *budget)

    monkeypatch.setattr(index, "_reindex", spy)
    return seen


def test_the_index_is_private_and_store_writes_keep_it_fresh_in_their_transaction(store, mem_root, monkeypatch):
    store.add("global", "first decision about the lock")
    assert texts(mem_root, "lock") == ["first decision about the lock"]
    path = index.index_path(str(mem_root))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    store.add("global", "second decision about the lock")
    store.replace("global", "first decision", "first decision about the flock")
    seen = reindexed(monkeypatch)
    hits = texts(mem_root, "lock")
    assert hits[0] == "second decision about the lock" and "first decision about the lock" not in hits
    assert texts(mem_root, "flock")[0] == "first decision about the flock"
    assert seen == [], "the writes already refreshed the index: the search had nothing to re-index"
    store.archive("global", "second decision")
    assert seen == ["MEMORY.md", "MEMORY-archive.md"] or seen == ["MEMORY-archive.md", "MEMORY.md"]


def test_hand_edits_appearing_and_vanishing_files_are_caught_by_the_stat_check(store, mem_root, monkeypatch, clock):
    store.add("global", "alpha entry about the gate")
    store.add("daily", "alpha daily note")
    assert sorted(texts(mem_root, "alpha")) == ["alpha daily note", "alpha entry about the gate"]
    memory = mem_root / "MEMORY.md"
    memory.write_text(memory.read_text() + "§\nalpha added by hand\n")
    assert "alpha added by hand" in same_as_files(mem_root, "alpha", monkeypatch)
    before = memory.stat()
    memory.write_text(memory.read_text().replace("alpha added by hand", "alpha changed by hand"))
    os.utime(memory, ns=(before.st_atime_ns, before.st_mtime_ns))  # same mtime; size, ctime and inode still tell
    assert "alpha changed by hand" in same_as_files(mem_root, "alpha", monkeypatch)
    os.unlink(mem_root / "daily" / "2024-05-01.md")
    assert same_as_files(mem_root, "alpha", monkeypatch) == ["alpha changed by hand", "alpha entry about the gate"] \
        or sorted(same_as_files(mem_root, "alpha", monkeypatch)) == ["alpha changed by hand",
                                                                     "alpha entry about the gate"]
    memory.unlink()
    assert same_as_files(mem_root, "alpha", monkeypatch) == []


def test_an_append_analyzes_only_the_new_entry_and_a_removal_only_renumbers(store, mem_root, monkeypatch):
    for i in range(30):
        store.add("global", f"entry {i} about the cache")
    assert len(texts(mem_root, "cache", limit=50)) == 30
    analyzed = []
    real = index_files.analyze
    monkeypatch.setattr(index_files, "analyze", lambda text: analyzed.append(text) or real(text))
    store.add("global", "entry 30 about the cache")
    assert analyzed == ["entry 30 about the cache"]
    store.remove("global", "entry 3 about")
    assert analyzed == ["entry 30 about the cache"]
    monkeypatch.setattr(index_files, "analyze", real)
    hits = same_as_files(mem_root, "cache", monkeypatch, limit=50)
    assert len(hits) == 30 and "entry 3 about the cache" not in hits


@pytest.mark.parametrize("damage", ["garbage", "truncated", "zero-bytes", "symlink", "foreign-version", "directory",
                                    "foreign-owner"])
def test_a_damaged_or_planted_index_is_rebuilt_silently(store, mem_root, monkeypatch, tmp_path, damage):
    store.add("global", "the release branch is protected")
    assert texts(mem_root, "release") == ["the release branch is protected"]
    path = index.index_path(str(mem_root))
    target = tmp_path / "victim"
    target.write_bytes(b"not yours")
    if damage == "garbage":
        with open(path, "wb") as handle:
            handle.write(os.urandom(8192))
    elif damage == "truncated":
        with open(path, "rb") as handle:
            data = handle.read()
        with open(path, "wb") as handle:
            handle.write(data[: len(data) // 3])
    elif damage == "zero-bytes":
        open(path, "wb").close()
    elif damage == "symlink":
        os.unlink(path)
        os.symlink(target, path)
    elif damage == "foreign-version":
        conn = sqlite3.connect(path)
        conn.execute("UPDATE meta SET value = '999:other analyzer' WHERE key = 'fingerprint'")
        conn.commit()
        conn.close()
    elif damage == "foreign-owner":
        if os.getuid() != 0:
            pytest.skip("only root can give a file to another user")
        os.chown(path, 54321, 54321)
    elif damage == "directory":
        os.unlink(path)
        os.mkdir(path)
    store.add("global", "the release train leaves on friday")  # a write with a damaged index still stands
    assert sorted(same_as_files(mem_root, "release", monkeypatch)) == ["the release branch is protected",
                                                                       "the release train leaves on friday"]
    if damage != "directory":
        assert stat.S_ISREG(os.lstat(path).st_mode) and stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert os.stat(path).st_uid == os.getuid()
        conn = sqlite3.connect(path)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            assert conn.execute("SELECT count(*) FROM docs").fetchone() == (2,), "the index serves again"
        finally:
            conn.close()
    assert target.read_bytes() == b"not yours", "the symlink's target is never written"
    assert not [name for name in os.listdir(os.path.dirname(path)) if "tmp" in name]


def test_an_index_that_cannot_be_written_costs_the_call_a_parse_never_the_search(store, mem_root, monkeypatch):
    store.add("global", "disk full while indexing")
    assert texts(mem_root, "disk") == ["disk full while indexing"]

    def full(*args):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(index, "_reindex", full)
    store.add("global", "disk full again")  # the store write stands although its index update failed
    assert sorted(texts(mem_root, "disk")) == ["disk full again", "disk full while indexing"]
    monkeypatch.undo()
    monkeypatch.delenv("MAESTRO_MEMORY_INDEX", raising=False)
    assert sorted(same_as_files(mem_root, "disk", monkeypatch)) == ["disk full again", "disk full while indexing"]


def test_a_memory_dir_where_no_index_can_be_made_still_searches(store, mem_root, monkeypatch):
    store.add("global", "read only memory dir")

    def refused(*args):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(atomic, "make_private_dirs", refused)  # index imports it when it must create the dir
    monkeypatch.setattr(index, "_rebuild", refused)
    assert texts(mem_root, "memory dir") == ["read only memory dir"]
    assert not os.path.exists(index.index_path(str(mem_root)))


def test_a_query_failing_mid_search_falls_back_to_the_files(store, mem_root, monkeypatch):
    store.add("global", "corrupt page found late")
    texts(mem_root, "corrupt")

    def broken(self, term):
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(index.IndexCorpus, "df", broken)
    assert texts(mem_root, "corrupt page") == ["corrupt page found late"]
    assert not os.path.exists(index.index_path(str(mem_root))), "a corrupt index is dropped, to be rebuilt"
    monkeypatch.undo()
    monkeypatch.delenv("MAESTRO_MEMORY_INDEX", raising=False)
    assert texts(mem_root, "corrupt page") == ["corrupt page found late"]
    assert os.path.exists(index.index_path(str(mem_root)))


def test_terms_of_any_script_are_stored_and_counted_as_they_are(store, mem_root):
    """The posting table keys on the analyzer's terms verbatim: no tokenizer splits or folds them, and
    two different terms never share postings."""
    words = ["sqlite", "42", "q0ab", "café", "日本語", "Upper", "a-b", "q0", "aq0b"]
    for word in words:
        store.add("global", f"entry {word}")
    root = str(mem_root)
    texts(mem_root, "entry")  # builds the index
    items = index_files.wanted(root)
    reference = memsearch.memory_corpus(root, items)
    corpus = index.open_corpus(root, items)
    try:
        terms = [term for word in words for term in analyze_terms(word)] + ["q0616263", "q0"]
        assert [corpus.df(term) for term in terms] == [reference.df(term) for term in terms]
        assert corpus.df("日本語") == 1 and corpus.df("café") == 1 and corpus.df("q0616263") == 0
        for term in terms:
            assert corpus.candidates([term], 5) == reference.candidates([term], 5), term
    finally:
        corpus.close()


def test_a_search_without_archives_leaves_the_indexed_archive_alone(store, mem_root, monkeypatch):
    store.add("global", "archived note about the digest")
    store.archive("global", "archived note")
    assert [(h.track, h.text) for h in memsearch.search(str(mem_root), "digest", archived=True)] == \
        [("memory", "archived note about the digest")]
    assert texts(mem_root, "digest") == []  # the archive is not listed now; it has not vanished either
    assert [(h.track, h.text) for h in memsearch.search(str(mem_root), "digest", archived=True)] == \
        [("memory", "archived note about the digest")]
    same_as_files(mem_root, "digest", monkeypatch, archived=True)


def test_two_processes_indexing_the_same_new_file_do_not_collide(store, mem_root, monkeypatch):
    """The second indexer's view of the files table is taken again inside its write transaction."""
    store.add("global", "raced entry")
    items = index_files.wanted(str(mem_root))
    index.open_corpus(str(mem_root), items).close()  # the index exists, with MEMORY.md
    conn = index._open(sqlite3, str(mem_root), create=False)
    (mem_root / "USER.md").write_text("a user entry\n")
    real = index._changes
    first = []

    def racing(*args):
        if not first:  # between this process's check and its transaction, another one indexes USER.md
            first.append(1)
            other = index._open(sqlite3, str(mem_root), create=False)
            index._refresh(other, str(mem_root), items, "", True)
            other.close()
        return real(*args)

    monkeypatch.setattr(index, "_changes", racing)
    index._refresh(conn, str(mem_root), items, "", True)  # was: IntegrityError (files.path UNIQUE)
    conn.close()
    assert first and texts(mem_root, "user entry")[0] == "a user entry"


def test_an_index_replaced_by_another_rebuild_is_never_written_through_the_old_connection(store, mem_root):
    """Two rebuilds raced: the loser's connection is to a file no longer at the path, and its journal
    would have the new file's name, so it must not write; the call serves from the files instead."""
    store.add("global", "rebuild race entry")
    root = str(mem_root)
    assert texts(mem_root, "rebuild race")
    conn = index._open(sqlite3, root, create=False)
    path = index.index_path(root)
    os.unlink(path)
    index._open(sqlite3, root, create=True).close()  # the other process's rebuild, renamed into place
    (mem_root / "USER.md").write_text("changed meanwhile\n")
    with pytest.raises(OSError):
        index._refresh(conn, root, index_files.wanted(root), "", True)
    conn.close()
    assert texts(mem_root, "changed meanwhile") == ["changed meanwhile"]


def test_repair_refreshes_the_index_in_its_transaction(store, mem_root, monkeypatch):
    from maestro.memory.store.repair import repair

    (mem_root).mkdir(parents=True, exist_ok=True)
    (mem_root / "MEMORY.md").write_text("[2024-01-01] first hand entry about repair\n§\n\n§\nsecond hand entry\n\n")
    assert sorted(texts(mem_root, "hand entry")) == ["first hand entry about repair", "second hand entry"]
    before = (mem_root / "MEMORY.md").read_bytes()
    repair(store, confirm=True)
    assert (mem_root / "MEMORY.md").read_bytes() != before, "repair rewrote the file"
    seen = reindexed(monkeypatch)
    assert sorted(same_as_files(mem_root, "hand entry", monkeypatch)) == ["first hand entry about repair",
                                                                          "second hand entry"]
    assert seen == [], "repair's commit already refreshed the index"


def test_a_search_of_a_memory_dir_that_does_not_exist_creates_nothing(tmp_path):
    root = tmp_path / "no-memory-yet"
    assert memsearch.search(str(root), "anything") == []
    assert not root.exists()


def test_a_narrowed_search_drops_no_rows_of_the_tracks_it_did_not_ask_for(store, mem_root, project, monkeypatch):
    """Scope is a query filter, never an index-content decision: a search narrowed by track, by project
    or without archives leaves every other file's rows in place, so the next wide search re-indexes
    nothing (it used to drop the rows and index them again, one full parse per alternation)."""
    store.add("global", "wide note about the digest")
    store.add("daily", "daily note about the digest")
    store.add("key", "key rule about the digest", cwd=str(project))
    store.add("global", "archived note about the digest")
    store.archive("global", "archived note")
    wide = {"cwd": str(project), "archived": True}
    assert len(texts(mem_root, "digest", **wide)) == 4
    conn = sqlite3.connect(index.index_path(str(mem_root)))
    try:
        before = conn.execute("SELECT count(*) FROM docs").fetchone()[0]
        seen = reindexed(monkeypatch)
        assert texts(mem_root, "digest", tracks=("memory",)) == ["wide note about the digest"]
        assert texts(mem_root, "digest", tracks=("daily",)) == ["daily note about the digest"]
        assert len(texts(mem_root, "digest")) == 2  # no project, no archives
        assert conn.execute("SELECT count(*) FROM docs").fetchone()[0] == before == 4
        assert len(same_as_files(mem_root, "digest", monkeypatch, **wide)) == 4
        assert seen == [], "nothing changed on disk: no search re-indexed anything"
    finally:
        conn.close()


def test_a_cut_loads_only_the_entries_it_keeps_not_every_match(store, mem_root, monkeypatch):
    """Speed by counting work (issue 11 §5): the index picks the best candidates by BM25 in SQL and
    builds a document only for those (it used to load all 16,593 matches of a 9-term prompt at
    20,000 entries and score them in Python)."""
    for i in range(60):
        store.add("global", f"lease timeout note {i}" + " padding" * (i % 7))
    root = str(mem_root)
    texts(mem_root, "lease")  # builds the index
    items = index_files.wanted(root)
    reference = memsearch.memory_corpus(root, items)
    built = []
    real = index_corpus._doc
    monkeypatch.setattr(index_corpus, "_doc", lambda row: built.append(row[0]) or real(row))
    corpus = index.open_corpus(root, items)
    try:
        query = analyze_terms("lease padding")
        kept = corpus.candidates(query, 5)
        assert kept == reference.candidates(query, 5) and len(kept) == 5
        assert len(built) <= 5 + 7, "only the kept entries (and any tied with the last one) are loaded"
    finally:
        corpus.close()
