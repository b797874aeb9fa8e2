"""The search index's file and connection (index.py): SQLite's binding loaded for a hook's budget, the
check that the index file is ours, and a connection that remembers which file it opened."""

import os
import stat
import sys

BUSY_MS = 2000  # how long an index write waits for another process's index transaction


def load():
    """The SQLite binding: `_sqlite3`, the C module the `sqlite3` package wraps (the same connect,
    Connection and errors); the package's own layer imports datetime and its adapters, ~1.5 ms of every
    recall. An interpreter built without SQLite has neither."""
    try:
        return sys.modules["_sqlite3"] or None
    except KeyError:
        pass
    try:
        if "functools" in sys.modules:
            import _sqlite3
        else:
            _sqlite3 = _import_with_lean_lru_cache()
    except ImportError:
        return None
    return _sqlite3


def _import_with_lean_lru_cache():
    """`import _sqlite3` in a process that has not imported functools (a hook): the module's init
    fetches `functools.lru_cache` (its statement cache), and functools imports collections with
    keyword, operator, reprlib and heapq — ~2.5 ms of every recall for one decorator. For the length of
    the import, `functools` is a stand-in whose lru_cache is what functools.lru_cache(maxsize)(function)
    builds: the C wrapper of `_functools`, so the statement cache is the same object either way. The
    stand-in leaves sys.modules afterwards (a later `import functools` gets the real module). A hook has
    no other thread that could import functools meanwhile (importing threading imports functools)."""
    try:
        from _functools import _lru_cache_wrapper
    except ImportError:  # pragma: no cover - an interpreter without the C half of functools
        import _sqlite3

        return _sqlite3

    def lru_cache(maxsize=128, typed=False):
        if not isinstance(maxsize, int):  # functools.lru_cache(function): not how _sqlite3 calls it
            raise TypeError("lru_cache stand-in: maxsize must be an int")
        return lambda function: _lru_cache_wrapper(function, max(maxsize, 0), typed, tuple)

    stand_in = type(sys)("functools")
    stand_in.lru_cache = lru_cache
    sys.modules["functools"] = stand_in
    try:
        import _sqlite3
    finally:
        if sys.modules.get("functools") is stand_in:
            del sys.modules["functools"]
    return _sqlite3


def is_ours(path: str) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid() and st.st_size > 0


def inode(path: str):
    try:
        return os.lstat(path).st_ino
    except OSError:
        return None


def connect(sqlite3, path: str, busy_ms: int = None):
    """A connection that remembers which file it opened (`inode`): an index renamed over by another
    process's rebuild must not be written through a connection to the file it replaced, whose
    journal name the new file shares. It waits `busy_ms` for another process's transaction."""
    before = inode(path)
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
