"""Memory search, the domain call behind `memory search`, the MCP `memory_search` tool and recall.

`search` ranks the entries of the global tracks (memory, user, daily) plus the project tracks of the
repository at `cwd`, narrowed to `tracks`, with archived entries only when `archived`, and entries
dated `since` on. The documents come from the SQLite index (index.py) when it can serve, else from
parsing the files into a rank.MemoryCorpus: both serve the same documents (index_files.py) and the
same candidates (the index picks them over its bitmaps, index_topk.py, exactly as the parse would), and rank scores
in Python, so the hit lists are identical. An index that breaks mid-query (a corrupt page found late)
costs that call the parse, never the search.
"""

import os
import time

from maestro.memory.store import index, index_files, layout, rank
from maestro.memory.store.errors import StoreError
from maestro.util.record import record


class Hit(record("Hit", "track id date score file text project", module=__name__)):
    """One search result; `file` is the absolute path of its track file. A util.record, not a dataclass
    or namedtuple: `import dataclasses` costs every search process ~10 ms, `collections` ~1.5 ms."""

    __slots__ = ()


def _checked(query, tracks, limit, since) -> tuple:
    if not isinstance(query, str) or not query.strip():
        raise StoreError("empty query", "usage")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise StoreError(f"invalid limit {limit!r} (expected a whole number of at least 1)", "usage")
    if since is not None:
        layout.check_date(since)
    if isinstance(tracks, str):
        tracks = (tracks,)
    return tuple(dict.fromkeys(layout.track_name(name) for name in tracks or ()))


def memory_corpus(root: str, items, since: str = "") -> rank.MemoryCorpus:
    """The no-index corpus: every listed file parsed (the reference the index must agree with)."""
    docs = []
    for item in items:
        docs += index_files.docs_of(item, index_files.read(root, item.rel))
    if since:
        docs = [doc for doc in docs if doc.date >= since]
    return rank.MemoryCorpus(docs)


def search(memory_dir: str, query: str, *, tracks=(), limit: int = 10, cwd: str = None, branch: str = None,
           since: str = None, archived: bool = False, today: str = None) -> list:
    tracks = _checked(query, tracks, limit, since)
    project = ""
    if cwd is not None:
        project = layout.project_hash(layout.project_root(cwd))
    elif any(track in layout.PROJECT_TRACKS for track in tracks):
        needs = next(track for track in tracks if track in layout.PROJECT_TRACKS)
        raise StoreError(f"the {needs} track needs a project directory (--cwd)", "usage")
    root = os.path.abspath(memory_dir)
    items = index_files.wanted(root, project, tracks, archived)
    options = {"limit": limit, "today": today or time.strftime("%Y-%m-%d"), "branch": branch or "",
               "project": project}
    ranked = None
    corpus = index.open_corpus(root, items, project=project, since=since or "")
    if corpus is not None:
        try:
            ranked = rank.search(query, corpus, **options)
        except index.errors() as exc:  # e.g. a corrupt page found mid-query: parse the files for this call
            index.discard_if_corrupt(root, exc)
            ranked = None
        finally:
            corpus.close()
    if ranked is None:
        ranked = rank.search(query, memory_corpus(root, items, since or ""), **options)
    return [Hit(doc.track, doc.id, doc.date, score, os.path.join(root, *doc.file.split("/")), doc.text, doc.project)
            for doc, score in ranked]
