"""The search index's postings as bitmaps over entry ids (index.py's `bits`, `many`, `lens`, `files.mask`).

An entry's row id (docs.id) is its bit. Per term, the entries holding it 1, 2 or 3 times, cut in segments
of SEGMENT ids; those holding it 4 times or more, with their count:

    bits(term, seg, one, two, three)   one/two/three: the term's entries with that count, among ids
                                       seg × SEGMENT … (seg + 1) × SEGMENT − 1 (a row per segment it occurs in)
    many(term, doc, tf)                the entries holding the term 4 times or more
    lens(bucket, bits)                 the entries whose length (terms) falls in each bucket of BOUNDS
    sizes(seg, data)                   each entry's length, 4 bytes little-endian per id of the segment
                                       (0: no entry), so scoring reads no docs row
    files.mask                         the entries of a file (NULL when they are one run of ids)

A set is a Python int used as a bitmap, so intersections, unions and counts over 20,000 entries are single
C operations (index_topk.py ranks with them instead of reading one posting row per entry and term, which
cost ~30 ms for a prompt of common words). Stored as its bytes from the first to the last non-zero one,
after a 4-byte offset: a rare term costs a few bytes per segment, and writing one never loops in Python
over its entries. New entries take the highest ids, so a write rewrites the last segment of each of its
terms, not the whole set.

Row ids are taken above every live row (index_rows._insert): an entry's bits are cleared when its row is
dropped (`remove`), so an id taken again never inherits another entry's terms.
"""


SEGMENT_BITS = 13  # 8,192 ids (1 KB of bitmap) per segment row
# Ids at or above this are no entry's (134 million): a stored value that reaches them is damaged, and
# building it would ask for gigabytes (Corrupt instead; the index is then rebuilt).
MAX_IDS = 1 << 27


class Corrupt(ValueError):
    """A stored set or id that no index of ours holds: the index is damaged (index.discard_if_corrupt)."""


SEGMENT = 1 << SEGMENT_BITS
_SEGMENT_MASK = SEGMENT - 1

