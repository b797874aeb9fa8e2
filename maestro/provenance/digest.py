"""Provenance (spec §2.5): the `tree-v3` digest of the materialized worktree, and the log of
snapshots taken around each write dispatch in `<git-dir>/maestro-provenance.log`.

The digest is bit-for-bit the original Maestro's value, so a log written by either compares
correctly. Roots: the scope root plus, breadth first, every checked-out submodule (`git submodule
foreach --recursive`) and every untracked, non-ignored nested repository that is its own
toplevel; byte-sorted. Per root, the byte-sorted union of `ls-files` and `ls-files --others
--exclude-standard` (ignored paths and other worktrees are out of scope), each path described as
symlink `link`/`120000`/target, regular file `file`/`100755` when the caller may execute it else
`100644`/blob id of its RAW bytes (no filters), anything else that exists (gitlink or nested-repo
directory) `other`/`other`/`unavailable`, and a missing path `absent` ×3. The stream
`worktree\\0<root>\\0` + `path\\0P\\0type\\0T\\0mode\\0M\\0contents\\0C\\0`… is hashed as a git blob.
So HEAD, the index and commits are invisible; bytes, exec bits, deletions, submodule and nested
repository contents are visible; absolute paths are hashed (a moved repository reads as changed).

Speed: unchanged files reuse a raw-byte blob id from a stat cache, `<git-dir>/maestro-digest-cache`,
one per root (a submodule's or nested repository's lives in its own git dir; maestro.provenance.
digest_cache explains why it is maestro's own and when an entry is trusted), and a warm run asks git
two questions — one `rev-parse` for the format and the scope root, one `ls-files -t` per root for
tracked and untracked paths together — while the cached paths are lstat'ed (maestro.provenance.
digest_scan: how an unchanged listing is recognised and served from the cache).
"""

import hashlib
import itertools
import os
import re
import threading
import time

from maestro import knobs
from maestro.util import progress
from maestro.provenance import digest_git
from maestro.provenance import digest_scan as scanning
from maestro.provenance.digest_cache import (  # the private names are also read by tests/provenance
    CACHE_MARGIN_NS,
    CACHE_NAME,
    KEY as _KEY,
    cache_path as _cache_path,
    dump_cache as _dump_cache,
    encode_cache as _encode_cache,
    load_cache as _load_cache,
    read_cache as _read_cache,
)

PREFIX = "tree-v3:"
UNAVAILABLE = "unavailable"
NOT_A_WORKTREE = "not inside a git work tree"
LOG_NAME = "maestro-provenance.log"
LEASE_DIR = "maestro-write.lock"
NO_BASELINE = "PROVENANCE: no baseline yet (first dispatch will establish one)"
BASELINE_RE = re.compile(  # the original's grep -E, anchored by fullmatch
    r"[^ ]+ type=(?:dispatch|orphan-adopted) job=([^ ]+)(?: session=[^ ]+)? before=[^ ]+ after=([^ ]+)")

_ALGOS = {40: (b"\x01", hashlib.sha1), 64: (b"\x02", hashlib.sha256)}  # by hex id length
_BY_NAME = {b"sha1": _ALGOS[40], b"sha256": _ALGOS[64]}
_POLL_SEC = 0.005  # how often a waiting git call is polled: a git call returns within ~1 ms of exiting


class _NoDigest(Exception):
    pass


# ----------------------------------------------------------------------------------- digest --
def timeout_knob(emit=None) -> float:
    knob = knobs.digest_timeout()
    if knob.warning:
        (emit or progress.emit)(knob.warning)
    return knob.value


def digest(cwd=None, *, timeout=None, tick=None, should_stop=None, emit=None, use_cache=True, clock_ns=time.time_ns,
           entries=None):
    """`(tree-v3:<hex>, "")` for the worktree around `cwd`, or `(None, why)`: outside git
    (why == NOT_A_WORKTREE), any enumeration failure, the time budget, or `should_stop()`.
    `tick` (a heartbeat) runs at most once a second; `clock_ns` is the wall clock the cache's
    freshness rule reads. A dict passed as `entries` receives each path's record (path relative to
    the scope root -> the bytes hashed for it): two such maps name the files changed in between."""
    budget = _Budget(timeout_knob(emit) if timeout is None else timeout, tick, should_stop)
    try:
        cwd = os.fsencode(cwd or os.getcwd())
    except OSError as exc:  # the current directory was removed
        return None, f"no current directory ({exc.strerror})"
    try:
        return _Digest(budget, use_cache, clock_ns(), entries).run(cwd), ""
    except _NoDigest as exc:
        return None, str(exc)


