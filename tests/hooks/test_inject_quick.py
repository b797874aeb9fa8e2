"""inject's base cost (issue 11 §5): an acknowledgement and a short prompt's work signals are decided
without `re` (maestro/hooks/directive.py `is_short_approval`, `_quick_work_signal`), and those plain
string tests say exactly what the patterns say — the patterns are the reference, checked here on a
corpus of near misses (word starts and ends, Unicode word characters, extensions, slash commands)."""

import json
import os
import random
import re
import subprocess
import sys

import pytest
from testing import ROOT

from maestro.hooks import directive

pytestmark = pytest.mark.in_process


def _by_patterns(prompt: str) -> bool:
    text = directive._fold(prompt)
    return directive._WORK_MARKS().search(text) is not None or directive._WORK_WORDS().search("\n" + text) is not None


FRAGMENTS = (
    "fix", "fixes", "prefix", "bug", "debugger", "debug", "_debug", "rebuild", "build", "builds", "latest", "pytest",
    "test", "tests", "contest", "add feature", "add features", "api", "apis", "rapid", "design", "designer",
    "codexe yaptir", "codex'e yaptir", "codex’e yaptır", "sanity check", "sanity-check", "sanitycheck", "insanity",
    "tartış", "tartis", "hata", "hatalı", "düzelt", "özellik", "çalişmiyor", "ask codex", "have codex", "grill",
    "app.py", "notes.md", "a.json", ".py", ".pyé", ".Py", ".p", "x.a1234567890123", "x.a12345678901", "x.ab_c",
    "e.g.", "3.5", "v1.2.3", "readme.txt", ".md5", ".mdx", "x.yml", "x.yaml", "..", ".", "...py",
    "/improve", "/improvement", "/code-review", "/code-review_x", "/code-reviewé", "a/improve", "/systematic-debugging",
    "FIX", "Fix", "İmplement", "ſchema", "K", "ﬁx", "ǆ", "bug1", "1bug", "bug_", "é", "ß", "日本", "٣", "²",
    "the", "please", "why", "does", "sqlite", "index", "fail", "release", "branch", "?", "!", ",", "-", "\n", "\t",
    "\u00a0", "'", '"', "`", "(", ")", "[", "]",
)
SEPARATORS = ("", " ", "", "\n", "-", "_", "é", ".", "/", "2")


def corpus(count: int):
    rng = random.Random(22)
    yield from FRAGMENTS
    for _ in range(count):
        yield "".join(rng.choice(FRAGMENTS) + rng.choice(SEPARATORS) for _ in range(rng.randint(1, 6)))


def test_the_quick_work_signal_agrees_with_the_patterns():
    decided = 0
    for prompt in corpus(4000):
        quick = directive._quick_work_signal(directive._fold(prompt))
        if quick is not None:
            decided += 1
            assert quick == _by_patterns(prompt), repr(prompt)
        assert directive.has_work_signal(prompt) == _by_patterns(prompt), repr(prompt)
    assert decided > 3000  # the plain tests decide most prompts; the patterns only the rest


def test_the_quick_work_signal_hands_over_where_it_cannot_be_sure():
    fold = directive._fold
    assert directive._quick_work_signal(fold("x" * directive.QUICK_MAX_CHARS + " fix")) is None  # long: patterns
    assert directive._quick_work_signal(fold("latest " * (directive.QUICK_MAX_CANDIDATES + 1))) is None
    assert directive._quick_work_signal(fold("a sanity pass")) is None  # `sanity.?check` is a pattern
    assert directive._quick_work_signal(fold("why does the sqlite index rebuild fail?")) is False
    assert directive._quick_work_signal(fold("please fix the failing test in src/app.py")) is True
    many = "latest " * (directive.QUICK_MAX_CANDIDATES + 1) + "fix it"
    assert directive.has_work_signal(many) and not directive.has_work_signal("latest " * 100)


def test_a_short_approval_agrees_with_the_pattern():
    rng = random.Random(7)
    words = [*directive._APPROVALS, "okk", "o", "", "nope", "yess", "go!", "approved", "proceeds", "tamamm"]
    tails = ("", ".", "!", "..", "!.", "?", " ", "\n")
    pattern = re.compile(r"(?:onayl|onay|evet|devam|tamam|olur|approve|ok|okay|go|yes|proceed)[.!]?", re.IGNORECASE)
    samples = [word + tail for word in words for tail in tails]
    samples += ["".join(c.upper() if rng.random() < 0.5 else c for c in s) for s in samples for _ in range(3)]
    samples += ["o\u212a", "\u212aay", "ye\u017f", "OK\u0130", "g\u00f6", "\u0131", "y\u0130s", "ok\u00a0"]  # pattern's own case rules
    for prompt in samples:
        expected = len(prompt) <= 8 and pattern.fullmatch(prompt) is not None
        assert directive.is_short_approval(prompt) == expected, repr(prompt)
    assert directive.is_short_approval("o\u212a")  # the Kelvin sign is a k to IGNORECASE: the pattern decides


def test_escape_is_re_escape():
    text = "".join(map(chr, range(0x3000)))
    assert directive._escape(text) == re.escape(text)


@pytest.mark.source_only
@pytest.mark.parametrize("prompt", ["ok", "why does the sqlite index rebuild fail after the sync merge?",
                                    "please fix the failing test in src/app.py"])
def test_inject_without_recall_imports_no_re(home, prompt):
    """The hot path: an acknowledgement and a plain prompt (recall off) never import `re` (~6 ms)."""
    config = home / ".maestro" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text("[memory]\nrecall = false\n")
    code = ("import sys; sys.path.insert(0, %r); from maestro.cli import main; rc = main(['inject']); "
            "print(rc, 're' in sys.modules, 'json' in sys.modules)" % str(ROOT))
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=30,
                          input=json.dumps({"session_id": "quick-1", "prompt": prompt}),
                          env=dict(os.environ, HOME=str(home)))
    assert done.stdout.splitlines()[-1] == "0 False False", done.stdout + done.stderr
