"""The search index: `<memory>/.maestro-memory/index.sqlite3`, a cache of the track files, never the truth
(docs/memory-index.md says it all at length).

    files(path, size, mtime_ns, ctime_ns, inode,       what each indexed file looked like when it was read,
          doc_count, term_total, racy, digest,          its entries' count and total length (corpus stats),
          id_lo, id_hi, mask)                           its bytes' digest while racy, its entries' ids
    docs(id, file_id, seq, track, entry_id, date, text, terms, length, project, digest, branches)   per entry
    bits, many, lens, sizes                             each term's entries as bitmaps over docs.id, by
                                                        count, the entries by length, and each one's length
                                                        (index_bits.py)
    views                                               per set of files searched: their stat signatures
                                                        and corpus in one row (index_views.py)

Freshness: `open_corpus` stats every file the search reads (in its read transaction: when nothing
changed, the scope's view, else one read of `files`, serves the corpus) and re-indexes only those whose size, mtime, ctime
or inode differ from the row (or that appeared or vanished); store writes refresh the files they wrote
inside their transaction (`refresh_written`, from txn.py, one chunk at most). A file is stat-ed before
it is read; an unchanged entry keeps its row (by digest); a file read within index_rows.RACY_NS of its
mtime is checked by digest until older (git's racy rule). `warm` brings everything up to date for the
detached refresher. A refresh commits per file and per index_rows.CHUNK_ENTRIES new entries, so a caller
cut short keeps its progress; a search reads in one read transaction and never serves a half-done file.

Robustness: an index that is missing, not a regular file we own, unreadable, corrupt, of another format
or analyzer is rebuilt silently (private temp file, then rename). When it cannot be built or updated
(read-only dir, full disk, busy past `busy_ms`), SQLite is missing or MAESTRO_MEMORY_INDEX=off,
`open_corpus` returns None and search parses the files (rank.MemoryCorpus): the same results.
"""

import os

from maestro import knobs
from maestro.memory.store import index_bits, index_files, index_rows, index_views
from maestro.memory.store.analyze import VERSION as ANALYZER_VERSION
from maestro.memory.store.layout import META_DIR
from maestro.memory.store.index_connect import connect as _connect
from maestro.memory.store.index_connect import inode as _inode
from maestro.memory.store.index_connect import is_ours as _is_ours
from maestro.memory.store.index_connect import load as _sqlite
from maestro.memory.store.index_corpus import IndexCorpus

FORMAT = "8"
INDEX_NAME = "index.sqlite3"
# An entry's row (~0.8 KB of text and terms) and a term's segment of bitmaps (≤ 1 KB each) spill into
# overflow pages at SQLite's default 4 KB (more than ~1 KB per row); at 16 KB they stay in their page:
# the index of the 20,000-entry bench store is a third of the size and a search reads fewer pages.
PAGE_SIZE = 16384
_usable = None  # probed once per process


def index_path(root: str) -> str:
    return os.path.join(root, META_DIR, INDEX_NAME)


def errors() -> tuple:
    """What a query on the index may raise when the index, not the caller, is at fault."""
    sqlite3 = _sqlite()
    return (sqlite3.Error, index_bits.Corrupt) if sqlite3 is not None else ()


def available() -> bool:
    """The interpreter has a `sqlite3` module and the index is not switched off."""
    global _usable
    if not knobs.memory_index_enabled():
        return False
    if _usable is None:
        _usable = _sqlite() is not None
    return _usable


def fingerprint() -> str:
    """The index format and the analyzer's version (analyze.VERSION, pinned to its code by a test): an
    analyzer that changed (new stemming, stopwords) makes every stored row stale, so the index is rebuilt."""
    return f"{FORMAT}:{ANALYZER_VERSION}"


def _valid(conn) -> bool:
    rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    return rows.get("fingerprint") == fingerprint()


