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
_FILE_TOKEN = re.compile(r"[\w./-]*\.[A-Za-z][A-Za-z0-9_]{0,11}\b")
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


def _odd(count: int) -> bool:
    return count % 2 == 1


def _is_guarded(prefix: str) -> bool:
    if _GUARDED_PREFIX.search(prefix):
        return True
    clause = prefix[max(prefix.rfind(ch) for ch in _CLAUSE_END) + 1 :]
    if _CLAUSE_GUARD.search(clause):
        return True
    opening = clause.count('"') + clause.count("“")
    closing = clause.count('"') + clause.count("”")
    return _odd(opening) or _odd(closing) or _odd(clause.count("`"))


def opens_gate(prompt: str) -> bool:
    """True when the prompt carries at least one unguarded direct-edit directive."""
    return any(not _is_guarded(prompt[: m.start()]) for m in _DIRECTIVE.finditer(prompt))


def is_short_approval(prompt: str) -> bool:
    """A standalone acknowledgement continues the current task (and keeps its grant)."""
    return _APPROVAL.fullmatch(prompt) is not None


def asks_model_setup(prompt: str) -> bool:
    return _MODEL_SETUP.search(prompt) is not None


def has_work_signal(prompt: str) -> bool:
    """Does the prompt plausibly end in a source change (or ask for a Codex debate)?"""
    if _ON_DEMAND.search(prompt):
        return True
    for token in _FILE_TOKEN.findall(prompt):
        if token[token.rfind(".") + 1 :].lower() not in NONCODE_EXTENSIONS:
            return True
    return _CODE_SIGNAL.search(prompt) is not None
