"""One root of the tree digest: its listing and the record of each path (maestro.provenance.digest
runs the whole digest; maestro.provenance.digest_cache keeps ids and records between runs).

Why it looks the way it does (issue 13: the warm digest of a 20k-file tree should cost about what
`git status` does): git lists the root once (`ls-files -z -t -s -c -o --exclude-standard`: one
process; the tags tell tracked from untracked), and while it runs, the previous listing's paths —
the cache's slots — are lstat'ed on two threads (lstat releases the GIL; the kernel's path walk is
the cost). When git's listing is byte for byte the cached one, slot i is path i and the root's
records are the cached stream with only the slots whose stat key moved described again: no
parsing of the listing, no per-file record built, no dictionary of paths. Otherwise the listing is
parsed and each path finds its slot by name. Files that need hashing are queued for the digest's
hashing workers, which fill their slots.
"""

import itertools
import os
import stat
import struct
import threading

from maestro.provenance.digest_cache import ID_SIZE, KEY, NO_ID, NO_KEY, hash_file, hex_id

FILE_RECORD = b"path\0%s\0type\0file\0mode\0%s\0contents\0%s\0"
FILE_HEAD = b"path\0%s\0type\0file\0mode\0%s\0contents\0"
LISTING = ["ls-files", "-z", "-t", "-s", "-c", "-o", "--exclude-standard"]
NO_SLOT = (NO_KEY, NO_ID)
SHARD_MIN = 2048  # below this, a second thread costs more than it saves
_EFFECTIVE = os.access in os.supports_effective_ids


def check_slots(cache, tag: bytes, misses: list, executable: list, lo: int, hi: int, poll=None) -> None:
    """Slots lo..hi of the cached listing: a slot whose file's stat key still matches is a hit (its
    slot goes to `executable` when an exec bit is set: who may run it is asked again); every other
    slot goes to `misses` as (slot, lstat result or None when lstat failed)."""
    lstat, pack = os.lstat, KEY.pack
    paths, data, keys_at, ksize = cache.paths, cache.data, cache.keys_at, KEY.size
    miss, executable_hit = misses.append, executable.append
    for slot in range(lo, hi):
        if poll is not None and not slot & 1023:
            poll()
        try:
            st = lstat(paths[slot])
        except OSError:
            miss((slot, None))
            continue
        mode = st.st_mode
        if mode & 0o170000 == 0o100000:
            try:
                key = pack(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, tag)
            except struct.error:
                miss((slot, st))
                continue
            if data.startswith(key, keys_at + slot * ksize):
                if mode & 0o111:
                    executable_hit(slot)
                continue
        miss((slot, st))


def parse_listing(out: bytes):
    """(paths byte-sorted and unique, untracked set, id size of the first tracked entry or 0)."""
    records = out.split(b"\0")
    records.pop()  # after the last NUL
    tracked = [record for record in records if record[:2] != b"? "]
    untracked = [record[2:] for record in records if record[:2] == b"? "] if len(tracked) < len(records) else []
    fields = tracked[0][2:].split(b" ", 2) if tracked else ()
    id_size = len(fields[1]) if len(fields) == 3 else 0
    paths = [record.partition(b"\t")[2] for record in tracked]
    paths += untracked
    paths.sort()  # two sorted runs: a merge, not a sort
    if b"\0M " in out or out.startswith(b"M "):  # conflict stages list a path more than once
        paths = sorted(set(paths))
    return paths, set(untracked), id_size


def untracked_in(out: bytes):
    """Whether a path is listed untracked, without parsing the listing: its record is exactly
    `? <path>` (NUL-terminated, and NUL occurs only as a terminator; no tracked tag is `?`)."""
    return lambda path: out.startswith(b"? " + path + b"\0") or b"\0? " + path + b"\0" in out


def first_id_size(out: bytes) -> int:
    """parse_listing's id size without parsing the rest: untracked records come first."""
    at = 0
    while out.startswith(b"? ", at):
        at = out.index(b"\0", at) + 1
    end = out.find(b"\0", at)
    fields = out[at + 2:end].split(b" ", 2) if end > at else ()
    return len(fields[1]) if len(fields) == 3 else 0


