"""Ranking of memory search (maestro/memory/store/rank.py): plain BM25, MemoryCorpus, and what `search` adds."""

import math
import random

import pytest

from maestro.memory.store import rank
from maestro.memory.store.analyze import terms

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)

FILLER = [
    "Bumped the linter to the latest release.", "Lunch with the design team about the colour palette.",
    "Renamed the staging bucket for clarity.", "Reviewed the onboarding checklist with the new hire.",
    "Cleaned up old branches on the remote.", "The coffee machine on floor three is broken again.",
]


def doc(text, file="MEMORY.md", seq=0, date="", track="global", project="", entry_id=""):
    return rank.Doc(f"{file}#{seq}", track, entry_id, date, file, text, tuple(terms(text)), seq, project)


def corpus_of(*groups):
    """A corpus of files, each a list of texts (seq = position), plus filler files for realistic idf."""
    docs = [doc(text, f"f{n}.md", seq) for n, texts in enumerate(groups) for seq, text in enumerate(texts)]
    docs += [doc(text, f"filler{n}.md", 0) for n, text in enumerate(FILLER)]
    return rank.MemoryCorpus(docs)


def keys(results):
    return [d.key for d, _ in results]


def test_bm25_matches_a_hand_computed_score():
    docs = [doc("cat sat mat", seq=0), doc("dog dog run", seq=1), doc("cat dog friend friend", seq=2)]
    corpus = rank.MemoryCorpus(docs)
    assert corpus.n_docs == 3 and corpus.avg_len == pytest.approx(10 / 3) and corpus.df("dog") == 2

    def by_hand(tf, length, df):
        idf = math.log(1 + (3 - df + 0.5) / (df + 0.5))
        return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / (10 / 3)))

    scores = dict((d.key, s) for d, s in rank.bm25("dogs", corpus))
    assert scores == pytest.approx({"MEMORY.md#1": by_hand(2, 3, 2), "MEMORY.md#2": by_hand(1, 4, 2)})
    both = dict((d.key, s) for d, s in rank.bm25("cat dog", corpus))
    assert both["MEMORY.md#2"] == pytest.approx(by_hand(1, 4, 2) + by_hand(1, 4, 2))


def test_candidates_and_neighbours_of_the_memory_corpus():
    corpus = corpus_of(["alpha one", "beta two", "gamma three", "delta four"], ["alpha five"])
    assert {d.key for d in corpus.candidates(["alpha", "delta"], 100)} == {"f0.md#0", "f0.md#3", "f1.md#0"}
    assert len(corpus.candidates(["alpha", "delta"], 2)) == 2
    third = next(d for d in corpus.docs if d.key == "f0.md#2")
    assert keys((n, 0) for n in corpus.neighbours(third, 1)) == ["f0.md#1", "f0.md#3"]
    assert keys((n, 0) for n in corpus.neighbours(third, 5)) == ["f0.md#0", "f0.md#1", "f0.md#3"]
    assert corpus.neighbours(third, 0) == []
    assert rank.MemoryCorpus([]).n_docs == 0 and rank.search("alpha", rank.MemoryCorpus([])) == []


def test_an_exact_phrase_beats_scattered_words():
    corpus = corpus_of(["The lease timeout fired while the job was still polling the server."],
                       ["The timeout fired while the lease on the job was still polling."])
    assert keys(rank.search("lease timeout", corpus))[:2] == ["f0.md#0", "f1.md#0"]
    # plain BM25 cannot tell them apart: same terms, same length (the tie goes by key, the other way round here)
    flipped = corpus_of(["The timeout fired while the lease on the job was still polling."],
                        ["The lease timeout fired while the job was still polling the server."])
    assert keys(rank.search("lease timeout", flipped))[0] == "f1.md#0"


