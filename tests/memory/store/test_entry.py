"""The entry grammar: round trips, the canonical form, header tokens, and a seeded fuzz."""

import datetime
import random

import pytest

from maestro.memory.store import compose
from maestro.memory.store import entry as grammar
from maestro.memory.store.entry import EntryError

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)

# ------------------------------------------------------------------------------- files


@pytest.mark.parametrize("entries,text", [
    ([], ""),
    (["a"], "a\n"),
    (["a", "b"], "a\n§\nb\n"),
    (["multi\nline", "§ not alone"], "multi\nline\n§\n§ not alone\n"),
])
def test_serialize_and_parse_round_trip(entries, text):
    assert grammar.serialize_entries(entries) == text
    assert grammar.parse_entries(text) == entries
    assert grammar.is_canonical(text)


@pytest.mark.parametrize("text,canonical", [
    ("", True), ("\n\n", True), (" \t\n", True),  # blank files are canonical (an empty store)
    ("a", False),  # no trailing newline
    ("a\n\n", False), (" a\n", False), ("a\r\n", False),
    ("a\n§\n\n§\nb\n", False),  # an empty entry between delimiters
    ("a\n§\nb", False), ("a \n§\nb\n", False),
    ("a\n§\nb\n", True), ("a\n§b\n", True),  # `§b` is not a delimiter line
])
def test_canonical_form(text, canonical):
    assert grammar.is_canonical(text) is canonical


def test_whitespace_is_javascripts():
    # dsh trims with String.prototype.trim: U+001C is content there, U+FEFF is whitespace.
    assert grammar.parse_entries("\x1ca\x1c\n") == ["\x1ca\x1c"]
    assert grammar.is_canonical("\x1ca\x1c\n")
    assert grammar.parse_entries("\ufeffa\u3000\n") == ["a"]
    assert not grammar.is_canonical("\ufeffa\n")


def test_decode_is_strict_utf8():
    assert grammar.parse_file("é\n§\nü\n".encode()) == ["é", "ü"]
    with pytest.raises(EntryError, match="not UTF-8"):
        grammar.decode(b"caf\xe9\n")


@pytest.mark.parametrize("entry,storable", [
    ("plain", True), ("§", True), ("§\nstarts with a lone §", True),
    ("a\n§\nb", False),  # would split into two entries
    ("ends with\n§", False),  # would swallow the next delimiter
    (" padded", False), ("", False), ("lone \ud800 surrogate", False),
])
def test_storable_entries_survive_any_neighbours(entry, storable):
    assert grammar.is_storable(entry) is storable
    if storable:
        entries = ["x", entry, "y", entry]
        assert grammar.parse_entries(grammar.serialize_entries(entries)) == entries


# ------------------------------------------------------------------------------ headers


def test_a_full_header_splits_into_its_tokens():
    text = "[id: ABCDEF12] [2024-08-06 21:30:05] [git abc123] [git def] [branch: main , dev ] [dsh-only] " \
           "[summary:s] body [branch:x]\nmore"
    parts = grammar.split(text)
    assert parts.head + parts.body == text
    assert (parts.entry_id, parts.stamp_text, parts.date) == ("abcdef12", "2024-08-06 21:30:05", "2024-08-06")
    assert parts.git == ("[git abc123] ", "[git def] ")
    assert parts.branches == ("main", "dev") and parts.dsh_only and parts.summary_text == "s"
    assert parts.body == "body [branch:x]\nmore"  # a tag in the body is not a header token


@pytest.mark.parametrize("text,field,value", [
    ("[ID:ABCDEF12] x", "entry_id", "abcdef12"),  # token names are case-insensitive (ASCII only)
    ("[\u0130D:ABCDEF12] x", "entry_id", None),
    ("[id:abcdef1] x", "entry_id", None),  # 7 hex digits
    ("[12:30] x", "stamp_text", "12:30"), ("[12:30] x", "date", None),
    ("[2024-01-01] x", "date", "2024-01-01"),
    ("[2024-01-01 7:05] x", "stamp_text", "2024-01-01 7:05"),
    ("[\u0662\u0660\u0662\u0664-01-01] x", "date", None),  # digits are ASCII
    ("[branch:] x", "branches", None),  # an empty scope is every branch
    ("[branch:x] [2024-01-01] body", "date", None),  # out of order: the date is body text
    ("[Summary:x] body", "summary_text", None),  # the summary tag is case-sensitive
    ("[summary:x]", "summary_text", "x"),
])
def test_header_token_rules(text, field, value):
    assert getattr(grammar.split(text), field) == value


def test_a_daily_entry_may_carry_one_free_tag():
    parts = grammar.split("[09:15] [summary:s] [deploy] [not-a-tag] shipped", daily=True)
    assert parts.tag == "[deploy] " and parts.body == "[not-a-tag] shipped"
    assert grammar.split("[09:15] [deploy] shipped").tag == ""


def test_render_writes_new_tokens_in_canonical_form():
    assert grammar.with_parts("[id:abcdef12][2024-01-01] body", summary="[summary:s] ") == \
        "[id:abcdef12] [2024-01-01] [summary:s] body"
    assert grammar.with_parts("[2024-01-01]", summary="[summary:s] ") == "[2024-01-01] [summary:s]"


# ------------------------------------------------------------------------------ the fuzz

