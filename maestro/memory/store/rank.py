"""Ranking of memory search: documents, the corpus protocol, plain BM25 and maestro's ranking (`search`).

A corpus (duck-typed) serves documents: the SQLite index (index.py) or, without it, the pure-Python
`MemoryCorpus` below. It offers `n_docs`, `avg_len`, `df(term)`, `candidates(terms, limit)` (the documents
holding any of the terms, best-first by plain BM25 when it must cut), `neighbours(doc, k)` (up to k
entries on each side in the same file) and `around(docs, k)` (the neighbours of each of several docs). Every score is computed here, in Python, from `Doc.terms` and the
corpus statistics, so the two corpora give identical results; ties are broken by `Doc.key`.

Imported by the inject hook on real prompts: stdlib `math` only (Doc is a util.record: `import dataclasses`
costs several milliseconds, `import collections` one and a half).
"""

import math

from maestro.memory.store.analyze import terms as analyze
from maestro.util import days
from maestro.util.record import record

# key: f"{file}#{seq}", unique and stable; track: the track's name; id: the entry id ('' when none);
# date: the entry's stamp as written ('YYYY-MM-DD HH:MM', 'YYYY-MM-DD' or ''); file: path relative to the
# memory dir; text: the entry body as shown; terms: analyze.terms(text) as a tuple; seq: the entry's
# 0-based position in its file; project: '' for global tracks, else the project key; branches: the names
# of the entry's [branch:…] tag, () for every branch (not ranked on: recall filters by it).
Doc = record("Doc", "key track id date file text terms seq project branches", defaults=((),), module=__name__)

K1 = 1.2
B = 0.75


class MemoryCorpus:
    """A corpus over a list of Docs, all in memory: the no-FTS5 path of search, and the bench's and tests'."""

    def __init__(self, docs):
        self.docs = sorted(docs, key=lambda doc: doc.key)
        self.n_docs = len(self.docs)
        total = sum(len(doc.terms) for doc in self.docs)
        self.avg_len = total / self.n_docs if self.n_docs else 0.0
        self._postings = {}
        for index, doc in enumerate(self.docs):
            for term in set(doc.terms):
                self._postings.setdefault(term, []).append(index)
        self._by_file = {}
        for doc in self.docs:
            self._by_file.setdefault(doc.file, []).append(doc)
        for entries in self._by_file.values():
            entries.sort(key=lambda doc: doc.seq)
        self._position = {doc.key: i for entries in self._by_file.values() for i, doc in enumerate(entries)}

    def df(self, term: str) -> int:
        return len(self._postings.get(term, ()))

    def candidates(self, terms, limit: int) -> list:
        found = set()
        for term in set(terms):
            found.update(self._postings.get(term, ()))
        docs = [self.docs[i] for i in sorted(found)]
        if len(docs) <= limit:
            return docs
        weights = {term: idf(self, term) for term in dict.fromkeys(terms)}
        return [doc for doc, _ in bm25_scored(weights, docs, self.avg_len)[:limit]]

    def around(self, docs, k: int) -> list:
        """[neighbours(doc, k) for doc in docs] (the index answers it in one query)."""
        return [self.neighbours(doc, k) for doc in docs]

    def neighbours(self, doc, k: int) -> list:
        entries = self._by_file.get(doc.file, ())
        at = self._position.get(doc.key)
        if at is None or k <= 0:
            return []
        return entries[max(0, at - k):at] + entries[at + 1:at + 1 + k]


def idf(corpus, term: str) -> float:
    """BM25's idf in Lucene's form, log(1 + (N - df + .5) / (df + .5)): positive even for a term that most
    entries hold (the classic form goes negative there and would punish a match)."""
    return _idf(corpus.n_docs, corpus.df(term))