def test_recency_breaks_a_near_tie_and_only_when_today_is_given():
    old = doc("Deploy failed: certificate expired.", "daily/2026-01-02.md", date="2026-01-02 10:00")
    new = doc("Deploy failed: certificate expired.", "daily/2026-03-02.md", date="2026-03-02 10:00")
    corpus = rank.MemoryCorpus([old, new] + [doc(t, f"x{n}.md") for n, t in enumerate(FILLER)])
    assert keys(rank.search("certificate expired", corpus, today="2026-03-03"))[:2] == [new.key, old.key]
    assert keys(rank.search("certificate expired", corpus))[:2] == [old.key, new.key]  # a tie: by key
    strong = doc("Certificate expired, certificate renewed, certificate pinned.", "z.md", date="2025-01-01")
    corpus = rank.MemoryCorpus([strong, new] + [doc(t, f"x{n}.md") for n, t in enumerate(FILLER)])
    assert keys(rank.search("certificate", corpus, today="2026-03-03"))[0] == strong.key  # relevance first


def test_the_entry_after_a_hit_surfaces_although_it_shares_no_word():
    session = ["Why did the Friday deploy fail?", "The TLS certificate had expired; renewed it with certbot.",
               "Lunch."]
    corpus = corpus_of(session, *[[text] for text in FILLER])
    answer = "f0.md#1"
    assert answer not in keys(rank.bm25("friday deploy fail", corpus))
    assert answer in keys(rank.search("friday deploy fail", corpus, limit=3))


def test_neighbours_never_cross_files():
    corpus = corpus_of(["Why did the Friday deploy fail?"], ["The TLS certificate had expired."])
    assert keys(rank.search("friday deploy fail", corpus)) == ["f0.md#0"]


