"""maestro/util/text.py: the one text-shortening family. Each variant keeps the exact bytes of the
copies it replaced (result lines, handoff lines, MCP messages, previews)."""

import pytest

from maestro.util.text import ELLIPSIS, bounded, first_line, one_line, printable, squeeze, tail_lines

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)


def test_printable_replaces_controls_and_line_breaks():
    assert printable("") == ""
    assert printable("a\tb\nc\x1b[31md\x7f") == "a?b?c?[31md?"
    assert printable("é ünïcode ✓") == "é ünïcode ✓"
    assert printable("a\x00b", replacement="") == "ab"


def test_squeeze_folds_every_whitespace_run():
    assert squeeze("") == ""
    assert squeeze("  a \t b\n\n c  ") == "a b c"


def test_bounded_counts_the_marker_inside_the_limit():
    assert bounded("", 5) == ""
    assert bounded("abcde", 5) == "abcde"  # exactly at the limit: untouched
    assert bounded("abcdef", 5) == "abcd" + ELLIPSIS
    assert len(bounded("x" * 100, 10)) == 10
    assert bounded("a" * 81, 80, "...") == "a" * 77 + "..."


def test_first_line_shows_the_first_line_and_marks_what_was_dropped():
    assert first_line("") == ""
    assert first_line("short") == "short"
    assert first_line("x" * 200) == "x" * 200  # exactly at the limit: no marker
    assert first_line("x" * 201) == "x" * 200 + "…"  # the marker follows the limit
    assert first_line("one\ntwo") == "one…"  # more lines: marked even when short
    assert first_line("one\n") == "one…"
    assert first_line("a\tb\x1bc", 10) == "a?b?c"
    assert first_line("abcdef", 3) == "abc…"


def test_one_line_folds_whitespace_and_stays_within_the_limit():
    assert one_line(None, 10) == ""
    assert one_line("", 10) == ""
    assert one_line(42, 10) == "42"
    assert one_line("a\n  b\tc", 10) == "a b c"
    assert one_line("abcdefghij", 10) == "abcdefghij"  # exactly at the limit
    assert one_line("abcdefghijk", 10) == "abcdefghi…"
    assert one_line("a\x1bb", 10) == "a?b"  # whitespace first, then the rest made printable


def test_tail_lines_keeps_the_last_lines():
    assert tail_lines("", 3) == ""
    assert tail_lines("  \n\n", 3) == ""
    assert tail_lines("a\nb\nc\n", 2) == "b\nc"
    assert tail_lines("a\nb", 5) == "a\nb"
    assert tail_lines("a\n\nb\n\n", 3) == "a\n\nb"
