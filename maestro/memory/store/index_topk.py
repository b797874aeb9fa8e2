"""The best `limit` entries by plain BM25 over the index's bitmaps (index_bits.py), exactly the ones
rank.MemoryCorpus.candidates picks (the same scores, float for float, and ties by key), without
touching every posting of a common term.

A prompt of common words holds ~40,000 postings at 20,000 entries; summing them row by row (in SQL or in
Python) costs 15–30 ms, most of a hook's budget. Instead, an upper bound of every entry's score is summed
at once over the bitmaps, as an integer in bit slices (one Python int per bit of the sum, one bit per
entry: a few hundred C-level operations in all), and only the entries whose bound can reach the cut are
scored exactly:

1. one sum: every matching entry's bound at the average length, each term's gain taken at its count
   class in the entry (1, 2, 3 exactly; 4 or more at the term's highest count);
2. seeds: the `limit` (at least SEEDS) entries with the highest sums, scored exactly: the `limit`-th best
   of them is a floor θ that the true cut is at least;
3. per length bucket (index_bits.BOUNDS, 10 % wide): BM25 falls with length, so an entry of the bucket
   scores at most `_stretch` (the largest gain ratio between the bucket's shortest length and the average,
   over the count classes present) times its sum; every entry whose stretched sum reaches θ is a
   candidate — every entry that scores θ or more is among them;
4. the candidates are scored exactly, in rank.bm25_scored's float operations and term order, and cut.

The bounds are rounded up (ceil) and the floor θ lowered by a relative 1e-9, so float rounding never drops
an entry that belongs in the cut. Result: the same documents in the same order as the in-memory corpus.
"""

import math

from maestro.memory.store import index_bits
from maestro.memory.store.rank import B, K1

SEEDS = 32
_SCALE = 255  # the largest per-term bound is this many units (8 bits): a unit is < 0.4 % of it
_FLOOR_MARGIN = 1e-9


def _gain(tf: float, norm: float) -> float:
    """BM25's saturated term frequency, as rank.bm25_scored computes it."""
    return tf * (K1 + 1.0) / (tf + norm)


def _norm(length: float, avg_len: float) -> float:
    return K1 * (1.0 - B + B * length / avg_len)


class TermSets:
    """One query term's entries within the corpus, by count class: `classes` = (count, bitmap) for 1, 2,
    3 and (the highest count, the entries holding it 4 times or more); `many` = id → count of those
    (any entry); `any` all of them."""

    __slots__ = ("classes", "many", "any")

    def __init__(self, one: int, two: int, three: int, many: dict, corpus: int):
        many_bits = index_bits.mask_of(list(many)) & corpus
        self.classes = [(1, one & corpus), (2, two & corpus), (3, three & corpus), (max(many.values(), default=4), many_bits)]
        self.many = many
        self.any = (one | two | three | many_bits) & corpus

    def counts_in(self, docs: int) -> dict:
        """id → count of this term, for the entries of `docs` that hold it."""
        out = {}
        for count, bits in self.classes[:3]:
            for doc in index_bits.ids_of(bits & docs):
                out[doc] = count
        if self.classes[3][1] & docs:
            for doc in index_bits.ids_of(self.classes[3][1] & docs):
                out[doc] = self.many[doc]
        return out


def _add(planes: list, bits: int, units: int) -> None:
    """planes += units × bits, bit-sliced: planes[j] holds bit j of every entry's sum."""
    level = 0
    while units:
        if units & 1:
            carry, at = bits, level
            while len(planes) < at:
                planes.append(0)
            while carry:
                if at == len(planes):
                    planes.append(carry)
                    break
                plane = planes[at]
                planes[at] = plane ^ carry
                carry &= plane
                at += 1
        units >>= 1
        level += 1


def _bounded_sum(sets, weights: dict, norm: float, within: int) -> tuple:
    """(planes, scale): each entry of `within`'s upper bound at this norm, in units of 1/scale, bit-sliced."""
    gains = {term: [(weights[term] * _gain(count, norm), bits & within) for count, bits in sets[term].classes]
             for term in weights}
    top = max((gain for pairs in gains.values() for gain, bits in pairs if bits), default=0.0)
    if top <= 0.0:
        return [], 1.0
    scale = _SCALE / top
    planes = []
    for pairs in gains.values():
        for gain, bits in pairs:
            if bits:
                _add(planes, bits, math.ceil(gain * scale))
    return planes, scale


