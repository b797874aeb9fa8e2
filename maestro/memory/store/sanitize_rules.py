"""The sanitizer's table: which shapes are secrets, in the order they are tried. Pure.

Each rule is `(label, pattern)` (every match becomes `[Filtered:<label>]`) or `(function, pattern)`
(the function returns the match's replacement, which may be the match itself: a guard). Order:
  1. multi-line keys (PEM blocks, PuTTY .ppk files: before anything can cut into them), credentials
     in URLs (`scheme://user:pass@host` keeps its scheme and host, so a pair rule cannot eat them),
     AWS key ids (unmistakable; a bare 40-character secret near one is found by its placeholder);
  2. the seven original rules' first five — `sk-` keys, `api_key`/`access_token` pairs, `password`
     pairs, `Bearer` tokens, `密码` — so their labels stay the reference's;
  3. credentials spelled the way shells and HTTP spell them: `Authorization: Basic …`, `mysql -pX`,
     `curl -u user:X`, Azure `AccountKey=`/`sig=`;
  4. shaped tokens (GitHub, AWS, Slack, JWT, Google, Stripe, SendGrid, Discord, Telegram, …),
     `token=`/`secret=`/`client_secret=` pairs, then a value after a space: `--password X`, "the
     admin password is X" (least certain, so it never takes the name of a pair as its value);
  5. the original ID-number and phone rules last (bare digit runs, the least specific).

What is *not* a secret, on purpose (each was a false positive once): a `Bearer`/`Basic` followed
by a plain word ("Bearer authentication is required"), a `pwd`/`PWD` whose value is a path, a
`:`-separated `token`/`secret` whose value is a plain short word ("The secret: small modules"), an
18-digit run that holds no valid birth date (snowflake ids), an 11-digit run that is a size or a
duration ("13912345678 bytes", "… ms") or a power of two (17179869184 = 2^34, 16 GiB).
A value that is already a placeholder is never filtered again, in either form (`[Filtered:…]`, or
`(Filtered:…)` inside a summary), so filtering is idempotent and a queued summary survives it.
Word boundaries are ASCII (`re.ASCII`) as in JavaScript, so a phone number glued to Chinese text
is still found.
"""

import base64
import binascii
import datetime
import re

from maestro.memory.store.entry import WS

