"""The digest's stat cache, `<git-dir>/maestro-digest-cache`, and the raw-byte file hashing whose
results it keeps (spec §2.5; maestro.provenance.digest is the digest itself).

Speed: re-hashing every byte on each call is what makes a big tree slow, so unchanged files reuse
a blob id from a stat cache, `<git-dir>/maestro-digest-cache`. It is maestro's own rather than
git's index because an index blob id is the *cleaned* content as of the last `git add` (clean and
smudge filters, autocrlf/eol, ident, working-tree-encoding — including settings that have since
changed, or a one-off `git -c core.autocrlf=true add`), which no attribute check made today can
rule out; ids maestro hashed itself are raw-byte ids by construction. The trust model is git's: an
entry is reused only when dev, inode, size, mtime and ctime (ns) all match, and an entry is only
recorded when mtime and ctime were already `CACHE_MARGIN_NS` old when the run began, so a later
write within the same timestamp tick cannot hide behind an identical stat (git's "racily clean").

File format 2 (one slot per path the last run listed, in its listing order, so an unchanged tree
is recognised with one comparison and each slot by its position, not a dictionary of paths):
`maestro-digest-cache 2 <count> <names> <root> <listing> <stream>\n` (the sizes of the sections),
the NUL-terminated absolute paths, `count` stat keys (`KEY`; all zero for a slot that holds no id:
not a regular file, or too young to trust), `count` hex blob ids padded to 64 bytes; then, when the
cache was written by a digest (not by `dump_cache`): the root, git's raw listing of it, the root's
records as hashed (the `stream`) and `count + 1` native-order 8-byte offsets of each slot's record
in it (increasing: every record is a non-empty piece of the stream). Read only from a regular file
of ours (no symlink followed, owner = our effective uid, not group/world-writable); anything
unexpected — torn, foreign, format 1 — reads as an empty cache.
"""

import itertools
import operator
import os
import stat
import struct

CACHE_NAME = "maestro-digest-cache"
CACHE_MARGIN_NS = 2_000_000_000
KEY = struct.Struct("<QQqqqc")  # dev, ino, size, mtime_ns, ctime_ns, algorithm tag
ID_SIZE = 64  # a hex blob id, a sha1 id padded to sha256's length
RECORD = KEY.size + ID_SIZE  # what hash_file returns and load_cache maps a path to
NO_KEY = bytes(KEY.size)  # a slot without an id: matches no stat (no file has inode 0)
NO_ID = b"0" * ID_SIZE
OFFSET = struct.Struct("=Q")  # native order: the file never leaves this machine
CACHE_MAGIC = b"maestro-digest-cache 2"
MAX_CACHE_BYTES = 1 << 30  # a bigger file is not one we wrote for any sane tree
CHUNK = 1 << 20
O_EXTRA = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)  # a FIFO swapped in never blocks us


def hex_id(record: bytes, algorithm) -> bytes:
    return record[KEY.size:KEY.size + (40 if algorithm[0] == b"\x01" else 64)]


def hash_file(full: bytes, algorithm, stop):
    """A cache record (stat key of the opened file + raw blob id), or None when unreadable.

    Like `git hash-object --no-filters <path>`: the first st_size bytes as of opening; a file
    that shrank mid-read counts as unreadable."""
    tag, new_hash = algorithm
    try:
        fd = os.open(full, os.O_RDONLY | O_EXTRA)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        hasher = new_hash(b"blob %d\0" % st.st_size)
        left = st.st_size
        while left > 0:
            if stop.is_set():
                return None
            chunk = os.read(fd, min(left, CHUNK))
            if not chunk:
                return None
            hasher.update(chunk)
            left -= len(chunk)
        key = KEY.pack(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, tag)
        return key + hasher.hexdigest().encode().ljust(ID_SIZE, b"0")
    except (OSError, struct.error):
        return None
    finally:
        os.close(fd)


# ------------------------------------------------------------------------------------ cache --
def cache_path(root: bytes):
    """`<git-dir>/maestro-digest-cache` from the root's `.git` (directory or `gitdir:` file)."""
    dotgit = root + b"/.git"
    if os.path.isdir(dotgit):
        return dotgit + b"/" + CACHE_NAME.encode()
    try:
        with open(dotgit, "rb") as handle:
            line = handle.read(4096).split(b"\n", 1)[0].rstrip(b"\r")
    except OSError:
        return None
    if not line.startswith(b"gitdir: "):
        return None
    target = os.path.join(root, line[8:])
    return os.path.join(target, CACHE_NAME.encode()) if os.path.isdir(target) else None