def _at_least(planes: list, within: int, threshold: int) -> int:
    """The entries of `within` whose sliced sum is ≥ threshold."""
    if threshold <= 0:
        return within
    if threshold >> len(planes):
        return 0
    above, equal = 0, within
    for level in range(len(planes) - 1, -1, -1):
        plane = planes[level]
        if threshold >> level & 1:
            equal &= plane
        else:
            above |= equal & plane
            equal &= ~plane
        if not equal and not above:
            return 0
    return above | equal


def _highest(planes: list, within: int, count: int) -> tuple:
    """(entries with a sum above the count-th highest, entries equal to it) — radix selection."""
    chosen, tied, taken = 0, within, 0
    for level in range(len(planes) - 1, -1, -1):
        high = tied & planes[level]
        high_count = high.bit_count()
        if taken + high_count >= count:
            tied = high
        else:
            chosen |= high
            taken += high_count
            tied &= ~planes[level]
    return chosen, tied


def _seeds(planes: list, matching: int, buckets: dict, count: int) -> int:
    """At least `count` entries (all of them when fewer match) likely near the top: the highest bounds at
    the average length, a tie at the last place taken from the shortest entries first."""
    chosen, tied = _highest(planes, matching, count)
    missing = count - chosen.bit_count()
    for bucket in sorted(buckets):
        if missing <= 0:
            break
        part = tied & buckets[bucket]
        if part:
            ids = index_bits.ids_of(part)[:missing]
            chosen |= index_bits.mask_of(ids)
            missing -= len(ids)
    return chosen


def _stretch(sets, weights, within: int, norm: float) -> float:
    """How much more than at the average length an entry of `within` (all at least as long as `norm`
    says) can score, at most: the largest gain(count, norm) / gain(count, average) over the count
    classes present there (the many class at its highest count, which its bound assumes)."""
    counts = {count for term in weights for count, bits in sets[term].classes if bits & within}
    return max((_gain(count, norm) / _gain(count, K1) for count in counts), default=0.0)


def top(weights: dict, sets: dict, buckets: dict, avg_len: float, limit: int, lengths) -> tuple:
    """([(id, exact BM25)], everything): a superset of the best `limit` entries — every entry scoring at
    least the `limit`-th best is in it (the caller sorts by score, then key, and cuts) — or, with
    `everything` True, every matching entry (no more than `limit` match: rank.MemoryCorpus then keeps them
    all, in key order). `sets` = term → TermSets (corpus-masked),
    `buckets` = length bucket → its entries (corpus-masked), `lengths(ids)` = id → length.

    One bit-sliced sum of every entry's bound at the average length (norm K1) serves both steps: per
    length bucket, an entry's true bound is at most `_stretch` times it, so the bucket's candidates are
    those whose sum reaches floor × scale / stretch."""
    weights = {term: weight for term, weight in weights.items() if sets[term].any}
    matching = 0
    for term in weights:
        matching |= sets[term].any
    if not matching:
        return [], True
    avg = avg_len or 1.0
    if matching.bit_count() <= limit:
        return _scored(weights, sets, matching, avg, lengths), True
    planes, scale = _bounded_sum(sets, weights, K1, matching)
    seeds = _seeds(planes, matching, buckets, max(limit, SEEDS))
    seeded = _scored(weights, sets, seeds, avg, lengths)
    scored = sorted((score for _doc, score in seeded), reverse=True)
    floor = scored[limit - 1] * (1.0 - _FLOOR_MARGIN) if len(scored) >= limit else 0.0
    candidates = 0
    for bucket, members in buckets.items():
        within = members & matching & ~seeds
        if within:
            stretch = _stretch(sets, weights, within, _norm(index_bits.BOUNDS[bucket], avg))
            if stretch > 0.0:  # (0: no class of a query term there, so no entry of the bucket matches)
                candidates |= _at_least(planes, within, math.floor(floor * scale / stretch))
    return (seeded + _scored(weights, sets, candidates, avg, lengths) if candidates else seeded), False


def _scored(weights, sets, docs: int, avg: float, lengths) -> list:
    """[(id, score > 0)] of `docs`, each score in bm25_scored's operations and term order."""
    ids = index_bits.ids_of(docs)
    length_of = lengths(ids)
    counts = [(weight, sets[term].counts_in(docs)) for term, weight in weights.items()]
    out = []
    for doc in ids:
        norm = K1 * (1.0 - B + B * length_of[doc] / avg)
        score = 0.0
        for weight, count_of in counts:
            tf = count_of.get(doc)
            if tf:
                score += weight * tf * (K1 + 1.0) / (tf + norm)
        if score > 0.0:
            out.append((doc, score))
    return out