def _idf(n_docs: int, df: int) -> float:
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def bm25_scored(weights: dict, docs, avg_len: float) -> list:
    """(doc, BM25) of the docs holding any weighted term, best first, ties by key. The one BM25 of the search:
    the SQLite index (index_corpus) calls it too, so a cut there keeps exactly the documents a cut here keeps."""
    avg_len = avg_len or 1.0
    scored = []
    for doc in docs:
        norm = K1 * (1.0 - B + B * len(doc.terms) / avg_len)
        score = 0.0
        for term, weight in weights.items():
            tf = doc.terms.count(term)  # a few query terms × a C-level scan beats a Python loop per term
            if tf:
                score += weight * tf * (K1 + 1.0) / (tf + norm)
        if score > 0.0:
            scored.append((doc, score))
    scored.sort(key=lambda pair: (-pair[1], pair[0].key))
    return scored


def bm25(query: str, corpus, *, limit: int = 10) -> list:
    """Plain BM25 (k1=1.2, b=0.75) over the analyzed query: the baseline the bench compares against."""
    query_terms = list(dict.fromkeys(analyze(query)))
    if not query_terms or not corpus.n_docs:
        return []
    docs = corpus.candidates(query_terms, 10 ** 9)
    weights = {term: idf(corpus, term) for term in query_terms}
    return bm25_scored(weights, docs, corpus.avg_len)[:limit]