_A = re.ASCII
_AI = re.ASCII | re.IGNORECASE
_SEP = rf"[\"']?{WS}*(?:[:=]>?|：){WS}*"
_VALUE_STOP = WS[1:-1] + ",，。;；"  # a bare value ends at whitespace or list punctuation
# A value that is already a placeholder (`[Filtered:…]`, or `(Filtered:…)` in a summary) is not filtered twice.
_FILTERED = r"[\[(]Filtered:[^\[\]()\n]{1,40}[\])](?![^\s,;.:!?&|<>)\]'\"`])"
_QUOTED = r"""(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""  # a backslash escapes a quote (JSON)
_VALUE = rf"""(?!{_FILTERED})(?:{_QUOTED}|[^{_VALUE_STOP}]+)"""
# A name may carry any prefix, glued (`PGPASSWORD`, camelCase `dbPassword`) or joined by `_`/`-`
# (`DB_PASSWORD`, `X-Api-Key`, `--password=`), but must not be glued to what follows
# (`token_count`, `max_tokens` are not `token`).
_PREFIX = r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]*?"
_NOT_TOKEN = r"(?<![A-Za-z0-9_-])"
_TOKEN_END = r"(?![A-Za-z0-9_-])"


def placeholder(label: str) -> str:
    return f"[Filtered:{label}]"


def _pair(names: str) -> re.Pattern:
    return re.compile(rf"{_PREFIX}(?:{names})\b{_SEP}{_VALUE}", _AI)


_PROSE_SEP = re.compile(rf"[\"']?{WS}*(?:[:：]){WS}*", _A)
_NAME = re.compile(r"[A-Za-z0-9_-]+", _A)
_PAIR_SEP = re.compile(_SEP, _A)


def _plain_word(value: str) -> bool:
    """A word of prose: letters only, all lower case or Capitalized ("authentication", "Required")."""
    return value.isalpha() and value.isascii() and (value.islower() or (value[0].isupper() and value[1:].islower()))


def _credential_like(value: str) -> bool:
    """A value spelled like a credential, not like the next word of a sentence."""
    if value[:1] in ("'", '"', "`"):
        return len(value.strip("'\"`")) >= 1
    if value.endswith((":", "：")):
        return False  # the next name (`--password refreshToken: …`): its own rule filters its value
    value = value.rstrip(".,;!?)]")  # a sentence's or a `[summary:…]`'s end is not part of the value
    return len(value) >= 4 and (not _plain_word(value) or len(value) >= 16)


def _guarded_pair(label_for):
    """A `:`-separated pair is prose unless its value looks like a credential."""

    def replace(match: re.Match) -> str:
        text = match.group(0)
        name = _NAME.match(text).group(0)
        sep = _PROSE_SEP.match(text, len(name))
        if sep:
            value = text[sep.end():]
            quoted = value[:1] in ("'", '"')
            if not quoted and not any(ch.isdigit() for ch in value) and len(value) < 20:
                return text
        return placeholder(label_for(name))

    return replace


_PATH_VALUE = re.compile(r"[\"']?(?:[/~.$]|[A-Za-z]:[\\/])", _A)


def _password_pair(match: re.Match) -> str:
    """`PWD=/home/me` is the working directory, not a password: a `pwd` whose value is a path stays."""
    text = match.group(0)
    name = _NAME.match(text).group(0)
    if name.lower().endswith("pwd"):
        sep = _PAIR_SEP.match(text, len(name))
        if sep and _PATH_VALUE.match(text, sep.end()):
            return text
    return placeholder("password")


_PLACEHOLDER_ONLY = re.compile(r"[\[(]Filtered:[^\[\]()\n]{1,40}[\])]", _A)


def _url_credentials(match: re.Match) -> str:
    scheme, authority = match.group(1), match.group(2)
    if "@" not in authority:
        return match.group(0)
    userinfo, host = authority.rsplit("@", 1)
    if _PLACEHOLDER_ONLY.fullmatch(userinfo):
        return match.group(0)  # already filtered (in a summary: `(Filtered:credentials)`)
    user, colon, password = userinfo.partition(":")
    token_like = len(user) >= 20 and any(ch.isdigit() for ch in user) and any(ch.isalpha() for ch in user)
    if (colon and password) or token_like:
        return f"{scheme}{placeholder('credentials')}@{host}"
    return match.group(0)


def _bearer(match: re.Match) -> str:
    return match.group(0) if _plain_word(match.group(1)) else placeholder("token")


def _keep_head(label: str, guard=None):
    """Replace group 2 (the value), keep group 1 (the name, the command, the header)."""

    def replace(match: re.Match) -> str:
        if guard is not None and not guard(match.group(2)):
            return match.group(0)
        return match.group(1) + placeholder(label)

    return replace


def _basic_credentials(value: str) -> bool:
    """`Basic <base64 of user:password>`: decodes to text holding a `:` ("Basic auth" stays)."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


def _aws_secret_after_id(match: re.Match) -> str:
    """A bare 40-character secret near an AWS key id is the id's secret (`AKIA… / wJalr…`)."""
    secret = match.group(2)
    if any(ch.isupper() for ch in secret) and any(ch.islower() for ch in secret):
        return match.group(1) + placeholder("AWS secret")
    return match.group(0)


def _id_number(match: re.Match) -> str:
    """A Chinese resident ID holds a birth date (digits 7-14); an 18-digit snowflake id almost never does."""
    digits = match.group(0)
    try:
        born = datetime.date(int(digits[6:10]), int(digits[10:12]), int(digits[12:14]))
    except ValueError:
        return digits
    return placeholder("ID number") if 1900 <= born.year <= 2099 and digits[0] != "0" else digits


_QUANTITY = re.compile(r" ?(?:bytes?|B|[KMGTP]i?B|ms|us|ns)\b", re.ASCII)


def _phone_number(match: re.Match) -> str:
    """An 11-digit run is a quantity, not a phone number, when a unit follows or it is a power of two."""
    digits = match.group(0)
    number = int(digits)
    if number & (number - 1) == 0 or _QUANTITY.match(match.string, match.end()):
        return digits
    return placeholder("phone number")


# A bare word followed by `=`/`:` is the next name (`--password aws_secret_access_key = …`), and one
# that starts with `-` the next option (`--password --db-password 'X'`), not a value.
_CLI_VALUE = rf"""(?!{_FILTERED})({_QUOTED}|`[^`\n]*`|(?!-)[^\s"'`]++(?![ \t]*[:=：]))"""

