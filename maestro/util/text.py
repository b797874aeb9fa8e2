"""Shortening text for one line of output: the one helper family behind every result line,
status line and error message that shows a value of unknown length.

The variants differ on purpose and each keeps its exact bytes: `first_line` shows an entry's
first line and marks anything dropped after the limit (an entry's first line is its summary);
`one_line` folds all whitespace into spaces and stays within the limit, marker included (a
title or a state inside a longer sentence). Cheap to import: no imports at all, so hooks and
lower layers may use it.
"""

ELLIPSIS = "…"


def printable(text: str, replacement: str = "?") -> str:
    """Every non-printable character (controls, line breaks, escapes) replaced: text that cannot
    split a line or drive a terminal."""
    return "".join(ch if ch.isprintable() else replacement for ch in text)


def squeeze(text: str) -> str:
    """Runs of whitespace (line breaks included) as one space, none at either end."""
    return " ".join(text.split())


def bounded(text: str, limit: int, marker: str = ELLIPSIS) -> str:
    """At most `limit` characters, the marker included when the text had to be cut."""
    return text if len(text) <= limit else text[: limit - len(marker)] + marker


def first_line(text: str, limit: int = 200) -> str:
    """An entry as a result line shows it: the first line only, printable, cut after `limit`
    characters; "…" follows when anything was left out (more characters or more lines)."""
    first = printable(text.split("\n", 1)[0])
    more = ELLIPSIS if len(first) > limit or "\n" in text else ""
    return first[:limit] + more


def one_line(text, limit: int) -> str:
    """Any value (None as empty) as one printable line of at most `limit` characters, "…"
    included when cut."""
    return bounded(printable(squeeze(str(text or ""))), limit)


def tail_lines(text: str, count: int) -> str:
    """The last `count` lines, without the trailing newline; "" for blank text."""
    lines = text.rstrip("\n").split("\n") if text.strip() else []
    return "\n".join(lines[-count:])


def utf16_len(text: str) -> int:
    """Length as Claude Code (JavaScript) counts its 10,000-character cap for hook text: UTF-16 code
    units, 2 for a character past U+FFFF (most emoji). No utf-16 codec: its module would be one more
    import for the session-start hook."""
    if not text or max(text) <= "\uffff":
        return len(text)
    return len(text) + sum(1 for ch in text if ch > "\uffff")


def utf16_cut(text: str, limit: int) -> str:
    """The longest prefix of `text` of at most `limit` UTF-16 code units (never half a character)."""
    used = 0
    for index, ch in enumerate(text):
        used += 2 if ch > "\uffff" else 1
        if used > limit:
            return text[:index]
    return text
