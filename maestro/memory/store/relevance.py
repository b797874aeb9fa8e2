"""Which project-timeline entries session-start shows: the newest, plus the ones most relevant to what
the session is about (issue 11 §4), instead of only the newest four.

"What the session is about" (`focus`) is the text session-start already knows: the branch name and the
open tasks' titles, what they were doing and the files they changed (maestro/memory/project/context.py
`focus`). Relevance is looked for among the newest WINDOW entries of the timeline (read from the file's
end like the rest of the snapshot, so a 20,000-entry store costs no more than a small one): each focus
word found in an entry adds its rarity in that window (a word in every entry adds almost nothing). The
newest entry is always kept; the other slots go to the highest scores (ties to the newer entry); slots
no entry scores for go to the newest ones left, as before. The list ends with the newest and the most
relevant just before it, because the section's cap keeps entries from the end (snapshot.fit). Pure and
cheap: words are split as search splits them (analyze.word_runs: no pattern to compile for ASCII text).
"""

import math

from maestro.memory.store.analyze import STOPWORDS, word_runs

WINDOW = 60
MIN_WORD = 3
# branch names that say nothing about the work
_PLAIN_BRANCHES = frozenset(("main", "master", "develop", "development", "trunk", "head", "dev"))


def words(text: str) -> set:
    """The casefolded words of `text` worth matching: letters and digits (a path or a snake_case name is
    split into its parts), at least MIN_WORD long, no stopword, no plain branch name."""
    return {word for word in (w.casefold() for w in word_runs(text))
            if len(word) >= MIN_WORD and word not in STOPWORDS and word not in _PLAIN_BRANCHES}


def _found(entry: str, wanted: set) -> set:
    """`words(entry) & wanted`, cheaper (session-start looks at WINDOW entries of a big store): an entry
    that holds no wanted word even as a substring of its casefolded text (casefold maps character by
    character, so each of its casefolded words is one) has none; `wanted` holds only words that pass
    words()' filter, so the entry's words need no filtering; an ASCII entry is lower-cased once (ASCII
    casefold is lower(), and it moves no word boundary — a non-ASCII casefold can: `İ` becomes `i` and
    a combining dot, so there each word is casefolded alone)."""
    ascii_only = entry.isascii()
    folded = entry.lower() if ascii_only else entry.casefold()
    if not any(word in folded for word in wanted):
        return set()
    if ascii_only:
        return wanted.intersection(word_runs(folded))
    return wanted.intersection(map(str.casefold, word_runs(entry)))


def choose(entries: list, focus: str, keep: int) -> list:
    """At most `keep` of `entries` (file order, newest last): the newest last, the most relevant to `focus`
    before it, less relevant further up. Without focus words, or with at most `keep` entries: the newest
    `keep`, in file order."""
    wanted = words(focus) if focus else set()
    if not wanted or len(entries) <= keep or keep < 2:
        return entries[-keep:] if keep > 0 else []
    window = entries[-WINDOW:]
    found = [_found(entry, wanted) for entry in window]
    df = {}
    for hit in found:
        for word in hit:
            df[word] = df.get(word, 0) + 1
    n = len(window)
    scores = [sum(math.log((n + 1) / (df[word] + 0.5)) for word in hit) for hit in found]
    newest = n - 1
    ranked = sorted(range(newest), key=lambda i: (-scores[i], -i))
    picked = [i for i in ranked if scores[i] > 0][: keep - 1]
    picked += [i for i in range(newest - 1, -1, -1) if i not in picked][: keep - 1 - len(picked)]
    return [window[i] for i in reversed(picked)] + [window[newest]]