def digest_or_unavailable(cwd=None, **kwargs) -> str:
    return digest(cwd, **kwargs)[0] or UNAVAILABLE


def is_observed(value) -> bool:
    return isinstance(value, str) and value.startswith(PREFIX)


def blob_id(data: bytes, algorithm=hashlib.sha1) -> str:
    """What `git hash-object --no-filters --stdin` prints for `data`."""
    return algorithm(b"blob %d\0" % len(data) + data).hexdigest()


class _Budget:
    def __init__(self, seconds, tick, should_stop):
        self.seconds, self.tick, self.should_stop = seconds, tick, should_stop
        self.deadline = time.monotonic() + seconds
        self._ticked = time.monotonic()

    def poll(self) -> float:
        now = time.monotonic()
        if self.should_stop is not None and self.should_stop():
            raise _NoDigest("interrupted")
        if now >= self.deadline:
            raise _NoDigest(f"timed out after {self.seconds:g}s (MAESTRO_DIGEST_TIMEOUT_SEC)")
        self.throttled_tick(now)
        return self.deadline - now

    def throttled_tick(self, now=None):
        """The caller's heartbeat, at most once a second however often we poll."""
        now = time.monotonic() if now is None else now
        if self.tick is not None and now - self._ticked >= 1:
            self._ticked = now
            self.tick()


