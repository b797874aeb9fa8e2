"""The bounded snapshot: what a session is told from the store at its start (spec memory.md §2.6). Pure.

`render(root, project=…, branch=…)` reads the track files and returns the text plus one stats row
per section; it never writes anything (dsh appended a session entry to an empty USER.md while
rendering — that write is dropped here).

Order (§2.6; Global before User, as the reference code does):
    # Session              sessionId / sessionName, when given (one bounded line; no stats cap)
    # Global Memory        MEMORY.md                      2048 B, newest 8
    # User Memory          USER.md                        4096 B, newest 8
    # Project Key Memory   projects/<h>/KEY.md            6144 B, newest 12, branch-filtered; project only
    # Project Context      projects/<h>/MEMORY.md         1024 B, 4: the newest + the most relevant to `focus`
                           (relevance.py), each cut to 600 chars; project only
    # Project Knowledge    projects/<h>/REFERENCE.md      its first 2048 chars; project only
    # Recent Daily         yesterday's last, then today's 512 B, at most 2
    # ⚠️ Memory Write Backlog  a fixed text while session_id's write-guard state says alert
                           (maestro/memory/store/write_guard.py; never the count; no stats row, like the note)
    the discipline note    always last, exactly once; no stats row

fitSection (§2.6): the newest entry is always kept — over the cap with a `[summary:…]` it is
compacted to its header tokens; untagged and over 2×cap it is cut to 2×cap bytes on a UTF-8
boundary, `…[truncated]` included. Each older entry costs its UTF-8 bytes + 5 (the `\\n---\\n`
separator); the walk stops at the first one that does not fit or at the entry budget, so the kept
entries are the newest, contiguous, and shown in file order. Runs of `{`/`}` collapse to one
(per entry, before fitting, so the stats are the bytes shown).

Choices where §2.6 is silent:
- A section with no entries is left out (and has `entries` 0 in its stats row); a store with no
  entries at all renders `empty` — the note alone (session-start then prints nothing).
- `bytes` counts a section's body (entries and separators), not its `# Title` line.
- A compacted entry whose summary is itself over 2×cap is cut like an untagged one.
- Project Context: an entry over 600 characters is cut to 599 + `…` and counts as `truncated`.
- Project Knowledge: the file's trimmed text, cut to 2048 characters (`…[truncated]` within them).
- Key with no branch known (no git, detached HEAD): every entry shows, as `memory list key` does.
- Daily: "yesterday" and "today" are local dates; a day with no file contributes nothing; its
  `dropped` counts only those two candidates, not the rest of the day's entries.
- A file that is not UTF-8 is shown with U+FFFD for each undecodable byte (as `memory list`
  does) and named in one `# ⚠️ Damaged Memory File` line before the note, with the command that
  fixes it; one bad byte never hides the rest of the store.
- `max_chars`: counted in UTF-16 code units, as Claude Code counts its 10,000-character cap (an
  emoji outside the BMP is 2). When the caps add up to more than the caller can take, every cap is
  scaled down and the sections re-fitted; as a last resort the text is cut before the note (`clipped`).
"""

import re
import time

from maestro.memory.store import entry as grammar
from maestro.memory.store import relevance
from maestro.memory.store.tail import read_text, tail_entries
from maestro.util.text import utf16_cut, utf16_len

SEPARATOR = "\n---\n"
SEPARATOR_BYTES = len(SEPARATOR.encode())
TRUNCATED = "…[truncated]"
CONTEXT_ENTRY_CHARS = 600
SESSION_VALUE_CHARS = 100

# key: (title, cap in bytes (reference: characters), entry budget)
SECTIONS = {
    "memory": ("# Global Memory", 2048, 8),
    "user": ("# User Memory", 4096, 8),
    "key": ("# Project Key Memory", 6144, 12),
    "autoRecall": ("# Project Context", 1024, 4),
    "reference": ("# Project Knowledge", 2048, 1),
    "recentDaily": ("# Recent Daily", 512, 2),
}
PROJECT_SECTIONS = ("key", "autoRecall", "reference")

DAMAGED_TITLE = "# ⚠️ Damaged Memory File"
BACKLOG_TITLE = "# ⚠️ Memory Write Backlog"
BACKLOG_TEXT = (
    "Several tool-using turns have passed without a daily or project memory entry. Record what was "
    "learned now (maestro memory add daily …, or add project … for this project's timeline)."
)