# The knobs of `search`, each with its measured effect on the LoCoMo bench (bench/locomo.py: 1,535
# questions; R@5 = the share of a question's evidence turns in the top 5; plain BM25 0.532) and on the
# coding-memory set (bench/coding_memory.py: 163 queries; plain BM25 R@5 0.936, R@10 0.942). All of them
# together: LoCoMo R@5 0.709, R@1 0.450, MRR 0.624; coding R@1 0.804, R@5 0.945, R@10 0.969 (each knob's
# figure below is what it was worth when added; "without it" figures are taken from the final setting).
# Few on purpose: every knob is a place to overfit.
# (Tried and left out, no gain on either set: pseudo-relevance feedback (R@1 -5 points), pushing apart
# entries of one window (R@5 -4.6), a term-count bonus, a session-level score, a small thesaurus, other
# k1/b; the Porter stemmer itself is worth +3.0 points on LoCoMo and +1.9 on the coding set over none.
# Then, with the speaker and time cues: a session-diversity penalty (×0.9 per hit of the same day already
# above, final setting: LoCoMo R@5 −1.8, multi-hop too; ×0.75: −4.4), idf raised to the power 1.3 (−0.1),
# a POOL of 60 (none), earlier window entries at 0.7 (coding R@5 −1.2), k1 1.5 or b 0.5 (±0.4, noise).)
#
# Context window: an entry is scored as itself plus the query terms of the entries around it in the same
# file, weighted down by distance. A conversation answers on the turn after the one that shares the
# question's words ("When are you opening the studio?" → "Tomorrow!"), and a coding session writes the fix
# next to the bug. Window ±2, earlier entries at 0.5/distance, later ones at 0.2/distance: LoCoMo R@5
# 0.532 → 0.633 (symmetric 0.3: 0.587; ±1 only: 0.599; ±3: 0.631); coding R@5 0.929 → 0.945.
WINDOW = 2
WINDOW_BEFORE = 0.5
WINDOW_AFTER = 0.2
# BM25+ (Lv & Zhai): each query term the window holds adds DELTA × its idf whatever the length, so a long
# entry that holds a rare term is not pushed under a short one that merely repeats a common term. LoCoMo
# R@5 0.704 → 0.709, MRR 0.616 → 0.624 (0.15: 0.706; 0.35: 0.710; 0.5: 0.707 and coding R@5 0.939; 1.0:
# 0.703); coding R@1 0.798 → 0.804.
DELTA = 0.25
# Only the best POOL entries by plain BM25 (or `limit`, when larger) and the entries around them are
# rescored: any POOL from 10 to 100, or every candidate, gives the same top 10 on both sets (1 loses 12
# points of R@5); 30 keeps a margin at a fraction of the time.
POOL = 30
# The recall at the prompt shows at most 5 entries, so it rescores a pool of 10 (hooks/recall.py): on both
# sets its R@5 and R@1 are those of a pool of 30 (LoCoMo R@5 0.709, R@1 0.451 vs 0.450; coding R@5 0.945),
# only R@10 falls (0.777 → 0.764), and a prompt costs a third of the rescoring.
RECALL_POOL = 10
# A long prompt (a pasted log) must not cost a corpus lookup per word: of its first QUERY_LOOK distinct
# terms, the QUERY_TERMS rarest are searched. LoCoMo questions and coding queries have fewer: no effect.
QUERY_LOOK = 64
QUERY_TERMS = 24
# Phrase: each pair of consecutive query terms found next to each other, in order, in the entry itself
# multiplies its score by (1 + PHRASE × the share of such pairs): "lease timeout" beats an entry that says
# "timeout" in one sentence and "lease" in another. LoCoMo R@1 0.341 → 0.350, MRR 0.520 → 0.525 when
# added; in the final setting it costs LoCoMo 0.003 of R@5 but holds coding R@1 (0.798 without it).
PHRASE = 0.25
# Dates named in the query ("on May 3, 2023", "in June", "between August 11 and 15"; rank_dates.py): an
# entry stamped on one of them gets ×(1 + DATE_MATCH) — its stamp is not in its words. LoCoMo R@5
# 0.631 → 0.643 (13 % of its questions name a date); without it in the final setting: 0.699.
DATE_MATCH = 0.5
# Recency (only when `today` is given): up to +RECENCY for an entry dated today, halving every
# HALF_LIFE_DAYS. Scope: an entry of the project being worked on, or naming the current branch, gets
# ×(1 + SCOPE). Neither moves either set (≤ 0.004 MRR): they are kept small to order near-ties only.
RECENCY = 0.05
HALF_LIFE_DAYS = 30.0
SCOPE = 0.1
# Speaker: an entry written as "Name: text" (a conversation turn, a note signed by a person or a tool)
# whose Name is the first capitalized word of the query that is the Name of a scored entry ("What does
# Melanie think of Caroline's decision?" → Melanie's turns) gets ×(1 + SPEAKER). The name is in half the
# turns of a conversation, so as a term its idf is near nothing; as the speaker it says whose turn
# answers. LoCoMo R@5 0.643 → 0.695 (every name the query writes: 0.2 0.671, 0.5 0.691, 1.0 0.692, 2.0
# 0.687; dropping the name from the terms as well: 0.657 and coding R@5 0.945 → 0.926, left out), the
# first name only (the question's subject): +0.005 more (the others at 0.3: no better). Without it in the
# final setting: R@5 0.665, R@1 0.378. Coding set unchanged.
SPEAKER = 0.7
# Time cue: a question asking when ("When did…", "How long…", "What year…", "How many weeks…") gives
# ×(1 + TIME_CUE) to entries that say a time ("yesterday", "last week", a weekday, a month, a digit): the
# answer to "when" is a relative time in the words, the stamp alone does not say which turn. Without it
# in the final setting: LoCoMo R@5 0.704, temporal 0.764 → 0.741, R@1 0.435 (1.0: same as 0.5; without
# digits: −0.002; "when"/"how long" openings only: 0.708); coding set unchanged.
TIME_CUE = 0.5
_WHEN_OPENINGS = ("when ", "how long ", "what year", "which year", "what month", "which month", "what date",
                  "how many days", "how many weeks", "how many months", "how many years")
_TIME_WORDS = frozenset(
    """yesterday today tomorrow tonight ago last next week weekend month year monday tuesday wednesday
    thursday friday saturday sunday morning evening night earlier recently soon since january february
    march april may june july august september october november december""".split())
_PUNCTUATION = "?,.!;:\"()[]'’-"


def _days(date: str):
    """Days since 0001-01-01 of a 'YYYY-MM-DD…' stamp, or None."""
    return days.ordinal(date)


_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
                "october", "november", "december")


def _dates_named(query: str) -> list:
    """rank_dates.mentions(query); a query without a digit or a month's full name names no date, and
    then rank_dates (its pattern, datetime) is not even imported (rank_dates checks the same first)."""
    lowered = query.lower()
    if not any(char.isdigit() for char in lowered) and not any(name in lowered for name in _MONTH_NAMES):
        return []
    from maestro.memory.store.rank_dates import mentions

    return mentions(query)


