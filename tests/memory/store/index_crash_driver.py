"""Crash-test worker for the search index: store writes with an index present, paused at a named point.

    python3 -I index_crash_driver.py SITE ROOT TAG COUNT POINT N

SITE is where maestro is imported from (the source tree or `<maestro.pyz>/site-packages`). The worker
adds COUNT entries (global and daily, archiving every third global one: a two-file commit) and refreshes
the index with a search now and then. At the N-th call of POINT it prints `paused` and blocks on stdin,
so the parent SIGKILLs it exactly there (no sleeps):

    reindex   inside the index's write transaction, after one file's rows changed (not committed)
    write     inside a store commit, after one file was replaced and before the next (an archive's
              second file, or the index refresh) ran
    rebuild   after the rebuild opened its temp file, before it was filled and renamed
"""

import os
import sys

site, root, tag, count, point, nth = sys.argv[1:7]
sys.path.insert(0, site)

from maestro.memory.store import index, search, txn  # noqa: E402
from maestro.memory.store.tracks import Store  # noqa: E402

calls = {"n": 0}


def pausing(func):
    def wrapper(*args, **kwargs):
        result = func(*args, **kwargs)
        calls["n"] += 1
        if calls["n"] == int(nth):
            print("paused", flush=True)
            sys.stdin.read()
        return result
    return wrapper


if point == "reindex":
    index._reindex = pausing(index._reindex)
elif point == "write":
    txn._write = pausing(txn._write)
elif point == "rebuild":
    index._connect = pausing(index._connect)  # the second call is the temp file's, inside _rebuild

store = Store(root, lock_timeout=60)
if point == "rebuild" and os.path.exists(index.index_path(root)):
    os.unlink(index.index_path(root))
search.search(root, "payload")
for i in range(int(count)):
    store.add("global", f"{tag}-{i} crash payload about sqlite")
    store.add("daily", f"{tag}-{i} daily payload", date=f"2024-04-0{1 + i % 2}")
    if i % 3 == 0:
        store.archive("global", f"{tag}-{i} crash")
    if i % 4 == 0:
        search.search(root, "payload sqlite")
    print(f"ok {i}", flush=True)
print("done", flush=True)
