"""Prompt parsing for the inject hook: the direct-edit directive and the work signals (spec §4).

A direct-edit directive is an authorization grant, not a keyword: only the user's own imperative
opens the gate. `opens_gate` therefore drops everything that is not the user speaking in their own
voice — fenced and indented code, `> ` block quotes, quoted spans in any common quote style — and
then refuses a clause (text between `. ! ? ; newline`) that negates, stops, reports or mentions the
phrase, asks a question (ends in `?`, or starts with why/how/what/can/could/do/is/…), or is joined
to a negation that ends the previous line; a prompt that opens with "stop" grants nothing. Any one
clause that survives opens the gate.

Linear in the prompt's size, with no per-character Python loop: a substring test rejects most
prompts at once; otherwise a few regular-expression passes run in C (possessive quantifiers and
character-class loops, so nothing backtracks quadratically), one literal scan per phrase family,
and per phrase only the text since the previous phrase and up to its clause end. More than
MAX_DIRECTIVES phrases is a paste, not an instruction: no grant. Matching runs on a folded copy
of the prompt (lower case, typographic apostrophes as `'`), so no pattern needs IGNORECASE, and
patterns compile on first use (most prompts never need the directive ones).

`re` itself is imported only when a pattern is needed (importing it costs a hook ~6 ms, compiling the
work-signal patterns ~3 ms more): an ASCII acknowledgement and a short prompt's work signals are
decided by plain string tests that agree with the patterns (`_quick_work_signal`; where they cannot
be sure, the pattern decides).

Decided: a question is refused even when it is a polite request ("can you edit it yourself") —
the user grants with an imperative; on-demand and Turkish work signals match at a word start.
"""

from maestro.hooks.policy import NONCODE_EXTENSIONS


class _Lazy:
    """A pattern compiled on first use (and `re` imported then): each hook process pays only for the
    patterns its prompt needs (most prompts never reach the directive patterns)."""

    __slots__ = ("source", "compiled")

    def __init__(self, source: str):
        self.source = source
        self.compiled = None

    def __call__(self):
        if self.compiled is None:
            import re

            self.compiled = re.compile(self.source)
        return self.compiled


# re.escape's table (Python 3.7+), so that building the pattern sources needs no `re`.
_SPECIAL_CHARS = {i: "\\" + chr(i) for i in b"()[]{}?*+-|^$\\.&~# \t\n\r\v\f"}


def _escape(text: str) -> str:
    """re.escape(text), without importing re."""
    return text.translate(_SPECIAL_CHARS)

_APOSTROPHES = ("\u2019", "\u2018", "\u02bc", "\u2032")  # ’ ‘ ʼ ′ → '


_last_fold = ("", "")


def _fold(text: str) -> str:
    """Lower case with the equivalences the old IGNORECASE patterns had (Turkish İ/ı, long s).
    The last result is kept: inject asks three questions of the same (possibly 8 MiB) prompt."""
    global _last_fold
    if _last_fold[0] is text:
        return _last_fold[1]
    original = text
    text = text.lower()
    for odd, plain in (("i\u0307", "i"), ("\u0131", "i"), ("\u017f", "s")):
        if odd in text:
            text = text.replace(odd, plain)
    _last_fold = (original, text)
    return text


def _by_first_char(alternatives) -> str:
    """`(?:a(?:lt1|lt2)|b(?:…))`: alternatives grouped by their first (literal) character, so the
    engine compares one character per group instead of trying every alternative."""
    groups = {}
    for alternative in alternatives:
        groups.setdefault(alternative[0], []).append(alternative[1:])
    return "(?:" + "|".join(_escape(first) + "(?:" + "|".join(rests) + ")" for first, rests in groups.items()) + ")"


def _at_word_start(*alternatives: str) -> str:
    """Alternatives that must start a word, matched together with the character before them
    (searched texts start with a newline, so no word lacks one). A character class first, not
    `\\b`, lets the engine skip straight to the next non-word character."""
    return r"[^\w]" + _by_first_char(alternatives)


