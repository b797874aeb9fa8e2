"""The sanitizer's pre-checks (sanitize_rules.ANCHORS) only skip rules that could not match: every match
of every rule, on the table of realistic secrets and look-alikes (tests/testing/secrets.py) mixed with
prose, holds one of its rule's literals, and filtering with the pre-checks gives the very text running
every rule gives."""

import random

import pytest

from maestro.memory.store import sanitize
from maestro.memory.store.sanitize_rules import ANCHORS, RULES, placeholder
from testing.secrets import LOOKALIKES, SECRETS

pytestmark = pytest.mark.in_process


def every_rule(text: str) -> str:
    """The sanitizer as it was before the pre-checks: each rule run in order."""
    for label, pattern in RULES:
        text = pattern.sub((lambda _m, _l=label: placeholder(_l)) if isinstance(label, str) else label, text)
    return text


def corpus() -> list:
    rng = random.Random(11)
    pieces = [s.text for s in SECRETS] + list(LOOKALIKES)
    texts = list(pieces)
    for _ in range(300):
        chosen = rng.sample(pieces, rng.randint(2, 4))
        texts.append("".join(part + rng.choice([" ", "\n", "=", ": ", "", "KEY", "-"]) for part in chosen))
        texts.append("".join(part.upper() if rng.random() < 0.5 else part.lower() for part in chosen))
    return texts


def test_one_anchor_per_rule():
    assert len(ANCHORS) == len(RULES)
    assert all(anchors is None or (isinstance(anchors[1], tuple) and anchors[1]) for anchors in ANCHORS)


def test_every_match_of_a_rule_holds_one_of_its_literals_and_results_are_unchanged():
    for text in corpus():
        current = text
        for (label, pattern), anchors in zip(RULES, ANCHORS):
            if anchors is not None:
                ignore_case, literals = anchors
                for match in pattern.finditer(current):
                    found = match.group(0).lower() if ignore_case else match.group(0)
                    assert any(literal in found for literal in literals), (pattern.pattern[:60], match.group(0))
            current = pattern.sub((lambda _m, _l=label: placeholder(_l)) if isinstance(label, str) else label,
                                  current)
        sanitize._memo.clear()
        assert sanitize.filter_text(text) == current == every_rule(text), text
