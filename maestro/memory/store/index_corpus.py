"""The corpus the search index serves (index.py): rank's corpus protocol over the SQLite tables, narrowed
to some track files (and to entries dated `since` on).

It serves the same documents, statistics, candidates and neighbours as rank.MemoryCorpus would over those
files, so the two give identical rankings, without loading every matching entry into Python:

    df(term)        a count over the `post` table's primary key (term, file_id, doc)
    candidates()    plain BM25 summed in SQL over the query terms' postings (their tf and the entry's
                    length are stored in each posting), ordered, and read only down to the cut (plus the
                    rows tied with the last one kept); only those entries are loaded. Rows whose SQL
                    scores lie within CUT_EPSILON of each other are re-ordered by the exact Python score
                    (rank's formula, in its term order), then key, so SQL's float rounding never decides
                    a tie or the cut
    neighbours()    entries by (file, seq) around the hit
"""

from maestro.memory.store.rank import B, K1, Doc, bm25_scored, idf

# SQL's sum runs in another order than Python's: scores that far apart, relative, are treated as a tie
# and decided by the exact Python score (SQLite's doubles differ from Python's by ~1e-15 relative).
CUT_EPSILON = 1e-9
_CHUNK = 500  # ids per `IN (...)`, written as integer literals (no host parameter per id: old builds allow 999)


class IndexCorpus:
    """rank's corpus protocol over the index, narrowed to some files (and entries dated `since` on)."""

    _COLUMNS = "d.id, f.path, d.seq, d.track, d.entry_id, d.date, d.text, d.terms, d.project, d.branches"

    def __init__(self, conn, rels, since: str = ""):
        self.conn = conn
        wanted = set(rels)  # filtered here: one bound variable per file fails past 999 files on old SQLite
        self._file_ids = {path: file_id for path, file_id in conn.execute("SELECT path, id FROM files")
                          if path in wanted}
        self._in_files = f"({','.join(str(int(i)) for i in self._file_ids.values()) or 'NULL'})"
        self._since, self._args = "", ()
        if since:
            self._since, self._args = " AND d.date >= ?", (since,)
            count, total = conn.execute(f"SELECT count(*), total(d.length) FROM docs d WHERE d.file_id IN "
                                        f"{self._in_files}{self._since}", self._args).fetchone()
        else:  # kept per file by index.py: no scan of every row
            count, total = conn.execute(f"SELECT total(doc_count), total(term_total) FROM files WHERE id IN "
                                        f"{self._in_files}").fetchone()
            count = int(count)
        self.n_docs = count
        self.avg_len = total / count if count else 0.0
        self._df = {}

    def close(self) -> None:
        """End the read transaction (index.open_corpus began it) and the connection."""
        try:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
        finally:
            self.conn.close()

    def _postings(self) -> str:
        """The postings of this corpus: a FROM tail and WHERE condition on `post p` (joined to the
        entry's row only when `since` must look at its date)."""
        if not self._since:
            return f" WHERE p.file_id IN {self._in_files}"
        # CROSS JOIN: SQLite keeps that order, so the postings drive and an entry's row is looked up
        # per posting; driven from docs (one file of 20,000 entries) a query would probe every entry
        return f" CROSS JOIN docs d ON d.id = p.doc WHERE p.file_id IN {self._in_files}{self._since}"

    def df(self, term: str) -> int:
        found = self._df.get(term)
        if found is None:
            found = self.conn.execute(f"SELECT count(*) FROM post p{self._postings()} AND p.term = ?",
                                      (*self._args, term)).fetchone()[0]
            self._df[term] = found
        return found

    def _docs(self, ids) -> list:
        out = []
        ids = list(ids)
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start:start + _CHUNK]
            out += [(row[0], _doc(row)) for row in self.conn.execute(
                f"SELECT {self._COLUMNS} FROM docs d JOIN files f ON f.id = d.file_id "
                f"WHERE d.id IN ({','.join(str(int(doc_id)) for doc_id in chunk)})")]
        return out

    def _ranked(self, weights: dict, limit: int):
        """(rows, cut): every matching (id, SQL score), best first, when no more than `limit` match
        (cut False); else the rows down to the cut by plain BM25 summed in SQL, plus every row tied
        (within CUT_EPSILON) with the last one kept (cut True)."""
        terms = list(weights)
        values = ",".join("(?, ?)" for _ in terms)
        params = [value for term in terms for value in (term, weights[term])]
        avg_len = self.avg_len or 1.0
        # rank's norm is K1 * (1 - B + B * length / avg_len), spelled as two constants and one product
        rows = self.conn.execute(
            f"WITH q(term, w) AS (VALUES {values}) "
            f"SELECT p.doc, sum(q.w * p.tf * {K1 + 1.0!r} / (p.tf + ? + ? * p.len)) AS s "
            f"FROM q CROSS JOIN post p ON p.term = q.term{self._postings()} "
            f"GROUP BY p.doc ORDER BY s DESC",
            (*params, K1 * (1.0 - B), K1 * B / avg_len, *self._args))
        kept, floor = [], None
        for row in rows:
            if floor is not None and row[1] < floor:
                rows.close()
                return kept, True
            kept.append(row)
            if len(kept) == limit:
                floor = row[1] - abs(row[1]) * CUT_EPSILON
        return kept, len(kept) > limit

    def candidates(self, terms, limit: int) -> list:
        query = list(dict.fromkeys(terms))
        if not query or limit <= 0 or not self.n_docs:
            return []
        weights = {term: idf(self, term) for term in query}
        rows, cut = self._ranked(weights, limit)
        docs = dict((doc_id, doc) for doc_id, doc in self._docs([doc_id for doc_id, _ in rows]))
        if not cut:
            return sorted(docs.values(), key=lambda doc: doc.key)
        return _exact_order([(docs[doc_id], score) for doc_id, score in rows], weights, self.avg_len)[:limit]

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


def _exact_order(scored, weights: dict, avg_len: float) -> list:
    """Docs in SQL's score order, each run of near-equal SQL scores (within CUT_EPSILON of its
    neighbour) re-ordered by the exact Python score, then key: the order rank.MemoryCorpus gives."""
    out, run = [], []
    for doc, score in scored:
        if run and run[-1][1] - score > abs(run[-1][1]) * CUT_EPSILON:
            out += _settled(run, weights, avg_len)
            run = []
        run.append((doc, score))
    return out + _settled(run, weights, avg_len)


def _settled(run, weights, avg_len) -> list:
    if len(run) == 1:
        return [run[0][0]]
    return [doc for doc, _ in bm25_scored(weights, [doc for doc, _ in run], avg_len)]
