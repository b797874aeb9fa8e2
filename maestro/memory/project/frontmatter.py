"""The YAML subset of a codemap's frontmatter (spec memory.md §1.2): parse and render, pure.

    ---
    key: scalar            # a comment outside quotes
    list: [a, "b"]         # or a block list:  list:\\n  - a\\n  - "b"
    map:                   # one level of nested map
      key: scalar
    ---
    body…

Scalars: "JSON-quoted" and 'single-quoted' strings, true/false, null/~/none, int, float (only with
a `.`, and only in the form the renderer writes, so `1.0e400` or `1.50` stay strings), else the raw text up to a ` #` comment. The renderer writes lists as block lists and quotes
(JSON-style) every string the parser would not read back identically, so any value round-trips.
`split` keeps the body byte-identical: a rewrite replaces only the text between the `---` lines.
"""

import json
import re

_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)", re.ASCII)  # 0123 stays a string: an all-digit short sha
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*", re.ASCII)
_PLAIN_START = re.compile(r"[A-Za-z0-9_./@+(\\\x80-\U0010ffff]|-[0-9]")  # a plain scalar may start so


class FrontmatterError(ValueError):
    pass


def split(text: str):
    """(frontmatter text, tail) where tail starts at the closing `\\n---`; None when the text does
    not start with `---` or has no closing line."""
    if not text.startswith("---"):
        return None
    end = text.find("\n---", 3)
    if end < 0:
        return None
    return text[3:end], text[end:]


def _strip_comment(value: str) -> str:
    """The value before a ` #` (or a leading `#`) that is outside quotes."""
    quote, skip = None, False
    for i, ch in enumerate(value):
        if skip:
            skip = False
        elif quote == "'":
            if ch == "'" and value[i + 1:i + 2] == "'":
                skip = True  # '' inside single quotes is one quote
            elif ch == "'":
                quote = None
        elif quote:
            if ch == quote and not _escaped(value, i):
                quote = None
        elif ch in "\"'" and (i == 0 or value[i - 1] in " \t,["):
            quote = ch
        elif ch == "#" and (i == 0 or value[i - 1] in " \t"):
            return value[:i]
    return value


def _escaped(value: str, i: int) -> bool:
    backslashes = 0
    while i > 0 and value[i - 1] == "\\":
        backslashes, i = backslashes + 1, i - 1
    return backslashes % 2 == 1


def _quoted(value: str):
    """A whole-value quoted string, decoded; None when `value` is not exactly one quoted string."""
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        try:
            decoded = json.loads(value)
        except ValueError:
            return None
        return decoded if isinstance(decoded, str) else None
    if len(value) >= 2 and value[0] == "'" and value[-1] == "'":
        inner = value[1:-1]
        if "'" in inner.replace("''", ""):
            return None
        return inner.replace("''", "'")
    return None


def _split_flow(inner: str) -> list:
    items, current, quote = [], [], None
    for i, ch in enumerate(inner):
        if quote:
            if ch == quote and not (quote == '"' and _escaped(inner, i)):
                quote = None
        elif ch in "\"'" and not "".join(current).strip():
            quote = ch
        elif ch == ",":
            items.append("".join(current))
            current = []
            continue
        current.append(ch)
    items.append("".join(current))
    if len(items) == 1 and not items[0].strip():
        return []
    return [parse_scalar(item) for item in items]


def parse_scalar(raw: str):
    value = _strip_comment(raw).strip()
    if value.startswith(("\"", "'")):
        decoded = _quoted(value)
        if decoded is not None:
            return decoded
    if value.startswith("[") and value.endswith("]"):
        return _split_flow(value[1:-1])
    if value == "{}":
        return {}
    lowered = value.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "~", "none"):
        return None
    if _INT.fullmatch(value):
        return int(value)
    if "." in value:
        try:
            number = float(value)
        except ValueError:
            number = None
        if number is not None and _float_text(number) == value:
            return number  # 1.0e400 (inf), 1.50, 1.0e-400 keep their raw text: a rewrite is byte-identical
    return value


def parse(text: str) -> dict:
    """The mapping of a frontmatter block (the text between the `---` lines)."""
    result, key, nested = {}, None, False
    for line in text.split("\n"):
        line = line[:-1] if line.endswith("\r") else line
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indented = line[0] in " \t"
        stripped = line.strip()
        if stripped.startswith("- ") or stripped == "-":
            if key is None or not isinstance(result[key], list) or nested:
                raise FrontmatterError(f"list item outside a list: {stripped[:40]!r}")
            result[key].append(parse_scalar(stripped[1:]))
            continue
        name, colon, rest = stripped.partition(":")
        if not colon or not _KEY.fullmatch(name):
            raise FrontmatterError(f"not a key: value line: {stripped[:40]!r}")
        if indented:
            if key is not None and isinstance(result[key], _Open) and not result[key]:
                result[key] = {}
            if key is None or not isinstance(result[key], dict):
                raise FrontmatterError(f"nested key outside a map: {name!r}")
            result[key][name] = parse_scalar(rest)
            nested = True
            continue
        key, nested = name, False
        if _strip_comment(rest).strip():
            result[key] = parse_scalar(rest)
        else:
            result[key] = _Open()
    return {k: _close(v) for k, v in result.items()}


class _Open(list):
    """A key with no inline value: becomes a block list, a nested map, or None."""


def _close(value):
    if isinstance(value, _Open):
        return list(value) if value else None
    return value


def _float_text(value: float) -> str:
    """The one text a float is written as (and the only text read back as a float)."""
    text = repr(value)
    if "." not in text and value == value and abs(value) != float("inf"):
        text = f"{value:.1f}"  # 1e+100 would read back as a string; the long form reads back exactly
    return text


def render_scalar(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = _float_text(value)
        if parse_scalar(text) != value:
            raise FrontmatterError(f"cannot render the float {value!r}")
        return text
    if not isinstance(value, str):
        raise FrontmatterError(f"cannot render a {type(value).__name__}")
    if _plain(value):
        return value
    return json.dumps(value, ensure_ascii=False)


def _plain(value: str) -> bool:
    if not value or value != value.strip() or not _PLAIN_START.match(value):
        return False
    if any(ch in value for ch in "\n\r\"#") or not value.isprintable():
        return False
    return parse_scalar(value) == value and type(parse_scalar(value)) is str


def render(meta: dict) -> str:
    """The frontmatter block for `meta` (no `---` lines, no trailing newline); key order kept."""
    lines = []
    for key, value in meta.items():
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise FrontmatterError(f"invalid frontmatter key {key!r}")
        if isinstance(value, (list, tuple)):
            lines.append(f"{key}: []" if not value else f"{key}:")
            lines.extend(f"  - {render_scalar(item)}" for item in value)
        elif isinstance(value, dict):
            lines.append(f"{key}: {{}}" if not value else f"{key}:")
            for name, item in value.items():
                if not isinstance(name, str) or not _KEY.fullmatch(name):
                    raise FrontmatterError(f"invalid frontmatter key {name!r}")
                lines.append(f"  {name}: {render_scalar(item)}")
        else:
            lines.append(f"{key}: {render_scalar(value)}")
    return "\n".join(lines)
