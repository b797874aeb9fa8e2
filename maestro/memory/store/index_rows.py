"""The search index's rows of one track file (index.py): bring them up to date inside the caller's write
transaction, a chunk of new entries at a time.

An unchanged entry keeps its row (matched by the digest of its text), so an append to a 10,000-entry file
analyzes one entry. A transaction analyzes at most CHUNK_ENTRIES new entries (index.py groups small files
into one): a file with more (a first index of a big MEMORY.md) is done over several, each adding the rows
of its share and leaving the file's row without a signature (so it still counts as stale); the next one
finds those rows by their digests and goes on, and the last one renumbers, drops the rows of entries that
are gone and stores the signature. A caller cut short (the recall's budget, a killed process) thus keeps
what it committed.

Racy signatures (git's rule): an in-place edit of the same size within the same clock tick as the read
keeps size, mtime, ctime and inode. A file whose mtime lies within RACY_NS of the moment it was read is
stored `racy`, with the digest of its bytes: until a later check finds its mtime older than that, the
stat check also compares the digest (`state`).
"""

import os
import time

from maestro.memory.store import index_bits, index_files

CHUNK_ENTRIES = 1000  # new entries analyzed per transaction (~0.1 s of CPU): a short budget still makes progress
RACY_NS = 2_000_000_000  # a file modified this close to its read may change again unseen by its stat


FRESH, STALE, SETTLE = "fresh", "stale", "settle"

# The index's tables (index.py rebuilds with them; index_bits.py keeps bits, many and lens).
SCHEMA = (
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, size INT, mtime_ns INT, "
    "ctime_ns INT, inode INT, doc_count INT NOT NULL DEFAULT 0, term_total INT NOT NULL DEFAULT 0, "
    "racy INT NOT NULL DEFAULT 0, digest BLOB, id_lo INT, id_hi INT, mask BLOB)",
    "CREATE TABLE docs(id INTEGER PRIMARY KEY, file_id INT NOT NULL, seq INT NOT NULL, track TEXT, entry_id TEXT, "
    "date TEXT, text TEXT, terms TEXT, length INT, project TEXT, digest BLOB, branches TEXT)",
    "CREATE INDEX docs_by_file ON docs(file_id, seq)",
    "CREATE TABLE bits(term TEXT NOT NULL, seg INT NOT NULL, one BLOB, two BLOB, three BLOB, "
    "PRIMARY KEY(term, seg)) WITHOUT ROWID",
    "CREATE TABLE many(term TEXT NOT NULL, doc INT NOT NULL, tf INT NOT NULL, PRIMARY KEY(term, doc)) WITHOUT ROWID",
    "CREATE TABLE lens(bucket INTEGER PRIMARY KEY, bits BLOB)",
    "CREATE TABLE sizes(seg INTEGER PRIMARY KEY, data BLOB)",
)