def _on_dates(whens, date: str) -> bool:
    from maestro.memory.store.rank_dates import matches

    return matches(whens, date)


# Branches every repository has: naming one says nothing about an entry ('main' is a word, too).
_PLAIN_BRANCHES = frozenset(("main", "master", "develop", "development", "dev", "trunk", "HEAD"))


def _names_branch(text: str, branch: str) -> bool:
    """Whether `text` names `branch` as a whole (not 'feature/a' inside 'feature/ab')."""
    if branch in _PLAIN_BRANCHES:
        return False
    at = text.find(branch)
    while at >= 0:
        before = text[at - 1] if at else " "
        after = text[at + len(branch)] if at + len(branch) < len(text) else " "
        if not (before.isalnum() or before in "_-./") and not (after.isalnum() or after in "_-/"):
            return True
        at = text.find(branch, at + 1)
    return False


def _names_written(query: str) -> tuple:
    """The capitalized words of a query, casefolded ("Caroline's" → caroline): who it may ask about.
    Plain str methods (no pattern) over the first few thousand characters: a pasted log costs no more."""
    names = {}
    for word in query[:4000].split():
        word = word.strip(_PUNCTUATION)
        if word.endswith(("'s", "’s")):
            word = word[:-2]
        if word[:1].isupper() and word.isalpha():
            names.setdefault(word.casefold())
    return tuple(names)


def _speaker(text: str) -> tuple:
    """The casefolded words of the Name of an entry written "Name: text" (one to three words of letters,
    capitalized, within the first 40 characters: 'Caroline Smith:' → caroline, smith), else ()."""
    at = text.find(":", 0, 40)
    if at <= 0:
        return ()
    words = text[:at].casefold().split()
    if not text[:1].isupper() or len(words) > 3 or not all(word.isalpha() for word in words):
        return ()
    return tuple(words)


def _says_a_time(text: str) -> bool:
    """Whether an entry names a time: a digit, a weekday or month, 'yesterday', 'last week'…"""
    if any(char.isdigit() for char in text):
        return True
    return any(word.strip(_PUNCTUATION) in _TIME_WORDS for word in text.casefold().split())


def _counts(doc_terms, weights) -> dict:
    """term → count of the weighted terms the entry holds, in `weights` order (the window's float sums
    follow it). One set of the entry's terms first: most query terms are absent from most entries."""
    present = set(doc_terms)
    return {term: doc_terms.count(term) for term in weights if term in present}


def _phrase_share(doc_terms, pairs) -> float:
    """The share of `pairs` found as consecutive terms of the entry: substring searches in its terms
    joined by \x1f (a term is letters and digits, never \x1f), no pair set built per entry."""
    if not pairs:
        return 0.0
    joined = "\x1f" + "\x1f".join(doc_terms) + "\x1f"
    return sum(1 for first, second in pairs if f"\x1f{first}\x1f{second}\x1f" in joined) / len(pairs)


def _window_score(place, stats, weights, avg_len: float) -> float:
    """BM25 of the entry at `place` with the query terms of the entries around it (within WINDOW, in the
    same file) added at their distance weight; `stats` maps a place to (counts of query terms, length)."""
    file, seq = place
    own, length = stats[place]
    counts = dict(own)
    spread = 1.0
    for step in _STEPS:
        other = stats.get((file, seq + step))
        if other is None:
            continue
        weight = (WINDOW_BEFORE if step < 0 else WINDOW_AFTER) / abs(step)
        for term, tf in other[0].items():
            counts[term] = counts.get(term, 0) + weight * tf
        length += weight * other[1]
        spread += weight
    if not counts:
        return 0.0
    norm = K1 * (1.0 - B + B * length / (avg_len * spread))
    return sum(weights[t] * (tf * (K1 + 1.0) / (tf + norm) + DELTA) for t, tf in counts.items())


