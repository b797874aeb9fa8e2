"""The index's fast path for a search's files (index.py): one row instead of one per file.

A search (a recall on every prompt) must know that every file it reads is indexed as it is on disk: it
stats each one (a year of daily files: ~370) and compares it with that file's `files` row, then builds
its corpus from those rows. Reading and comparing 370 rows costs more than the stats themselves. So once
a search has found all of its files fresh, it leaves a `views` row for that set of files (its `scope`):

    views(scope TEXT PRIMARY KEY, stamp TEXT, ids TEXT, paths TEXT, corpus BLOB, doc_count INT, term_total INT)

`stamp` is every file's path and stat signature (size, mtime, ctime, inode; `-` when absent) in order,
exactly as the rows held them; the rest is what IndexCorpus takes from the rows. The next search of the
same scope stats its files, builds the same text and, when it is equal, reads nothing else.

Why an equal stamp is as good as the rows: the rows of a file change only when a refresh finds its stat
different from its row (then the stat differs from the stamp too) or, for a row marked racy, its digest
different — and a view is never written while a file of its scope is racy, partial or stale, so its
files' mtimes were all older than index_rows.RACY_NS when read, and any later write gives a file a new
signature. A rebuilt index starts without views. The row is written after the search, in its own short
write transaction that gives up at once when busy, and only when no other connection committed since the
search's read began (`PRAGMA data_version`): otherwise the next search just takes the rows path again.
"""

from maestro.memory.store import index_bits

SCHEMA = ("CREATE TABLE views(scope TEXT PRIMARY KEY, stamp TEXT NOT NULL, ids TEXT NOT NULL, paths TEXT NOT NULL, "
          "corpus BLOB, doc_count INT NOT NULL, term_total INT NOT NULL)")
KEEP = 8  # views kept: a store's usual scopes (the global tracks with each project's); the newest win


def scope_of(rels) -> str:
    """The key of a search's file set: its files, the daily ones counted as their folder (a new day's file
    changes the stamp, not the scope, so the view is replaced instead of piling up)."""
    named = [rel for rel in rels if not rel.startswith("daily/")]
    if len(named) < len(rels):
        named.append("daily/")
    return "\n".join(named)


def stamp_of(rels, signatures) -> str:
    """The files as a text: each path and its stat signature (index_rows.signatures), one per line."""
    return "\n".join(f"{rel} -" if signature is None else
                     f"{rel} {signature[0]} {signature[1]} {signature[2]} {signature[3]}"
                     for rel, signature in zip(rels, signatures))


class View:
    """What a corpus takes from a view row: file ids and paths (in the same order), its entries as a
    bitmap, their count and total length."""

    __slots__ = ("file_ids", "paths", "corpus", "doc_count", "term_total")

    def __init__(self, ids: str, paths: str, corpus, doc_count, term_total):
        if type(ids) is not str or type(paths) is not str or type(corpus) not in (bytes, type(None)):
            raise index_bits.Corrupt("a view row no index of ours writes")
        try:
            self.file_ids = [int(value) for value in ids.split(",")] if ids else []
        except ValueError:
            raise index_bits.Corrupt("a view's file ids are not numbers") from None
        self.paths = paths.split("\n") if paths else []
        if len(self.paths) != len(self.file_ids) or type(doc_count) is not int or type(term_total) is not int \
                or doc_count < 0 or term_total < 0:
            raise index_bits.Corrupt("a view row no index of ours writes")
        self.corpus = index_bits.decode(corpus)
        self.doc_count, self.term_total = doc_count, term_total


def read(conn, scope: str):
    """The `views` row of `scope` (stamp, ids, paths, corpus, doc_count, term_total), or None; as the
    first read of the caller's read transaction, it is what fixes the transaction's state before any file
    is stat-ed (index._fresh_corpus)."""
    return conn.execute("SELECT stamp, ids, paths, corpus, doc_count, term_total FROM views WHERE scope = ?",
                        (scope,)).fetchone()


def data_version(conn) -> int:
    """What changes when another connection commits (the view's guard against a write in between)."""
    return conn.execute("PRAGMA data_version").fetchone()[0]


def save(conn, scope: str, stamp: str, file_ids: dict, corpus: int, doc_count: int, term_total: int,
         seen: int) -> bool:
    """Write the view after the search's read transaction ended, unless another connection committed
    since `seen` (data_version in that transaction) or the index is busy (no wait). True when written."""
    try:
        conn.execute("PRAGMA busy_timeout = 0")
        conn.execute("BEGIN IMMEDIATE")
    except conn.OperationalError:  # busy: another process writes; the next search tries again
        return False
    try:
        if data_version(conn) != seen:
            conn.execute("ROLLBACK")
            return False
        conn.execute("INSERT OR REPLACE INTO views VALUES (?, ?, ?, ?, ?, ?, ?)",
                     (scope, stamp, ",".join(str(value) for value in file_ids.values()), "\n".join(file_ids),
                      index_bits.encode(corpus), doc_count, term_total))
        conn.execute(f"DELETE FROM views WHERE rowid NOT IN (SELECT rowid FROM views ORDER BY rowid DESC "
                     f"LIMIT {KEEP})")
        conn.execute("COMMIT")
        return True
    except BaseException:
        conn.execute("ROLLBACK")
        raise