NOTE = (
    "Memory discipline: add a daily entry only for a turn with real progress, never idle filler "
    "(maestro memory add daily …); put decisions through memory_suggest target=key with a reason rather "
    "than writing them directly; check memory_todo when it is relevant (at most 8 items)."
)

_BRACES = None  # r"\{\{+|\}\}+", compiled on first use: most entries hold no doubled brace


class SectionStats:
    """One section's stats row (§2.6): cap None is the session line, bounded by construction.
    (Plain classes, not dataclasses: building a dataclass costs the hook a millisecond each.)"""

    FIELDS = ("key", "title", "cap", "budget", "bytes", "entries", "dropped", "truncated")
    __slots__ = FIELDS

    def __init__(self, key, title, cap=None, budget=None, bytes=0, entries=0, dropped=0, truncated=0):
        self.key, self.title, self.cap, self.budget = key, title, cap, budget
        self.bytes, self.entries, self.dropped, self.truncated = bytes, entries, dropped, truncated

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.FIELDS}


class Snapshot:
    __slots__ = ("text", "sections", "empty", "clipped", "scale", "damaged", "shown")

    def __init__(self, text, sections, empty=True, clipped=False, scale=1.0, damaged=(), shown=()):
        self.text, self.sections, self.empty, self.clipped, self.scale = text, sections, empty, clipped, scale
        self.damaged = damaged  # ((path, why), …): files shown with U+FFFD
        self.shown = shown  # ((section key, entry as shown), …): what inject's recall must not repeat

    @property
    def total_bytes(self) -> int:
        return len(self.text.encode("utf-8"))

    def as_dict(self) -> dict:
        return {"totalBytes": self.total_bytes, "totalChars": len(self.text), "totalUtf16": utf16_len(self.text),
                "empty": self.empty, "clipped": self.clipped, "scale": self.scale,
                "damaged": [{"file": path, "why": why} for path, why in self.damaged],
                "sections": [s.as_dict() for s in self.sections]}


# --- pure pieces -----------------------------------------------------------------------------


def collapse_braces(text: str) -> str:
    global _BRACES
    if "{{" not in text and "}}" not in text:
        return text
    if _BRACES is None:
        _BRACES = re.compile(r"\{\{+|\}\}+")
    return _BRACES.sub(lambda m: m.group(0)[0], text)


def has_branch_tag(entry: str) -> bool:
    """Whether `[branch:` appears in `entry` in any ASCII case (the pattern `\\[branch:` with IGNORECASE
    and ASCII), without a pattern: no character but ASCII ones lowercases to a letter of it (only İ and
    the Kelvin sign lowercase to ASCII at all, to i and k; a test checks every character)."""
    return "[branch:" in entry.lower()


def utf8_cut(text: str, limit: int) -> str:
    """The longest prefix of `text` whose UTF-8 encoding is at most `limit` bytes."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:max(limit, 0)].decode("utf-8", "ignore")


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def truncate(text: str, limit: int) -> str:
    """Cut to at most `limit` bytes, the marker included (the marker alone if nothing else fits)."""
    room = limit - _size(TRUNCATED)
    return grammar.trim(utf8_cut(text, room)) + TRUNCATED if room > 0 else TRUNCATED


def compact(entry: str, daily: bool = False):
    """Header tokens + `[summary:…]` without the body, or None for an entry with no summary tag."""
    parts = grammar.split(entry, daily)
    if not parts.summary:
        return None
    return grammar.trim(parts.head)


def fit(entries, cap: int, budget: int, daily: bool = False):
    """fitSection: (kept entries in file order, dropped, truncated). `entries` are in file order."""
    if not entries or budget < 1:
        return [], len(entries), 0
    newest, truncated = entries[-1], 0
    if _size(newest) > cap:
        compacted = compact(newest, daily)
        if compacted is not None:
            newest = compacted
        if _size(newest) > 2 * cap:
            newest, truncated = truncate(newest, 2 * cap), 1
    kept, used = [newest], _size(newest)
    for older in reversed(entries[:-1]):
        if len(kept) >= budget:
            break
        cost = _size(older) + SEPARATOR_BYTES
        if used + cost > cap:
            break
        kept.append(older)
        used += cost
    kept.reverse()
    return kept, len(entries) - len(kept), truncated


def _shown(value, limit: int = SESSION_VALUE_CHARS) -> str:
    text = "".join(ch if ch.isprintable() else "?" for ch in str(value))
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- reading -------------------------------------------------------------------------------


class Sources:
    """Each section's candidate entries in file order (newest brace-collapsed), read once per render."""

    __slots__ = ("memory", "user", "key", "autoRecall", "reference", "recentDaily", "project_total", "sliced",
                 "damaged")

    def __init__(self, memory, user, key, autoRecall, reference, recentDaily, project_total=0,  # noqa: N803
                 sliced=frozenset(), damaged=()):
        self.memory, self.user, self.key, self.autoRecall = memory, user, key, autoRecall
        self.reference, self.recentDaily = reference, recentDaily
        self.project_total = project_total  # project entries before the newest-4 cut
        self.sliced = sliced  # autoRecall entries cut to 600 characters
        self.damaged = damaged  # ((path, why), …) of the files that are not UTF-8