# Length buckets: each bound ≥ 1.1 × the one before (and ≥ it + 1), so an entry's length is within 10 % of
# its bucket's lower bound, which index_topk uses as the bucket's shortest (highest-scoring) length.
BOUNDS = [1]
while BOUNDS[-1] < 1 << 20:
    BOUNDS.append(max(BOUNDS[-1] + 1, BOUNDS[-1] * 11 // 10))


def bucket_of(length: int) -> int:
    """The bucket of an entry of `length` terms (≥ 1): BOUNDS[bucket] ≤ length."""
    from bisect import bisect_right  # writes only

    return bisect_right(BOUNDS, length) - 1


def encode(bits: int) -> bytes:
    """A set's bytes: a 4-byte offset (in bytes), then the bitmap from there to its last set bit."""
    data = bits.to_bytes((bits.bit_length() + 7) // 8, "little")
    trimmed = data.lstrip(b"\0")
    return (len(data) - len(trimmed)).to_bytes(4, "little") + trimmed


def decode(data, span: int = MAX_IDS) -> int:
    """The set `encode` stored (0 for NULL or an empty value), of ids below `span` (a segment's value:
    SEGMENT); one that reaches past it is damaged (Corrupt)."""
    if not data or len(data) <= 4:
        return 0
    offset = int.from_bytes(data[:4], "little")
    if (offset + len(data) - 4) * 8 > span:
        raise Corrupt(f"a stored set reaches past {span} ids")
    return int.from_bytes(data[4:], "little") << (8 * offset)


def mask_of(ids) -> int:
    """The bitmap of some ids."""
    if not ids:
        return 0
    if not 0 <= min(ids) <= max(ids) < MAX_IDS:
        raise Corrupt(f"an id outside 0…{MAX_IDS - 1}")
    out = bytearray((max(ids) >> 3) + 1)
    for doc in ids:
        out[doc >> 3] |= 1 << (doc & 7)
    return int.from_bytes(out, "little")


def run_mask(low: int, high: int) -> int:
    """The bitmap of the ids low…high (inclusive)."""
    if high >= MAX_IDS or low < 0:
        raise Corrupt(f"an id outside 0…{MAX_IDS - 1}")
    return ((1 << (high - low + 1)) - 1) << low if high >= low else 0


def runs_mask(runs) -> int:
    """The bitmap of some runs (low, high) of ids, runs that meet joined first: a store's files mostly
    hold consecutive runs, so a few shifts build what one OR per file would (each a copy of the map)."""
    out, start, end = 0, None, None
    for low, high in sorted(runs):
        if high < low:
            continue  # empty (no index of ours stores one; run_mask gives 0 for it too)
        if start is not None and low <= end + 1:
            end = max(end, high)
            continue
        if start is not None:
            out |= run_mask(start, end)
        start, end = low, high
    return out | run_mask(start, end) if start is not None else out


def _byte_bits() -> tuple:
    """The set bits of each byte value, ascending: a byte's are its lowest bit's, then those of the rest
    (a quarter of the time of a comprehension over 8 bits × 256 values, paid by every hook import)."""
    table = [()]
    for value in range(1, 256):
        rest = value & (value - 1)
        table.append(((value ^ rest).bit_length() - 1,) + table[rest])
    return tuple(table)


_BYTE_BITS = _byte_bits()


def ids_of(bits: int) -> list:
    """The ids of a bitmap, ascending: its bytes, the set ones found by C-level searches (a translate
    marks them, `find` jumps between them), then each set byte's bits from a table."""
    if bits <= 0:
        return []
    data = bits.to_bytes((bits.bit_length() + 7) // 8, "little")
    marks = data.translate(_SET_BYTES)
    out = []
    at = marks.find(1)
    while at >= 0:
        base = at * 8
        out.extend(base + bit for bit in _BYTE_BITS[data[at]])
        at = marks.find(1, at + 1)
    return out


_SET_BYTES = bytes([0] + [1] * 255)


def _counts(terms_text: str) -> dict:
    counts = {}
    for term in terms_text.split("\x1f") if terms_text else ():
        counts[term] = counts.get(term, 0) + 1
    return counts


def add(conn, docs) -> None:
    """Set the bits of new entries, `docs` = [(id, terms joined by \\x1f)], when the caller's write
    transaction is flushed (`flush`, right before its COMMIT)."""
    _pending(conn)[1].extend(docs)


def remove(conn, docs) -> None:
    """Clear the bits of entries whose rows are being dropped (same shape as `add`), at `flush`."""
    _pending(conn)[0].extend(docs)


def _pending(conn) -> tuple:
    found = getattr(conn, "bits_pending", None)
    if found is None:
        found = ([], [])
        conn.bits_pending = found
    return found


def discard(conn) -> None:
    """Forget what a rolled-back transaction had asked for."""
    conn.bits_pending = None


def flush(conn) -> None:
    """Apply the bits of a write transaction's dropped and new entries, one read and one write per term
    touched (a transaction of 300 small daily files would otherwise rewrite a common term 300 times).
    Clears first: an id dropped here may be taken again by a new entry of the same transaction (ids are
    taken above the live rows), never the other way round."""
    removed, added = _pending(conn)
    discard(conn)
    if not removed and not added:
        return
    changes, lengths = {}, {}
    for set_bits, docs in ((False, removed), (True, added)):
        for doc, terms_text in docs:
            counts = _counts(terms_text)
            for term, tf in counts.items():
                changes.setdefault(term, []).append((set_bits, doc, tf))
            length = sum(counts.values())
            if length:
                lengths.setdefault(bucket_of(length), []).append((set_bits, doc, length))
    for term, steps in sorted(changes.items()):
        _apply_term(conn, term, steps)
    for bucket, steps in sorted(lengths.items()):
        row = conn.execute("SELECT bits FROM lens WHERE bucket = ?", (bucket,)).fetchone()
        value = _applied(decode(row[0]) if row else 0, [(set_bits, doc) for set_bits, doc, _length in steps])
        conn.execute("INSERT OR REPLACE INTO lens(bucket, bits) VALUES (?, ?)", (bucket, encode(value)))
    _store_sizes(conn, [step for steps in lengths.values() for step in steps])


def _store_sizes(conn, steps) -> None:
    """Each entry's length into its segment's `sizes` row (0 for a dropped one), clears first."""
    by_segment = {}
    for set_bits, doc, length in sorted(steps, key=lambda step: step[0]):
        by_segment.setdefault(doc >> SEGMENT_BITS, []).append((doc & _SEGMENT_MASK, length if set_bits else 0))
    for segment, changes in sorted(by_segment.items()):
        row = conn.execute("SELECT data FROM sizes WHERE seg = ?", (segment,)).fetchone()
        data = bytearray(row[0] if row and len(row[0]) == SEGMENT * 4 else SEGMENT * 4)
        for slot, length in changes:
            data[slot * 4:slot * 4 + 4] = min(length, 0xFFFFFFFF).to_bytes(4, "little")
        conn.execute("INSERT OR REPLACE INTO sizes(seg, data) VALUES (?, ?)", (segment, bytes(data)))


def size_of(segments: dict, doc: int) -> int:
    """An entry's length from the `sizes` rows read (segment → bytes)."""
    data = segments.get(doc >> SEGMENT_BITS)
    at = (doc & _SEGMENT_MASK) * 4
    return int.from_bytes(data[at:at + 4], "little") if data else 0


def _applied(value: int, steps) -> int:
    """`value` with the ids of the clear steps cleared, then those of the set steps set."""
    cleared = mask_of([doc for set_bits, doc in steps if not set_bits])
    return (value & ~cleared) | mask_of([doc for set_bits, doc in steps if set_bits])


def _apply_term(conn, term: str, steps) -> None:
    by_segment = {}
    for set_bits, doc, tf in steps:
        if tf >= 4:
            if set_bits:
                conn.execute("INSERT OR REPLACE INTO many(term, doc, tf) VALUES (?, ?, ?)", (term, doc, tf))
            else:
                conn.execute("DELETE FROM many WHERE term = ? AND doc = ?", (term, doc))
            continue
        by_segment.setdefault(doc >> SEGMENT_BITS, []).append((set_bits, doc & _SEGMENT_MASK, tf))
    for segment, mine in sorted(by_segment.items()):
        row = conn.execute("SELECT one, two, three FROM bits WHERE term = ? AND seg = ?", (term, segment)).fetchone()
        sets = [decode(value, SEGMENT) for value in row] if row else [0, 0, 0]
        for number in range(3):
            changes = [(set_bits, doc) for set_bits, doc, tf in mine if tf == number + 1]
            if changes:
                sets[number] = _applied(sets[number], changes)
        if any(sets):
            conn.execute("INSERT OR REPLACE INTO bits(term, seg, one, two, three) VALUES (?, ?, ?, ?, ?)",
                         (term, segment, *(encode(value) for value in sets)))
        elif row:
            conn.execute("DELETE FROM bits WHERE term = ? AND seg = ?", (term, segment))


def store_file_mask(conn, file_id: int) -> None:
    """Record which ids a file's entries have: a run (`id_lo`…`id_hi`, mask NULL) or a bitmap."""
    ids = [row[0] for row in conn.execute("SELECT id FROM docs WHERE file_id = ? ORDER BY id", (file_id,))]
    if not ids:
        conn.execute("UPDATE files SET id_lo = NULL, id_hi = NULL, mask = NULL WHERE id = ?", (file_id,))
        return
    contiguous = ids[-1] - ids[0] + 1 == len(ids)
    conn.execute("UPDATE files SET id_lo = ?, id_hi = ?, mask = ? WHERE id = ?",
                 (ids[0], ids[-1], None if contiguous else encode(mask_of(ids)), file_id))


def file_mask(low, high, mask) -> int:
    """A file's entries as a bitmap, from its files row's `id_lo`, `id_hi`, `mask`."""
    if mask is not None:
        return decode(mask)
    if low is None or high is None:
        return 0
    return run_mask(low, high)
