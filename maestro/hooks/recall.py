"""Recall at the prompt: the bounded "Relevant memory" block `inject` adds (issue 11 §4), and the record
of what session-start showed, so the block never repeats it.

    Relevant memory (maestro memory search; most relevant first):
    - [key 0000000a 2024-04-04] decided: the search index lives in sqlite fts5
    - [project 2024-04-05 10:00] the sqlite index test was flaky under load; fixed the lock wait

At most MAX_ENTRIES entries and `recall_chars` characters (default 1,200), only hits scoring at least
MIN_SCORE and at least RELATIVE_SCORE of the best one and sharing a word with the prompt, never an entry
this session's start already showed, never for a short acknowledgement, and nothing at all when nothing
is relevant.
`~/.maestro/config.toml` `[memory] recall` / `recall_chars` turn it off or size it (recall_config.py).

What session-start showed lives in `<memory>/.maestro-memory/recall/<session id>` (0600, directory 0700,
replaced atomically): the project root and branch it found (so the hook spends no git call on them) and
one key per shown entry (`shown_key`: its id, or a hash of the start of its body). Without a record (the
start showed nothing) the project is found from the payload's `cwd` with one bounded git call. The
entries a block shows are added to the record (`remember`), so later prompts do not repeat them either.
Files older than PRUNE_AGE_SEC are pruned when session-start writes one.

Hot path: the block asks the search index (maestro/memory/store/index.py) only when it exists, with
SQLite's busy wait bounded by the budget left; without a usable one (or without SQLite) the track files
are parsed only for a store of at most FALLBACK_MAX_BYTES. A bigger store with no usable index, or one
the budget ran out refreshing, starts the detached refresher (recall_refresh.py): indexing is no job
for a prompt. The search gets MAESTRO_RECALL_BUDGET_SEC (0.25 s; a SIGALRM deadline); past it the
prompt goes without the block. A failure never fails the prompt: a crash note and no block.
"""

import os

from maestro.hooks.recall_config import DEFAULT_CHARS, MAX_CHARS, config  # noqa: F401 - DEFAULT_CHARS: recall's API

MAX_ENTRIES = 5
MIN_SCORE = 2.5
RELATIVE_SCORE = 0.5
PROMPT_CHARS = 2000  # the prompt's first characters are the query: a pasted log must not cost seconds
ENTRY_CHARS = 400
MIN_ENTRY_CHARS = 60  # a hit cut shorter than this says nothing: it is left out instead
FALLBACK_MAX_BYTES = 256 * 1024
CANDIDATES = 10  # ranked (over rank.RECALL_POOL), then thresholds, what was shown and the branch filter: ≤ 5 left
GIT_TIMEOUT_SEC = 1.0
RECORD_DIR = "recall"
RECORD_MAGIC = "maestro-recall 1"
MAX_RECORD_BYTES = 64 * 1024
PRUNE_AGE_SEC = 7 * 24 * 3600
TITLE = "Relevant memory (maestro memory search; most relevant first):"


# --- what session-start showed ------------------------------------------------------------------


