"""Secrets never reach the store (spec memory.md §2.5, plus what the original misses). Pure.

This is the one sanitizer every write path uses (CLI, MCP, the suggestion queue, summaries,
codemaps, outcomes, handoffs, patterns): its table of shapes, in order, is
maestro/memory/store/sanitize_rules.py. Every match becomes `[Filtered:<label>]`; a text that is
nothing but secrets (only placeholders, whitespace and punctuation remain) yields None and the
write is refused.

Deliberate differences from the reference (each only ever filters *more* secrets or fewer words):
  - a `sk-` key must not be glued to a word ("task-management-system" is prose, not a key);
  - pair rules accept prefixed names (`DB_PASSWORD=`, `PGPASSWORD=`, `dbPassword`, `X-Api-Key:`),
    a quote after the name (`"password": "…"`), `=>`, a full-width colon, and a quoted value with spaces;
  - `Bearer` must start a word, and a plain word after it is prose ("Bearer authentication");
  - a value already replaced is not filtered twice (`api_key=sk-…` gives one placeholder);
  - `token:`/`secret:` followed by a plain word ("The secret: small modules") is prose: a `:` pair
    is filtered only when the value has a digit, is quoted, or is 20+ characters;
  - an 18-digit run is an ID number only when it holds a valid birth date, an 11-digit run is a
    phone number only when it is not a quantity.
A summary (`[summary:…]`) cannot hold a `]`, so a placeholder there is written `(Filtered:<label>)`,
and a summary is cut only between placeholders, never inside one (`bounded_summary`).
"""

import re

from maestro.memory.store.entry import WHITESPACE

PLACEHOLDER = re.compile(r"\[Filtered:[^\]\[]+\]")
SUMMARY_PLACEHOLDER = re.compile(r"\(Filtered:[^()\[\]]+\)")


_MEMO_CHARS = 4096  # texts up to this long are remembered: an add filters the same line up to 4 times
_MEMO_SIZE = 256
_memo = {}


def filter_text(text: str) -> str:
    """`text` with every secret replaced by its placeholder (for messages as well as entries).

    The table is imported here, not at module level: session-start's one-time repair imports the
    store API (and so this module) but never filters, and compiling the table costs ~15 ms.
    A pure function, so results are memoized: composing one entry filters its first line and its
    summary twice each (compose.clean_summary), which was most of `memory batch`'s time."""
    found = _memo.get(text)
    if found is not None:
        return found
    out = text
    lowered = None
    for anchors, sub, replacement in _table():
        if anchors is not None:
            ignore_case, literals = anchors
            if ignore_case:
                if lowered is None:
                    lowered = out.lower()
                haystack = lowered
            else:
                haystack = out
            if not any(map(haystack.__contains__, literals)):
                continue  # the pattern cannot match without one of them (sanitize_rules.ANCHORS)
        changed = sub(replacement, out)
        if changed is not out:
            out, lowered = changed, None
    if isinstance(text, str) and len(text) <= _MEMO_CHARS:
        if len(_memo) >= _MEMO_SIZE:
            _memo.clear()
        _memo[text] = out
    return out


_compiled = []


def _table() -> list:
    """(anchors, pattern.sub, replacement) of each rule, in order, built once per process."""
    if not _compiled:
        from maestro.memory.store.sanitize_rules import ANCHORS, RULES, placeholder

        for (label, pattern), anchors in zip(RULES, ANCHORS, strict=True):
            replacement = placeholder(label).replace("\\", "\\\\") if isinstance(label, str) else label
            _compiled.append((anchors, pattern.sub, replacement))
    return _compiled


def sanitize(text: str):
    """The filtered text, or None when nothing but secrets was given. Beyond the reference (only
    placeholders and whitespace left), punctuation left between secrets ("password=a, token=b")
    does not make the text worth storing either."""
    out = filter_text(text)
    residue = PLACEHOLDER.sub("", out)
    if not residue.strip(WHITESPACE) or (out != text and not any(ch.isalnum() for ch in residue)):
        return None
    return out


def summary_text(text: str) -> str:
    """`text` filtered, with each placeholder in the bracket-free form a `[summary:…]` can hold."""
    return PLACEHOLDER.sub(lambda m: "(" + m.group(0)[1:-1] + ")", filter_text(text))


def bounded_summary(text: str, limit: int, ellipsis: str = "") -> str:
    """`text` cut to at most `limit` characters (with `ellipsis` when cut), never inside a
    `(Filtered:…)` placeholder: one that does not fit is dropped whole."""
    if len(text) <= limit:
        return text
    cut = limit - len(ellipsis)
    for match in SUMMARY_PLACEHOLDER.finditer(text):
        if match.start() < cut < match.end():
            cut = match.start()
            break
    return text[:cut].rstrip(WHITESPACE) + ellipsis