# The directive phrases (folded), grouped by a literal tail they share: each family is one scan for
# that tail (a literal-prefix search, the fastest the engine has), then a fixed-width lookbehind per
# phrase checks the words before it and that the phrase starts a word. `kendin yap`/`sen yap`/`sen
# düzenle` are Turkish; `…yapma` is their negation.
_PHRASE_FAMILIES = (
    (" it yourself", r"\b", ("edit it yourself", "do it yourself", "write it yourself")),
    ("yourself this time", r"\b", ("yourself this time",)),
    (" codex", r"\b", ("no codex", "skip codex")),
    ("t delegate", r"\b", ("don't delegate", "dont delegate")),
    ("yap", r"(?!ma)\b", ("kendin yap", "sen yap")),
    ("zenle", r"\b", ("sen düzenle", "sen duzenle")),
)


def _family(tail: str, after: str, phrases) -> tuple:
    checks = "|".join(rf"(?<=[^\w]{_escape(phrase)})()" for phrase in phrases)
    return _Lazy(f"{_escape(tail)}{after}(?:{checks})"), tuple(len(phrase) for phrase in phrases)


_DIRECTIVE_SCANS = tuple(_family(*family) for family in _PHRASE_FAMILIES)
# Cheap substring test first: every directive phrase contains one of these.
_ANCHORS = tuple(tail for tail, _, _ in _PHRASE_FAMILIES)


def _directive_spans(text: str, limit: int):
    """(start, end) of every directive phrase in text order, or None past `limit` phrases."""
    spans = []
    for scan, lengths in _DIRECTIVE_SCANS:
        for match in scan().finditer(text):
            end = match.end()
            spans.append((end - lengths[match.lastindex - 1], end))
            if len(spans) > limit:
                return None
    spans.sort()
    return spans


# Words that take the grant out of the user's voice when they precede it in the same clause. Any
# `n't` contraction (don't, can't, mustn't, …) is caught by its ending alone.
_CONTRACTED_NOT = "n't"
_NEGATIONS = (
    "not", "never", "no need", "dont", "doesnt", "didnt", "cant", "cannot", "wont", "wouldnt",
    "shouldnt", "couldnt", "mustnt", "isnt", "arent", "wasnt", "werent", "havent", "hasnt", "hadnt", "aint",
    "neednt",
)
_STOPS = ("stop", "stops", "stopped", "stopping", "quit", "cease")
_QUESTION_WORDS_ANYWHERE = ("why", "how come")
_MENTIONS = (
    "say", "says", "said", "saying", "typing", "typed", "phrase", "phrases", "word", "words", "mean", "means",
    "meant", "wrote", "quote", "quoted", "quoting", "mention", "mentioned", "mentions", "mentioning",
)
_GUARD_WORD = _at_word_start(*(word + r"\b" for word in (*_NEGATIONS, *_STOPS, *_QUESTION_WORDS_ANYWHERE, *_MENTIONS)))
_GUARD_IN_CLAUSE = _Lazy(_GUARD_WORD)
_BLANK = r"[^\w.!?;\n]"  # punctuation and blanks inside a clause
# A guard word (plus one adverb) that ends a line still guards a directive that opens the next one.
_GUARD_AT_LINE_END = _Lazy(
    rf"(?:n't|{_GUARD_WORD})(?:\s++(?:ever|even|just|really|actually|simply))?\s*+\Z"
)
_FILLERS = ("ok", "okay", "so", "and", "but", "well", "then", "hey", "also", "now", "alright", "right", "please")
_AUXILIARIES = r"(?:will|would|did|do|does|can|could|should|shall|is|are|was|were|am|have|has|had)\b"
_QUESTION_WORDS = (
    "why", "how", "what", "which", "whom", "whose", "who", "is", "are", "am", "was", "were",
    "can", "could", "would", "should", "will", "shall", "may", "might", "did", "does",
    # "when Codex fails, edit it yourself" is a condition; "when will you …" a question
    rf"when(?={_BLANK}++{_AUXILIARIES})", rf"where(?={_BLANK}++{_AUXILIARIES})",
    # `do` right before the directive ("do edit it yourself") is emphasis, not a question
    rf"do(?!{_BLANK}*+\Z)",
    rf"ha(?:ve|s|d)(?={_BLANK}++(?:you|i|we|they|he|she|it|codex|anyone|anybody|someone)\b)",
)
# A clause that opens with a question word, after fillers such as "ok, so" (matched on the clause
# text before the directive).
_QUESTION_START = _Lazy(
    rf"{_BLANK}*+(?:{_by_first_char(_FILLERS)}\b{_BLANK}*+)*+{_by_first_char(_QUESTION_WORDS)}\b"
)
# A prompt that opens by telling Claude to stop grants nothing, whatever follows.
_STOP_PROMPT = _Lazy(r"[^\w]*+(?:stop|quit|cease)\b")
_ENDS_AS_QUESTION = _Lazy(r"[^.!?;\n]*+[.!]*+\?")  # matched from the directive's end
_DELIMITERS = ".!?;\n"
_DOT_INSIDE_WORD = _Lazy(r"\.(?=\w)")  # app.py, 3.5, e.g — not a clause end
MAX_DIRECTIVES = 25_000  # more phrases than this is a paste, not an instruction: no grant