def _day_text(today) -> str:
    """'YYYY-MM-DD' of `today`: a date (anything with isoformat), such a string, or None for the local
    date (time, not datetime: session-start would pay ~2 ms to import it for two file names)."""
    if today is None:
        return time.strftime("%Y-%m-%d")
    return today if isinstance(today, str) else today.isoformat()


def read_sources(root: str, project: str = None, branch: str = None, today=None,
                 focus: str = "", count_dropped: bool = True) -> Sources:
    from maestro.memory.store import layout
    from maestro.util import days

    lay = layout.Layout(root)
    today = _day_text(today)
    damaged = []

    def entries_of(path):
        return grammar.parse_entries(read_text(path, damaged))

    def track(name, keep, branch=None):
        """(the newest `keep` entries `branch` may see (the most a section can show), brace-collapsed, in
        file order; how many visible entries come before them). Only the file's tail is parsed (see
        `tail_entries`): at 20,000 entries, splitting and trimming every entry was most of session-start."""
        def visible(entries):
            if not branch:
                return entries
            # the screen keeps a big store fast; only a hit is parsed
            return [e for e in entries if not has_branch_tag(e) or branch in (grammar.branches(e) or (branch,))]

        entries, before = tail_entries(lay.target(name, project).path, keep, damaged, visible, count_dropped)
        return [collapse_braces(e) for e in entries], before

    key, recall, reference, total, sliced = [], [], "", 0, set()
    if project:
        key, key_before = track("key", SECTIONS["key"][2], branch)
        key = [""] * key_before + key  # placeholders: only the newest are ever fitted; fit counts the rest as dropped
        shown = SECTIONS["autoRecall"][2]
        timeline, before = track("project", relevance.WINDOW if focus else shown)
        total = before + len(timeline)
        for e in relevance.choose(timeline, focus, shown):  # the newest, and the ones the focus names
            if len(e) > CONTEXT_ENTRY_CHARS:
                e = e[: CONTEXT_ENTRY_CHARS - 1] + "…"
                sliced.add(e)
            recall.append(e)
        reference = collapse_braces(grammar.trim(read_text(lay.target("reference", project).path, damaged)))
    daily = []
    for day in (days.day(days.ordinal(today) - 1), today):
        entries = entries_of(lay.target("daily", date=day).path)
        if entries:
            daily.append(collapse_braces(entries[-1]))
    (memory, memory_before), (user, user_before) = track("memory", SECTIONS["memory"][2]), track("user", SECTIONS["user"][2])
    memory, user = [""] * memory_before + memory, [""] * user_before + user
    return Sources(memory, user, key, recall, reference, daily, total, frozenset(sliced), tuple(damaged))


# --- rendering -----------------------------------------------------------------------------


def _section(key: str, sources: Sources, cap: int, budget: int):
    """(stats, body or '', the entries shown)."""
    title = SECTIONS[key][0]
    stats = SectionStats(key, title, cap, budget)
    if key == "reference":
        text = sources.reference
        if not text:
            return stats, "", []
        if len(text) > cap:
            room = cap - len(TRUNCATED)
            text = (grammar.trim(text[:room]) + TRUNCATED) if room > 0 else TRUNCATED
            stats.truncated = 1
        stats.entries, stats.bytes = 1, _size(text)
        return stats, text, grammar.parse_entries(text)
    entries = getattr(sources, key)
    kept, dropped, truncated = fit(entries, cap, budget, daily=key == "recentDaily")
    if key == "autoRecall":
        dropped += sources.project_total - len(entries)
        truncated += sum(1 for e in kept if e in sources.sliced)
    body = SEPARATOR.join(kept)
    stats.entries, stats.dropped, stats.truncated, stats.bytes = len(kept), dropped, truncated, _size(body)
    return stats, body, kept