class _Digest:
    def __init__(self, budget: _Budget, use_cache: bool, started_ns: int, entries=None):
        self.budget = budget
        self.entries = entries
        self.use_cache = use_cache
        self.env = digest_git.git_env()
        self.fresh = started_ns - CACHE_MARGIN_NS  # only stat keys older than this are recorded
        self.store_caches = []  # each writes one root's next stat cache, once its files are hashed
        self.pending = []  # files to hash: (size, records, slot, head, path, cacheable key or None, algorithm, root)

    # -- git ------------------------------------------------------------------------------------
    def git(self, args, cwd: bytes, *, main_thread=True) -> digest_git.Completed:
        done = digest_git.run(args, timeout=self.budget.poll(), cwd=cwd, env=self.env,
                              tick=self.budget.throttled_tick if main_thread else None, tick_interval=_POLL_SEC,
                              should_stop=self.budget.should_stop)
        if done.interrupted:
            raise _NoDigest("interrupted")
        if done.timed_out:
            self.budget.poll()
            raise _NoDigest(f"git {args[0]} timed out in {os.fsdecode(cwd)}")
        return done

    def git_ok(self, args, cwd: bytes, *, main_thread=True) -> bytes:
        done = self.git(args, cwd, main_thread=main_thread)
        if done.rc != 0:
            detail = done.err_text.strip().splitlines()[-1:] or [f"rc={done.rc}"]
            raise _NoDigest(f"git {' '.join(args[:2])} failed in {os.fsdecode(cwd)}: {detail[0]}")
        return done.stdout

    def own_toplevel(self, candidate: bytes):
        """The candidate's realpath when it is the toplevel of its own repository, else None."""
        done = self.git(["rev-parse", "--show-toplevel"], candidate)
        top = done.stdout.rstrip(b"\n")
        if done.rc != 0 or not top:
            return None
        real = os.path.realpath(candidate)
        return real if os.path.realpath(top) == real else None

    def early_scan(self, cwd: bytes):
        """When cwd looks like a toplevel (it holds `.git`), it usually is the scope root: list it
        and check its cache while git says where the scope root is. ((records, candidates) or None,
        (format, scope root) or None); run() starts again when the guess was wrong."""
        guess = os.path.realpath(cwd)
        cache_file = _cache_path(guess) if os.path.lexists(cwd + b"/.git") else None
        if not cache_file:
            return None, None
        answer = {}

        def where():
            try:
                answer["value"] = self.where(cwd, main_thread=False)
            except BaseException as exc:  # noqa: BLE001 - its error is the one that counts, raised below
                answer["error"] = exc

        try:
            early = self.scan_cached(guess, cache_file, also=where)
        except _NoDigest:
            early = None  # e.g. no work tree after all: where() says so, or run() lists the real root
        if "error" in answer:
            raise answer["error"]
        return early, answer.get("value")

    def where(self, cwd: bytes, *, main_thread=True):
        """(object format name, scope root) in one git call where the answer is plain — a
        repository that is no submodule — else the two questions asked the long way."""
        done = self.git(["rev-parse", "--is-inside-work-tree", "--show-object-format",
                         "--show-superproject-working-tree", "--show-toplevel"], cwd, main_thread=main_thread)
        lines = done.stdout.split(b"\n")
        if done.rc == 0 and len(lines) == 4 and lines[0] == b"true" and not lines[3] and lines[2].strip():
            name = lines[1] if not lines[1].startswith(b"-") else b"sha1"  # git < 2.29 echoes the option
            return name, os.fsencode(os.path.realpath(lines[2].strip()))
        from maestro.util import git as gitscope  # imports subprocess: only on this rarer path

        done, scope = _together(  # a submodule, a failure, or an odd path: the original two questions
            lambda: self.git(["rev-parse", "--is-inside-work-tree", "--show-object-format"], cwd,
                             main_thread=main_thread),
            lambda: gitscope.scope_root(os.fsdecode(cwd)),
        )
        words = done.stdout.split()
        if done.rc == 127 and not words:
            raise _NoDigest(f"cannot run git ({done.err_text.strip()})")
        if done.rc != 0 or not words or words[0] != b"true":
            raise _NoDigest(NOT_A_WORKTREE)
        name = words[1] if len(words) > 1 and not words[1].startswith(b"-") else b"sha1"  # git < 2.29
        if not scope or not os.path.isdir(scope):
            raise _NoDigest("could not determine the repository root")
        return name, os.fsencode(scope)

    # -- run ------------------------------------------------------------------------------------
    def run(self, cwd: bytes) -> str:
        early, located = self.early_scan(cwd) if self.use_cache else (None, None)
        name, scope = located or self.where(cwd)
        if early is None or early[0].root != scope:  # cwd was not the scope root (or no guess): start again there
            early, self.pending, self.store_caches = None, [], []
        final_algorithm = _BY_NAME.get(name)
        if final_algorithm is None:
            raise _NoDigest(f"unsupported object format {name.decode(errors='replace')}")
        scanned, queue = {}, [scope]
        while queue:
            root = queue.pop(0)
            if root in scanned:
                continue
            if root == scope and early is not None:
                described, discovered = early
            else:  # every root (submodule, nested repository too) keeps its own cache in its own git dir
                cache_file = _cache_path(root) if self.use_cache else None
                described, discovered = self.scan_cached(root, cache_file) if cache_file else self.scan(root)
            scanned[root] = described
            for candidate in discovered:
                top = self.own_toplevel(candidate)
                if top is not None and top not in scanned:
                    queue.append(top)
        self.hash_pending()
        for store_cache in self.store_caches:
            store_cache()
        if self.entries is not None:
            self.collect_entries(scope, scanned)
        pieces = []
        for root in sorted(scanned):
            pieces += [b"worktree\0", root, b"\0", *scanned[root].pieces()]
        hasher = final_algorithm[1](b"blob %d\0" % sum(map(len, pieces)))
        for piece in pieces:
            hasher.update(piece)
        return PREFIX + hasher.hexdigest()

    def collect_entries(self, scope: bytes, scanned: dict) -> None:
        for root, described in scanned.items():
            base = os.path.relpath(root, scope) if root != scope else b""
            for chunk in described.all_records():  # b"path\0<path>\0type\0…"
                path = chunk[5:chunk.index(b"\0", 5)]
                self.entries[os.fsdecode(os.path.join(base, path) if base else path)] = chunk

    def algorithm_of(self, root: bytes, id_size: int) -> tuple:
        algorithm = _ALGOS.get(id_size)
        if algorithm is None:  # no tracked entry to read the object format from
            name = self.git_ok(["rev-parse", "--show-object-format"], root).strip()
            algorithm = _BY_NAME.get(name)
            if algorithm is None:
                raise _NoDigest(f"unsupported object format in {os.fsdecode(root)}")
        return algorithm

    def scan(self, root: bytes):
        """(the root's records, candidate roots) for a root without a cache."""
        out = self.git_ok(scanning.LISTING, root)
        paths, untracked, id_size = scanning.parse_listing(out)
        described = scanning.Root(root, out, self.algorithm_of(root, id_size), self.fresh, paths.__getitem__,
                                  untracked.__contains__, [None] * len(paths))
        described.describe(zip(range(len(paths)), itertools.repeat(None)), self.budget.poll)
        self.pending += described.hashed
        return described, self.discovered(root, out, described)

    def discovered(self, root: bytes, out: bytes, described) -> list:
        found = []
        if scanning.has_gitlink(out):  # only gitlinks can be submodules; without one, `foreach` would list nothing
            listed = self.git_ok(["submodule", "foreach", "--recursive", "--quiet", "pwd -P"], root)
            found += [line for line in listed.split(b"\n") if line]
        return found + described.nested()

    def scan_cached(self, root: bytes, cache_file: bytes, also=None):
        """scan() for a root with its stat cache: the cached slots are checked while git lists the
        root (maestro.provenance.digest_scan says why); the cache is written after hashing. `also`
        runs on a third thread meanwhile."""
        halves = [([], []), ([], [])]  # (misses, executable hits) of each half of the slots

        def check_cached_slots():  # on this thread, while git lists the root on another
            cache = _read_cache(cache_file)
            slots = len(cache.paths) if cache is not None else 0
            # the object format the keys were packed for (a slot without an id has a zero tag)
            tag = cache.tags().replace(b"\0", b"")[:1] if slots else b""
            tag = tag or b"\x01"
            half = slots // 2 if slots >= scanning.SHARD_MIN and (os.cpu_count() or 1) > 1 else slots
            if half < slots:
                _together(lambda: scanning.check_slots(cache, tag, *halves[0], 0, half, self.budget.poll),
                          lambda: scanning.check_slots(cache, tag, *halves[1], half, slots))
            elif slots:
                scanning.check_slots(cache, tag, *halves[0], 0, slots, self.budget.poll)
            return cache, slots, tag

        jobs = [check_cached_slots, lambda: self.git_ok(scanning.LISTING, root, main_thread=False)]
        (cache, slots, tag), out = _together(*jobs, *([also] if also else []), tick=self.budget.throttled_tick)[:2]
        misses, executable = halves[0][0] + halves[1][0], halves[0][1] + halves[1][1]
        unchanged = bool(slots) and cache.offsets is not None and cache.same_listing(out) and root == cache.root
        algorithm = self.algorithm_of(root, scanning.first_id_size(out)) if unchanged else None
        if unchanged and algorithm[0] == tag:
            # git's listing is the cached one: slot i is path i, and the cached stream holds every slot
            # not described again
            plen = len(root) + 1
            described = scanning.Root(root, out, algorithm, self.fresh, lambda slot: cache.paths[slot][plen:],
                                      scanning.untracked_in(out), {}, base=cache)
            described.describe(misses, self.budget.poll)
            described.recheck_executables(executable, cache)
            aligned, old_slots, count = True, None, slots
        else:
            paths, untracked, id_size = scanning.parse_listing(out)
            algorithm, count = self.algorithm_of(root, id_size), len(paths)
            described = scanning.Root(root, out, algorithm, self.fresh, paths.__getitem__, untracked.__contains__,
                                      [None] * count)
            old_slots, aligned = [None] * count, False
            if cache is not None and algorithm[0] == tag:
                unknown = described.reuse(cache, paths, old_slots, dict(misses), set(executable))
            else:
                unknown = zip(range(count), itertools.repeat(None))
            described.describe(unknown, self.budget.poll)
        self.pending += described.hashed
        self.store_caches.append(lambda: self.write_cache(cache_file, cache, aligned, old_slots, described, count))
        return described, self.discovered(root, out, described)

    @staticmethod
    def write_cache(cache_file, cache, aligned, old_slots, described, count) -> None:
        """Write the next cache when it would say something new (after hashing)."""
        if cache is None and not described.updates_with_ids():
            return
        slots = scanning.cache_slots(cache, aligned, old_slots, described.updates, count)
        if slots is None:
            return
        paths = cache.paths if aligned else [described.prefix + described.path_of(slot) for slot in range(count)]
        from maestro.util import atomic

        try:
            atomic.write_atomic(os.fsdecode(cache_file), _encode_cache(
                paths, *slots, described.root, described.out, described.all_records()), 0o600)
        except OSError:
            pass  # a cache is an optimisation: a read-only git dir only costs speed

    def hash_pending(self):
        scanning.hash_files(self.pending, self.budget.poll)


def _together(first, *rest, tick=None):
    """Run a few git listings concurrently (the first on this thread); re-raise the first error.
    `tick` keeps the caller's heartbeat going while this thread waits for the others."""
    results, errors = [None] * (1 + len(rest)), []

    def call(slot, fn):
        try:
            results[slot] = fn()
        except BaseException as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(slot, fn), daemon=True) for slot, fn in enumerate(rest, 1)]
    for thread in threads:
        thread.start()
    call(0, first)
    for thread in threads:
        while thread.is_alive():
            thread.join(timeout=0.05)
            if tick is not None:
                tick()
    if errors:
        raise errors[0]
    return results
