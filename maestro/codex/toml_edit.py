"""Minimal edits to top-level string keys of a TOML document, every other byte kept.

tomllib reads TOML but cannot write it, and re-serialising would drop comments, quoting and
layout. So the edit is textual: a small scanner walks the statements of the top-level table (the
part before the first `[table]` / `[[array]]` header), skipping values whole — multi-line basic
and literal strings, arrays and inline tables spanning lines, comments — so a `[x]` or
`model = "…"` line inside a string is never taken for a statement. A key found there gets its
value replaced in place (key spelling, spacing and trailing comment kept); a missing key gets one
new line. The result is accepted only if tomllib parses it to exactly the old data plus the new
values; otherwise nothing is returned and the caller writes nothing.

Line endings (LF or CRLF), a UTF-8 BOM and a missing final newline are kept as they were.
"""

import math
import tomllib
from dataclasses import dataclass

BOM = b"\xef\xbb\xbf"
_WS = " \t"
_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


class TomlEditError(ValueError):
    """The document cannot be edited safely; the message says why (one line)."""


@dataclass(frozen=True)
class Statement:
    key: tuple  # decoded key parts: `"model"` and `model` are both ("model",)
    start: int  # first character of the statement's line
    value_start: int
    value_end: int
    end: int  # just past the statement's line ending (or len(text) at EOF)
    eol: str  # "\r\n", "\n", or "" for a last line without one


def _fail(pos: int, what: str):
    raise TomlEditError(f"cannot scan the top-level table at offset {pos}: {what}")


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos


def _line_content_end(text: str, pos: int) -> int:
    """Index of the line ending (or EOF) at or after pos."""
    end = text.find("\n", pos)
    if end < 0:
        return len(text)
    return end - 1 if end > pos and text[end - 1] == "\r" else end


def _eol_at(text: str, pos: int) -> str:
    if text.startswith("\r\n", pos):
        return "\r\n"
    return "\n" if text.startswith("\n", pos) else ""


def _skip_multiline(text: str, pos: int, quote: str, escapes: bool) -> int:
    """pos is just after the opening triple quote; returns the index after the closing one."""
    i = pos
    while i < len(text):
        ch = text[i]
        if escapes and ch == "\\":
            i += 2
            continue
        if ch == quote and text.startswith(quote * 3, i):
            run = 3
            while run < 5 and text.startswith(quote, i + run):
                run += 1  # up to two quotes may end the content right before the delimiter
            return i + run
        i += 1
    _fail(pos, "unterminated multi-line string")


def _skip_string(text: str, pos: int) -> int:
    if text.startswith('"""', pos):
        return _skip_multiline(text, pos + 3, '"', escapes=True)
    if text.startswith("'''", pos):
        return _skip_multiline(text, pos + 3, "'", escapes=False)
    quote, i = text[pos], pos + 1
    while i < len(text) and text[i] not in "\r\n":
        if quote == '"' and text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    _fail(pos, "unterminated string")


def _skip_bracketed(text: str, pos: int) -> int:
    """An array or inline table, possibly spanning lines, with strings and comments inside."""
    depth, i = 0, pos
    while i < len(text):
        ch = text[i]
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return i + 1
        elif ch in "\"'":
            i = _skip_string(text, i)
            continue
        elif ch == "#":
            i = _line_content_end(text, i)
            continue
        i += 1
    _fail(pos, "unterminated array or inline table")


def _skip_value(text: str, pos: int) -> int:
    if pos >= len(text):
        _fail(pos, "missing value")
    ch = text[pos]
    if ch in "\"'":
        return _skip_string(text, pos)
    if ch in "[{":
        return _skip_bracketed(text, pos)
    # number, boolean, date/time (which may contain a space): up to a comment or the line end
    end = pos
    while end < len(text) and text[end] not in "#\r\n":
        end += 1
    while end > pos and text[end - 1] in _WS:
        end -= 1
    if end == pos:
        _fail(pos, "missing value")
    return end


def _skip_key(text: str, pos: int) -> int:
    while True:
        if pos < len(text) and text[pos] in "\"'":
            pos = _skip_string(text, pos)
        else:
            start = pos
            while pos < len(text) and text[pos] in _BARE:
                pos += 1
            if pos == start:
                _fail(pos, "expected a key")
        after = _skip_ws(text, pos)
        if not text.startswith(".", after):
            return pos
        pos = _skip_ws(text, after + 1)


