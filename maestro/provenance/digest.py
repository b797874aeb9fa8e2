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

Speed: unchanged files reuse a raw-byte blob id from a stat cache, `<git-dir>/maestro-digest-cache`
(maestro.provenance.digest_cache explains why it is maestro's own and when an entry is trusted).
"""

import hashlib
import itertools
import os
import re
import stat
import struct
import threading
import time

from maestro import knobs
from maestro.util import atomic
from maestro.util import git as gitscope
from maestro.util import process
from maestro.util import progress
from maestro.provenance.digest_cache import (  # the private names are also read by tests/core/test_provenance.py
    CACHE_MARGIN_NS,
    CACHE_NAME,
    KEY as _KEY,
    cache_path as _cache_path,
    dump_cache as _dump_cache,
    hash_file as _hash_file,
    hex_id as _hex,
    load_cache as _load_cache,
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


_DROPPED_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX")


class _Digest:
    def __init__(self, budget: _Budget, use_cache: bool, started_ns: int, entries=None):
        self.budget = budget
        self.entries = entries
        self.use_cache = use_cache
        self.env = gitscope.git_env(drop=_DROPPED_ENV)
        self.started_ns = started_ns
        self.cache = {}
        self.hits = []  # paths whose cache record was reused
        self.recorded = {}  # path -> new cache record, from files hashed in this run
        self.pending = []  # (size, chunks, slot, record head, path, cacheable key or None, algorithm)

    # -- git ------------------------------------------------------------------------------------
    def git(self, args, cwd: bytes, *, main_thread=True) -> process.Completed:
        done = process.run(["git", *args], timeout=self.budget.poll(), cwd=cwd, env=self.env,
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

    # -- run ------------------------------------------------------------------------------------
    def run(self, cwd: bytes) -> str:
        done, scope = _together(  # independent questions: ask both at once
            lambda: self.git(["rev-parse", "--is-inside-work-tree", "--show-object-format"], cwd),
            lambda: gitscope.scope_root(os.fsdecode(cwd)),
        )
        words = done.stdout.split()
        if done.rc == 127 and not words:
            raise _NoDigest(f"cannot run git ({done.err_text.strip()})")
        if done.rc != 0 or not words or words[0] != b"true":
            raise _NoDigest(NOT_A_WORKTREE)
        name = words[1] if len(words) > 1 and not words[1].startswith(b"-") else b"sha1"  # git < 2.29
        final_algorithm = _BY_NAME.get(name)
        if final_algorithm is None:
            raise _NoDigest(f"unsupported object format {name.decode(errors='replace')}")
        if not scope or not os.path.isdir(scope):
            raise _NoDigest("could not determine the repository root")
        scope = os.fsencode(scope)
        cache_path = _cache_path(scope) if self.use_cache else None

        scanned, queue = {}, [scope]
        while queue:
            root = queue.pop(0)
            if root in scanned:
                continue
            scanned[root], discovered = self.scan(root, cache_path if root == scope else None)
            for candidate in discovered:
                top = self.own_toplevel(candidate)
                if top is not None and top not in scanned:
                    queue.append(top)
        self.hash_pending()
        if self.entries is not None:
            self.collect_entries(scope, scanned)
        stream = b"".join(b"".join([b"worktree\0", root, b"\0", *scanned[root]]) for root in sorted(scanned))
        if cache_path and (self.recorded or len(self.hits) != len(self.cache)):
            records = {path: self.cache[path] for path in self.hits}
            records.update(self.recorded)
            try:
                atomic.write_atomic(os.fsdecode(cache_path), _dump_cache(records), 0o600)
            except OSError:
                pass  # a cache is an optimisation: a read-only git dir only costs speed
        return PREFIX + final_algorithm[1](b"blob %d\0" % len(stream) + stream).hexdigest()

    def collect_entries(self, scope: bytes, scanned: dict) -> None:
        for root, chunks in scanned.items():
            base = os.path.relpath(root, scope) if root != scope else b""
            for chunk in chunks:  # b"path\0<path>\0type\0…"
                path = chunk[5:chunk.index(b"\0", 5)]
                self.entries[os.fsdecode(os.path.join(base, path) if base else path)] = chunk

    def scan(self, root: bytes, cache_path=None):
        """One root's entry records (file contents may still be pending) and candidate roots.
        The cache file (if any) is read while git lists the tree."""
        cache, tracked_out, others_out = _together(
            lambda: _load_cache(cache_path) if cache_path else None,
            lambda: self.git_ok(["ls-files", "-s", "-z"], root, main_thread=False),
            lambda: self.git_ok(["ls-files", "--others", "--exclude-standard", "-z"], root, main_thread=False),
            tick=self.budget.throttled_tick,
        )
        if cache is not None:
            self.cache = cache
        tracked = tracked_out.split(b"\0")
        tracked.pop()  # after the last NUL
        untracked = others_out.split(b"\0")
        untracked.pop()
        fields = tracked[0].split(b" ", 2) if tracked else ()
        algorithm = _ALGOS.get(len(fields[1])) if len(fields) == 3 else None
        if algorithm is None:  # no tracked entry to read the object format from
            name = self.git_ok(["rev-parse", "--show-object-format"], root).strip()
            algorithm = _BY_NAME.get(name)
            if algorithm is None:
                raise _NoDigest(f"unsupported object format in {os.fsdecode(root)}")
        discovered = []
        if tracked_out.startswith(b"160000 ") or b"\x00160000 " in tracked_out:
            # Only gitlinks can be submodules; without one, `foreach` would list nothing.
            out = self.git_ok(["submodule", "foreach", "--recursive", "--quiet", "pwd -P"], root)
            discovered += [line for line in out.split(b"\n") if line]
        paths = [record.partition(b"\t")[2] for record in tracked]
        paths += untracked
        paths.sort()  # index order is already byte order: this is a merge, not a sort
        if b" 1\t" in tracked_out or b" 2\t" in tracked_out or b" 3\t" in tracked_out:
            paths = sorted(set(paths))  # maybe conflict stages, which list a path more than once
        return self.describe(root, paths, set(untracked), algorithm, discovered), discovered

    def describe(self, root, paths, untracked, algorithm, discovered):
        prefix = root + b"/"
        tag, _ = algorithm
        end = _KEY.size + (40 if tag == b"\x01" else 64)
        chunks = []
        cache_get, hit, pending = self.cache.get, self.hits.append, self.pending
        fresh = self.started_ns - CACHE_MARGIN_NS
        lstat, access, pack, ksize, x_ok = os.lstat, os.access, _KEY.pack, _KEY.size, os.X_OK
        is_reg, is_lnk, is_dir = stat.S_ISREG, stat.S_ISLNK, stat.S_ISDIR
        effective = os.access in os.supports_effective_ids
        for count, path in enumerate(paths):
            if not count & 1023:
                self.budget.poll()
            full = prefix + path
            try:
                st = lstat(full)
            except OSError:  # vanished, or a parent is no longer a directory
                chunks.append(b"path\0%s\0type\0absent\0mode\0absent\0contents\0absent\0" % path)
                continue
            mode = st.st_mode
            if is_reg(mode):
                xmode = b"100755" if mode & 0o111 and access(full, x_ok, effective_ids=effective) else b"100644"
                try:
                    key = pack(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, tag)
                except struct.error:
                    key = None
                record = cache_get(full) if key else None
                if record is not None and record.startswith(key):
                    chunks.append(b"path\0%s\0type\0file\0mode\0%s\0contents\0%s\0" % (path, xmode, record[ksize:end]))
                    hit(full)
                    continue
                cacheable = key is not None and st.st_mtime_ns < fresh and st.st_ctime_ns < fresh
                head = b"path\0%s\0type\0file\0mode\0%s\0contents\0" % (path, xmode)
                pending.append((st.st_size, chunks, len(chunks), head, full, key if cacheable else None, algorithm))
                chunks.append(None)
            elif is_lnk(mode):
                try:
                    target = os.readlink(full)
                except OSError:
                    target = b"unavailable"
                chunks.append(b"path\0%s\0type\0link\0mode\x00120000\0contents\0%s\0" % (path, target))
                self.nested(prefix, path, untracked, discovered)
            else:
                chunks.append(b"path\0%s\0type\0other\0mode\0other\0contents\0unavailable\0" % path)
                if is_dir(mode):
                    self.nested(prefix, path, untracked, discovered)
        return chunks

    @staticmethod
    def nested(prefix, path, untracked, discovered):
        """An untracked directory (or link to one) holding `.git` may be a nested repository."""
        if path in untracked:
            candidate = prefix + (path[:-1] if path.endswith(b"/") else path)
            if os.path.exists(candidate + b"/.git"):
                discovered.append(candidate)

    def hash_pending(self):
        """Hash the files the cache could not answer for on worker threads (file reads and
        hashlib release the GIL); this thread keeps the time budget and the heartbeat."""
        jobs = sorted(self.pending, key=lambda job: -job[0])  # big files first: workers finish together
        next_job, stop, failures = itertools.count().__next__, threading.Event(), []

        def work():
            try:
                while not stop.is_set():
                    index = next_job()
                    if index >= len(jobs):
                        return
                    _, chunks, slot, head, full, key, algorithm = jobs[index]
                    record = _hash_file(full, algorithm, stop)
                    chunks[slot] = head + (_hex(record, algorithm) if record else b"unavailable") + b"\0"
                    if record is not None and key is not None and record.startswith(key):
                        self.recorded[full] = record
            except BaseException as exc:  # noqa: BLE001 - re-raised on the main thread
                failures.append(exc)
                stop.set()

        workers = [threading.Thread(target=work, daemon=True)
                   for _ in range(max(1, min(4, os.cpu_count() or 1, len(jobs) // 64)))] if jobs else []
        try:
            for worker in workers:
                worker.start()
            for worker in workers:
                while worker.is_alive():
                    worker.join(timeout=0.05)
                    self.budget.poll()
        finally:
            stop.set()
        if failures:
            raise failures[0]


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
