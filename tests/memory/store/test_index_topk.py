"""The index's bitmap top-k (index_topk.py, index_bits.py) picks exactly what the in-memory corpus picks:
the same entries, in the same order, with the same float scores, whatever the lengths, term counts,
ties, limits, `since` dates and file subsets — and after entries are removed, rewritten and their ids
taken again."""

import random
import sqlite3

import pytest

from maestro.memory.store import index, index_bits, index_corpus, index_files, index_topk, rank

pytestmark = pytest.mark.in_process

WORDS = "alpha beta gamma delta lease index sync merge branch flaky timeout parser hook gate lock".split()


@pytest.fixture(autouse=True)
def index_on(monkeypatch):
    monkeypatch.delenv("MAESTRO_MEMORY_INDEX", raising=False)


def entry(rng, day: int) -> str:
    # lengths from 1 to ~120 words, a few words repeated up to 7 times: every count class and many buckets
    size = rng.choice((1, 2, 3, 5, 8, 13, 21, 34, 60, 120))
    words = [rng.choice(WORDS[:rng.randint(2, len(WORDS))]) for _ in range(size)]
    if rng.random() < 0.3:
        words += [rng.choice(WORDS)] * rng.randint(2, 7)
    return f"[2024-05-{day:02d} 10:00] " + " ".join(words)


def write_store(root, rng, files: int, per_file: int) -> None:
    for number in range(files):
        path = root / "daily" / f"2024-05-{number + 1:02d}.md" if number else root / "MEMORY.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "\n§\n".join(entry(rng, number + 1) for _ in range(rng.randint(1, per_file)))
        path.write_text(body + "\n")


def both(root, rels=None, since=""):
    """(the index's corpus, the in-memory corpus) over the same files."""
    items = index_files.wanted(str(root))
    if rels is not None:
        items = [item for item in items if item.rel in rels]
    fast = index.open_corpus(str(root), items, since=since)
    assert fast is not None
    docs = []
    for item in items:
        data = index_files.read(str(root), item.rel)
        for seq, text in enumerate(index_files.entries_of(data)):
            doc = index_files.doc_of(item, seq, index_files.header_of(item, text))
            if not since or doc.date >= since:
                docs.append(doc)
    return fast, rank.MemoryCorpus(docs)


def agree(root, rng, rels=None, since="", rounds: int = 25) -> None:
    """Both corpora over the same files answer every random query alike."""
    fast, slow = both(root, rels, since)
    try:
        assert_same(fast, slow, rng, rounds)
    finally:
        fast.close()


def assert_same(fast, slow, rng, rounds: int = 25) -> None:
    assert (fast.n_docs, fast.avg_len) == (slow.n_docs, slow.avg_len)
    for _ in range(rounds):
        terms = [rank.analyze(word)[0] for word in rng.sample(WORDS, rng.randint(1, 6))] + ["absent"]
        assert [fast.df(term) for term in terms] == [slow.df(term) for term in terms]
        limit = rng.choice((1, 2, 5, 10, 30, 200))
        got, want = fast.candidates(terms, limit), slow.candidates(terms, limit)
        assert [doc.key for doc in got] == [doc.key for doc in want], (terms, limit)
        assert got == want
        weights = {term: rank.idf(slow, term) for term in terms}
        assert rank.bm25_scored(weights, got, fast.avg_len) == rank.bm25_scored(weights, want, slow.avg_len)


@pytest.mark.parametrize("seed", range(6))
def test_the_bitmap_cut_equals_the_in_memory_cut(tmp_path, seed):
    rng = random.Random(seed)
    root = tmp_path / "memory"
    write_store(root, rng, files=rng.randint(1, 12), per_file=rng.choice((3, 40, 150)))
    agree(root, rng)


def test_the_cut_holds_over_a_subset_of_files_and_since_a_date(tmp_path):
    rng = random.Random(7)
    root = tmp_path / "memory"
    write_store(root, rng, files=10, per_file=60)
    both(root)[0].close()  # everything indexed
    for rels, since in ((["MEMORY.md", "daily/2024-05-03.md"], ""), (None, "2024-05-06"),
                        (["daily/2024-05-04.md", "daily/2024-05-09.md"], "2024-05-05")):
        agree(root, rng, rels, since, rounds=10)