class Cache:
    """The slots of one cache file, read in place from `data` (copies cost a fresh process page
    faults). `paths`: the absolute paths; slot i's stat key is `data[keys_at + i * KEY.size:]`
    (`key_of(i)`), its id `id_of(i)`. When the file holds them: `root`, `stream` (a memoryview of the
    records) and `offsets` (a memoryview of count + 1 ints); `same_listing(out)` says whether git's
    listing is the cached one."""
    __slots__ = ("data", "names", "paths", "keys_at", "ids_at", "root", "listing_at", "listing_size", "stream",
                 "offsets")

    def __init__(self, data, names, paths, keys_at, ids_at):
        self.data, self.names, self.paths, self.keys_at, self.ids_at = data, names, paths, keys_at, ids_at
        self.root, self.listing_at, self.listing_size, self.stream, self.offsets = b"", 0, -1, None, None

    def key_of(self, slot: int) -> bytes:
        at = self.keys_at + slot * KEY.size
        return self.data[at:at + KEY.size]

    def id_of(self, slot: int, length: int = ID_SIZE) -> bytes:
        at = self.ids_at + slot * ID_SIZE
        return self.data[at:at + length]

    @property
    def keys(self) -> bytes:
        return self.data[self.keys_at:self.ids_at]

    @property
    def ids(self) -> bytes:
        return self.data[self.ids_at:self.ids_at + len(self.paths) * ID_SIZE]

    def tags(self) -> bytes:
        """The algorithm tag of every slot's key (zero: a slot without an id)."""
        return self.data[self.keys_at + KEY.size - 1:self.ids_at:KEY.size]

    def same_listing(self, out: bytes) -> bool:
        return len(out) == self.listing_size and self.data.startswith(out, self.listing_at)


def read_cache(path: bytes):
    """The Cache at `path`, or None: missing, a symlink, not a regular file, not ours, writable by
    others, or not exactly a format-2 file (a torn or foreign file is no cache, never an error)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | O_EXTRA)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022 \
                or st.st_size > MAX_CACHE_BYTES:
            return None
        chunks, left = [], st.st_size
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                return None
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)
    return parse_cache(data)


def parse_cache(data: bytes):
    end = data.find(b"\n", 0, 200)
    words = data[:end].split(b" ") if end > 0 else ()
    if len(words) != 7 or b" ".join(words[:2]) != CACHE_MAGIC or not all(word.isdigit() for word in words[2:]):
        return None
    count, names_size, root_size, listing_size, stream_size = map(int, words[2:])
    with_stream = bool(root_size or listing_size or stream_size)
    at = end + 1
    if len(data) - at != names_size + count * RECORD + root_size + listing_size + stream_size \
            + ((count + 1) * OFFSET.size if with_stream else 0):
        return None
    names = data[at:at + names_size]
    paths = names.split(b"\0")
    if paths.pop() != b"" or len(paths) != count:
        return None
    at += names_size
    cache = Cache(data, names, paths, at, at + count * KEY.size)
    if with_stream:
        at += count * RECORD
        cache.root, cache.listing_at, cache.listing_size = data[at:at + root_size], at + root_size, listing_size
        at += root_size + listing_size
        view = memoryview(data)
        offsets = view[at + stream_size:].cast("Q")
        if offsets[0] != 0 or offsets[count] != stream_size or not all(map(operator.lt, offsets[:-1], offsets[1:])):
            return None  # every record is a non-empty piece of the stream, in order, or the file is damaged
        cache.stream, cache.offsets = view[at:at + stream_size], offsets
    return cache


def encode_cache(paths: list, keys: bytes, ids: bytes, root=b"", listing=b"", records=None) -> bytes:
    """The file for these slots (`keys` and `ids` already joined, one per path), with the root's
    listing and records (one per path) when given."""
    names = b"".join(path + b"\0" for path in paths)
    stream, offsets = b"", b""
    if records is not None:
        stream = b"".join(records)
        offsets = struct.pack("=%dQ" % (len(records) + 1), 0, *itertools.accumulate(map(len, records)))
    return b"%s %d %d %d %d %d\n%s%s%s%s%s%s%s" % (
        CACHE_MAGIC, len(paths), len(names), len(root), len(listing), len(stream),
        names, keys, ids, root, listing, stream, offsets)


def load_cache(path: bytes) -> dict:
    """path -> record (KEY + padded id) for every slot that holds an id; {} when there is no cache."""
    cache = read_cache(path)
    if cache is None:
        return {}
    records = {}
    for slot, name in enumerate(cache.paths):
        key = cache.key_of(slot)
        if key != NO_KEY:
            records[name] = key + cache.id_of(slot)
    return records


def dump_cache(recorded: dict) -> bytes:
    """The file for a path -> record map (load_cache's shape)."""
    return encode_cache(list(recorded), b"".join(record[:KEY.size] for record in recorded.values()),
                        b"".join(record[KEY.size:].ljust(ID_SIZE, b"0")[:ID_SIZE] for record in recorded.values()))