def _rebuild(sqlite3, root: str, path: str) -> None:
    """A fresh, empty index of the current format, published by rename (never a half-built file)."""
    from maestro.util.atomic import TEMP_INFIX, sweep_stale_temps  # rebuilds only: contextlib is a hook's ms

    directory = os.path.dirname(path)
    tmp = os.path.join(directory, f".{INDEX_NAME}{TEMP_INFIX}{os.getpid()}")
    sweep_stale_temps(path)  # what a rebuilder killed before its rename left
    for name in os.listdir(directory):
        if name.startswith(f".{INDEX_NAME}{TEMP_INFIX}") and name.endswith("-journal") \
                and not os.path.exists(os.path.join(directory, name[:-len("-journal")])):
            os.unlink(os.path.join(directory, name))
    for leftover in (tmp, tmp + "-journal"):
        _unlink_if_there(leftover)
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    try:
        conn = _connect(sqlite3, tmp)
        try:
            conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # before the first table: fixed from then on
            conn.execute("BEGIN")
            for statement in (*index_rows.SCHEMA, index_views.SCHEMA):
                conn.execute(statement)
            conn.execute("INSERT INTO meta VALUES ('fingerprint', ?)", (fingerprint(),))
            conn.execute("COMMIT")
        finally:
            conn.close()
        os.replace(tmp, path)
    except BaseException:
        _unlink_if_there(tmp)
        raise
    _unlink_if_there(path + "-journal")  # a journal left by a killed writer of the file we replaced