# Code and quotations (the text starts with a newline, so every line does). Fences and quotes that
# never close run to the end (of the text, of the paragraph, of the line for single quotes): an
# unterminated quote fails closed.
_FENCED_CODE = _Lazy(r"\n {0,3}(`{3,}+|~{3,}+)[^\n]*+(?:\n(?! {0,3}\1)[^\n]*+)*+(?:\n[^\n]*+)?")
_CODE_OR_QUOTE_LINE = _Lazy(r"\n(?: {4}| {0,3}\t| {0,3}>)[^\n]*+")
_QUOTE_PAIRS = (
    ('"', '"'), ("`", "`"), ("\u201c", "\u201d"), ("\u201d", "\u201d"), ("\u201e", "\u201c\u201d"),
    ("\u00ab", "\u00bb"), ("\u00bb", "\u00ab"), ("\u2039", "\u203a"), ("\u203a", "\u2039"),
    ("\u300c", "\u300d"), ("\u300e", "\u300f"),
)


def _quoted_span(opener: str, closers: str) -> str:
    stop = _escape(closers) + r"\n"
    return rf"{_escape(opener)}[^{stop}]*+(?:\n(?![ \t]*\n)[^{stop}]*+)*+[{_escape(closers)}]?"


_QUOTED_SPAN = _Lazy(
    "|".join(_quoted_span(opener, closers) for opener, closers in _QUOTE_PAIRS)
    # a single quote opens only where it cannot be an apostrophe, and closes on its own line
    + r"|'(?<!\w')[^'\n]*+(?:'(?=\w)[^'\n]*+)*+'?"
)


def _prepare(prompt: str) -> str:
    text = _fold(prompt)
    for mark in _APOSTROPHES:
        if mark in text:
            text = text.replace(mark, "'")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _user_voice(text: str) -> str:
    """The text without code and quotations, starting with a newline (so every line and clause
    starts after a delimiter), dots inside words neutralised. Each pass runs only when its
    marker occurs at all."""
    text = "\n" + text
    if "```" in text or "~~~" in text:
        text = _FENCED_CODE().sub("\n", text)
    if "\n    " in text or "\t" in text or ">" in text:
        text = _CODE_OR_QUOTE_LINE().sub("\n", text)
    text = _QUOTED_SPAN().sub(" _ ", text)  # a placeholder word: the clause keeps its shape
    if "." in text:
        text = _DOT_INSIDE_WORD().sub("_", text)
    return text


