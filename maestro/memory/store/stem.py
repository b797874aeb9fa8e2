"""A Porter stemmer (M. F. Porter, 1980, "An algorithm for suffix stripping"), written for maestro.

Why our own: search must run on the standard library alone, and the analyzer (analyze.py) calls this on
every word of every entry and of every prompt, so it is a plain function over str with no imports. The
five steps follow the paper; the only departures are the two common ones of the reference
implementation (step 1b's 'bli'→'ble' rule in step 2 and 'logi'→'log'), which keep more related forms
together. Words of one or two letters, and anything with a digit or a non-ASCII letter, are returned
unchanged: the rules are for English words, and an identifier like 'v2' or 'übung' must not be mangled.
"""

_VOWELS = frozenset("aeiou")


def _is_consonant(word: str, i: int) -> bool:
    char = word[i]
    if char in _VOWELS:
        return False
    if char == "y":
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """m in [C](VC)^m[V]: how many vowel→consonant transitions the stem has."""
    count = 0
    previous_vowel = False
    for i in range(len(stem)):
        vowel = not _is_consonant(stem, i)
        if previous_vowel and not vowel:
            count += 1
        previous_vowel = vowel
    return count


def _has_vowel(stem: str) -> bool:
    return any(not _is_consonant(stem, i) for i in range(len(stem)))


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _is_consonant(word, len(word) - 1)


def _cvc(word: str) -> bool:
    """*o: the word ends consonant-vowel-consonant and the last is not w, x or y (hop, not hoop)."""
    if len(word) < 3:
        return False
    if not (_is_consonant(word, len(word) - 3) and not _is_consonant(word, len(word) - 2)
            and _is_consonant(word, len(word) - 1)):
        return False
    return word[-1] not in "wxy"


def _step1a(word: str) -> str:
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("ies"):
        return word[:-2]
    if word.endswith("ss"):
        return word
    if word.endswith("s"):
        return word[:-1]
    return word


def _step1b(word: str) -> str:
    if word.endswith("eed"):
        return word[:-1] if _measure(word[:-3]) > 0 else word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            if not _has_vowel(stem):
                return word
            if stem.endswith(("at", "bl", "iz")):
                return stem + "e"
            if _double_consonant(stem) and stem[-1] not in "lsz":
                return stem[:-1]
            if _measure(stem) == 1 and _cvc(stem):
                return stem + "e"
            return stem
    return word


def _step1c(word: str) -> str:
    if word.endswith("y") and _has_vowel(word[:-1]):
        return word[:-1] + "i"
    return word


_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
    ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"),
    ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"),
    ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
    ("logi", "log"),
)
_STEP3 = (
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""),
    ("ness", ""),
)
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou",
    "ism", "ate", "iti", "ous", "ive", "ize",
)

_STEP2_ENDS = tuple(suffix for suffix, _ in _STEP2)
_STEP3_ENDS = tuple(suffix for suffix, _ in _STEP3)


def _replace(word: str, rules, ends: tuple, minimum: int) -> str:
    # The longest matching suffix decides, whether or not its condition then holds (as in the paper).
    if not word.endswith(ends):  # most words end in none of them: one C-level check
        return word
    best = None
    for suffix, replacement in rules:
        if word.endswith(suffix) and (best is None or len(suffix) > len(best[0])):
            best = (suffix, replacement)
    if best is None:
        return word
    stem = word[: -len(best[0])]
    return stem + best[1] if _measure(stem) > minimum else word


def _step4(word: str) -> str:
    if not word.endswith(_STEP4):
        return word
    best = ""
    for suffix in _STEP4:
        if word.endswith(suffix) and len(suffix) > len(best):
            best = suffix
    if not best:
        return word
    stem = word[: -len(best)]
    if best == "ion" and not stem.endswith(("s", "t")):
        return word
    return stem if _measure(stem) > 1 else word


def _step5(word: str) -> str:
    if word.endswith("e"):
        stem = word[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _cvc(stem)):
            word = stem
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word


def stem(word: str) -> str:
    """The Porter stem of a lower-case word (unchanged when it is short, numeric or not plain ASCII)."""
    if len(word) <= 2 or not word.isascii() or not word.isalpha():
        return word
    word = _step1a(word)
    word = _step1b(word)
    word = _step1c(word)
    word = _replace(word, _STEP2, _STEP2_ENDS, 0)
    word = _replace(word, _STEP3, _STEP3_ENDS, 0)
    word = _step4(word)
    return _step5(word)
