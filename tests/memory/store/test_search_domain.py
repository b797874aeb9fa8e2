"""memory search's domain call (maestro/memory/store/search.py): which entries it ranks, its filters and
argument checks, and the contract that the SQLite index and the no-index path give the same hit lists."""

import os
import random
import sys

import pytest

from maestro.memory.store import analyze, index, index_files
from maestro.memory.store import search as memsearch
from maestro.memory.store.errors import StoreError
from maestro.memory.store.layout import project_hash

pytestmark = pytest.mark.in_process

WORDS = ("sqlite index cache rebuild corrupt lock flock writer reader gate hook inject prompt session branch merge "
         "sync repair archive daily decision bug fix commit push review deploy test flaky timeout codex plan "
         "loop lease digest worktree checkpoint café naïve 日本語 straße q0a1 write_guard.py StoreError").split()


@pytest.fixture
def fallback(monkeypatch):
    """Run a block with the index switched off by its knob."""

    class Switch:
        def __enter__(self):
            monkeypatch.setenv("MAESTRO_MEMORY_INDEX", "off")

        def __exit__(self, *exc):
            monkeypatch.delenv("MAESTRO_MEMORY_INDEX")

    monkeypatch.delenv("MAESTRO_MEMORY_INDEX", raising=False)
    return Switch()


def fill(store, project, rng, count=120):
    for i in range(count):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) + f" n{i}"
        track = rng.choice(("global", "user", "daily", "project", "key", "reference"))
        cwd = str(project) if track in ("project", "key", "reference") else None
        date = f"2024-0{rng.randint(1, 4)}-1{rng.randint(0, 9)}" if track == "daily" else None
        store.add(track, text, cwd=cwd, date=date)


def test_hits_carry_track_id_date_file_text_and_project(store, mem_root, project):
    store.add("global", "we chose SQLite FTS5 for the search index")
    key = store.add("key", "never squash the release branch", cwd=str(project))
    other = project.parent / "other"
    other.mkdir()
    store.add("key", "never squash in the other project", cwd=str(other))
    hits = memsearch.search(str(mem_root), "squash release", cwd=str(project))
    assert [h.text for h in hits] == ["never squash the release branch"]
    (hit,) = hits
    assert (hit.track, hit.id, hit.date, hit.project) == ("key", key.id, "2024-05-01 10:07", project_hash(str(project)))
    assert hit.file == key.file and os.path.isabs(hit.file) and hit.score > 0
    assert memsearch.search(str(mem_root), "squash") == [], "project tracks only with a cwd"
    assert [h.text for h in memsearch.search(str(mem_root), "sqlite")] == ["we chose SQLite FTS5 for the search index"]


def test_archived_entries_only_when_asked_and_filters_by_track_and_since(store, mem_root, clock):
    store.add("global", "flaky timeout in the lease heartbeat")
    store.add("global", "old flaky test we archived")
    store.archive("global", "old flaky test")
    clock.now = clock.now.replace(month=1)
    store.add("daily", "flaky deploy on the first day")
    clock.now = clock.now.replace(month=3)
    store.add("daily", "flaky deploy later on")
    root = str(mem_root)
    assert "old flaky test we archived" not in [h.text for h in memsearch.search(root, "flaky")]
    assert "old flaky test we archived" in [h.text for h in memsearch.search(root, "flaky", archived=True)]
    assert {h.track for h in memsearch.search(root, "flaky", tracks=("daily",))} == {"daily"}
    since = memsearch.search(root, "flaky deploy", tracks=["daily"], since="2024-02-01")
    assert [h.text for h in since] == ["flaky deploy later on"]
    assert since[0].date == "2024-03-01 10:07" and since[0].file.endswith("2024-03-01.md")


@pytest.mark.parametrize("kwargs, reason", [
    ({"query": "   "}, "usage"), ({"limit": 0}, "usage"), ({"limit": True}, "usage"),
    ({"since": "2024-13-01"}, "usage"),
    ({"since": "../x"}, "usage"), ({"tracks": ("nope",)}, "usage"), ({"tracks": ("key",)}, "usage"),
])
def test_bad_arguments_raise_store_errors_with_the_usual_reasons(mem_root, kwargs, reason):
    args = {"query": "anything", **kwargs}
    query = args.pop("query")
    with pytest.raises(StoreError) as caught:
        memsearch.search(str(mem_root), query, **args)
    assert caught.value.reason == reason