def _guarded(text: str, clause_start: int, start: int, end: int) -> bool:
    """Is the directive text[start:end], first in its clause, out of the user's imperative voice?"""
    before = text[clause_start:start]
    if _CONTRACTED_NOT in before or _GUARD_IN_CLAUSE().search("\n" + before):
        return True  # negated, stopped, reported or asked about ("why")
    if _QUESTION_START().match(before) or _ENDS_AS_QUESTION().match(text, end):
        return True
    if text[clause_start - 1] == "\n" and not before.strip():
        # the directive opens its line: a guard word ending the previous line still applies
        window = text[max(0, clause_start - 256) : clause_start].rstrip()
        return _GUARD_AT_LINE_END().search("\n" + window) is not None
    return False


def opens_gate(prompt: str) -> bool:
    """True when the prompt carries at least one unguarded direct-edit directive.

    Linear: the passes of _user_voice, one literal scan per phrase family, and per phrase only the
    text since the previous phrase (for its clause start) and up to its clause end."""
    text = _prepare(prompt)
    if not any(anchor in text for anchor in _ANCHORS):
        return False  # the common case
    text = _user_voice(text)
    spans = _directive_spans(text, MAX_DIRECTIVES)
    if not spans or _STOP_PROMPT().match(text):
        return False
    searched = 0  # clause ends before this index were already looked for
    for start, end in spans:
        clause_start = max(text.rfind(mark, searched, start) for mark in _DELIMITERS) + 1
        searched = max(searched, start)
        if clause_start == 0:
            continue  # same clause as a directive already found guarded: guarded too
        if not _guarded(text, clause_start, start, end):
            return True
    return False


_APPROVALS = ("onayl", "onay", "evet", "devam", "tamam", "olur", "approve", "ok", "okay", "go", "yes", "proceed")
_APPROVAL = _Lazy(rf"(?i)(?:{'|'.join(_APPROVALS)})[.!]?")
_APPROVAL_MAX_CHARS = 8  # "approve." / "proceed!"


def is_short_approval(prompt: str) -> bool:
    """A standalone acknowledgement continues the current task (and keeps its grant). An ASCII prompt
    is compared as it is (ASCII case-insensitivity is lower()); any other goes to the pattern, whose
    case rules (Kelvin sign, long s, dotted I) are the reference."""
    if len(prompt) > _APPROVAL_MAX_CHARS:
        return False
    if prompt.isascii():
        word = prompt[:-1] if prompt[-1:] in (".", "!") else prompt
        return word.lower() in _APPROVALS
    return _APPROVAL().fullmatch(prompt) is not None


_MODEL_SETUP = _Lazy(r"codex (?:model|settings|effort|config)|pick (?:the )?codex|change codex|set codex")

# The work signals (spec §4), in two scans: a slash command or a code file extension (.py, .rs; not
# .md, .json) anywhere; and at a word start the code words, anything starting with "test", the
# on-demand Codex requests and the Turkish stems (Turkish adds suffixes, never prefixes).
_SLASH_COMMANDS = ("code-review", "apple-design", "improve", "quality-code", "software-architecture-design",
                   "systematic-debugging")
_CODE_WORDS = (  # whole words
    "implement", "refactor", "debug", "crash", "failing", "regression", "endpoint", "schema",
    "migration", "architecture", "fix", "bug", "api", "component", "function", "query", "deploy",
    "optimise", "optimize", "design", "build", "add feature",
)
_WORK_STARTS = (  # a word start followed by this (plain text, or a pattern: see _quick_work_signal)
    "test",
    "delegate to codex", "codex implement", "have codex", "ask codex", "codex'?e yaptir", "grill", "debate",
    "sanity.?check", "discuss with codex", "talk to codex", "second opinion", "tarti[şs]",
    "hata", "düzelt", "mimari", "tasarla", "tasarim", "özellik", "fonksiyon", "bileşen", "sorgu", "entegre",
    "kodla", "geliştir", "çalişmiyor", "patliyor", "bozuldu",
)
_NONCODE = _by_first_char(sorted(NONCODE_EXTENSIONS, key=lambda ext: (-len(ext), ext)))
_WORK_MARKS = _Lazy(
    rf"/(?:{'|'.join(_SLASH_COMMANDS)})\b"
    rf"|\.(?=[a-z])(?!{_NONCODE}\b)[a-z][a-z0-9_]{{0,11}}\b"
)
_WORK_WORDS = _Lazy(_at_word_start(*(word + r"\b" for word in _CODE_WORDS), *_WORK_STARTS))