def _unlink_if_there(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:  # gone already; anything else shows when the file is created again (O_EXCL)
        pass


def _open(sqlite3, root: str, create: bool, busy_ms: int = None):
    """A connection to a valid index (rebuilt first when it must be and `create`), or None."""
    path = index_path(root)
    for attempt in (1, 2):
        if _is_ours(path):
            try:
                conn = _connect(sqlite3, path, busy_ms)
            except sqlite3.Error:
                conn = None
            if conn is not None:
                try:
                    if _valid(conn) and _inode(path) == conn.inode:  # not replaced while we opened it
                        return conn
                except sqlite3.DatabaseError:
                    pass
                conn.close()
        if not create or attempt == 2:
            return None
        from maestro.util.atomic import make_private_dirs

        make_private_dirs(os.path.dirname(path))
        _rebuild(sqlite3, root, path)
    return None


def _reindex(conn, root: str, item, known, budget: int = None) -> tuple:
    """Bring one file's rows up to date, analyzing at most `budget` new entries (index_rows.reindex),
    inside the caller's write transaction; `known` is its files row or None. (done, entries analyzed)."""
    signature = index_rows.stat_of(root, item.rel)  # before reading: a racing write leaves a mismatch, never a miss
    data = index_files.read(root, item.rel) if signature else None
    return index_rows.reindex(conn, item, known, signature, data,
                              index_rows.CHUNK_ENTRIES if budget is None else budget)


_FILE_COLUMNS = "id, path, size, mtime_ns, ctime_ns, inode, racy, digest, id_lo, id_hi, mask, doc_count, term_total"


def _known(conn, rows=None) -> dict:
    """path → (id, signature, racy, digest) of every indexed file (from `rows` of _FILE_COLUMNS, when read)."""
    if rows is None:
        rows = conn.execute(f"SELECT {_FILE_COLUMNS} FROM files")
    return {row[1]: (row[0], tuple(row[2:6]), row[6], row[7]) for row in rows}


def _changes(conn, root: str, items, project: str, prune: bool, rows=None, signatures=None) -> tuple:
    """(known rows, items to re-index, indexed paths gone, items to settle); `signatures`: the items'
    index_rows.signatures when the caller took them."""
    known = _known(conn, rows)
    listed = {item.rel for item in items}
    stale, settle = [], []
    if signatures is None:
        signatures = index_rows.signatures(root, [item.rel for item in items])
    for item, signature in zip(items, signatures):
        row = known.get(item.rel)
        if row is not None and not row[2] and row[1] == signature:
            continue  # fresh: index_rows.state's first answer, inline (every file of the store, every recall)
        verdict = index_rows.state(root, item.rel, row, signature)
        if verdict != index_rows.FRESH:
            (stale if verdict == index_rows.STALE else settle).append(item)
    gone = [path for path in known if prune and path not in listed and index_files.in_scope(path, project)
            and index_rows.stat_of(root, path) is None]  # a file not asked for this time (an archive) is not gone
    return known, stale, gone, settle


def _refresh(conn, root: str, items, project: str, prune: bool, bounded: bool = False) -> None:
    """Re-index the files of `items` that changed; with `prune`, drop indexed files of the scope that have
    vanished. Write transactions of at most index_rows.CHUNK_ENTRIES new entries each (small files grouped,
    a big one split), begun only when something changed, each file's state checked again inside (another
    process may have done the work meanwhile): a caller cut short keeps what it committed, and the next
    one goes on from there. `bounded`: one transaction (the rest is left, stale, to the next search)."""
    _known_rows, stale, gone, settle = _changes(conn, root, items, project, prune)
    pending = [*stale, *(index_files.TrackFile(path, "", "") for path in gone)]
    for _round in range(1 if bounded else _MAX_ROUNDS):
        if not pending:
            break
        _in_write_transaction(conn, root, lambda: _batch(conn, root, pending))
    else:
        if pending and not bounded:
            raise OSError(f"{pending[0].rel} kept changing while it was indexed")
    if settle:  # only saves later digest checks: a busy index is no reason to fail the search
        try:  # one transaction for them all (a year of daily files written at once settles together)
            _in_write_transaction(conn, root, lambda: [_settle(conn, root, item) for item in settle])
        except _sqlite().OperationalError:
            pass


_MAX_ROUNDS = 1000  # transactions in one refresh (a file that grows faster than it is indexed)


def _row(conn, rel: str):
    row = conn.execute("SELECT id, size, mtime_ns, ctime_ns, inode, racy, digest FROM files WHERE path = ?",
                       (rel,)).fetchone()
    return None if row is None else (row[0], tuple(row[1:5]), row[5], row[6])


def _batch(conn, root: str, pending: list) -> None:
    """Inside a write transaction: the files at the head of `pending`, done ones taken off, until
    CHUNK_ENTRIES new entries were analyzed."""
    budget = index_rows.CHUNK_ENTRIES
    while pending and budget > 0:
        known = _row(conn, pending[0].rel)
        if index_rows.state(root, pending[0].rel, known) == index_rows.STALE:
            done, analyzed = _reindex(conn, root, pending[0], known, budget)
            if not done:
                return
            budget -= max(analyzed, 1)
        pending.pop(0)


def _settle(conn, root: str, item) -> None:
    known = _row(conn, item.rel)
    if index_rows.state(root, item.rel, known) == index_rows.SETTLE:
        conn.execute("UPDATE files SET racy = 0, digest = NULL WHERE id = ?", (known[0],))


def _in_write_transaction(conn, root: str, work):
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _inode(index_path(root)) != conn.inode:
            raise OSError(f"{index_path(root)} was replaced while open")  # another rebuild won: serve from the files
        done = work()
        index_bits.flush(conn)
        conn.execute("COMMIT")
    except BaseException:
        index_bits.discard(conn)
        conn.execute("ROLLBACK")
        raise
    return done


def _snapshot_whole(conn, items) -> bool:
    """Begin the read transaction every query of a search runs in (one state of the index, never a
    writer's commit in between); False (rolled back) when a file of `items` is half-indexed in it (another
    process's chunks committed after this refresh)."""
    conn.execute("BEGIN")
    partial = {path for path, size in conn.execute("SELECT path, size FROM files") if size is None}
    if partial.isdisjoint(item.rel for item in items):
        return True
    conn.execute("ROLLBACK")
    return False


def _fresh_corpus(conn, root: str, items, project: str, since: str):
    """The usual case in one read: inside the read transaction the corpus then keeps, every listed file
    stat-ed; when the scope's view (index_views.py) has exactly those signatures, the corpus over the view;
    else, against the files' rows: when none changed, vanished or must settle, the corpus over those very
    rows (it leaves the view for the next search when no file is racy), else None (rolled back: refresh
    first). The first read fixes the transaction's state before any stat (a commit after a stat would
    otherwise go unseen)."""
    conn.execute("BEGIN")
    rels = [item.rel for item in items]
    scope = "" if since else index_views.scope_of(rels)
    saved = index_views.read(conn, scope) if scope else None
    rows = None if scope else conn.execute(f"SELECT {_FILE_COLUMNS} FROM files").fetchall()
    signatures = index_rows.signatures(root, rels)
    stamp = index_views.stamp_of(rels, signatures) if scope else ""
    if saved is not None and saved[0] == stamp:
        return IndexCorpus(conn, rels, view=index_views.View(*saved[1:]))
    if rows is None:
        rows = conn.execute(f"SELECT {_FILE_COLUMNS} FROM files").fetchall()
    known, stale, gone, settle = _changes(conn, root, items, project, True, rows, signatures)
    if stale or gone or settle:
        conn.execute("ROLLBACK")
        return None
    corpus = IndexCorpus(conn, rels, since, rows=rows)
    if scope and not any(known[rel][2] for rel in rels if rel in known):  # (a racy file: digests, no view)
        corpus.leave_view(scope, stamp, index_views.data_version(conn))
    return corpus


def open_corpus(root: str, items, *, project: str = "", since: str = "", busy_ms: int = None):
    """An IndexCorpus over `items` (index_files.wanted), fresh, read in one transaction (closing the corpus
    ends it); None when the index cannot serve. `busy_ms` is how long to wait for another process's index
    transaction (None: index_connect.BUSY_MS; the recall passes 0 or what is left of its budget)."""
    if not available() or not os.path.isdir(root):  # no memory yet: a search creates none
        return None
    sqlite3 = _sqlite()
    for attempt in (1, 2):
        conn = None
        try:
            conn = _open(sqlite3, root, create=True, busy_ms=busy_ms)
            if conn is None:
                return None
            fresh = _fresh_corpus(conn, root, items, project, since)
            if fresh is not None:
                return fresh
            for _round in range(3):
                _refresh(conn, root, items, project, prune=True)
                if _snapshot_whole(conn, items):
                    return IndexCorpus(conn, [item.rel for item in items], since)
            conn.close()
            return None
        except (sqlite3.Error, OSError, index_bits.Corrupt) as exc:
            if conn is not None:
                conn.close()
            if attempt == 2 or not discard_if_corrupt(root, exc):
                return None
    return None


def warm(root: str, items, *, project: str = "") -> bool:
    """Bring the index of `items` fully up to date (a file and a chunk per transaction), for a detached
    refresher: True when it is. Never raises: the index is a cache."""
    if not available() or not os.path.isdir(root):
        return False
    sqlite3 = _sqlite()
    try:
        conn = _open(sqlite3, root, create=True)
        if conn is None:
            return False
        try:
            _refresh(conn, root, items, project, prune=True)
        finally:
            conn.close()
        return True
    except (sqlite3.Error, OSError, index_bits.Corrupt) as exc:
        discard_if_corrupt(root, exc)
        return False
    except Exception:  # noqa: BLE001 - a cache refresher never fails its caller
        return False


def discard_if_corrupt(root: str, exc) -> bool:
    """Remove an index that SQLite found corrupt (not merely busy, full or read-only: those are
    OperationalErrors), so the next open rebuilds it. True when it was removed."""
    sqlite3 = _sqlite()
    damaged = isinstance(exc, index_bits.Corrupt) or sqlite3 is not None and isinstance(
        exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)
    if not damaged:
        return False
    try:
        os.unlink(index_path(root))
    except OSError:
        return False
    return True


def refresh_written(root: str, paths) -> None:
    """After a store write (txn.py, under the store lock): re-index the track files it wrote, when an
    index exists, in one transaction of at most index_rows.CHUNK_ENTRIES new entries: a first index of a
    big file is not done under the store lock but left, stale, to the next search's stat check. Never
    raises: the write stands, and the next open's stat check repairs the index."""
    try:
        if not available() or not os.path.exists(index_path(root)):
            return
        items = [item for item in (index_files.track_file(root, path) for path in paths) if item]
        if not items:
            return
        sqlite3 = _sqlite()
        conn = _open(sqlite3, root, create=False)
        if conn is None:
            return
        try:
            _refresh(conn, root, items, "", prune=False, bounded=True)
        finally:
            conn.close()
    except Exception:  # noqa: BLE001 - the index is a cache; a failed update is caught by the next stat check
        pass
