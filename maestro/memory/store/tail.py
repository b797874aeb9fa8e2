"""Reading a track file for the snapshot: whole when it is small, from its end when it is big.

At 20,000 entries (≈ 10 MB) splitting and trimming every entry of every track was most of the
session-start hook's time (12× the bare interpreter); the snapshot shows only the newest few of each
track, so a big file is parsed from its end only (`tail_entries`). Pure: reads, never writes.
"""

import os

from maestro.memory.store import entry as grammar
from maestro.memory.store.errors import StoreError

TAIL_BYTES = 64 * 1024  # a track file bigger than this is parsed from its end only
_DELIMITER_BYTES = grammar.DELIMITER.encode()


def read_text(path: str, damaged: list) -> str:
    """The file's text; one that is not UTF-8 is decoded with U+FFFD and noted in `damaged`."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}", "io") from None
    try:
        return grammar.decode(data)
    except StoreError as exc:
        damaged.append((path, exc.message))
        return data.decode("utf-8", "replace")


def tail_entries(path: str, keep: int, damaged: list, visible=lambda entries: entries, count: bool = True):
    """(the newest `keep` of `visible(entries)` in file order, how many visible entries precede them).

    A file up to TAIL_BYTES is read and parsed whole, as before. A bigger one is read from its end in
    growing chunks until `keep` visible entries are found: the chunk's first piece may be cut, so it is
    dropped and only what follows a delimiter is decoded (a delimiter is ASCII plus §, so the decode starts
    on a character boundary). What precedes is counted, not parsed: one delimiter per entry, which is exact
    for a canonical file (a run of empty pieces in a drifted one counts a few extra dropped entries, stats
    only; with a branch filter, the head's entries of other branches are counted too). A bad byte in that
    unparsed head is not named here (the entries shown are all decoded strictly;
    `memory health`/`memory list` name the file). With `count` False the head is not even read and not
    counted (the session-start hook records bytes only, never `dropped`)."""
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        return [], 0
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}", "io") from None
    if size <= TAIL_BYTES:
        entries = visible(grammar.parse_entries(read_text(path, damaged)))
        cut = max(len(entries) - keep, 0)
        return entries[cut:], cut
    try:
        with open(path, "rb") as handle:
            chunk = TAIL_BYTES
            while True:
                start = max(size - chunk, 0)
                handle.seek(start)
                data = handle.read()
                first = data.find(_DELIMITER_BYTES) if start else 0
                if first < 0:  # one entry bigger than the chunk: read more
                    chunk *= 4
                    continue
                tail, bad = data[first:], None
                try:
                    text = tail.decode("utf-8")
                except UnicodeDecodeError as exc:  # entry.decode's words, with the byte's offset in the file
                    bad, text = f"not UTF-8 (byte {start + first + exc.start})", tail.decode("utf-8", "replace")
                entries = visible(grammar.parse_entries(text))
                if len(entries) >= keep or not start:
                    break
                chunk *= 4
            if bad:
                damaged.append((path, bad))
            cut = max(len(entries) - keep, 0)
            before = cut
            if start and count:  # the unparsed head: entries counted by their delimiters (the cut piece is one of them)
                handle.seek(0)
                head = handle.read(start + first)
                before += head.count(_DELIMITER_BYTES) + (0 if head.isspace() or not head else 1)
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}", "io") from None
    return entries[cut:], before