_PATTERN_CHARS = ".^$*+?{}[]|()\\"
_QUANTIFIERS = "?*+{"


def _literal_start(source: str) -> tuple:
    """(the plain text every match of `source` starts with, whether that is all of it)."""
    cut = next((n for n, char in enumerate(source) if char in _PATTERN_CHARS), len(source))
    if cut == len(source):
        return source, True
    return source[:cut - 1] if source[cut] in _QUANTIFIERS else source[:cut], False


# (text, must end a word, is the whole alternative) per _WORK_WORDS alternative
_WORK_SCANS = tuple((word, True, True) for word in _CODE_WORDS) + tuple(
    (text, False, whole) for text, whole in map(_literal_start, _WORK_STARTS))
_EXTENSION_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")
QUICK_MAX_CHARS = 4096  # a longer prompt goes straight to the patterns (their compile is noise there)
QUICK_MAX_CANDIDATES = 64  # near misses looked at before handing over to the patterns


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"  # the patterns' \w on str (Unicode)


def _quick_work_signal(text: str):
    """has_work_signal's answer on the folded `text` by plain string tests, exactly what _WORK_MARKS and
    _WORK_WORDS would say; None where they must decide (a long prompt, too many near misses, a word
    start followed by an alternative that is itself a pattern)."""
    if len(text) > QUICK_MAX_CHARS:
        return None
    size, left = len(text), QUICK_MAX_CANDIDATES
    for name in _SLASH_COMMANDS:  # `/name` and no word character after it
        at = text.find("/" + name)
        while at >= 0:
            end = at + 1 + len(name)
            if end == size or not _is_word_char(text[end]):
                return True
            left -= 1
            if left < 0:
                return None
            at = text.find("/" + name, at + 1)
    at = text.find(".")  # `.ext`: the whole word after the dot is [a-z][a-z0-9_]{0,11} and not a noncode one
    while at >= 0:
        end = at + 1
        if end < size and "a" <= text[end] <= "z":
            while end < size and _is_word_char(text[end]):
                end += 1
            word = text[at + 1:end]
            if len(word) <= 12 and word not in NONCODE_EXTENSIONS and _EXTENSION_CHARS.issuperset(word):
                return True
            left -= 1
            if left < 0:
                return None
        at = text.find(".", at + 1)
    for literal, word_end, whole in _WORK_SCANS:  # at a word start (the start of the text is one)
        at = text.find(literal)
        while at >= 0:
            if at == 0 or not _is_word_char(text[at - 1]):
                if not whole:
                    return None
                end = at + len(literal)
                if not word_end or end == size or not _is_word_char(text[end]):
                    return True
            left -= 1
            if left < 0:
                return None
            at = text.find(literal, at + 1)
    return False


def asks_model_setup(prompt: str) -> bool:
    text = _fold(prompt)
    return "codex" in text and _MODEL_SETUP().search(text) is not None


def has_work_signal(prompt: str) -> bool:
    """Does the prompt plausibly end in a source change (or ask for a Codex debate)?"""
    text = _fold(prompt)
    quick = _quick_work_signal(text)
    if quick is not None:
        return quick
    return _WORK_MARKS().search(text) is not None or _WORK_WORDS().search("\n" + text) is not None
