"""The corpus the search index serves (index.py): rank's corpus protocol over the SQLite tables, narrowed
to some track files (and to entries dated `since` on).

It serves the same documents, statistics, candidates and neighbours as rank.MemoryCorpus would over those
files, so the two give identical rankings, without loading every matching entry into Python:

    the corpus  a bitmap of its entries' ids: each file's run of ids (or its stored bitmap), less the
                entries dated before `since` when one is given
    df(term)    the count of the term's entries (index_bits) within the corpus: one C-level popcount
    candidates  the best entries by plain BM25, exactly rank.MemoryCorpus's (index_topk.py); only those
                entries are loaded
    neighbours  entries by (file, seq) around the hit
"""

from maestro.memory.store import index_bits, index_topk, index_views
from maestro.memory.store.rank import Doc, idf

_CHUNK = 500  # ids per `IN (...)`, written as integer literals (no host parameter per id: old builds allow 999)


class IndexCorpus:
    """rank's corpus protocol over the index, narrowed to some files (and entries dated `since` on)."""

    _COLUMNS = "d.id, f.path, d.seq, d.track, d.entry_id, d.date, d.text, d.terms, d.project, d.branches"

    def __init__(self, conn, rels, since: str = "", rows=None, view=None):
        """`rows`: the files table as index.py read it in this read transaction (index._FILE_COLUMNS), so
        it is not read twice; `view`: instead, the index_views.View of these very files (no `since`)."""
        self.conn = conn
        self._sets, self._buckets, self._placed, self._sizes = {}, None, {}, {}
        self._since, self._args, self._view_left = "", (), None
        if view is not None:
            self._file_ids = dict(zip(view.paths, view.file_ids))
            self._paths = dict(zip(view.file_ids, view.paths))
            self._corpus, self.n_docs, self._term_total = view.corpus, view.doc_count, view.term_total
            self.avg_len = view.term_total / view.doc_count if view.doc_count else 0.0
            return
        wanted = set(rels)  # filtered here: one bound variable per file fails past 999 files on old SQLite
        self._file_ids, self._paths, corpus = {}, {}, 0
        count = total = 0
        if rows is None:
            rows = conn.execute("SELECT id, path, 0, 0, 0, 0, 0, 0, id_lo, id_hi, mask, doc_count, term_total "
                                "FROM files")
        runs = []
        for row in rows:  # (index._FILE_COLUMNS: id, path, 6 of the stat check, id_lo, id_hi, mask, counts)
            path = row[1]
            if path in wanted:
                self._file_ids[path] = row[0]
                self._paths[row[0]] = path
                if row[10] is None and row[8] is not None and row[9] is not None:
                    runs.append((row[8], row[9]))  # a run of ids: joined with the runs next to it below
                else:
                    corpus |= index_bits.file_mask(row[8], row[9], row[10])
                count += row[11] or 0
                total += row[12] or 0
        corpus |= index_bits.runs_mask(runs)
        if since:
            in_files = f"({','.join(str(int(i)) for i in self._file_ids.values()) or 'NULL'})"
            self._since, self._args = " AND d.date >= ?", (since,)
            dated = [row[0] for row in conn.execute(f"SELECT d.id FROM docs d WHERE d.file_id IN {in_files}"
                                                    f"{self._since}", self._args)]
            corpus &= index_bits.mask_of(dated)
            count, total = conn.execute(f"SELECT count(*), total(d.length) FROM docs d WHERE d.file_id IN "
                                        f"{in_files}{self._since}", self._args).fetchone()
        self._corpus = corpus
        self.n_docs, self._term_total = count, total
        self.avg_len = total / count if count else 0.0

    def leave_view(self, scope: str, stamp: str, seen: int) -> None:
        """Have `close` write this corpus's files as the view of `scope` (index_views.save: after the read
        transaction, unless another connection committed since `seen`)."""
        self._view_left = (scope, stamp, seen)

    def close(self) -> None:
        """End the read transaction (index.open_corpus began it), write the view it was asked to leave
        (best effort: a busy or failing write only costs the next search the rows path), end the connection."""
        try:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            if self._view_left is not None:
                scope, stamp, seen = self._view_left
                try:
                    index_views.save(self.conn, scope, stamp, self._file_ids, self._corpus, self.n_docs,
                                     int(self._term_total), seen)
                except self.conn.Error:
                    pass
        finally:
            self.conn.close()

    def _load_sets(self, terms) -> None:
        """The bitmaps of the terms not loaded yet (two queries for all of them)."""
        missing = [term for term in dict.fromkeys(terms) if term not in self._sets]
        for start in range(0, len(missing), 200):
            chunk = missing[start:start + 200]
            marks = ",".join("?" * len(chunk))
            found = {}
            for term, segment, *sets in self.conn.execute(
                    f"SELECT term, seg, one, two, three FROM bits WHERE term IN ({marks})", chunk):
                if type(segment) is not int or not 0 <= segment < index_bits.MAX_IDS >> index_bits.SEGMENT_BITS:
                    raise index_bits.Corrupt(f"a segment number no index of ours holds: {segment!r}")
                shift = segment << index_bits.SEGMENT_BITS
                mine = found.setdefault(term, [0, 0, 0, {}])
                for number, value in enumerate(sets):
                    if value:
                        mine[number] |= index_bits.decode(value, index_bits.SEGMENT) << shift
            for term, doc, tf in self.conn.execute(f"SELECT term, doc, tf FROM many WHERE term IN ({marks})", chunk):
                if type(tf) is not int or tf < 4:
                    raise index_bits.Corrupt(f"a count of 4 or more that is {tf!r}")
                found.setdefault(term, [0, 0, 0, {}])[3][doc] = tf
            for term in chunk:
                mine = found.get(term)
                self._sets[term] = None if mine is None else index_topk.TermSets(*mine, self._corpus)

    def prefetch(self, terms) -> None:
        """Read the sets of all these terms at once (rank.search asks df term by term afterwards)."""
        self._load_sets(terms)

    def df(self, term: str) -> int:
        self._load_sets((term,))
        sets = self._sets[term]
        return sets.any.bit_count() if sets is not None else 0

    def _length_buckets(self) -> dict:
        if self._buckets is None:
            self._buckets = {}
            for bucket, bits in self.conn.execute("SELECT bucket, bits FROM lens"):
                if type(bucket) is not int or not 0 <= bucket < len(index_bits.BOUNDS):
                    raise index_bits.Corrupt(f"a length bucket no index of ours holds: {bucket!r}")
                members = index_bits.decode(bits) & self._corpus
                if members:
                    self._buckets[bucket] = members
        return self._buckets

    def _lengths(self, ids) -> dict:
        """id → length of some entries, from the `sizes` rows of their segments (index_bits)."""
        wanted = {doc_id >> index_bits.SEGMENT_BITS for doc_id in ids} - self._sizes.keys()
        if wanted:
            self._sizes.update(self.conn.execute(f"SELECT seg, data FROM sizes WHERE seg IN "
                                                 f"({','.join(str(int(seg)) for seg in wanted)})"))
        lengths = {doc_id: index_bits.size_of(self._sizes, doc_id) for doc_id in ids}
        if 0 in lengths.values():  # a matching entry has a term: a row missing, cut short or zeroed
            raise index_bits.Corrupt("an entry's length is not where the index keeps it")
        return lengths

    def _keys(self, ids) -> dict:
        """id → key (`<file>#<seq>`) of some entries: the order of ties, and of a cut that keeps all."""
        missing = [doc_id for doc_id in ids if doc_id not in self._placed]
        for start in range(0, len(missing), _CHUNK):
            chunk = missing[start:start + _CHUNK]
            for doc_id, file_id, seq in self.conn.execute(
                    f"SELECT id, file_id, seq FROM docs WHERE id IN ({','.join(str(int(i)) for i in chunk)})"):
                self._placed[doc_id] = f"{self._paths.get(file_id, '')}#{seq}"
        return self._placed

    def _docs(self, ids) -> list:
        out = []
        ids = list(ids)
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start:start + _CHUNK]
            out += [(row[0], _doc(row)) for row in self.conn.execute(
                f"SELECT {self._COLUMNS} FROM docs d JOIN files f ON f.id = d.file_id "
                f"WHERE d.id IN ({','.join(str(int(doc_id)) for doc_id in chunk)})")]
        return out

    def candidates(self, terms, limit: int) -> list:
        query = list(dict.fromkeys(terms))
        if not query or limit <= 0 or not self.n_docs:
            return []
        self._load_sets(query)
        weights = {term: idf(self, term) for term in query if self._sets[term] is not None}
        sets = {term: self._sets[term] for term in weights}
        ranked, everything = index_topk.top(weights, sets, self._length_buckets(), self.avg_len, limit,
                                            self._lengths)
        if everything:  # no more than `limit` match: rank.MemoryCorpus gives them all, in key order
            return sorted(self._held([doc_id for doc_id, _score in ranked]).values(), key=lambda doc: doc.key)
        ranked.sort(key=lambda pair: -pair[1])
        scores = [score for _doc_id, score in ranked]
        last = scores[limit - 1]
        # only equal scores need the keys: those tied with another one down to the cut (usually none)
        tied = [doc_id for at, (doc_id, score) in enumerate(ranked) if score >= last and (
            (at and scores[at - 1] == score) or (at + 1 < len(scores) and scores[at + 1] == score))]
        keys = self._keys(tied) if tied else {}
        ranked.sort(key=lambda pair: (-pair[1], keys.get(pair[0], "")))
        chosen = [doc_id for doc_id, _score in ranked[:limit]]
        docs = self._held(chosen)
        return [docs[doc_id] for doc_id in chosen]

    def _held(self, ids) -> dict:
        """id → Doc of entries the sets named; Corrupt when one has no row (the index is damaged)."""
        docs = dict(self._docs(ids))
        if len(docs) < len(ids):
            raise index_bits.Corrupt("a set names an entry the index does not hold")
        return docs

    def around(self, docs, k: int) -> list:
        """[neighbours(doc, k) for doc in docs], read in one query per 100 docs (without `since`)."""
        if self._since or k <= 0:
            return [self.neighbours(doc, k) for doc in docs]
        rows_of = {}
        wanted = [(self._file_ids[doc.file], doc.seq) for doc in docs if doc.file in self._file_ids]
        for start in range(0, len(wanted), 100):
            chunk = wanted[start:start + 100]
            ranges = " OR ".join("(d.file_id = ? AND d.seq BETWEEN ? AND ?)" for _ in chunk)
            params = [value for file_id, seq in chunk for value in (file_id, seq - k, seq + k)]
            for row in self.conn.execute(f"SELECT {self._COLUMNS}, d.file_id FROM docs d JOIN files f "
                                         f"ON f.id = d.file_id WHERE {ranges}", params):
                rows_of.setdefault(row[-1], {})[row[2]] = row[:-1]
        out = []
        for doc in docs:
            rows = rows_of.get(self._file_ids.get(doc.file), {})
            if doc.seq not in rows:
                out.append([])
                continue
            out.append([_doc(rows[seq]) for seq in range(doc.seq - k, doc.seq + k + 1)
                        if seq != doc.seq and seq in rows])
        return out

    def neighbours(self, doc, k: int) -> list:
        file_id = self._file_ids.get(doc.file)
        if k <= 0 or file_id is None:
            return []
        select = f"SELECT {self._COLUMNS} FROM docs d JOIN files f ON f.id = d.file_id WHERE d.file_id = ?{self._since}"
        if not self._since:  # every entry of a file is a document: its neighbours are the seqs around it
            rows = [_doc(row) for row in self.conn.execute(
                f"{select} AND d.seq BETWEEN ? AND ? ORDER BY d.seq", (file_id, doc.seq - k, doc.seq + k))]
            at = [i for i, row in enumerate(rows) if row.seq == doc.seq]
            return rows[:at[0]] + rows[at[0] + 1:] if at else []
        upto = [_doc(row) for row in self.conn.execute(f"{select} AND d.seq <= ? ORDER BY d.seq DESC LIMIT ?",
                                                       (file_id, *self._args, doc.seq, k + 1))]
        if not upto or upto[0].seq != doc.seq:
            return []  # not a document of this corpus (dated before `since`)
        after = [_doc(row) for row in self.conn.execute(f"{select} AND d.seq > ? ORDER BY d.seq LIMIT ?",
                                                        (file_id, *self._args, doc.seq, k))]
        return upto[1:][::-1] + after


def _doc(row) -> Doc:
    _id, path, seq, track, entry_id, date, text, terms, project, branches = row
    return Doc(f"{path}#{seq}", track, entry_id, date, path, text, tuple(terms.split("\x1f")) if terms else (),
               seq, project, tuple(branches.split("\x1f")) if branches else ())