def shown_key(entry_id: str, body: str) -> str:
    """How an entry is recognised across the two hooks: its id, else a hash of its body's first 200
    letters and digits (the snapshot may cut or compact an entry; its start survives)."""
    if entry_id:
        return "id:" + entry_id
    try:  # the builtin module: hashlib (OpenSSL) costs a hook ~2 ms
        from _sha1 import sha1
    except ImportError:  # pragma: no cover - a build without it
        from hashlib import sha1
    letters = "".join(filter(str.isalnum, body[:600].casefold()))[:200]
    return "h:" + sha1(letters.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def record_path(root: str, session_id: str) -> str:
    return os.path.join(root, ".maestro-memory", RECORD_DIR, session_id)


def write_record(root: str, session_id: str, project: str, branch: str, keys, prune: bool = True) -> bool:
    """Write the record (see the module doc; session-start's, and recall's additions to it); False when
    it would not fit MAX_RECORD_BYTES (then the record stays as it was). The session id is checked by
    the caller. The directory must be a private one of ours (a symlinked `recall/` is refused,
    NotPrivate): a record written through a link would land, and pruning would delete, wherever it points."""
    from maestro.util import atomic

    directory = os.path.dirname(record_path(root, session_id))
    atomic.make_private_dirs(os.path.dirname(directory))
    atomic.ensure_private_dir(directory)
    safe = [value if value and "\n" not in value and "\r" not in value else "" for value in (project, branch)]
    lines = [RECORD_MAGIC, f"project {safe[0]}", f"branch {safe[1]}", *sorted(set(keys))]
    data = ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")
    if len(data) > MAX_RECORD_BYTES:
        return False
    atomic.write_atomic(record_path(root, session_id), data, 0o600, durable=False)
    if prune:
        _prune(directory, session_id)
    return True


def remember(root: str, session_id: str, project: str, branch: str, shown: set, found) -> None:
    """Add the entries this prompt's block showed to the session's record, so a later prompt does not
    repeat them (bounded: past MAX_RECORD_BYTES nothing more is added). Isolated: the block stands."""
    try:
        write_record(root, session_id, project, branch, shown | {shown_key(doc.id, doc.text) for doc, _ in found},
                     prune=False)
    except Exception as exc:  # noqa: BLE001 - at worst a later prompt repeats an entry
        from maestro import crash

        crash.record("inject:recall-record", exc)


def _prune(directory: str, keep: str) -> None:
    """Remove records older than PRUNE_AGE_SEC: only regular files named like a session id, found and
    removed relative to the directory opened without following a link (never a file elsewhere)."""
    import stat
    import time

    from maestro.util.session import is_valid_session_id

    limit = time.time() - PRUNE_AGE_SEC
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return
    try:
        for name in os.listdir(fd):
            if name == keep or not is_valid_session_id(name):
                continue
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISREG(st.st_mode) and st.st_mtime < limit:
                os.unlink(name, dir_fd=fd)
    except OSError:
        pass  # pruning is housekeeping: the next session tries again
    finally:
        os.close(fd)


def read_record(root: str, session_id: str) -> tuple:
    """(project root, branch, shown keys) session-start recorded; ('', '', set()) when there is no
    usable record (none, a symlink, a FIFO or other non-regular file, another owner's, oversized, not
    ours). Read non-blocking and without following a link (recall_config.read_small, atomic.read_regular's
    rules without importing util/atomic: a prompt that shows no block then never does): a FIFO planted
    there must not hang the prompt."""
    from maestro.hooks.recall_config import read_small

    path = record_path(root, session_id)
    try:
        data = read_small(path, MAX_RECORD_BYTES)
        if data is None or os.lstat(path).st_uid != os.getuid():
            return "", "", set()
    except OSError:
        return "", "", set()
    lines = data.decode("utf-8", "surrogateescape").split("\n")
    if len(lines) < 3 or lines[0] != RECORD_MAGIC or not lines[1].startswith("project ") \
            or not lines[2].startswith("branch "):
        return "", "", set()
    return lines[1][len("project "):], lines[2][len("branch "):], {line for line in lines[3:] if line}


# --- the block ----------------------------------------------------------------------------------


def _corpus(root: str, items, project_key: str, busy_ms):
    """A corpus over `items` (the global tracks and the project's), or None: the index when it exists
    and can serve within `busy_ms` (a held index lock must not hold the prompt: SQLite's busy wait is
    C code the deadline cannot interrupt); else the parsed files of a store of at most
    FALLBACK_MAX_BYTES (search.memory_corpus, the reference the index agrees with)."""
    from maestro.memory.store import index

    if index.available() and os.path.isfile(index.index_path(root)):
        corpus = index.open_corpus(root, items, project=project_key, busy_ms=busy_ms)
        if corpus is not None:
            return corpus
    total = 0
    for item in items:
        try:
            total += os.stat(os.path.join(root, item.rel)).st_size
        except OSError:
            continue
        if total > FALLBACK_MAX_BYTES:
            return None  # no usable index and a big store: no recall on this prompt
    from maestro.memory.store import search

    return search.memory_corpus(root, items)


def _visible(branch: str):
    """A filter of ranked docs: a key-track entry tagged for other branches (`[branch:a,b]`, kept in
    Doc.branches) is hidden, as the snapshot hides it (snapshot.read_sources); without a known branch
    every entry shows."""
    if not branch or branch == "HEAD":
        return lambda doc: True
    return lambda doc: doc.track != "key" or not doc.branches or branch in doc.branches


def hits(root: str, prompt: str, project: str, branch: str, shown: set, *, busy_ms=None, stale=None,
         closing=None) -> list:
    """The recall candidates: (Doc, score), best first, above the thresholds, none already shown.
    When no usable index serves a big store, the project key is appended to `stale` (the caller
    starts the refresher). With a `closing` list, the corpus's close is appended to it instead of called:
    the caller calls it outside its deadline (closing may write the index's view: a short write that must
    not cost the prompt the hits already found)."""
    import time

    from maestro.memory.store import index, index_files, layout, rank

    project_key = layout.project_hash(project) if project else ""
    corpus = _corpus(root, index_files.wanted(root, project_key), project_key, busy_ms)
    if corpus is None:
        if stale is not None and index.available():
            stale.append(project_key)
        return []
    try:
        ranked = rank.search(prompt[:PROMPT_CHARS], corpus, limit=CANDIDATES, pool=rank.RECALL_POOL,
                             today=time.strftime("%Y-%m-%d"),
                             branch=branch, project=project_key)
        visible = _visible(branch)
        ranked = [(doc, score) for doc, score in ranked if visible(doc)]
    except index.errors() as exc:  # a corrupt page found mid-query: removed, rebuilt by the next search
        index.discard_if_corrupt(root, exc)
        return []
    finally:
        close = getattr(corpus, "close", None)
        if close is not None and closing is not None:
            closing.append(close)
        elif close is not None:
            close()
    if not ranked:
        return []
    from maestro.memory.store.analyze import terms

    asked = set(terms(prompt[:PROMPT_CHARS]))
    floor = max(MIN_SCORE, ranked[0][1] * RELATIVE_SCORE)
    # a hit that shares no word with the prompt (a neighbour the ranking lifted) is context for a search
    # result, not something to put in front of the model unasked
    return [(doc, score) for doc, score in ranked
            if score >= floor and asked.intersection(doc.terms) and shown_key(doc.id, doc.text) not in shown]


def render(found, chars: int) -> str:
    """The block: the title and one line per hit, at most MAX_ENTRIES and `chars` characters in all."""
    from maestro.util.text import one_line

    lines, used = [], len(TITLE) + 1
    for doc, _ in found[:MAX_ENTRIES]:
        head = f"- [{' '.join(part for part in (doc.track, doc.id, doc.date) if part)}] "
        room = min(ENTRY_CHARS, chars - used - len(head) - 1)
        if room < MIN_ENTRY_CHARS:
            break
        line = head + one_line(doc.text, room)
        lines.append(line)
        used += len(line) + 1
    return "".join(f"{line}\n" for line in [TITLE, *lines]) if lines else ""


def _has_tracks(root: str) -> bool:
    """Whether the store holds any track file at all (a global one, a daily file, a project's): a few
    stats that spare a store without entries the index's and the ranking's imports (~15 ms a prompt)."""
    if any(os.path.isfile(os.path.join(root, name)) for name in ("MEMORY.md", "USER.md")):
        return True
    for sub in ("daily", "projects"):
        try:
            with os.scandir(os.path.join(root, sub)) as found:
                if any(True for _ in found):
                    return True
        except OSError:
            continue
    return False


class OutOfTime(Exception):
    """The search took longer than the prompt can wait."""


def _signal_module():
    """The builtin `_signal` (signal, setitimer, SIGALRM, ITIMER_REAL: what `signal` re-exports), else `signal`."""
    try:
        import _signal as signal
    except ImportError:  # pragma: no cover - an interpreter without it
        import signal
    return signal


class deadline:  # noqa: N801 - used as a `with` statement, like a function
    """Raise OutOfTime in the main thread once `seconds` have passed (SIGALRM; ITIMER_REAL). Elsewhere
    (another thread, no setitimer) it does nothing. A long C call (one SQLite query) ends before the
    exception lands, so the bound is the budget plus that call. Through `_signal`, the C module `signal`
    wraps: importing `signal` builds its enums (and imports enum), ~2 ms of the prompt."""

    def __init__(self, seconds: float):
        self.seconds, self.saved = seconds, None

    def __enter__(self):
        signal = _signal_module()

        def expire(signum, frame):
            raise OutOfTime()

        try:
            self.saved = signal.signal(signal.SIGALRM, expire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        except (ValueError, AttributeError, OSError):  # not the main thread, or no itimer here
            self.saved = None
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            signal = _signal_module()
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.saved)
        return False


def block(payload: dict) -> str:
    """The "Relevant memory" block for this prompt, or ''. Never raises: a failure leaves a crash note.
    A big store with no usable index (or one the budget ran out refreshing) starts the detached
    refresher (recall_refresh.py), so a later prompt finds the index ready."""
    try:
        prompt = payload["prompt"].strip()
        from maestro.hooks import directive

        if not prompt or directive.is_short_approval(prompt):
            return ""
        enabled, chars = config()
        if not enabled:
            return ""
        from maestro import paths

        root = paths.memory_dir()
        if not _has_tracks(root):
            return ""
        project, branch, shown = read_record(root, payload["session_id"])
        cwd = payload.get("cwd")
        if not project and isinstance(cwd, str) and os.path.isabs(cwd) and os.path.isdir(cwd):
            from maestro.memory.store import layout  # no record (session-start showed nothing): one git call

            project, branch = layout.locate(cwd, GIT_TIMEOUT_SEC)
        import time

        from maestro import knobs

        budget = knobs.recall_budget().value
        ends, stale, closing = time.monotonic() + budget, [], []
        try:
            with deadline(budget):
                found = hits(root, prompt, project, branch or "", shown,
                             busy_ms=int(max(ends - time.monotonic(), 0.0) * 1000), stale=stale, closing=closing)
        except OutOfTime:  # a slow index (a first re-index of a big file, a busy disk): this prompt goes without
            from maestro.memory.store import layout

            found, stale = [], [layout.project_hash(project) if project else ""]
        finally:
            for close in closing:  # outside the deadline (the view write does not wait for a busy index)
                try:
                    close()
                except Exception as exc:  # noqa: BLE001 - the hits stand; the next search finds the index as it is
                    from maestro import crash

                    crash.record("inject:recall-close", exc)
        if stale:
            from maestro.hooks import recall_refresh

            recall_refresh.start(root, stale[0])
        text = render(found, min(chars, MAX_CHARS))
        if text:
            remember(root, payload["session_id"], project, branch or "", shown, found[:text.count("\n") - 1])
        return text
    except Exception as exc:  # noqa: BLE001 - recall is advisory: never fail or block the prompt for it
        from maestro import crash

        crash.record("inject:recall", exc)
        return ""
