"""The entry grammar of a memory file (spec memory.md §2.2), byte-compatible with dsh-maestro-memory.

A file is its entries joined by `\\n§\\n` plus one trailing `\\n` (no entries: an empty file). Parsing
splits on the delimiter, trims each piece and drops the empty ones; a file is canonical when it
re-serialises to the same bytes (a blank file counts as canonical).

An entry opens with optional header tokens in a fixed order:
`[id:8hex] [YYYY-MM-DD[ HH:MM[:SS]]]|[HH:MM[:SS]] [git …]* [branch:a,b] [dsh-only] [summary:…]`,
and a daily entry may carry one free `[tag]` after them. `split` keeps every token's raw text, so
`split(e).head + split(e).body == e` always holds; `render` writes new tokens in the canonical
`[token] ` form.

"Whitespace" is JavaScript's (the reference implementation is TypeScript, and its `trim()`/`\\s`
decide what a canonical file is): Python's `str.strip()` would also strip U+001C–U+001F and U+0085
and keep U+FEFF, so a file dsh calls canonical could look drifted here, or the reverse. Digits are
ASCII and case-folding is ASCII-only for the same reason. Everything here is a pure function.
"""

import collections
import re

from maestro.memory.store.errors import StoreError

DELIMITER = "\n§\n"
WHITESPACE = ("\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
              "\u2028\u2029\u202f\u205f\u3000\ufeff")
WS = "[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"  # regex class of the above
_FLAGS = re.ASCII | re.IGNORECASE


class _AnyButClosing:
    """The free tag's second character: anything but `]` (and the end of the entry)."""

    def __contains__(self, character) -> bool:
        return character not in ("", "]")


class _Lazy:
    """A pattern compiled on first use: compiling them all at import costs session-start ~2 ms,
    and its snapshot rarely needs them."""

    __slots__ = ("_args", "_pattern")

    def __init__(self, *args):
        self._args, self._pattern = args, None

    def __getattr__(self, name):
        if self._pattern is None:
            self._pattern = re.compile(*self._args)
        return getattr(self._pattern, name)


_ID = _Lazy(rf"\[id:{WS}*([0-9a-f]{{8}})\]{WS}*", _FLAGS)
_STAMP = _Lazy(
    rf"\[([0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}(?: [0-9]{{1,2}}:[0-9]{{2}}(?::[0-9]{{2}})?)?"
    rf"|[0-9]{{1,2}}:[0-9]{{2}}(?::[0-9]{{2}})?)\]{WS}*")
_GIT = _Lazy(rf"\[git [^\]]+\]{WS}*", _FLAGS)
_BRANCH = _Lazy(rf"\[branch:([^\]]*)\]{WS}*", _FLAGS)
_DSH_ONLY = _Lazy(rf"\[dsh-only\]{WS}*", _FLAGS)
_SUMMARY = _Lazy(rf"\[summary:([^\]]*)\]{WS}*")  # case-sensitive, as in the reference
_FREE_TAG = _Lazy(rf"\[([^\]]+)\]{WS}*")
_DATE_PREFIX = _Lazy(r"\[?([0-9]{4}-[0-9]{2}-[0-9]{2})", re.ASCII)
_WS_RUN = _Lazy(f"{WS}+")
# What repair (maestro/memory/store/repair.py) reads as the end of one entry inside a piece: a line
# holding only `§` (give or take whitespace), or a line opening with an optional `[id:8hex]` and a
# `[YYYY-MM-DD…]` stamp. `add` refuses text holding either after its first line, so an entry it
# stores is one entry to repair too.
_STRAY = _Lazy(rf"{WS}*§{WS}*")
_ENTRY_START = _Lazy(rf"(?:\[id:{WS}*[0-9a-f]{{8}}\]{WS}*)?\[[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}[^\]\n]*\]", _FLAGS)


class EntryError(StoreError):
    """Input the grammar cannot read: not text, or not UTF-8."""

    def __init__(self, message: str):
        super().__init__(message, "malformed")


def _text(value) -> str:
    if not isinstance(value, str):
        raise EntryError(f"expected text, got {type(value).__name__}")
    return value


def trim(text: str) -> str:
    return _text(text).strip(WHITESPACE)


# --- files -----------------------------------------------------------------------------------