def test_removed_and_rewritten_entries_leave_no_bits_behind_and_reused_ids_inherit_nothing(tmp_path):
    rng = random.Random(11)
    root = tmp_path / "memory"
    write_store(root, rng, files=6, per_file=50)
    both(root)[0].close()
    for round_number in range(4):  # drop the last file's tail (the highest ids), then append new entries
        path = sorted((root / "daily").iterdir())[-1]
        kept = path.read_text().split("\n§\n")[: 3 + round_number]
        path.write_text("\n§\n".join(kept + [entry(rng, 9) for _ in range(rng.randint(5, 30))]) + "\n")
        (root / "MEMORY.md").write_text("\n§\n".join(entry(rng, 1) for _ in range(rng.randint(1, 40))) + "\n")
        agree(root, rng, rounds=10)
    conn = sqlite3.connect(index.index_path(str(root)))
    try:  # every bit set belongs to a live entry holding the term that many times
        live = {doc_id: terms for doc_id, terms in conn.execute("SELECT id, terms FROM docs")}
        for term, segment, *sets in conn.execute("SELECT term, seg, one, two, three FROM bits"):
            for count, value in enumerate(sets, start=1):
                for doc_id in index_bits.ids_of(index_bits.decode(value) << (segment << index_bits.SEGMENT_BITS)):
                    assert live[doc_id].split("\x1f").count(term) == count
        for term, doc_id, tf in conn.execute("SELECT term, doc, tf FROM many"):
            assert live[doc_id].split("\x1f").count(term) == tf >= 4
        sizes = dict(conn.execute("SELECT seg, data FROM sizes"))
        top = max(live) + 50
        assert [index_bits.size_of(sizes, doc_id) for doc_id in range(top)] == \
            [len(live[doc_id].split("\x1f")) if live.get(doc_id) else 0 for doc_id in range(top)]
    finally:
        conn.close()


def test_a_tie_at_the_cut_is_decided_by_key_as_in_memory(tmp_path):
    root = tmp_path / "memory"
    (root / "daily").mkdir(parents=True)
    (root / "MEMORY.md").write_text("\n§\n".join(["lease gate"] * 40) + "\n")  # 40 equal scores
    for day in (2, 3):
        (root / "daily" / f"2024-05-0{day}.md").write_text("\n§\n".join(["lease gate"] * 7) + "\n")
    fast, slow = both(root)
    try:
        for limit in (1, 7, 30, 53, 54):
            assert [d.key for d in fast.candidates(["leas"], limit)] == [d.key for d in slow.candidates(["leas"], limit)]
    finally:
        fast.close()


def test_sets_survive_their_encoding_and_id_extraction():
    rng = random.Random(3)
    for size in (0, 1, 7, 8, 9, 63, 64, 65, 5000, 70000):
        ids = sorted(rng.sample(range(max(size * 3, 1)), size)) if size else []
        bits = index_bits.mask_of(ids)
        assert index_bits.ids_of(bits) == ids
        assert index_bits.decode(index_bits.encode(bits)) == bits
    assert index_bits.decode(None) == 0 and index_bits.ids_of(0) == []
    assert index_bits.run_mask(5, 9) == index_bits.mask_of([5, 6, 7, 8, 9]) and index_bits.run_mask(3, 2) == 0


