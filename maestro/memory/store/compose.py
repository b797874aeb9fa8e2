"""What a write does to the text before it is stored (spec memory.md §2.3 steps 2, 4–7). Pure.

Order: idle guard → (sanitizer, elsewhere) → stamp → key header (branch tag after the date, the
caller's summary, an `[id:]`) → summary → dedupe key. New tokens are written in the canonical
`[token] ` form, in grammar order, so what `compose` returns re-parses into the same header.
"""

import re

from maestro.memory.store import entry as grammar
from maestro.memory.store.entry import WS

IDLE_MAX_CHARS = 150
SUMMARY_AUTO_CHARS = 80
SUMMARY_MAX_CHARS = 120

# Idle words must be whole words ("no change", not "no changelog"; "idle", not "idleness"):
# the reference matched bare prefixes and so dropped informative entries that merely began alike.
_IDLE = re.compile(r"(?:idle|no changes?|awaiting|waiting)\b", re.ASCII | re.IGNORECASE)
_LEADING_TAG = re.compile(rf"\[[^\]\n\r\u2028\u2029]*\]{WS}*")
_SUMMARY_UNSAFE = re.compile(r"[\n\r\t\]]")
_WS_RUN = re.compile(f"{WS}+")
_TRAILING_SUMMARY = re.compile(rf"{WS}*\[summary:([^\]]*)\]\Z")
_ANY_SUMMARY = re.compile(rf"\[summary:[^\]]*\]{WS}*")
_LEADING_ID = re.compile(rf"\[id:{WS}*[0-9a-f]{{8}}\]{WS}*", re.ASCII | re.IGNORECASE)
BRANCH_NAME = re.compile(r"[^\s\[\],]+")


def is_idle(text: str) -> bool:
    """'Idle — no change' and the like carry no information: a short one is a no-op, not a write.

    The header tokens and one free leading `[tag]` are skipped first (the reference skipped just one
    leading tag, so a stamped "[id:…] [date] idle" slipped through)."""
    rest = grammar.split(grammar.trim(text)).body
    tag = _LEADING_TAG.match(rest)
    rest = grammar.trim(rest[tag.end():] if tag else rest)
    return len(rest) < IDLE_MAX_CHARS and bool(_IDLE.match(rest))


def stamp(text: str, now) -> str:
    """Prepend a local `[YYYY-MM-DD HH:MM] ` unless the text already opens with a date (or a daily
    `[HH:MM]`), an `[id:]` or a branch tag — real header tokens, not just their first characters."""
    parts = grammar.split(text)
    if parts.stamp or parts.id or parts.branch:
        return text
    return f"[{now:%Y-%m-%d %H:%M}] {text}"


def clean_summary(text: str) -> str:
    """`text` fit for a `[summary:…]`: through the sanitizer (again: joining lines must not make a
    secret), placeholders in their bracket-free form, one line, at most 120 characters, never cut
    inside a placeholder. Imported lazily: session-start's repair uses this module, not the sanitizer."""
    from maestro.memory.store.sanitize import bounded_summary, summary_text

    text = grammar.trim(_WS_RUN.sub(" ", _SUMMARY_UNSAFE.sub(" ", summary_text(text))))
    return bounded_summary(summary_text(text), SUMMARY_MAX_CHARS)


def auto_summary(entry: str, daily: bool = False) -> str:
    """The first body line, at most 80 characters (`…` when cut, never inside a placeholder), made
    safe for a tag."""
    from maestro.memory.store.sanitize import bounded_summary

    body = grammar.split(entry, daily).body
    first = clean_summary(grammar.trim(body.split("\n", 1)[0]))
    return bounded_summary(first, SUMMARY_AUTO_CHARS, "…")


def with_branches(entry: str, names) -> str:
    names = [name for name in names if name]
    if not names:
        return entry
    return grammar.with_parts(entry, branch=grammar.token("branch", ",".join(names)))


def with_summary(entry: str, text: str, daily: bool = False) -> str:
    text = clean_summary(text)
    if not text:
        return entry
    return grammar.with_parts(entry, daily, summary=grammar.token("summary", text))


def with_id(entry: str, new_id: str) -> str:
    if grammar.split(entry).id:
        return entry
    return f"[id:{new_id}] {entry}"


def ensure_summary(entry: str, daily: bool = False) -> str:
    """Give the entry a header `[summary:…]`: keep one, move a trailing one there, or derive one."""
    parts = grammar.split(entry, daily)
    if parts.summary:
        return entry
    trailing = _TRAILING_SUMMARY.search(parts.body)
    if trailing and grammar.trim(parts.body[: trailing.start()]):
        entry = grammar.render(parts._replace(body=grammar.trim(parts.body[: trailing.start()])))
        if clean_summary(trailing.group(1)):
            return with_summary(entry, trailing.group(1), daily)
    text = auto_summary(entry, daily)
    return with_summary(entry, text, daily) if text else entry


def compose(track: str, text: str, now, new_id: str, branches=(), summary=None) -> str:
    """The stored form of sanitized `text` added to `track`."""
    daily = track == "daily"
    out = stamp(text, now)
    if track == "key":
        out = with_branches(out, branches)
    if summary:
        out = with_summary(out, summary, daily)
    if track == "key":
        out = with_id(out, new_id)
    return ensure_summary(out, daily)


def replacement(old: str, text: str, summary=None, daily: bool = False) -> str:
    """The entry that replaces `old`: the old header (id, stamp, git, branch) unless `text` brings
    its own; the old `[id:]` is always kept; the summary describes the new body."""
    old_parts, new_parts = grammar.split(old, daily), grammar.split(text, daily)
    if new_parts.stamp or new_parts.id or new_parts.branch or new_parts.git:
        out = text if new_parts.id or not old_parts.id else f"{grammar.trim(old_parts.id)} {text}"
    else:
        out = grammar.render(grammar.Parts(id=old_parts.id, stamp=old_parts.stamp, git=old_parts.git,
                                           branch=old_parts.branch, dsh_only=old_parts.dsh_only, body=text))
    if summary:
        out = with_summary(out, summary, daily)
    return ensure_summary(out, daily)


def dedupe_key(entry: str) -> str:
    """The entry without its `[id:]` and every `[summary:…]`: what makes two entries the same."""
    text = _ANY_SUMMARY.sub("", entry)
    leading = _LEADING_ID.match(text)
    return grammar.trim(text[leading.end():] if leading else text)


def same_entry_key(entry: str) -> str:
    """What makes two entries the same for add and replace as for repair: `dedupe_key` with every
    run of whitespace one space (not `dedupe_key` itself: sync hashes that into entry keys)."""
    return grammar.squeeze(dedupe_key(entry))
