"""The search index: `<memory>/.maestro-memory/index.sqlite3`, a cache of the track files, never the truth.

    files(path, size, mtime_ns, ctime_ns, inode,       what each indexed file looked like when it was read,
          doc_count, term_total, racy, digest)          its entries' count and total length (corpus stats),
                                                        and its bytes' digest while its signature is racy
    docs(id, file_id, seq, track, entry_id, date, text, terms, length, project, digest, branches)   per entry
    post(term, file_id, doc, tf, len)                   one per distinct term of an entry (WITHOUT ROWID,
                                                        keyed by term, file, entry): its count in the entry
                                                        and the entry's length, so BM25 is summed in SQL

Freshness: `open_corpus` stats every file the search reads and re-indexes only those whose size,
mtime, ctime or inode differ from the row (or that appeared or vanished), so hand edits, `sync`
merges, `repair` and foreign writers are caught; store writes also refresh the files they wrote
inside their transaction (`refresh_written`, called by txn.py under the store lock), so the next
search finds nothing to do (one chunk per file at most there: the first index of a big file is left to
the search). A file is stat-ed before it is read: a write racing the read leaves a row that the next
stat check re-indexes. An unchanged entry keeps its row (matched by the digest of its text), so an
append to a 10,000-entry file parses and analyzes one entry, not 10,000. `warm` brings the index fully
up to date for a detached refresher.

Robustness: an index that is missing, not a regular file we own (a planted symlink), unreadable,
corrupt (sqlite3.DatabaseError), of another format or another analyzer is rebuilt silently into a
private temp file that is then renamed over it; readers see whole SQLite transactions only. When
the index cannot be built or updated (read-only memory dir, full disk, locked longer than the caller's
`busy_ms`), `sqlite3` is missing, or MAESTRO_MEMORY_INDEX=off (knobs.memory_index_enabled), `open_corpus`
returns None and search uses the in-memory corpus (rank.MemoryCorpus) for that call: same results.

Progress and isolation: a refresh commits each file (and each index_rows.CHUNK_ENTRIES new entries of a
big one) on its own, so a caller cut short (the recall's budget, a kill) keeps what it did; a search then
reads in one read transaction (every query sees one state of the index; closing the corpus ends it) and
never serves a file whose chunks are half done. A file read within index_rows.RACY_NS of its mtime is
also checked by the digest of its bytes until it is older (git's racy rule).

Why a posting table and not FTS5: search needs each term's count in each entry (for BM25 summed in
SQL, so the top entries are picked without loading every match into Python) and rank's own idf; FTS5
with detail=none stores no counts, and its bm25() has another idf. Plain SQLite tables hold exactly
what rank needs, and an interpreter whose SQLite lacks FTS5 still gets the index.
"""

import os
import stat

from maestro import knobs
from maestro.memory.store import index_files, index_rows
from maestro.memory.store.analyze import VERSION as ANALYZER_VERSION
from maestro.memory.store.layout import META_DIR
from maestro.memory.store.index_corpus import IndexCorpus
from maestro.util.atomic import TEMP_INFIX, make_private_dirs, sweep_stale_temps

FORMAT = "5"
INDEX_NAME = "index.sqlite3"
BUSY_MS = 2000  # how long an index write waits for another process's index transaction
_usable = None  # probed once per process


def index_path(root: str) -> str:
    return os.path.join(root, META_DIR, INDEX_NAME)


def _sqlite():
    try:
        import sqlite3
    except ImportError:
        return None
    return sqlite3


def errors() -> tuple:
    """What a query on the index may raise when the index, not the caller, is at fault."""
    sqlite3 = _sqlite()
    return (sqlite3.Error,) if sqlite3 is not None else ()


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


_SCHEMA = (
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, size INT, mtime_ns INT, "
    "ctime_ns INT, inode INT, doc_count INT NOT NULL DEFAULT 0, term_total INT NOT NULL DEFAULT 0, "
    "racy INT NOT NULL DEFAULT 0, digest BLOB)",
    "CREATE TABLE docs(id INTEGER PRIMARY KEY, file_id INT NOT NULL, seq INT NOT NULL, track TEXT, entry_id TEXT, "
    "date TEXT, text TEXT, terms TEXT, length INT, project TEXT, digest BLOB, branches TEXT)",
    "CREATE INDEX docs_by_file ON docs(file_id, seq)",
    "CREATE TABLE post(term TEXT NOT NULL, file_id INT NOT NULL, doc INT NOT NULL, tf INT NOT NULL, "
    "len INT NOT NULL, PRIMARY KEY(term, file_id, doc)) WITHOUT ROWID",
)


def _is_ours(path: str) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid() and st.st_size > 0


def _inode(path: str):
    try:
        return os.lstat(path).st_ino
    except OSError:
        return None


