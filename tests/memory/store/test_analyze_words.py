"""The analyzer splits ASCII text without `re` (a translate table and str.split): the words must be the
ones its pattern finds, for every ASCII character and any mix of them; other text still uses the pattern."""

import random
import re

import pytest

from maestro.memory.store import analyze

pytestmark = pytest.mark.in_process

PATTERN = re.compile(analyze.WORD_PATTERN)


def test_every_ascii_character_splits_as_the_pattern_does():
    for code in range(128):
        text = f"ab{chr(code)}cd {chr(code)}x{chr(code)}"
        assert analyze.word_runs(text) == PATTERN.findall(text), repr(chr(code))


def test_random_ascii_text_splits_as_the_pattern_does():
    rng = random.Random(5)
    alphabet = [chr(code) for code in range(128)]
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        assert analyze.word_runs(text) == PATTERN.findall(text)


def test_text_beyond_ascii_keeps_the_pattern():
    text = "naïve_café ДОМ-дом ١٢٣ x²y 東京 snake_case"
    assert analyze.word_runs(text) == PATTERN.findall(text) == ["naïve", "café", "ДОМ", "дом", "١٢٣", "x²y", "東京",
                                                             "snake", "case"]