RULES = [
    # -- 1. multi-line keys, then URL credentials
    ("private key", re.compile(
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        re.ASCII | re.DOTALL)),
    ("private key", re.compile(
        r"PuTTY-User-Key-File-[0-9]+:.*?(?:Private-MAC:[ \t]*[0-9A-Fa-f]+|\Z)", re.ASCII | re.DOTALL)),
    ("private key", re.compile(r"Private-Lines:[ \t]*[0-9]+[ \t]*\r?\n(?:[ \t]*[A-Za-z0-9+/=]+[ \t]*(?:\r?\n|\Z))+",
                               re.ASCII)),
    (_url_credentials, re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*://)([^\s/?#]+)", _A)),
    # an AWS key id is unmistakable, and the bare secret rule below looks for its placeholder
    ("AWS key", re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)"
                           r"[A-Z0-9]{16}(?![A-Za-z0-9])", _A)),
    # -- 2. the original seven, 1-5
    ("API key", re.compile(r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{8,}", _A)),
    ("API key", _pair(r"api[_-]?key|apikey|access[_-]?token")),
    (_password_pair, _pair(r"password|passwd|pwd|passphrase|(?<=[_-])pass")),
    (_bearer, re.compile(rf"\bBearer{WS}+([A-Za-z0-9._~+/=-]{{8,}})", _AI)),
    ("password", re.compile(rf"密码{WS}*[:：是]{WS}*[A-Za-z0-9_@#$%^&*!.-]{{4,}}", _A)),
    # -- 3. credentials in headers, command lines and prose
    (_keep_head("credentials"), re.compile(
        r"(\b(?:Proxy-)?Authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:Basic|Token|Digest|NTLM|Negotiate)[ \t]+)"
        rf"(?!{_FILTERED})([^\s\"',;]+)", _AI)),
    (_keep_head("credentials", _basic_credentials), re.compile(r"(\bBasic[ \t]+)([A-Za-z0-9+/]{8,}={0,2})", _A)),
    (_keep_head("password"), re.compile(
        r"(\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)\b[^\n|;&]{0,200}?[ \t]-p)"
        rf"(?![ \t\n]|{_FILTERED})({_QUOTED}|\S+)", _A)),
    (_keep_head("password"), re.compile(
        r"(\bcurl\b[^\n|;&]{0,200}?[ \t](?:-u|--user)[ \t]*[\"']?[^\s:\"'\[]+:)"
        rf"(?!{_FILTERED})([^\s\"']+)", _A)),
    (_keep_head("password"), re.compile(rf"(\bsshpass[ \t]+-p[ \t]*)(?!{_FILTERED})({_QUOTED}|\S+)", _A)),
    (_keep_head("Azure key"), re.compile(
        r"((?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey|SharedSecretValue)[ \t]*=[ \t]*)([A-Za-z0-9+/%_-]{16,}={0,2})",
        _AI)),
    (_keep_head("Azure SAS"), re.compile(r"((?<![A-Za-z0-9_])sig=)([A-Za-z0-9%+/=_-]{16,})", _A)),
    # -- 4. shaped tokens
    ("GitHub token", re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})", _A)),
    ("AWS secret", _pair(r"aws[_-]?secret(?:[_-]?access)?[_-]?key")),
    (_keep_head("AWS secret"), re.compile(
        r"(\baws[_-]?(?:secret(?:[_-]?access)?[_-]?key|session[_-]?token)[\"']?[ \t]+)([A-Za-z0-9/+=]{16,})", _AI)),
    ("Slack token", re.compile(r"(?<![A-Za-z0-9])(?:xox[abposre](?:\.xox[bp])?|xapp)-[A-Za-z0-9-]{10,}", _A)),
    ("Slack webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+", _A)),
    ("JWT", re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.ey[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*", _A)),
    ("API key", re.compile(
        rf"{_NOT_TOKEN}(?:[sr]k_(?:live|test)_[A-Za-z0-9]{{10,}}|whsec_[A-Za-z0-9+/=]{{20,}}"
        r"|AIza[0-9A-Za-z_-]{35}|GOCSPX-[A-Za-z0-9_-]{20,}|ya29\.[A-Za-z0-9_-]{20,}|1//0[A-Za-z0-9_-]{30,}"
        r"|glpat-[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,}|pypi-[A-Za-z0-9_-]{50,}"
        r"|SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}|key-(?=[a-z]*[0-9])[0-9a-z]{32}"
        r"|shp(?:at|ca|pa|ss)_[A-Fa-f0-9]{32}"
        r"|do[opr]_v1_[a-f0-9]{64}|lin_api_[A-Za-z0-9]{40}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|dapi[0-9a-f]{32}"
        r"|hvs\.[A-Za-z0-9_-]{24,}|ATATT3[A-Za-z0-9_=-]{50,}|AGE-SECRET-KEY-1[0-9A-Z]{58}"
        rf"|glsa_[A-Za-z0-9]{{32}}_[a-f0-9]{{8}}){_TOKEN_END}", _A)),
    ("Discord token", re.compile(
        rf"{_NOT_TOKEN}[MNO][A-Za-z0-9_-]{{23,27}}\.[A-Za-z0-9_-]{{6}}\.[A-Za-z0-9_-]{{27,40}}{_TOKEN_END}", _A)),
    ("Telegram token", re.compile(rf"(?:(?<=bot)|(?<![0-9A-Za-z]))[0-9]{{8,10}}:[A-Za-z0-9_-]{{35}}{_TOKEN_END}", _A)),
    (_aws_secret_after_id, re.compile(  # after the shaped tokens: a JWT's 40-character head is not this
        r"(\[Filtered:AWS key\][^\n]{0,80}?\n?[^\n]{0,80}?)(?<![A-Za-z0-9/+=._-])([A-Za-z0-9/+]{40})"
        r"(?![A-Za-z0-9/+=_-])(?!\.[A-Za-z0-9])", _A)),
    (_guarded_pair(lambda name: "token" if "token" in name.lower() else "secret"),
     _pair(r"token|secret|secret[_-]?key(?:[_-]?base)?|private[_-]?key|signing[_-]?key|encryption[_-]?key"
           r"|master[_-]?key|_auth")),
    # a value after a space (`--password X`, "the password is X") is the least certain: after every named
    # pair and shaped token, so it never takes the name of one (`--password AWS_SECRET_ACCESS_KEY="…"`)
    (_keep_head("password", _credential_like), re.compile(
        rf"({_NOT_TOKEN}--?(?:[A-Za-z0-9]+-)*(?:password|passwd|pass|passphrase|secret|token|api-key|apikey)"
        rf"[ \t]+){_CLI_VALUE}", _AI)),
    (_keep_head("password", _credential_like), re.compile(
        rf"(\b(?:password|passwd|passphrase|passcode)(?:[ \t]+for[ \t]+\S+)?[ \t]+(?:is|was|will be|=)[ \t]*:?[ \t]+)"
        rf"{_CLI_VALUE}", _AI)),
    # -- 5. the original seven, 6-7
    (_id_number, re.compile(r"\b[0-9]{17}[0-9Xx]\b", _A)),
    (_phone_number, re.compile(r"\b1[3-9][0-9]{9}\b", _A)),
]

# What each rule of RULES (same position) cannot match without: `(ignore_case, literals)`. When none of
# the literals is in the text (in its lower-cased form for an IGNORECASE rule), the rule's pattern cannot
# match it and is not run. Each literal is a piece every match of the pattern must contain (for the
# ASCII-only IGNORECASE rules, str.lower() folds every ASCII letter the way the pattern does); `None`
# means the rule always runs. Only a speed-up: tests/memory/store/test_sanitize_anchors.py checks every
# rule's matches contain a literal, and the sanitize tests pin the results.
_DIGITS = tuple("0123456789")
ANCHORS = [
    (False, ("-----BEGIN",)),
    (False, ("PuTTY-User-Key-File-",)),
    (False, ("Private-Lines:",)),
    (False, ("://",)),
    (False, ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA", "APKA", "AROA", "ASCA")),
    (False, ("sk-",)),
    (True, ("api", "access")),
    (True, ("pass", "pwd")),
    (True, ("bearer",)),
    (False, ("密码",)),
    (True, ("authorization",)),
    (False, ("Basic",)),
    (False, ("mysql", "mariadb")),
    (False, ("curl",)),
    (False, ("sshpass",)),
    (True, ("accountkey", "sharedaccesskey", "sharedsecretvalue")),
    (False, ("sig=",)),
    (False, ("gh", "github_pat_")),
    (True, ("aws",)),
    (True, ("aws",)),
    (False, ("xox", "xapp")),
    (False, ("https://hooks.slack.com/services/",)),
    (False, ("eyJ",)),
    (False, ("k_live_", "k_test_", "whsec_", "AIza", "GOCSPX-", "ya29.", "1//0", "glpat-", "npm_", "hf_", "pypi-",
             "SG.", "key-", "shp", "_v1_", "lin_api_", "PMAK-", "dapi", "hvs.", "ATATT3", "AGE-SECRET-KEY-1",
             "glsa_")),
    (False, (".",)),
    (False, (":",)),
    (False, ("[Filtered:AWS key]",)),
    (True, ("token", "secret", "key", "_auth")),
    (True, ("pass", "secret", "token", "api-key", "apikey")),
    (True, ("pass",)),
    (False, _DIGITS),
    (False, _DIGITS),
]