def test_results_are_deterministic_whatever_the_order_of_the_documents():
    rng = random.Random(5)
    words = "lease timeout job server deploy certificate cache index query worker".split()
    docs = [doc(" ".join(rng.choice(words) for _ in range(rng.randrange(2, 9))), f"f{i % 4}.md", i // 4)
            for i in range(60)]
    docs += [doc("lease timeout", f"twin{i}.md") for i in range(3)]  # exact ties
    expected = rank.search("lease timeout server", rank.MemoryCorpus(docs), limit=60)
    for _ in range(5):
        rng.shuffle(docs)
        assert rank.search("lease timeout server", rank.MemoryCorpus(docs), limit=60) == expected
    scores = [s for _, s in expected]
    assert scores == sorted(scores, reverse=True)
    twins = [d.key for d, _ in expected if d.file.startswith("twin")]
    assert twins == sorted(twins)


def test_track_weights_project_and_branch_scope():
    a = doc("Retry the upload with backoff.", "MEMORY.md", track="global")
    b = doc("Retry the upload with backoff.", "projects/p1/MEMORY.md", track="project", project="p1")
    corpus = rank.MemoryCorpus([a, b] + [doc(t, f"x{n}.md") for n, t in enumerate(FILLER)])
    assert keys(rank.search("upload retry", corpus))[:2] == [a.key, b.key]
    assert keys(rank.search("upload retry", corpus, project="p1"))[:2] == [b.key, a.key]
    assert keys(rank.search("upload retry", corpus, track_weights={"global": 1.5}, project="p1"))[0] == a.key
    c = doc("Retry the upload on feature/uploads with backoff.", "USER.md", track="user")
    d = doc("Retry the upload on feature/other with backoff.", "DAILY.md", track="daily")
    corpus = rank.MemoryCorpus([c, d] + [doc(t, f"x{n}.md") for n, t in enumerate(FILLER)])
    assert keys(rank.search("upload retry", corpus, branch="feature/uploads"))[0] == c.key


@pytest.mark.parametrize("query", ["", "   ", "the of and", "!!!", "zzzunknownword"])
def test_a_query_with_nothing_to_find_gives_nothing(query):
    corpus = corpus_of(["Deploy failed: certificate expired."])
    assert rank.search(query, corpus) == [] and rank.bm25(query, corpus) == []


def test_limit_is_respected():
    corpus = corpus_of([f"cache miss number {i}" for i in range(30)])
    assert len(rank.search("cache miss", corpus, limit=7)) == 7
    assert len(rank.bm25("cache miss", corpus, limit=7)) == 7
    assert rank.search("cache miss", corpus, limit=0) == []


class CountingCorpus(rank.MemoryCorpus):
    """A MemoryCorpus that counts the lookups a search makes (each is a query on the SQLite index)."""

    def __init__(self, docs):
        super().__init__(docs)
        self.lookups = 0

    def df(self, term):
        self.lookups += 1
        return super().df(term)


def test_a_long_prompt_costs_a_bounded_number_of_lookups_and_keeps_its_rare_words():
    words = [f"word{i}" for i in range(100)]  # 0–49 in every filler entry, 50–99 in none
    docs = [doc(" ".join(words[:50]), f"f{i}.md") for i in range(20)]
    docs.append(doc("The flaky upload test needs the retry fixture.", "needle.md"))
    corpus = CountingCorpus(docs)
    prompt = "flaky upload retry " + " ".join(words * 30)
    results = rank.search(prompt, corpus, limit=5)
    assert corpus.lookups <= rank.QUERY_LOOK
    assert results[0][0].file == "needle.md"


def test_a_bad_today_or_date_is_ignored():
    corpus = corpus_of(["Deploy failed: certificate expired."])
    for today in ("garbage", "2026-13-45", "2026"):
        assert keys(rank.search("certificate", corpus, today=today)) == ["f0.md#0"]
    odd = rank.MemoryCorpus([doc("certificate expired", date="yesterday"), doc("", "empty.md")])
    assert keys(rank.search("certificate", odd, today="2026-03-03")) == ["MEMORY.md#0"]


def test_the_branch_counts_only_when_named_whole_and_not_a_plain_one():
    other = doc("Retry the upload with backoff. Branch feature/v2-up.", "A.md")
    named = doc("Retry the upload with backoff. Branch feature/up-v2.", "B.md")  # the same terms
    corpus = rank.MemoryCorpus([other, named] + [doc(t, f"x{n}.md") for n, t in enumerate(FILLER)])
    assert keys(rank.search("upload retry", corpus))[:2] == ["A.md#0", "B.md#0"]
    assert keys(rank.search("upload retry", corpus, branch="feature/up-v2"))[:2] == ["B.md#0", "A.md#0"]
    assert keys(rank.search("upload retry", corpus, branch="feature/up"))[:2] == ["A.md#0", "B.md#0"]
    plain = doc("Retry the upload with backoff. Branch main.", "C.md")
    corpus = rank.MemoryCorpus([named, plain] + [doc(t, f"x{n}.md") for n, t in enumerate(FILLER)])
    assert rank.search("upload retry", corpus, branch="main") == rank.search("upload retry", corpus)


def test_a_zero_track_weight_drops_the_track():
    corpus = corpus_of(["Deploy failed: certificate expired."])
    assert rank.search("certificate", corpus, track_weights={"global": 0.0}) == []


def test_a_lone_entry_scores_bm25_plus_delta_per_matched_term():
    """BM25+ (rank.DELTA): with no neighbour and no other factor, search's score is BM25's plus DELTA × idf
    of each query term the entry holds."""
    docs = [doc("cache miss on the index", "a.md"), doc("cache warm", "b.md"), doc("index rebuilt", "c.md")]
    corpus = rank.MemoryCorpus(docs)
    plain = dict((d.key, s) for d, s in rank.bm25("miss, cache", corpus))  # no phrase: not in that order
    ours = dict((d.key, s) for d, s in rank.search("miss, cache", corpus))
    bonus = rank.DELTA * (rank.idf(corpus, "cach") + rank.idf(corpus, "miss"))
    assert rank.DELTA > 0 and ours["a.md#0"] == pytest.approx(plain["a.md#0"] + bonus)
    assert ours["b.md#0"] == pytest.approx(plain["b.md#0"] + rank.DELTA * rank.idf(corpus, "cach"))


CONVERSATION = [["Melanie: I love painting, Caroline!"],
                ["Caroline: I finished a painting of a sunset over the lake last weekend."]]


def test_the_turns_of_the_person_a_question_names_come_first():
    corpus = corpus_of(*CONVERSATION)
    # plain BM25 prefers Melanie's short turn: it holds 'caroline' and 'paint' too
    assert keys(rank.bm25("What did Caroline paint?", corpus))[0] == "f0.md#0"
    assert keys(rank.search("What did Caroline paint?", corpus))[0] == "f1.md#0"
    assert keys(rank.search("Caroline's painting?", corpus))[0] == "f1.md#0"
    full = corpus_of(["Melanie: I love painting, Caroline!"],
                     ["Caroline Reyes: I finished a painting of a sunset over the lake last weekend."])
    assert keys(rank.search("What did Caroline paint?", full))[0] == "f1.md#0"  # a first name is enough
    # the first name the question writes is its subject: what Melanie thinks is in Melanie's turns
    assert keys(rank.search("What does Melanie think of Caroline's painting?", corpus))[0] == "f0.md#0"


def test_a_speaker_counts_only_when_written_capitalized_and_as_the_entry_s_opening():
    corpus = corpus_of(*CONVERSATION)
    plain = rank.search("what did caroline paint", corpus)  # not written as a name
    assert keys(plain)[0] == "f0.md#0"
    # 'Caroline' named inside an entry, or after 40 characters, is not its speaker
    late = corpus_of(["Melanie: I love painting, Caroline!"],
                     ["Yesterday, at the lake, over a long lunch, Caroline: painting a sunset over the lake."])
    assert keys(rank.search("What did Caroline paint?", late))[0] == "f0.md#0"


def test_a_query_naming_no_speaker_scores_every_entry_as_before(monkeypatch):
    """Entries with no 'Name:' opening must not be boosted when the query names nobody who spoke (an
    empty speaker is not a match)."""
    corpus = corpus_of(["Note: lease timeout raised to 30 s."], ["The lease timeout fired twice."],
                       ["Caroline: the lease timeout is fine."])
    for query in ("Why did the lease timeout fire?", "What did Bob say about the lease timeout?"):
        expected = rank.search(query, corpus)
        monkeypatch.setattr(rank, "SPEAKER", 0.0)
        assert rank.search(query, corpus) == expected
        monkeypatch.undo()


def test_a_when_question_favours_the_entry_that_says_a_time(monkeypatch):
    corpus = corpus_of(["Jon: The studio opening is a dream, the studio!"],
                       ["Jon: I opened my own studio last week after work."])
    assert keys(rank.bm25("When did Jon open his studio?", corpus))[0] == "f0.md#0"
    assert keys(rank.search("When did Jon open his studio?", corpus))[0] == "f1.md#0"
    assert keys(rank.search("How long did Jon take to open the studio?", corpus))[0] == "f1.md#0"
    why = rank.search("Why did Jon open his studio?", corpus)
    monkeypatch.setattr(rank, "TIME_CUE", 0.0)
    assert keys(rank.search("When did Jon open his studio?", corpus))[0] == "f0.md#0"  # the cue decides
    assert rank.search("Why did Jon open his studio?", corpus) == why  # not a 'when' question: no cue


def test_names_in_a_huge_prompt_cost_a_bounded_scan():
    corpus = corpus_of(*CONVERSATION)
    prompt = "What did Caroline paint? " + "Zed " * 3000  # names are looked for in the first 4,000 characters
    assert keys(rank.search(prompt, corpus))[0] == "f1.md#0"


def test_a_smaller_pool_rescores_the_windows_of_that_many_entries_only():
    """The recall rescoring a pool of RECALL_POOL (its ≤ 5 entries lose nothing on the benches) reads the
    windows of that many entries; a search, of POOL (or its limit when larger)."""
    docs = [doc(f"lease gate note {i} " + "word " * (i % 7), file=f"n{i // 50}.md", seq=i % 50) for i in range(200)]

    class Counting(rank.MemoryCorpus):
        asked = []

        def around(self, docs, k):
            self.asked.append(len(docs))
            return super().around(docs, k)

    corpus = Counting(docs)
    rank.search("lease gate", corpus, limit=5, pool=rank.RECALL_POOL)
    rank.search("lease gate", corpus, limit=5)
    rank.search("lease gate", corpus, limit=40, pool=rank.RECALL_POOL)
    assert Counting.asked == [rank.RECALL_POOL, rank.POOL, 40]
