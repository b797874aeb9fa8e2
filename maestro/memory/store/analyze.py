"""The one text analyzer of memory search: entries are indexed, and queries analyzed, by `terms`.

`terms(text)` casefolds, splits into words (letters and digits; an identifier like `write_guard.py`,
`src/app-main` or `StoreError` is split into its parts, so a query for "guard" or "error" finds it), drops
English stopwords and Porter-stems what is left (stem.py). Order is kept: ranking looks at positions for
phrase and proximity boosts. The same function fills the index and reads the query, so the two always agree.

The inject hook analyzes every real prompt with this, so it stays cheap to import: no `re` for ASCII text
(a translate table splits it, the same words the pattern finds: a test compares them), stem.py, and a
bounded memo of the words it has seen.
"""

# What the index's rows were analyzed with (index.fingerprint): bump it with any change to what `terms`
# returns (here or in stem.py), so every index is rebuilt. tests/memory/store/test_index_analyzer_pin.py
# fails when this code changes and the number does not.
VERSION = 3

# Runs of letters/digits; '_' is a separator too (\w would keep it), so snake_case splits into its parts.
WORD_PATTERN = r"[^\W_]+"
_word = None  # the compiled pattern, for text that is not ASCII
# For ASCII text: every character that is not a letter or digit becomes a space, then str.split.
_ASCII_SEPARATORS = {code: " " for code in range(128) if not chr(code).isalnum()}
# Function words that carry no topic. Short on purpose: words like 'not', 'off', 'first', 'after' or
# 'before' stay, because in a coding memory they change what an entry says ("do not squash", "after the
# merge").
STOPWORDS = frozenset(
    """a about am an and are as at be been being but by can could did do does doing for from had has have
    having he her here hers herself him himself his how i if in into is it its itself just me my myself
    of on or our ours ourselves she so some such than that the their theirs them themselves then there
    these they this those to too us very was we were what when where which while who whom why will with
    would you your yours yourself yourselves also any each other s t ll re ve d m""".split()
)

_MEMO_LIMIT = 50_000
_memo: dict = {}  # a word as written → its terms (an entry store repeats a small vocabulary many times)


def _word_terms(word: str) -> tuple:
    """The terms of one word as written: camelCase parts, casefolded, stopwords out, stemmed."""
    from maestro.memory.store.stem import stem

    out = []
    for part in _parts(word):
        folded = part.casefold()
        if folded not in STOPWORDS:
            out.append(stem(folded))
    return tuple(out)


def _parts(word: str) -> list:
    """A mixed-case word split at its camelCase boundaries, then the whole word: 'StoreError' →
    Store, Error, StoreError ('store error' and 'storeerror' both find it); 'HTTPServer' → HTTP, Server,
    HTTPServer. Words in one case (and scripts without case) stay whole."""
    if word.lower() == word or word.upper() == word:
        return [word]
    parts = []
    start = 0
    for i in range(1, len(word)):
        before, char = word[i - 1], word[i]
        if (before.islower() and char.isupper()) or (
            before.isupper() and char.isupper() and i + 1 < len(word) and word[i + 1].islower()
        ):
            parts.append(word[start:i])
            start = i
    if not parts:
        return [word]
    parts.append(word[start:])
    parts.append(word)
    return parts


def terms(text: str) -> list:
    """The analyzed terms of `text`, in order: casefolded, split, stopwords removed, stemmed."""
    out = []
    memo = _memo
    for word in word_runs(text):
        found = memo.get(word)
        if found is None:
            found = _word_terms(word)
            if len(memo) >= _MEMO_LIMIT:
                memo.clear()
            memo[word] = found
        out.extend(found)
    return out


def word_runs(text: str) -> list:
    """The runs of letters and digits of `text`, as WORD_PATTERN finds them (session-start's relevance
    splits its words with it too)."""
    global _word
    if text.isascii():
        return text.translate(_ASCII_SEPARATORS).split()
    if _word is None:
        import re

        _word = re.compile(WORD_PATTERN)
    return _word.findall(text)