_STEPS = tuple(step for step in range(-WINDOW, WINDOW + 1) if step)


def search(query: str, corpus, *, limit: int = 10, today: str = "", branch: str = "", project: str = "",
           track_weights=None, pool: int = POOL) -> list:
    """maestro's ranking, best first as (Doc, score); ties by Doc.key. BM25 picks a pool, each pooled entry
    and its neighbours is rescored over its context window, then phrase, scope, date, speaker, time-cue,
    track and recency factors (the knobs above say what each is worth)."""
    sequence = analyze(query)
    query_terms = list(dict.fromkeys(sequence))
    if not query_terms or not corpus.n_docs or limit <= 0:
        return []
    prefetch = getattr(corpus, "prefetch", None)  # the index reads every term's sets in one query
    if prefetch is not None:
        prefetch(query_terms[:QUERY_LOOK])
    counts = {term: corpus.df(term) for term in query_terms[:QUERY_LOOK]}
    weights = {term: _idf(corpus.n_docs, df) for term, df in counts.items() if df}  # no entry has the others
    if len(weights) > QUERY_TERMS:
        kept = sorted(weights, key=lambda term: (-weights[term], term))[:QUERY_TERMS]
        weights = {term: weights[term] for term in query_terms if term in kept}
    query_terms = list(weights)
    if not query_terms:
        return []
    # Only the pool is read from `base`: asking the corpus for just that many (it cuts by the same plain BM25,
    # ties by key) gives the same pool and spares the index loading thousands of entries nobody scores.
    base = bm25_scored(weights, corpus.candidates(query_terms, max(pool, limit)), corpus.avg_len)
    # The pool, the entries within WINDOW of it (to be scored) and within 2 × WINDOW (their windows).
    by_place = {}
    scoring = set()
    rescored = [doc for doc, _ in base[:max(pool, limit)]]
    for doc, others in zip(rescored, corpus.around(rescored, 2 * WINDOW)):
        by_place[(doc.file, doc.seq)] = doc
        scoring.add((doc.file, doc.seq))
        for other in others:
            by_place[(other.file, other.seq)] = other
            if abs(other.seq - doc.seq) <= WINDOW:
                scoring.add((other.file, other.seq))
    stats = {place: (_counts(doc.terms, weights), len(doc.terms)) for place, doc in by_place.items()}
    pairs = list(dict.fromkeys(pair for pair in zip(sequence, sequence[1:])
                               if pair[0] != pair[1] and pair[0] in weights and pair[1] in weights))
    now = _days(today) if today else None
    whens = _dates_named(query)
    avg_len = corpus.avg_len or 1.0
    names = _names_written(query)
    speakers = {place: _speaker(by_place[place].text) for place in scoring} if names else {}
    written = {word for name in speakers.values() for word in name}
    subject = next((name for name in names if name in written), "")  # the first name that wrote an entry
    asks_when = query.lstrip().casefold().startswith(_WHEN_OPENINGS)
    scored = []
    for place in scoring:
        score = _window_score(place, stats, weights, avg_len)
        if score <= 0.0:
            continue
        doc = by_place[place]
        if pairs and stats[place][0]:
            score *= 1.0 + PHRASE * _phrase_share(doc.terms, pairs)
        if (project and doc.project == project) or (branch and _names_branch(doc.text, branch)):
            score *= 1.0 + SCOPE
        if whens and _on_dates(whens, doc.date):
            score *= 1.0 + DATE_MATCH
        if subject and subject in speakers[place]:
            score *= 1.0 + SPEAKER
        if asks_when and _says_a_time(doc.text):
            score *= 1.0 + TIME_CUE
        if track_weights:
            score *= track_weights.get(doc.track, 1.0)
        if now is not None:
            dated = _days(doc.date)
            if dated is not None:
                score *= 1.0 + RECENCY * 0.5 ** (max(0, now - dated) / HALF_LIFE_DAYS)
        if score > 0.0:
            scored.append((doc, round(score, 9)))
    scored.sort(key=lambda pair: (-pair[1], pair[0].key))
    return scored[:limit]