def decode(data) -> str:
    """File bytes → text. Strict UTF-8: a file that is not UTF-8 is not silently rewritten."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise EntryError(f"expected bytes, got {type(data).__name__}")
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EntryError(f"not UTF-8 (byte {exc.start})") from None


def parse_entries(text: str) -> list:
    pieces = (trim(piece) for piece in _text(text).split(DELIMITER))
    return [piece for piece in pieces if piece]


def parse_file(data) -> list:
    return parse_entries(decode(data))


def serialize_entries(entries) -> str:
    if isinstance(entries, (str, bytes, bytearray)):
        raise EntryError("expected a list of entries, got text")
    try:
        entries = list(entries)
    except TypeError:
        raise EntryError(f"expected a list of entries, got {type(entries).__name__}") from None
    for entry in entries:
        _text(entry)
    return DELIMITER.join(entries) + "\n" if entries else ""


def is_stray_delimiter(line: str) -> bool:
    """A line holding only `§`, give or take whitespace: repair ends an entry there."""
    return _STRAY.fullmatch(line) is not None


def opens_entry(line: str) -> bool:
    """A line opening with an optional `[id:8hex]` and a `[YYYY-MM-DD…]` stamp: after an entry's
    first line, repair starts a new entry there (a date in the middle of a line does not)."""
    return _ENTRY_START.match(line) is not None


def entry_break(text: str):
    """(1-based line number, why) of the first line after the first that repair would cut `text`
    at, or None: what makes one stored entry read back as two."""
    for number, line in enumerate(_text(text).split("\n")[1:], start=2):
        if is_stray_delimiter(line):
            return number, "holds only § (the entry delimiter)"
        if opens_entry(line):
            return number, "opens with a [YYYY-MM-DD] stamp (the start of an entry)"
    return None


def squeeze(text: str) -> str:
    """Every run of whitespace as one space: two entries that differ only there are the same."""
    return _WS_RUN.sub(" ", _text(text))


def is_canonical(text: str) -> bool:
    text = _text(text)
    return not trim(text) or serialize_entries(parse_entries(text)) == text


def is_storable(entry: str) -> bool:
    """Whether `entry`, placed between any neighbours, parses back as exactly itself."""
    entry = _text(entry)
    return (bool(entry) and entry == trim(entry) and DELIMITER not in entry
            and not entry.endswith("\n§") and _encodable(entry))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates, e.g. from undecodable argv bytes
        return False
    return True


# --- one entry's header ----------------------------------------------------------------------


class Parts(collections.namedtuple("Parts", "id stamp git branch dsh_only summary tag body",
                                    defaults=("", "", (), "", "", "", "", ""))):
    """An entry split into raw header tokens (each with its trailing whitespace) and the body;
    `tag` is for daily entries only. (A namedtuple: importing `dataclasses` costs the
    session-start hook milliseconds.)"""

    __slots__ = ()

    @property
    def head(self) -> str:
        return "".join((self.id, self.stamp, *self.git, self.branch, self.dsh_only, self.summary, self.tag))

    @property
    def entry_id(self):
        match = _ID.match(self.id)
        return match.group(1).lower() if match else None

    @property
    def stamp_text(self):
        match = _STAMP.match(self.stamp)
        return match.group(1) if match else None

    @property
    def branches(self):
        """The branch scope, or None: no tag (or an empty one) means every branch."""
        match = _BRANCH.match(self.branch)
        if not match:
            return None
        names = tuple(name for name in (trim(part) for part in match.group(1).split(",")) if name)
        return names or None

    @property
    def summary_text(self):
        match = _SUMMARY.match(self.summary)
        return match.group(1) if match else None

    @property
    def date(self):
        """YYYY-MM-DD of the stamp, or None (an undated entry, or a daily `[HH:MM]`)."""
        match = _DATE_PREFIX.match(self.stamp)
        return match.group(1) if match else None


# The characters that may follow a token's `[` (each pattern's second character, either case where it is
# case-insensitive, ASCII only as its flags say).
_OPENERS = {"id": ("i", "I"), "stamp": tuple("0123456789"), "git": ("g", "G"), "branch": ("b", "B"),
            "dsh_only": ("d", "D"), "summary": ("s",), "tag": _AnyButClosing()}


def split(entry: str, daily: bool = False) -> Parts:
    entry = _text(entry)
    fields, pos = {}, 0

    def take(name, pattern):
        nonlocal pos
        # Every token opens with `[` and a letter or digit its pattern names (_OPENERS): a body that does not
        # cannot match, so its pattern is not even compiled (session-start splits entries on every start).
        if entry[pos:pos + 1] != "[" or entry[pos + 1:pos + 2] not in _OPENERS[name]:
            return None
        match = pattern.match(entry, pos)
        if match:
            fields[name] = match.group(0)
            pos = match.end()
        return match

    take("id", _ID)
    take("stamp", _STAMP)
    gits = []
    while take("git", _GIT):
        gits.append(fields.pop("git"))
    take("branch", _BRANCH)
    take("dsh_only", _DSH_ONLY)
    take("summary", _SUMMARY)
    if daily:
        take("tag", _FREE_TAG)
    return Parts(git=tuple(gits), body=entry[pos:], **fields)


def render(parts: Parts) -> str:
    """Join tokens and body, giving every token that is followed by something a separating space."""
    out = []
    for piece in (parts.id, parts.stamp, *parts.git, parts.branch, parts.dsh_only, parts.summary, parts.tag,
                  parts.body):
        if not piece:
            continue
        if out and out[-1][-1] not in WHITESPACE:
            out.append(" ")
        out.append(piece)
    return trim("".join(out))


def token(name: str, value: str) -> str:
    return f"[{name}:{value}] "


def with_parts(entry: str, daily: bool = False, **changes) -> str:
    return render(split(entry, daily)._replace(**changes))


def entry_id(entry: str):
    return split(entry).entry_id


def summary(entry: str):
    return split(entry).summary_text


def branches(entry: str):
    return split(entry).branches
