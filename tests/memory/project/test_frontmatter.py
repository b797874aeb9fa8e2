"""The codemap frontmatter's YAML subset: what the parser reads, and that whatever the renderer
writes reads back exactly (seeded property tests over hostile strings)."""

import random

import pytest

from maestro.memory.project import frontmatter as fm

# One list: a second `pytestmark =` would replace the first, and the archive run would repeat this module.
pytestmark = [pytest.mark.in_process, pytest.mark.timeout(60)]  # never runs the archive (tests/testing/in_process.py)

ALPHABET = ("abcXYZ019 _-./:#\"'\\[]{},&*!|>%@`?~=+\t\r\n\x00\x1f\x7f\x85\u00a0\u2028\u3000"
            "éß漢字🙂\U0001f600")
TRICKY = ["", " ", "#", " #", "a #b", "a#b", "\"", "'", "'a'", "\"a\"", "a: b", "a:", ":", "- x", "-", "[a, b]", "[]",
          "{}", "{a: 1}", "true", "False", "null", "~", "None", "1", "-2", "+3", "1.5", ".5", "1e5", "0x10", "nan",
          "inf", " lead", "trail ", "two\nlines", "cr\r", "---", "a\n---\nb", "\\", "\\n", "\u2028", "é", "🙂 ok",
          "key: value # c", "'it''s'", "http://x.y/z?a=1#frag"]


def random_string(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12)))


def round_trip(meta: dict) -> dict:
    return fm.parse(fm.render(meta))


@pytest.mark.parametrize("value", TRICKY)
def test_a_tricky_string_survives_render_and_parse(value):
    assert round_trip({"v": value}) == {"v": value}


def test_random_strings_and_lists_of_them_survive_render_and_parse():
    rng = random.Random(20240501)
    for _ in range(3000):
        scalar, items = random_string(rng), [random_string(rng) for _ in range(rng.randint(1, 5))]
        meta = {"a": scalar, "source_paths": items, "nested": {"k": random_string(rng)}}
        assert round_trip(meta) == meta, fm.render(meta)


def test_rendered_frontmatter_never_contains_a_closing_line_or_a_raw_newline_in_a_value():
    rng = random.Random(7)
    for _ in range(500):
        text = fm.render({"a": random_string(rng), "b": [random_string(rng)]})
        assert "\n---" not in text and "\r" not in text
        assert all(line.startswith(("a: ", "b:", "  - ")) for line in text.split("\n"))


def test_non_string_scalars_keep_their_types():
    meta = {"t": True, "f": False, "n": None, "i": 42, "neg": -7, "x": 1.25, "big": 1e100, "empty": [], "m": {}}
    assert round_trip(meta) == meta
    assert type(round_trip({"i": 1})["i"]) is int and type(round_trip({"x": 2.0})["x"]) is float


def test_strings_that_look_like_other_types_are_quoted():
    assert fm.render({"a": "true", "b": "12", "c": "", "d": "null"}) == 'a: "true"\nb: "12"\nc: ""\nd: "null"'


def test_plain_strings_stay_plain():
    assert fm.render({"p": "src/a.py", "c": "medium", "t": "2024-05-01T10:07:00Z"}) == \
        "p: src/a.py\nc: medium\nt: 2024-05-01T10:07:00Z"


def test_the_parser_reads_the_spec_subset():
    text = ("\nsource_paths: [src/a.py, \"b c.py\"]  # two\nflag: TRUE\nnothing: ~\nratio: 0.5\ncount: 3\n"
            "version: 1e5\nquoted: 'it''s # here'\nraw: a b # comment\nblock:\n  - x\n- y\nmap:\n  k: v\n  n: 1\n"
            "# a comment line\nempty:\n")
    assert fm.parse(text) == {"source_paths": ["src/a.py", "b c.py"], "flag": True, "nothing": None, "ratio": 0.5,
                              "count": 3, "version": "1e5", "quoted": "it's # here", "raw": "a b",
                              "block": ["x", "y"], "map": {"k": "v", "n": 1}, "empty": None}


def test_split_keeps_the_tail_byte_for_byte():
    text = "---\na: 1\n---\n\n# Body\r\n---\nmore ---\n"
    head, tail = fm.split(text)
    assert head == "\na: 1" and tail == "\n---\n\n# Body\r\n---\nmore ---\n"
    assert fm.split("no frontmatter\n") is None and fm.split("---\na: 1\n") is None


@pytest.mark.parametrize("text", ["just words", "- orphan item", "  nested: outside", "bad key!: 1"])
def test_lines_outside_the_subset_are_rejected(text):
    with pytest.raises(fm.FrontmatterError):
        fm.parse(text)


def test_an_all_digit_short_sha_with_a_leading_zero_stays_a_string():
    assert fm.parse("verified_commit: 0123456\nn: 10\n") == {"verified_commit": "0123456", "n": 10}
    assert fm.render({"v": "0123456"}) == "v: 0123456"


def test_key_order_is_kept_and_new_keys_append():
    meta = fm.parse("z: 1\na: 2\n")
    meta["m"] = "new"
    assert fm.render(meta) == "z: 1\na: 2\nm: new"


@pytest.mark.parametrize("raw", ["1.0e400", "-1.0e400", "1.0e-400", "1.50", "1.00000000000000000001"])
def test_a_float_whose_text_would_change_stays_its_raw_text(raw):
    assert fm.parse(f"x: {raw}\n") == {"x": raw}
    assert fm.render(fm.parse(f"x: {raw}\n")) == f"x: {raw}"


def test_floats_in_the_written_form_stay_floats():
    assert fm.parse("a: 0.5\nb: 1.0\nc: -2.25\n") == {"a": 0.5, "b": 1.0, "c": -2.25}
    for value in (float("inf"), float("nan")):
        with pytest.raises(fm.FrontmatterError):
            fm.render({"x": value})
