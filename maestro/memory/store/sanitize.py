"""Secrets never reach the store (spec memory.md §2.5, plus what the original misses). Pure.

Every match becomes `[Filtered:<label>]`; a text that is nothing but secrets (only placeholders,
whitespace and punctuation remain) yields None and the write is refused. Order:
  1. PEM private-key blocks (multi-line: before anything can cut into them), then credentials in
     URLs (`scheme://user:pass@host` keeps its scheme and host, so a pair rule cannot eat them);
  2. the seven original rules' first five — `sk-` keys, `api_key`/`access_token` pairs, `password`
     pairs, `Bearer` tokens, `密码` — so their labels stay the reference's;
  3. shaped tokens the original misses: GitHub, AWS key ids and secrets, Slack, JWTs, Stripe/Google/
     GitLab/npm/Hugging Face keys, `token=`/`secret=`/`client_secret=` pairs;
  4. the original ID-number and phone rules last (bare digit runs, the least specific).

Deliberate differences from the reference (each only ever filters *more* secrets or fewer words):
  - a `sk-` key must not be glued to a word ("task-management-system" is prose, not a key);
  - pair rules accept prefixed names (`DB_PASSWORD=`, `X-Api-Key:`), a quote after the name
    (`"password": "…"`), `=>`, a full-width colon, and a quoted value with spaces;
  - `Bearer` must start a word;
  - a value already replaced is not filtered twice (`api_key=sk-…` gives one placeholder);
  - `token:`/`secret:` followed by a plain word ("The secret: small modules") is prose: a `:` pair
    is filtered only when the value has a digit, is quoted, or is 20+ characters.
Word boundaries are ASCII (`re.ASCII`) as in JavaScript, so a phone number glued to Chinese text
is still found.
"""

import re

from maestro.memory.store.entry import WHITESPACE, WS

PLACEHOLDER = re.compile(r"\[Filtered:[^\]]+\]")
_A = re.ASCII
_AI = re.ASCII | re.IGNORECASE
_SEP = rf"[\"']?{WS}*(?:[:=]>?|：){WS}*"
_VALUE_STOP = WS[1:-1] + ",，。;；"  # a bare value ends at whitespace or list punctuation
_VALUE = rf"""(?!\[Filtered:)(?:"[^"\n]*"|'[^'\n]*'|[^{_VALUE_STOP}]+)"""
_PREFIX = r"\b(?:[A-Za-z0-9]+[_-])*"


def _placeholder(label: str) -> str:
    return f"[Filtered:{label}]"


def _pair(names: str) -> re.Pattern:
    return re.compile(rf"{_PREFIX}(?:{names})\b{_SEP}{_VALUE}", _AI)


_PROSE_SEP = re.compile(rf"[\"']?{WS}*(?:[:：]){WS}*", _A)


def _guarded_pair(label_for):
    """A `:`-separated pair is prose unless its value looks like a credential."""

    def replace(match: re.Match) -> str:
        text = match.group(0)
        name = re.match(r"[A-Za-z0-9_-]+", text).group(0)
        sep = _PROSE_SEP.match(text, len(name))
        if sep:
            value = text[sep.end():]
            quoted = value[:1] in ("'", '"')
            if not quoted and not any(ch.isdigit() for ch in value) and len(value) < 20:
                return text
        return _placeholder(label_for(name))

    return replace


def _url_credentials(match: re.Match) -> str:
    scheme, authority = match.group(1), match.group(2)
    if "@" not in authority:
        return match.group(0)
    userinfo, host = authority.rsplit("@", 1)
    user, colon, password = userinfo.partition(":")
    token_like = len(user) >= 20 and any(ch.isdigit() for ch in user) and any(ch.isalpha() for ch in user)
    if (colon and password) or token_like:
        return f"{scheme}{_placeholder('credentials')}@{host}"
    return match.group(0)


RULES = [
    ("private key", re.compile(
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        re.ASCII | re.DOTALL)),
    (_url_credentials, re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*://)([^\s/?#]+)", _A)),
    # -- the original seven, 1-5
    ("API key", re.compile(r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{8,}", _A)),
    ("API key", _pair(r"api[_-]?key|apikey|access[_-]?token")),
    ("password", _pair(r"password|passwd|pwd")),
    ("token", re.compile(rf"\bBearer{WS}+[A-Za-z0-9._~+/=-]{{8,}}", _AI)),
    ("password", re.compile(rf"密码{WS}*[:：是]{WS}*[A-Za-z0-9_@#$%^&*!.-]{{4,}}", _A)),
    # -- shaped tokens
    ("GitHub token", re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})", _A)),
    ("AWS key", re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)"
                           r"[A-Z0-9]{16}(?![A-Za-z0-9])", _A)),
    ("AWS secret", _pair(r"aws[_-]?secret(?:[_-]?access)?[_-]?key")),
    ("Slack token", re.compile(r"(?<![A-Za-z0-9])(?:xox[abprs]|xapp)-[A-Za-z0-9-]{10,}", _A)),
    ("Slack webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+", _A)),
    ("JWT", re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.ey[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*", _A)),
    ("API key", re.compile(
        r"(?<![A-Za-z0-9])(?:[sr]k_(?:live|test)_[A-Za-z0-9]{10,}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,}"
        r"|npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,})", _A)),
    (_guarded_pair(lambda name: "token" if "token" in name.lower() else "secret"),
     _pair(r"token|secret|secret[_-]?key|private[_-]?key")),
    # -- the original seven, 6-7
    ("ID number", re.compile(r"\b[0-9]{17}[0-9Xx]\b", _A)),
    ("phone number", re.compile(r"\b1[3-9][0-9]{9}\b", _A)),
]


def filter_text(text: str) -> str:
    """`text` with every secret replaced by its placeholder (for messages as well as entries)."""
    for label, pattern in RULES:
        replacement = (lambda _m, _l=label: _placeholder(_l)) if isinstance(label, str) else label
        text = pattern.sub(replacement, text)
    return text


def sanitize(text: str):
    """The filtered text, or None when nothing but secrets was given. Beyond the reference (only
    placeholders and whitespace left), punctuation left between secrets ("password=a, token=b")
    does not make the text worth storing either."""
    out = filter_text(text)
    residue = PLACEHOLDER.sub("", out)
    if not residue.strip(WHITESPACE) or (out != text and not any(ch.isalnum() for ch in residue)):
        return None
    return out