def has_gitlink(out: bytes) -> bool:
    """Whether the listing tracks a gitlink (only then can a submodule be checked out)."""
    return b" 160000 " in out and any(
        record[2:9] == b"160000 " for record in out.split(b"\0") if record[:2] != b"? ")


class Root:
    """The records of one root: `records` is the slot -> record of the slots described in this
    run (a list covering every slot, or a dict beside the cached `base` stream for an unchanged
    listing); `updates` are the cache slots to store (slot -> (key, id)), `specials` the slots that
    are links or directories, `hashed` the files queued for hashing."""

    def __init__(self, root: bytes, out: bytes, algorithm, fresh_ns: int, path_of, is_untracked, records,
                 base=None):
        self.root, self.out, self.algorithm, self.fresh = root, out, algorithm, fresh_ns
        self.prefix = root + b"/"
        self.path_of, self.is_untracked = path_of, is_untracked  # slot -> path; path -> listed untracked?
        self.records, self.base = records, base  # base: the cache, whose stream holds the other slots
        self.updates, self.specials, self.hashed = {}, [], []

    def describe(self, slots, poll) -> None:
        """Describe the (slot, lstat result or None) pairs given: the record, or a hashing job."""
        prefix, tag, records, path_of = self.prefix, self.algorithm[0], self.records, self.path_of
        lstat, pack, access, x_ok = os.lstat, KEY.pack, os.access, os.X_OK
        fresh = self.fresh
        for count, (slot, st) in enumerate(slots):
            if not count & 255:
                poll()
            path = path_of(slot)
            full = prefix + path
            self.updates[slot] = NO_SLOT  # a slot described now holds no id unless its hash is recorded
            if st is None:
                try:
                    st = lstat(full)
                except OSError:  # vanished, or a parent is no longer a directory
                    records[slot] = b"path\0%s\0type\0absent\0mode\0absent\0contents\0absent\0" % path
                    continue
            mode = st.st_mode
            if stat.S_ISREG(mode):
                xmode = b"100755" if mode & 0o111 and access(full, x_ok, effective_ids=_EFFECTIVE) else b"100644"
                try:
                    key = pack(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, tag)
                except struct.error:
                    key = None
                cacheable = key is not None and st.st_mtime_ns < fresh and st.st_ctime_ns < fresh
                records[slot] = None
                self.hashed.append((st.st_size, records, slot, FILE_HEAD % (path, xmode), full,
                                    key if cacheable else None, self.algorithm, self))
            elif stat.S_ISLNK(mode):
                try:
                    target = os.readlink(full)
                except OSError:
                    target = b"unavailable"
                records[slot] = b"path\0%s\0type\0link\0mode\x00120000\0contents\0%s\0" % (path, target)
                self.specials.append(slot)
            else:
                records[slot] = b"path\0%s\0type\0other\0mode\0other\0contents\0unavailable\0" % path
                if stat.S_ISDIR(mode):
                    self.specials.append(slot)

    def reuse(self, cache, paths: list, old_slots: list, stats: dict, executable: set) -> list:
        """A changed listing: each path that had a slot whose stat key still matched gets its cached
        id (old_slots[i] = that slot); the rest is returned as (slot, lstat result or None)."""
        index, prefix, records = dict(zip(cache.paths, range(len(cache.paths)))), self.prefix, self.records
        id_len, unknown = (40 if self.algorithm[0] == b"\x01" else 64), []
        for slot, path in enumerate(paths):
            old = index.get(prefix + path)
            if old is None or old in stats:
                unknown.append((slot, stats.get(old)))
                continue
            old_slots[slot] = old
            xmode = b"100755" if old in executable and os.access(
                prefix + path, os.X_OK, effective_ids=_EFFECTIVE) else b"100644"
            records[slot] = FILE_RECORD % (path, xmode, cache.id_of(old, id_len))
        return unknown

    def recheck_executables(self, slots, cache) -> None:
        """Cache hits with an exec bit: the record says 100755 only if we may run the file now."""
        id_len = 40 if self.algorithm[0] == b"\x01" else 64
        for slot in slots:
            path = self.path_of(slot)
            full = self.prefix + path
            xmode = b"100755" if os.access(full, os.X_OK, effective_ids=_EFFECTIVE) else b"100644"
            record = FILE_RECORD % (path, xmode, cache.id_of(slot, id_len))
            if self.base is None or record != self.base_record(slot):
                self.records[slot] = record

    def base_record(self, slot: int) -> bytes:
        offsets = self.base.offsets
        return bytes(self.base.stream[offsets[slot]:offsets[slot + 1]])

    def nested(self) -> list:
        """Untracked directories (or links to one) holding `.git`: maybe nested repositories."""
        found = []
        for slot in self.specials:  # the `.git` check first: the untracked one may scan the listing
            path = self.path_of(slot)
            candidate = self.prefix + (path[:-1] if path.endswith(b"/") else path)
            if os.path.exists(candidate + b"/.git") and self.is_untracked(path):
                found.append(candidate)
        return found

    def record_hash(self, slot: int, record: bytes) -> None:
        """A file hashed in this run whose stat key was old enough to trust next time."""
        self.updates[slot] = (record[:KEY.size], record[KEY.size:KEY.size + ID_SIZE])

    def updates_with_ids(self) -> bool:
        return any(key != NO_KEY for key, _ in self.updates.values())

    def pieces(self) -> list:
        """The root's records in order, as few bytes objects as possible (for hashing)."""
        if self.base is None:
            return self.records
        stream, offsets, pieces, at = self.base.stream, self.base.offsets, [], 0
        for slot in sorted(self.records):
            pieces.append(stream[offsets[at]:offsets[slot]])
            pieces.append(self.records[slot])
            at = slot + 1
        pieces.append(stream[offsets[at]:])
        return pieces

    def all_records(self) -> list:
        """One record per slot."""
        if self.base is None:
            return self.records
        stream, offsets, records = self.base.stream, self.base.offsets, self.records
        return [records[slot] if slot in records else bytes(stream[offsets[slot]:offsets[slot + 1]])
                for slot in range(len(offsets) - 1)]


