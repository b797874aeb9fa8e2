"""Prompt parsing for the inject hook: the direct-edit directive and the work signals (spec §4).

A direct-edit directive is an authorization grant, not a keyword: quoted, mentioned, reported or
negated phrases must not create it. The guards look at the text before each occurrence; any one
unguarded occurrence opens the gate.
"""

import re

from maestro.hooks.policy import NONCODE_EXTENSIONS

_DIRECTIVE = re.compile(
    r"\b(edit it yourself|do it yourself|write it yourself|yourself this time|kendin yap(?!ma)\b"
    r"|sen yap(?!ma)\b|sen d[üu]zenle|don'?t delegate|no codex|skip codex)\b",
    re.IGNORECASE,
)
_NEGATORS = (
    r"do not|don'?t|never|won'?t|shouldn'?t|not|saying|says|say|said|typing|typed|phrase|words|means|mean"
)
_GUARDED_PREFIX = re.compile(
    rf"(?:\b(?:{_NEGATORS})(?:\s+(?:ever|even|just|really|actually|simply))?\s*|[\"'`“‘]\s*)$",
    re.IGNORECASE,
)
_CLAUSE_GUARD = re.compile(rf"\b(?:{_NEGATORS})\b", re.IGNORECASE)
_CLAUSE_END = ".!?;\n"

_APPROVAL = re.compile(
    r"(?:onayl|onay|evet|devam|tamam|olur|approve|ok|okay|go|yes|proceed)[.!]?", re.IGNORECASE
)

_MODEL_SETUP = re.compile(
    r"codex (?:model|settings|effort|config)|pick (?:the )?codex|change codex|set codex", re.IGNORECASE
)
_ON_DEMAND = re.compile(
    r"delegate to codex|codex implement|have codex|ask codex|codex'?e yapt[ıi]r|grill|debate"
    r"|sanity.?check|discuss with codex|talk to codex|second opinion|tart[ıi][şs]",
    re.IGNORECASE,
)
# The original matched `[\w./-]*\.[A-Za-z][A-Za-z0-9_]{0,11}\b` and looked at the extension; that
# pattern backtracks quadratically on long dot-less runs. Every extension it can report is a
# `.ext` this linear pattern finds (it also sees earlier dots in a token: "app.py-notes.md").
_EXTENSION = re.compile(r"\.([A-Za-z][A-Za-z0-9_]{0,11})\b")
_CODE_SIGNAL = re.compile(
    "|".join(
        (
            r"/(?:code-review|apple-design|improve|quality-code|software-architecture-design"
            r"|systematic-debugging)\b",
            r"\b(?:implement|refactor|debug|crash|failing|regression|endpoint|schema|migration"
            r"|architecture)\b",
            r"\b(?:fix|bug|api|component|function|query|deploy|optimi[sz]e|design|build|add feature)\b",
            r"\btest",
            r"(?:hata|düzelt|mimari|tasarla|tasarım|özellik|fonksiyon|bileşen|sorgu|entegre|kodla"
            r"|geliştir|çalışmıyor|patlıyor|bozuldu)",
        )
    ),
    re.IGNORECASE,
)


PREFIX_WINDOW = 256  # the negator/quote guard looks only at the text just before a directive


class _Guards:
    """Answers "is the directive at index i guarded?" in O(log n), so a long prompt with many
    directive occurrences costs linear time, not quadratic (a hook has a deadline)."""

    def __init__(self, text: str):
        import bisect
        import itertools

        self._bisect = bisect.bisect_right
        self.text = text
        self.clause_ends = [i for i, ch in enumerate(text) if ch in _CLAUSE_END]
        self.negators = [m.start() for m in _CLAUSE_GUARD.finditer(text)]
        self.quotes = {
            mark: [0, *itertools.accumulate(1 if ch in chars else 0 for ch in text)]
            for mark, chars in (("open", '"“'), ("close", '"”'), ("tick", "`"))
        }

    def guarded(self, start: int) -> bool:
        if _GUARDED_PREFIX.search(self.text[max(0, start - PREFIX_WINDOW):start]):
            return True
        k = self._bisect(self.clause_ends, start - 1)
        clause_start = self.clause_ends[k - 1] + 1 if k else 0
        first_negator = self._bisect(self.negators, clause_start - 1)
        if first_negator < len(self.negators) and self.negators[first_negator] < start:
            return True  # a negator/mention word earlier in the same clause
        return any((counts[start] - counts[clause_start]) % 2 == 1 for counts in self.quotes.values())


def opens_gate(prompt: str) -> bool:
    """True when the prompt carries at least one unguarded direct-edit directive."""
    matches = list(_DIRECTIVE.finditer(prompt))
    if not matches:
        return False
    guards = _Guards(prompt)
    return any(not guards.guarded(m.start()) for m in matches)


def is_short_approval(prompt: str) -> bool:
    """A standalone acknowledgement continues the current task (and keeps its grant)."""
    return _APPROVAL.fullmatch(prompt) is not None


def asks_model_setup(prompt: str) -> bool:
    return _MODEL_SETUP.search(prompt) is not None


def has_work_signal(prompt: str) -> bool:
    """Does the prompt plausibly end in a source change (or ask for a Codex debate)?"""
    if _ON_DEMAND.search(prompt):
        return True
    for extension in _EXTENSION.findall(prompt):
        if extension.lower() not in NONCODE_EXTENSIONS:
            return True
    return _CODE_SIGNAL.search(prompt) is not None