def test_the_index_and_the_fallback_give_identical_hit_lists(store, mem_root, project, fallback):
    rng = random.Random(11)
    fill(store, project, rng, 60)
    store.add("global", "archived decision about the sqlite cache")
    store.archive("global", "archived decision")
    queries = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4))) for _ in range(6)]
    queries += ["café straße", "日本語", "q0a1"]
    options = [{}, {"cwd": str(project), "archived": True}, {"since": "2024-03-01", "tracks": ("daily", "memory")},
               {"cwd": str(project), "branch": "main", "limit": 3}]
    root = str(mem_root)
    for query in queries:
        for opts in options:
            fast = memsearch.search(root, query, today="2024-05-01", **opts)
            with fallback:
                slow = memsearch.search(root, query, today="2024-05-01", **opts)
            assert fast == slow, (query, opts)
    assert os.path.exists(index.index_path(root)), "the fast path really used the index"
    assert memsearch.search(root, "日本語") and memsearch.search(root, "q0a1"), "non-ASCII and q0 terms are found"


def test_without_sqlite3_search_parses_the_files_with_the_same_results(store, mem_root, project, monkeypatch):
    monkeypatch.delenv("MAESTRO_MEMORY_INDEX", raising=False)
    fill(store, project, random.Random(5), 40)
    root = str(mem_root)
    with_index = memsearch.search(root, "sqlite gate hook", cwd=str(project))
    monkeypatch.setitem(sys.modules, "sqlite3", None)  # `import sqlite3` now fails
    monkeypatch.setitem(sys.modules, "_sqlite3", None)  # and the C module it wraps (what index.py imports)
    monkeypatch.setattr(index, "_usable", None)
    os.unlink(index.index_path(root))
    assert not index.available()
    assert memsearch.search(root, "sqlite gate hook", cwd=str(project)) == with_index
    assert not os.path.exists(index.index_path(root))


def test_when_the_index_cannot_serve_search_parses_the_files(store, mem_root, monkeypatch):
    monkeypatch.delenv("MAESTRO_MEMORY_INDEX", raising=False)
    store.add("global", "the gate hook stays fast")
    monkeypatch.setattr(index, "_usable", False)  # what the probe finds on an interpreter without sqlite3
    assert [h.text for h in memsearch.search(str(mem_root), "gate")] == ["the gate hook stays fast"]
    assert not os.path.exists(index.index_path(str(mem_root)))


def test_a_cut_keeps_the_same_candidates_as_the_memory_corpus(store, mem_root, project, monkeypatch):
    """rank may ask for fewer candidates than match: both corpora must keep the same best ones."""
    monkeypatch.delenv("MAESTRO_MEMORY_INDEX", raising=False)
    fill(store, project, random.Random(7), 80)
    root = str(mem_root)
    items = index_files.wanted(root, project_hash(str(project)))
    reference = memsearch.memory_corpus(root, items)
    corpus = index.open_corpus(root, items, project=project_hash(str(project)))
    try:
        assert (corpus.n_docs, corpus.avg_len) == (reference.n_docs, pytest.approx(reference.avg_len))
        for query in (["sqlite"], ["gate", "hook", "lock"], ["n1", "sync", "caf"]):
            for limit in (1, 5, 17, 1000):
                assert corpus.candidates(query, limit) == reference.candidates(query, limit), (query, limit)
        for doc in reference.docs[::13]:
            for k in (0, 1, 3):
                assert corpus.neighbours(doc, k) == reference.neighbours(doc, k)
        for k in (0, 1, 4):  # several at once, in one query (the pool's windows), and a doc of no indexed file
            docs = reference.docs[::7] + [reference.docs[0]._replace(file="nowhere.md", key="nowhere.md#0")]
            assert corpus.around(docs, k) == [reference.neighbours(doc, k) for doc in docs] == reference.around(docs, k)
        terms = [term for word in WORDS for term in analyze.terms(word)]
        assert [corpus.df(t) for t in terms] == [reference.df(t) for t in terms]
    finally:
        corpus.close()


def test_a_cut_through_tied_scores_keeps_the_same_candidates_in_the_same_order(store, mem_root, monkeypatch):
    """Entries of equal length holding the query term equally often tie exactly: the index sums BM25 in
    SQL, in another order than Python, and must still cut and order them as the memory corpus does
    (score, then key), wherever the cut falls."""
    monkeypatch.delenv("MAESTRO_MEMORY_INDEX", raising=False)
    for i in range(24):
        if i % 3:
            store.add("global", f"tied lease timeout w{i}")
        else:
            store.add("daily", f"tied lease timeout w{i}", date=f"2024-04-0{1 + i % 2}")
        store.add("user", f"lease timeout lease x{i}")  # a higher tf: above every tied one
    root = str(mem_root)
    items = index_files.wanted(root)
    reference = memsearch.memory_corpus(root, items)
    memsearch.search(root, "lease")  # builds the index
    corpus = index.open_corpus(root, items)
    try:
        for query in (["lease"], ["timeout", "lease"], ["tied", "lease"]):
            for limit in (1, 5, 23, 24, 25, 30, 47, 48, 49):
                assert corpus.candidates(query, limit) == reference.candidates(query, limit), (query, limit)
    finally:
        corpus.close()