def _decode_key(raw: str) -> tuple:
    """Key parts as TOML means them (quotes and escapes resolved), via tomllib itself."""
    node = tomllib.loads(raw + " = 0")
    parts = []
    while isinstance(node, dict):
        (name, node), = node.items()
        parts.append(name)
    return tuple(parts)


def scan_top_level(text: str):
    """(statements of the top-level table, offset where the first table header's line starts)."""
    statements, pos = [], 0
    while pos < len(text):
        line_start = pos
        pos = _skip_ws(text, pos)
        if pos >= len(text):
            break
        if text[pos] == "#":
            pos = _line_content_end(text, pos)
        if text[pos:pos + 1] in ("\r", "\n"):
            eol = _eol_at(text, pos)
            if not eol:
                _fail(pos, "bare carriage return")
            pos += len(eol)
            continue
        if pos >= len(text):
            break
        if text[pos] == "[":
            return statements, line_start
        key_end = _skip_key(text, pos)
        key = _decode_key(text[pos:key_end])
        pos = _skip_ws(text, key_end)
        if not text.startswith("=", pos):
            _fail(pos, "expected '=' after a key")
        value_start = _skip_ws(text, pos + 1)
        value_end = _skip_value(text, value_start)
        pos = _skip_ws(text, value_end)
        if text.startswith("#", pos):
            pos = _line_content_end(text, pos)
        eol = _eol_at(text, pos)
        if not eol and pos < len(text):
            _fail(pos, "expected the end of the line after a value")
        pos += len(eol)
        statements.append(Statement(key, line_start, value_start, value_end, pos, eol))
    return statements, len(text)


def basic_string(value: str) -> str:
    out = []
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _same(a, b) -> bool:
    """Equality that treats NaN as equal to NaN (TOML allows `nan`)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def decode(source: bytes):
    """(bom, text, data) of a config file; TomlEditError when it is not UTF-8 TOML."""
    bom = BOM if source.startswith(BOM) else b""
    try:
        text = source[len(bom):].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TomlEditError(f"not UTF-8 text ({exc.reason} at byte {exc.start + len(bom)})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlEditError(f"not valid TOML ({exc})") from None
    return bom, text, data


def _document_eol(text: str) -> str:
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def set_top_level(source: bytes, values: dict) -> bytes:
    """`source` with each `values` key set as a top-level string; nothing else changes."""
    for key, value in values.items():
        if not key or not all(ch in _BARE for ch in key) or not isinstance(value, str):
            raise TomlEditError(f"refusing to write key {key!r}")
    bom, text, old = decode(source)
    statements, _ = scan_top_level(text)
    found = {}
    for statement in statements:
        name = statement.key[0]
        if name not in values:
            continue
        if len(statement.key) > 1:
            dotted = ".".join(statement.key)
            raise TomlEditError(f"top-level '{name}' is a table (dotted key '{dotted}'); edit it by hand first")
        found[name] = statement
    for name in values:
        if name in old and name not in found:
            raise TomlEditError(f"'{name}' is defined as a table, not a top-level value; edit it by hand first")

    edits = [(s.value_start, s.value_end, basic_string(values[name])) for name, s in found.items()]
    missing = [name for name in values if name not in found]
    if missing:
        # Next to the pins already there, else after the last top-level statement, else at the top.
        anchor = max(found.values(), key=lambda s: s.end, default=None) or (statements[-1] if statements else None)
        at = anchor.end if anchor else 0
        eol = (anchor.eol if anchor else "") or _document_eol(text)
        lines = [f"{name} = {basic_string(values[name])}" for name in missing]
        if anchor is not None and not anchor.eol:  # last line had no newline: keep it that way
            insert = "".join(eol + line for line in lines)
        else:
            insert = "".join(line + eol for line in lines)
        edits.append((at, at, insert))
    new_text = text
    for start, end, replacement in sorted(edits, reverse=True):
        new_text = new_text[:start] + replacement + new_text[end:]

    expected = dict(old)
    expected.update(values)
    try:
        ok = _same(tomllib.loads(new_text), expected)
    except tomllib.TOMLDecodeError:
        ok = False
    if not ok:
        raise TomlEditError("the edited document would not read back as the old one plus the new pins; nothing written")
    return bom + new_text.encode("utf-8")