def _connect(sqlite3, path: str, busy_ms: int = None):
    """A connection that remembers which file it opened (`inode`): an index renamed over by another
    process's rebuild must not be written through a connection to the file it replaced, whose
    journal name the new file shares. It waits `busy_ms` for another process's transaction."""
    before = _inode(path)
    busy_ms = BUSY_MS if busy_ms is None else max(0, busy_ms)
    conn = sqlite3.connect(path, timeout=busy_ms / 1000, isolation_level=None, check_same_thread=False,
                           factory=_connection_class(sqlite3))
    conn.inode = before
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def _connection_class(sqlite3):
    global _Connection
    if _Connection is None:
        _Connection = type("IndexConnection", (sqlite3.Connection,), {"inode": None})
    return _Connection


_Connection = None


def _valid(conn) -> bool:
    rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    return rows.get("fingerprint") == fingerprint()


def _rebuild(sqlite3, root: str, path: str) -> None:
    """A fresh, empty index of the current format, published by rename (never a half-built file)."""
    directory = os.path.dirname(path)
    tmp = os.path.join(directory, f".{INDEX_NAME}{TEMP_INFIX}{os.getpid()}")
    sweep_stale_temps(path)  # what a rebuilder killed before its rename left
    for name in os.listdir(directory):
        if name.startswith(f".{INDEX_NAME}{TEMP_INFIX}") and name.endswith("-journal") \
                and not os.path.exists(os.path.join(directory, name[:-len("-journal")])):
            os.unlink(os.path.join(directory, name))
    for leftover in (tmp, tmp + "-journal"):
        try:
            os.unlink(leftover)
        except FileNotFoundError:
            pass
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    try:
        conn = _connect(sqlite3, tmp)
        try:
            conn.execute("BEGIN")
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.execute("INSERT INTO meta VALUES ('fingerprint', ?)", (fingerprint(),))
            conn.execute("COMMIT")
        finally:
            conn.close()
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    for stale in (path + "-journal",):  # a journal left by a killed writer of the file we replaced
        try:
            os.unlink(stale)
        except FileNotFoundError:
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


def _known(conn) -> dict:
    """path → (id, signature, racy, digest) of every indexed file."""
    return {path: (file_id, (size, mtime, ctime, inode), racy, digest) for file_id, path, size, mtime, ctime, inode,
            racy, digest in conn.execute("SELECT id, path, size, mtime_ns, ctime_ns, inode, racy, digest FROM files")}


def _changes(conn, root: str, items, project: str, prune: bool) -> tuple:
    """(known rows, items to re-index, indexed paths gone, items to settle)."""
    known = _known(conn)
    listed = {item.rel for item in items}
    states = {item.rel: index_rows.state(root, item.rel, known.get(item.rel)) for item in items}
    stale = [item for item in items if states[item.rel] == index_rows.STALE]
    settle = [item for item in items if states[item.rel] == index_rows.SETTLE]
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
    for item in settle:  # only saves later digest checks: a busy index is no reason to fail the search
        try:
            _in_write_transaction(conn, root, lambda: _settle(conn, root, item))
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
        conn.execute("COMMIT")
    except BaseException:
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


def open_corpus(root: str, items, *, project: str = "", since: str = "", busy_ms: int = None):
    """An IndexCorpus over `items` (index_files.wanted), fresh, read in one transaction (closing the corpus
    ends it); None when the index cannot serve. `busy_ms` is how long to wait for another process's index
    transaction (None: BUSY_MS; the recall passes 0 or what is left of its budget)."""
    if not available() or not os.path.isdir(root):  # no memory yet: a search creates none
        return None
    sqlite3 = _sqlite()
    for attempt in (1, 2):
        conn = None
        try:
            conn = _open(sqlite3, root, create=True, busy_ms=busy_ms)
            if conn is None:
                return None
            for _round in range(3):
                _refresh(conn, root, items, project, prune=True)
                if _snapshot_whole(conn, items):
                    return IndexCorpus(conn, [item.rel for item in items], since)
            conn.close()
            return None
        except (sqlite3.Error, OSError) as exc:
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
    except (sqlite3.Error, OSError) as exc:
        discard_if_corrupt(root, exc)
        return False
    except Exception:  # noqa: BLE001 - a cache refresher never fails its caller
        return False


def discard_if_corrupt(root: str, exc) -> bool:
    """Remove an index that SQLite found corrupt (not merely busy, full or read-only: those are
    OperationalErrors), so the next open rebuilds it. True when it was removed."""
    sqlite3 = _sqlite()
    if sqlite3 is None or not isinstance(exc, sqlite3.DatabaseError) or isinstance(exc, sqlite3.OperationalError):
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