def test_every_length_lies_within_ten_percent_above_its_bucket_bound():
    for length in list(range(1, 3000)) + [65535, 10 ** 6]:
        bound = index_bits.BOUNDS[index_bits.bucket_of(length)]
        assert bound <= length and (length - bound) <= max(1, bound // 10)


def test_the_bound_never_falls_below_an_entrys_score():
    """The premise of the cut: for any entry, the sliced bound with its bucket's shortest length is at
    least its exact BM25 (here for every count 1…9 and lengths around bucket edges; the cut lowers its floor
    by a relative 1e-9 for the float rounding of equal values)."""
    avg = 17.3
    for length in (1, 2, 10, 11, 12, 99, 100, 101, 1000):
        bucket = index_bits.bucket_of(length)
        for tf in range(1, 10):
            count_class = min(tf, 4) if tf < 4 else 9  # `many` is bounded by the highest count
            exact = 1.7 * tf * (rank.K1 + 1.0) / (tf + rank.K1 * (1.0 - rank.B + rank.B * length / avg))
            bound = 1.7 * index_topk._gain(count_class if tf >= 4 else tf,
                                           index_topk._norm(index_bits.BOUNDS[bucket], avg))
            assert bound >= exact * (1 - 1e-12)  # equal at the bucket's bound, up to float rounding (the cut's margin)


def test_a_new_index_has_pages_an_entry_row_fits_in(tmp_path):
    root = tmp_path / "memory"
    write_store(root, random.Random(1), files=2, per_file=5)
    both(root)[0].close()
    conn = sqlite3.connect(index.index_path(str(root)))
    try:
        assert conn.execute("PRAGMA page_size").fetchone()[0] == index.PAGE_SIZE == 16384
    finally:
        conn.close()


DAMAGES = [
    "UPDATE bits SET one = x'ffffffff01' WHERE term = 'alpha'",  # an offset of 4 GB of bitmap
    "UPDATE bits SET one = x'ffffff7f01'",  # every term: 2 GB
    "UPDATE bits SET one = CAST(x'00000000' || zeroblob(1100) || x'01' AS BLOB) WHERE term = 'alpha'",  # past its segment
    "UPDATE bits SET seg = -1 WHERE term = 'alpha'",
    "UPDATE bits SET seg = 131072 WHERE term = 'alpha'",  # ids past a billion
    "UPDATE lens SET bucket = 100000 WHERE bucket = (SELECT max(bucket) FROM lens)",
    "UPDATE lens SET bucket = -5 WHERE bucket = (SELECT max(bucket) FROM lens)",
    "UPDATE many SET tf = -2",
    "UPDATE files SET id_hi = 9223372036854775807",
    "UPDATE sizes SET data = x'00'",  # every length cut short
    "DELETE FROM sizes",
]
# A bit for an entry without a row is found when that entry is read: with 4 entries every match is.
MISSING_ROW = "UPDATE docs SET id = -5 WHERE id = (SELECT min(id) FROM docs)"


@pytest.mark.parametrize("entries, damage", [(entries, damage) for damage in DAMAGES for entries in (60, 4)]
                         + [(4, MISSING_ROW)])  # more matches than the limit, and fewer (every match kept)
def test_a_damaged_value_is_never_built_and_the_index_is_rebuilt(tmp_path, damage, entries):
    """A stored value no index of ours holds (a shift by gigabytes, a set spilling out of its segment, a
    segment or bucket out of range, a count below 4 in `many`, a run to 2**63, a bit for an entry without
    a row) is never built: the search answers from the files as for any corrupt index, and the index is
    rebuilt."""
    from maestro.memory.store import search as memsearch

    root = tmp_path / "memory"
    root.mkdir()
    words = ["alpha beta lease " + "alpha " * (n % 6) + f"note {n}" for n in range(entries)]
    (root / "MEMORY.md").write_text("\n§\n".join(words) + "\n")
    clean = memsearch.search(str(root), "alpha beta lease", limit=15)
    conn = sqlite3.connect(index.index_path(str(root)))
    with conn:
        assert conn.execute(damage).rowcount > 0
    conn.close()
    assert memsearch.search(str(root), "alpha beta lease", limit=15) == clean
    assert memsearch.search(str(root), "alpha beta lease", limit=15) == clean
    conn = sqlite3.connect(index.index_path(str(root)))
    try:  # rebuilt: nothing of the damage is left
        assert conn.execute("SELECT count(*) FROM bits WHERE seg < 0 OR seg > 100 OR length(one) > 1100"
                            ).fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM lens WHERE bucket < 0 OR bucket > 1000").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM many WHERE tf < 4").fetchone() == (0,)
        assert conn.execute("SELECT count(*) > 0, total(length(data) != ?) FROM sizes",
                            (index_bits.SEGMENT * 4,)).fetchone() == (1, 0.0)
        assert conn.execute("SELECT min(id) >= 0 FROM docs").fetchone() == (1,)
        assert conn.execute("SELECT max(id_hi) < 1000000 FROM files").fetchone() == (1,)
    finally:
        conn.close()


def test_a_cut_of_every_seed_keeps_score_order_not_key_order(tmp_path):
    """With limit ≥ SEEDS the seeds alone may be the whole cut: that is not 'every match' (key order)."""
    root = tmp_path / "memory"
    root.mkdir()
    rng = random.Random(12)
    texts = ["gate " * rng.randint(1, 5) + "word " * rng.randint(0, 30) for _ in range(41)]
    (root / "MEMORY.md").write_text("\n§\n".join(texts) + "\n")
    fast, slow = both(root)
    try:
        for limit in (32, 40, 41, 42):
            assert [d.key for d in fast.candidates(["gate"], limit)] == [d.key for d in slow.candidates(["gate"], limit)]
    finally:
        fast.close()


def test_the_cut_holds_across_segments(tmp_path, monkeypatch):
    """Segments of 8 ids (as if a store had hundreds of thousands of entries): sets spanning many segment
    rows read and write alike."""
    monkeypatch.setattr(index_bits, "SEGMENT_BITS", 3)
    monkeypatch.setattr(index_bits, "SEGMENT", 8)
    monkeypatch.setattr(index_bits, "_SEGMENT_MASK", 7)
    rng = random.Random(21)
    root = tmp_path / "memory"
    write_store(root, rng, files=5, per_file=40)
    agree(root, rng, rounds=10)
    (root / "MEMORY.md").write_text("\n§\n".join(entry(rng, 1) for _ in range(30)) + "\n")  # drop and reuse ids
    agree(root, rng, rounds=10)
    agree(root, rng, ["MEMORY.md", "daily/2024-05-03.md"], "2024-05-02", rounds=5)
