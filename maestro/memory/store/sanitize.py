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


def filter_text(text: str) -> str:
    """`text` with every secret replaced by its placeholder (for messages as well as entries).

    The table is imported here, not at module level: session-start's one-time repair imports the
    store API (and so this module) but never filters, and compiling the table costs ~15 ms."""
    from maestro.memory.store.sanitize_rules import RULES, placeholder

    for label, pattern in RULES:
        replacement = (lambda _m, _l=label: placeholder(_l)) if isinstance(label, str) else label
        text = pattern.sub(replacement, text)
    return text


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