SEED = 0x6D656D6F7279  # "memory"
FRAGMENTS = [
    "\n§\n", "§", "\n", "\r\n", " ", "\t", "\ufeff", "\x1c", "\u3000", "[", "]", "[id:", "abcdef12", "ABCDEF12",
    "[id: 0badc0de]", "[2024-05-01 10:07]", "[2024-05-01]", "[12:30]", "[git x]", "[branch:main,dev]", "[branch:",
    "[dsh-only]", "[summary:", "[summary:s]", "[Filtered:password]", "body", "é", "中文", "\U0001F600", "\ud800",
    "\x00", "idle", "password=", "hunter2", "-", ":", ",", "…",
]


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 24)))


def random_value(rng: random.Random):
    kind = rng.randint(0, 9)
    if kind == 0:
        return rng.choice([None, 0, 1.5, [], {}, b"x", object(), ["a", 1], ("a",), True])
    if kind == 1:
        return bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 40)))
    return random_text(rng)


PARSERS = [grammar.decode, grammar.parse_file, grammar.parse_entries, grammar.serialize_entries,
           grammar.is_canonical, grammar.is_storable, grammar.split, grammar.trim,
           lambda v: grammar.split(v, daily=True), grammar.entry_id, grammar.branches, grammar.summary]


def test_fuzz_the_parser_raises_nothing_but_its_own_error():
    rng = random.Random(SEED)
    for _ in range(4000):
        value = random_value(rng)
        for parse in PARSERS:
            try:
                parse(value)
            except EntryError:
                pass


def test_fuzz_parsed_files_are_canonical_and_storable_lists_round_trip():
    rng = random.Random(SEED + 1)
    for _ in range(3000):
        text = random_text(rng).replace("\ud800", "")
        entries = grammar.parse_entries(text)
        assert all(e and e == grammar.trim(e) and grammar.DELIMITER not in e for e in entries)
        serialized = grammar.serialize_entries(entries)
        if grammar.is_canonical(text):  # so reading a canonical file and writing it back is always safe
            assert all(grammar.is_storable(e) for e in entries)
        if all(grammar.is_storable(e) for e in entries):
            assert grammar.is_canonical(serialized)
        assert grammar.is_canonical(text) == (not grammar.trim(text) or serialized == text)
        storable = [e for e in entries if grammar.is_storable(e)]
        assert grammar.parse_entries(grammar.serialize_entries(storable)) == storable
        for daily in (False, True):
            parts = grammar.split(text, daily)
            assert parts.head + parts.body == text


def test_fuzz_composed_entries_are_storable_and_keep_their_header():
    rng = random.Random(SEED + 2)
    now = datetime.datetime(2024, 5, 1, 10, 7)
    for _ in range(3000):
        text = grammar.trim(random_text(rng).replace("\ud800", ""))
        if not grammar.is_storable(text):
            continue
        track = rng.choice(["memory", "key", "daily", "project"])
        branches = rng.choice([(), ("main",), ("main", "dev")])
        summary = rng.choice([None, "s", "a]b\nc", random_text(rng).replace("\ud800", "")])
        stored = compose.compose(track, text, now, "abcd1234", branches, summary)
        assert grammar.is_storable(stored), (text, stored)
        parts = grammar.split(stored, track == "daily")
        if track == "key":
            assert parts.entry_id is not None
            if branches:
                assert parts.branches == branches
        assert parts.stamp_text or parts.entry_id or parts.branch
        assert compose.dedupe_key(stored) == compose.dedupe_key(compose.ensure_summary(stored, track == "daily"))


class _Anything:
    def __contains__(self, character) -> bool:
        return True


def test_split_skips_only_patterns_that_cannot_match(monkeypatch):
    """split tries a token's pattern only when the text at that point opens like it (`[` and the letter
    or digit it names); with the check switched off (every pattern tried) every entry splits the same —
    over tokens in every case, look-alikes (İ ı K ［), whitespace and random bytes."""
    rng = random.Random(12)
    pieces = ["[id:0123abcd] ", "[ID:0123ABCD]", "[Id: 89abcdef]\t", "[id:0123abc]", "[2024-05-01] ", "[2024-05-01 9:30]",
              "[09:30:15] ", "[9:3]", "[git abc1234] ", "[GIT x]", "[git]", "[branch:main,dev] ", "[Branch:]", "[BRANCH:a]",
              "[dsh-only] ", "[DSH-ONLY]", "[summary:short] ", "[Summary:x]", "[tag] ", "[]", "[ ]", "[]]", "[[x]",
              "[İd:0123abcd]", "[ıd:0123abcd]", "[ǧit x]", "［id:0123abcd］", "\u00a0", " ", "\n", "body", "§", "[", "]"]
    entries = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 8))) for _ in range(4000)]
    entries += ["".join(chr(rng.choice((0x5b, 0x5d, 0x20, 0x69, 0x49, 0x30, 0x3a, rng.randint(0, 0x3000))))
                        for _ in range(rng.randint(0, 12))) for _ in range(2000)]
    guarded = [(grammar.split(entry), grammar.split(entry, daily=True)) for entry in entries]
    monkeypatch.setattr(grammar, "_OPENERS", {name: _Anything() for name in grammar._OPENERS})
    assert guarded == [(grammar.split(entry), grammar.split(entry, daily=True)) for entry in entries]
    assert sum(1 for parts, _daily in guarded if parts.head) > 1000  # the tokens were found, not all skipped
