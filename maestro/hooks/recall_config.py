"""Recall's switch and size (maestro/hooks/recall.py), from `~/.maestro/config.toml`:

    [memory]
    recall = true        # false turns the block off (anything but a boolean leaves it on)
    recall_chars = 1200  # the block's size in characters; 0 turns it off; at most MAX_CHARS

The config is scanned, not parsed, when it is plain (`[memory]` and `key = value` lines): tomllib costs
the hook ~20 ms; a file the scan cannot read for sure (dotted or quoted keys or table headers, inline
tables, multi-line strings, values other than true/false and plain decimals) is parsed. It is read
non-blocking, regular files only, without following a link (as atomic.read_regular reads, which this
module does not import: util/atomic imports contextlib, ~5 ms of a prompt that has recall off): a FIFO
planted there must not hang the prompt, and anything but a small regular file is the default.
"""

import os
import stat

DEFAULT_CHARS = 1200
MAX_CHARS = 4000
CONFIG_MAX_BYTES = 1 << 20


def _value(raw: str):
    """A scanned `key = value`'s value: True/False or a plain decimal int; None for anything else (a
    string, 0x3E8, +500, 01_0: forms whose meaning tomllib decides)."""
    text = raw.split("#", 1)[0].strip()
    if text in ("true", "false"):
        return text == "true"
    parts = text.split("_")
    if not all(part.isdigit() and part.isascii() for part in parts) or (len(text) > 1 and text[0] == "0"):
        return None
    return int(text.replace("_", ""))


def _scan(text: str):
    """{'recall': …, 'recall_chars': …} found under `[memory]`, or None when the file says more than
    the scan can read for sure (then tomllib decides): a quoted table header (`["memory"]`), a
    multi-line string (a `[memory]` line inside one is text), a dotted or quoted key, an inline
    table, a value that is not true/false or a plain decimal."""
    if '"""' in text or "'''" in text:
        return None
    found, table = {}, ""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("["):
            table = "".join(stripped.split("#", 1)[0].split())  # `[ memory ]` is `[memory]`
            if '"' in table or "'" in table:
                return None
            continue
        if "recall" not in stripped and not stripped.startswith("memory"):
            continue
        key, eq, raw = stripped.partition("=")
        key = key.strip()
        if table == "[memory]" and key in ("recall", "recall_chars") and eq:
            found[key] = _value(raw)
            if found[key] is None:
                return None
        elif table == "" and key.startswith("memory") or table == "[memory]" and "recall" in key:
            return None  # memory.recall = …, memory = {…}, "recall" = …: the real parser's job
    return found


def read_small(path: str, limit: int = CONFIG_MAX_BYTES):
    """The bytes of the regular file at `path` if it holds at most `limit`, else None (absent, unreadable,
    a symlink, a FIFO or device, a directory, too big). Also recall's read of its session record."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks) if size <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def config(path: str = None) -> tuple:
    """(enabled, chars) from ~/.maestro/config.toml; a missing or unreadable file, or a value of the
    wrong kind, is the default (on, DEFAULT_CHARS)."""
    if path is None:
        from maestro import paths

        path = os.path.join(paths.maestro_dir(), "config.toml")
    data = read_small(path)  # non-blocking, regular files only: a FIFO planted there must not hang the prompt
    if data is None or b"recall" not in data:
        return True, DEFAULT_CHARS
    text = data.decode("utf-8", "replace")
    found = _scan(text)
    if found is None:
        import tomllib

        try:
            table = tomllib.loads(text).get("memory")
        except tomllib.TOMLDecodeError:
            return True, DEFAULT_CHARS
        found = table if isinstance(table, dict) else {}
    enabled = found.get("recall", True)
    chars = found.get("recall_chars", DEFAULT_CHARS)
    if not isinstance(enabled, bool):
        enabled = True
    if isinstance(chars, bool) or not isinstance(chars, int) or chars < 0:
        chars = DEFAULT_CHARS
    return enabled and chars > 0, min(chars, MAX_CHARS)
