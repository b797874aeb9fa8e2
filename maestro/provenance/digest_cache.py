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

File format: `maestro-digest-cache 1 <count> <names size>\n`, the NUL-terminated absolute paths,
then one fixed-size record per path (the stat key, then the hex blob id padded to 64 bytes).
Anything unexpected reads as an empty cache.
"""

import os
import stat
import struct

CACHE_NAME = "maestro-digest-cache"
CACHE_MARGIN_NS = 2_000_000_000
KEY = struct.Struct("<QQqqqc")  # dev, ino, size, mtime_ns, ctime_ns, algorithm tag
RECORD = KEY.size + 64  # + hex blob id (a sha1 id is padded to sha256's length)
CACHE_MAGIC = b"maestro-digest-cache 1"
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
        return key + hasher.hexdigest().encode().ljust(64, b"0")
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


def load_cache(path: bytes) -> dict:
    """path -> record; anything unexpected (torn, foreign, a symlink) is an empty cache."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | O_EXTRA)
    except OSError:
        return {}
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return {}
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read()
    except OSError:
        return {}
    finally:
        os.close(fd)
    header, _, body = data.partition(b"\n")
    words = header.split(b" ")
    if len(words) != 4 or b" ".join(words[:2]) != CACHE_MAGIC or not (words[2].isdigit() and words[3].isdigit()):
        return {}
    count, names_size = int(words[2]), int(words[3])
    if len(body) != names_size + count * RECORD:
        return {}
    names = body[:names_size].split(b"\0")
    if names.pop() != b"" or len(names) != count:
        return {}
    records = body[names_size:]
    return dict(zip(names, [records[at:at + RECORD] for at in range(0, count * RECORD, RECORD)]))


def dump_cache(recorded: dict) -> bytes:
    names = b"".join(name + b"\0" for name in recorded)
    return b"%s %d %d\n%s%s" % (CACHE_MAGIC, len(recorded), len(names), names, b"".join(recorded.values()))