def cache_slots(cache, aligned: bool, old_slots, updates: dict, count: int):
    """The next cache's (keys, ids) for `count` listed paths, or None when the cache file already
    says exactly that. `old_slots[i]` is the cached slot path i reused (unaligned listings only)."""
    ksize = KEY.size
    if aligned:
        keys, ids = None, None
        for slot, (key, blob) in updates.items():
            if cache.key_of(slot) != key or cache.id_of(slot) != blob:
                if keys is None:
                    keys, ids = bytearray(cache.keys), bytearray(cache.ids)
                keys[slot * ksize:(slot + 1) * ksize] = key
                ids[slot * ID_SIZE:(slot + 1) * ID_SIZE] = blob
        return (bytes(keys), bytes(ids)) if keys is not None else None
    keys, ids = [], []
    for slot in range(count):
        update = updates.get(slot)
        if update is not None:
            keys.append(update[0])
            ids.append(update[1])
            continue
        old = old_slots[slot] if old_slots is not None else None
        if old is None:
            keys.append(NO_KEY)
            ids.append(NO_ID)
        else:
            keys.append(cache.key_of(old))
            ids.append(cache.id_of(old))
    return b"".join(keys), b"".join(ids)


def hash_files(pending: list, poll) -> None:
    """Hash the files the cache could not answer for (Root.hashed jobs) on worker threads (file
    reads and hashlib release the GIL); this thread keeps `poll` (the time budget, the heartbeat)."""
    jobs = sorted(pending, key=lambda job: -job[0])  # big files first: workers finish together
    next_job, stop, failures = itertools.count().__next__, threading.Event(), []

    def work():
        try:
            while not stop.is_set():
                index = next_job()
                if index >= len(jobs):
                    return
                _, records, slot, head, full, key, algorithm, root = jobs[index]
                record = hash_file(full, algorithm, stop)
                records[slot] = head + (hex_id(record, algorithm) if record else b"unavailable") + b"\0"
                if record is not None and key is not None and record.startswith(key):
                    root.record_hash(slot, record)
        except BaseException as exc:  # noqa: BLE001 - re-raised on the polling thread
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
                poll()
    finally:
        stop.set()
    if failures:
        raise failures[0]
