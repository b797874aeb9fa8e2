"""Dates named in a search query ("on May 3, 2023", "in June", "2026-02-04", "between August 11 and
August 15 2023"), so ranking can favour the entries stamped then.

Why: an entry's stamp is not in its text, so "what did we decide on 4 February" finds the words but not the
day. `mentions(query)` returns what the query names, each as a `When` (a year, month and day, any of them
None when not said, or an inclusive range of days) and `matches(whens, date)` says whether an entry's
'YYYY-MM-DD…' stamp falls on one. English month names only; anything else is left to the words.
Imported by rank.search only when the query holds a digit or a month name (the pattern compiles then).
"""

_NAMES = (
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
    ("november", "nov"), ("december", "dec"))
MONTHS = {name: number for number, names in enumerate(_NAMES, start=1) for name in names}
# Full names only decide whether to look at all (without a digit, 'mar' or 'dec' alone is a word).
_FULL_NAMES = tuple(names[0] for names in _NAMES)
_pattern = None


def _compiled():
    global _pattern
    if _pattern is None:
        import re

        month = "(?P<{0}>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
        day = r"(?P<{0}>[0-3]?\d)(?:st|nd|rd|th)?"
        year = r"(?P<{0}>(?:19|20)\d\d)"
        forms = [
            r"(?P<iy>(?:19|20)\d\d)-(?P<im>[01]\d)-(?P<id>[0-3]\d)",
            month.format("am") + r"\s+" + day.format("ad") + r"(?:,?\s+" + year.format("ay") + ")?",
            day.format("bd") + r"\s+(?:of\s+)?" + month.format("bm") + r"(?:,?\s+" + year.format("by") + ")?",
            month.format("cm") + r"(?:,?\s+" + year.format("cy") + ")?",
            year.format("dy"),
        ]
        _pattern = re.compile(r"\b(?:" + "|".join(f"(?:{form})" for form in forms) + r")\b", re.IGNORECASE)
    return _pattern


def _number(text):
    return int(text) if text else None


def mentions(query: str) -> list:
    """The dates `query` names, as (year, month, day) with None for what it leaves out, in order; a
    'between A and B' / 'from A to B' pair of full dates becomes one ('range', first day, last day)."""
    lowered = query.lower()
    if not any(c.isdigit() for c in lowered) and not any(name in lowered for name in _FULL_NAMES):
        return []
    found = []
    for match in _compiled().finditer(query):
        parts = match.groupdict()
        if parts["iy"]:
            when = (int(parts["iy"]), int(parts["im"]), int(parts["id"]))
        elif parts["am"]:
            when = (_number(parts["ay"]), MONTHS[parts["am"].lower().rstrip(".")], int(parts["ad"]))
        elif parts["bm"]:
            when = (_number(parts["by"]), MONTHS[parts["bm"].lower().rstrip(".")], int(parts["bd"]))
        elif parts["cm"]:
            name = parts["cm"].lower().rstrip(".")
            if len(name) < 4 and name != "may" and not parts["cy"]:
                continue  # a bare 'mar' or 'dec' is a word, not a month
            if name == "may" and not parts["cy"] and not query[match.start()].isupper():
                continue  # 'may' the verb
            when = (_number(parts["cy"]), MONTHS[name], None)
        else:
            when = (int(parts["dy"]), None, None)
        if when[2] is not None and not 1 <= when[2] <= 31 or when[1] is not None and not 1 <= when[1] <= 12:
            continue
        found.append(when)
    return _ranges(query.lower(), found)


def _ordinal(when):
    import datetime  # only for queries that name a date: the hooks' prompts mostly do not

    try:
        return datetime.date(*when).toordinal()
    except (TypeError, ValueError):
        return None


def _ranges(lowered: str, found: list) -> list:
    if len(found) == 2 and ("between" in lowered or "from" in lowered):
        first, last = found
        if first[0] is None:
            first = (last[0],) + first[1:]
        start, end = _ordinal(first), _ordinal(last)
        if start is not None and end is not None and start <= end:
            return [("range", start, end)]
    return found


def matches(whens, date: str) -> bool:
    """Whether an entry stamped `date` ('YYYY-MM-DD…') falls on one of `whens`."""
    import datetime

    try:
        day = datetime.date.fromisoformat(date[:10])
    except (ValueError, TypeError):
        return False
    for when in whens:
        if when[0] == "range":
            if when[1] <= day.toordinal() <= when[2]:
                return True
        elif all(want is None or want == got for want, got in zip(when, (day.year, day.month, day.day))):
            return True
    return False