def stat_of(root: str, rel: str):
    """A file's signature (size, mtime, ctime, inode), or None when it is absent."""
    try:
        st = os.stat(f"{root}/{rel}")  # rel is relative, '/'-separated (index_files): no join per file
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def signatures(root: str, rels) -> list:
    """stat_of of each file, each stat-ed relative to its directory opened once (a recall checks a year of
    daily files: no walk of the whole path per file)."""
    out, folders = [], {}
    try:
        for rel in rels:
            folder, _, name = rel.rpartition("/")
            fd = folders.get(folder)
            if fd is None:
                try:
                    fd = os.open(f"{root}/{folder}" if folder else root, os.O_RDONLY | os.O_DIRECTORY)
                except OSError:
                    fd = -1  # (absent: none of its files exists; not a directory: stat_of says so per file)
                folders[folder] = fd
            if fd < 0:
                out.append(stat_of(root, rel))
                continue
            try:
                st = os.stat(name, dir_fd=fd)
            except OSError:
                out.append(None)
                continue
            out.append((st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    finally:
        for fd in folders.values():
            if fd >= 0:
                os.close(fd)
    return out


_UNSEEN = object()


def state(root: str, rel: str, row, signature=_UNSEEN) -> str:
    """Whether a file's row (id, signature, racy, digest; None: no row) is FRESH, STALE, or fresh and no
    longer racy (SETTLE: its digest need not be compared again). A racy row's file is read and its digest
    compared. `signature`: the file's stat_of when the caller took it already."""
    if signature is _UNSEEN:
        signature = stat_of(root, rel)
    if row is None:
        return FRESH if signature is None else STALE
    if row[1] != signature:
        return STALE
    if not row[2]:
        return FRESH
    data = index_files.read(root, rel)
    if data is None or digest(data) != row[3]:
        return STALE
    return FRESH if is_racy(signature, time.time_ns()) else SETTLE


def digest(data: bytes) -> bytes:
    try:  # the builtin module: hashlib would load OpenSSL; imported here, only a refresh or a racy file digests
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - a build without it
        from hashlib import blake2b
    return blake2b(data, digest_size=16).digest()


def is_racy(signature, now_ns: int) -> bool:
    """Whether a file with this stat signature, read at `now_ns`, may have been edited unseen."""
    return signature[1] > now_ns - RACY_NS


def reindex(conn, item, known, signature, data, budget: int) -> tuple:
    """Bring one file's rows up to date (inside the caller's write transaction), analyzing at most `budget`
    new entries; `known` is its files row (id, …) or None; `signature` its stat taken before `data` was read
    (None: the file is gone). (done, entries analyzed): not done when more new entries remain (the caller
    commits and calls again)."""
    read_at = time.time_ns()
    if known is None:
        if signature is None:
            return True, 0
        file_id = conn.execute("INSERT INTO files(path) VALUES (?)", (item.rel,)).lastrowid
        old = []
    else:
        file_id = known[0]
        old = conn.execute("SELECT id, seq, digest FROM docs WHERE file_id = ?", (file_id,)).fetchall()
    if signature is None or data is None:
        drop(conn, file_id, [row_id for row_id, _seq, _digest in old])
        conn.execute("DELETE FROM files WHERE id = ?", (file_id,))
        return True, 0
    reusable = {}
    for row_id, seq, entry_digest in old:
        reusable.setdefault(entry_digest, []).append((row_id, seq))
    moves, fresh = _match(_entries(item, data), reusable)
    done = len(fresh) <= budget
    _insert(conn, item, file_id, fresh[:max(budget, 0)])
    if not done:  # rows added, nothing renumbered or dropped yet; the file stays stale until the last chunk
        conn.execute("UPDATE files SET size = NULL, mtime_ns = NULL, ctime_ns = NULL, inode = NULL WHERE id = ?",
                     (file_id,))
        return False, max(budget, 0)
    _parsed.clear()
    conn.executemany("UPDATE docs SET seq = ? WHERE id = ?", moves)
    drop(conn, file_id, [row_id for rows in reusable.values() for row_id, _seq in rows])
    index_bits.store_file_mask(conn, file_id)
    count, total = conn.execute("SELECT count(*), total(length) FROM docs WHERE file_id = ?", (file_id,)).fetchone()
    racy = is_racy(signature, read_at)
    conn.execute("UPDATE files SET size = ?, mtime_ns = ?, ctime_ns = ?, inode = ?, doc_count = ?, term_total = ?, "
                 "racy = ?, digest = ? WHERE id = ?",
                 (*signature, count, int(total), int(racy), digest(data) if racy else None, file_id))
    return True, len(fresh)


_parsed = {}  # (path, digest of its bytes) → its (entry, digest) list: a file indexed in chunks is parsed once


def _entries(item, data) -> list:
    key = (item.rel, digest(data))
    found = _parsed.get(key)
    if found is None:
        found = [(entry, digest(entry.encode("utf-8", "surrogatepass"))) for entry in index_files.entries_of(data)]
        _parsed.clear()
        _parsed[key] = found
    return found


def _match(entries, reusable) -> tuple:
    """([(new seq, row id)] of rows whose entry only moved, [(seq, entry, digest)] of entries without a
    row); the rows matched are taken out of `reusable`, so what is left there is gone from the file."""
    moves, fresh = [], []
    for seq, (entry, entry_digest) in enumerate(entries):
        rows = reusable.get(entry_digest)
        if rows:
            row_id, old_seq = rows.pop()
            if not rows:
                del reusable[entry_digest]
            if old_seq != seq:
                moves.append((seq, row_id))
            continue
        fresh.append((seq, entry, entry_digest))
    return moves, fresh


def _insert(conn, item, file_id: int, fresh) -> None:
    """The rows and bits of entries new to the file (analyzed here), with ids above every row's."""
    if not fresh:
        return
    docs = [(index_files.doc_of(item, seq, index_files.header_of(item, entry)), entry_digest)
            for seq, entry, entry_digest in fresh]
    first = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM docs").fetchone()[0]
    conn.executemany(
        "INSERT INTO docs(id, file_id, seq, track, entry_id, date, text, terms, length, project, digest, branches) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(first + n, file_id, doc.seq, doc.track, doc.id, doc.date, doc.text, "\x1f".join(doc.terms),
          len(doc.terms), doc.project, entry_digest, "\x1f".join(doc.branches))
         for n, (doc, entry_digest) in enumerate(docs)])
    index_bits.add(conn, [(first + n, "\x1f".join(doc.terms)) for n, (doc, _digest) in enumerate(docs)])


def drop(conn, file_id: int, row_ids) -> None:
    """Remove entries' rows and clear their bits (found by their stored terms)."""
    rows = []
    for row_id in row_ids:
        row = conn.execute("SELECT terms FROM docs WHERE id = ? AND file_id = ?", (row_id, file_id)).fetchone()
        if row is not None:
            rows.append((row_id, row[0]))
    index_bits.remove(conn, rows)
    conn.executemany("DELETE FROM docs WHERE id = ?", [(row_id,) for row_id, _terms in rows])