def compose(sources: Sources, project: bool, session_id=None, session_name=None, caps=None,
            scale: float = 1.0, backlog: bool = False) -> Snapshot:
    caps = dict(caps or {})
    blocks, rows = [], []
    if session_id or session_name:
        line = " | ".join(f"{name}: {_shown(value)}" for name, value in
                          (("sessionId", session_id), ("sessionName", session_name)) if value)
        blocks.append("# Session\n" + line)
        rows.append(SectionStats("session", "# Session", bytes=_size(line), entries=1))
    empty, shown = True, []
    for key, (title, cap, budget) in SECTIONS.items():
        if key in PROJECT_SECTIONS and not project:
            continue
        cap = max(int(caps.get(key, cap) * scale), 0)
        stats, body, kept = _section(key, sources, cap, budget)
        rows.append(stats)
        if body:
            empty = False
            blocks.append(f"{title}\n{body}")
            shown += [(key, entry) for entry in kept]
    text = collapse_braces("\n\n".join(blocks)) + tail(sources.damaged, backlog)
    text = text if blocks else text[2:]  # no section: the tail alone, without its leading blank line
    return Snapshot(text, rows, empty and not sources.damaged, scale=scale, damaged=sources.damaged,
                    shown=tuple(shown))


def tail(damaged, backlog: bool) -> str:
    """What always ends the text, never clipped: the damaged-file lines, the backlog, the note."""
    blocks = []
    if damaged:
        from maestro.messages import MEMORY_REPAIR  # only now: the hook does not import it otherwise

        blocks.append(DAMAGED_TITLE + "".join(
            f"\n{_shown(path, 300)} is {why}: shown with U+FFFD for the bad bytes; fix it with {MEMORY_REPAIR}"
            for path, why in damaged))
    if backlog:
        blocks.append(f"{BACKLOG_TITLE}\n{BACKLOG_TEXT}")
    return collapse_braces("".join(f"\n\n{block}" for block in blocks + [NOTE])) + "\n"


def render(root: str, project: str = None, branch: str = None, session_id=None, session_name=None,
           today=None, caps=None, max_chars: int = None, focus: str = "",
           count_dropped: bool = True) -> Snapshot:
    """The snapshot of the store at `root` for the project root `project` (None: no project sections)
    and `branch` (None: no branch filter). `caps` overrides section caps by key; `max_chars` bounds
    the whole text (UTF-16 code units), scaling every cap down when needed. With a `session_id` whose
    write-guard state says alert, the fixed backlog section comes just before the note. `focus` (what
    the session is about: branch, open tasks, their files) picks the Project Context entries with the
    newest (relevance.py); without it they are the newest. `count_dropped` False leaves the older entries
    of a big file uncounted in the stats' `dropped` (tail.py; the hook records bytes only)."""
    branch = branch if branch and branch != "HEAD" else None
    sources = read_sources(root, project, branch, today, focus, count_dropped)
    backlog = False
    if session_id is not None:
        from maestro.memory.store import write_guard as guard

        backlog = guard.alert_due(root, session_id)
    snap = compose(sources, bool(project), session_id, session_name, caps, backlog=backlog)
    if max_chars is None or utf16_len(snap.text) <= max_chars:
        return snap
    scale = 1.0
    for _ in range(6):
        scale *= max(max_chars / utf16_len(snap.text), 0.05) * 0.9
        snap = compose(sources, bool(project), session_id, session_name, caps, scale, backlog)
        if utf16_len(snap.text) <= max_chars:
            return snap
    end = tail(sources.damaged, backlog)
    room = max_chars - utf16_len(end) - utf16_len(TRUNCATED)
    if room <= 0:
        snap.text, snap.clipped = "", True
        return snap
    head = utf16_cut(snap.text[: max(len(snap.text) - len(end), 0)], room)
    snap.text, snap.clipped = head + TRUNCATED + end, True
    return snap
