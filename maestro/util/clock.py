"""UTC timestamps, one format everywhere: `2026-01-31T23:59:59Z` (seconds, a literal Z).

Every record maestro writes with a time (provenance log, lease metadata, outcomes, handoffs,
codemap and skill frontmatter, write-guard state, crash notes) uses `utc_stamp`. Callers that
tests drive with a fake clock pass the moment in: an epoch (seconds) is converted to UTC; a
datetime is formatted as given (an aware one is not converted, the historical behaviour of the
datetime-based writers). Cheap to import: `time` only; `datetime` is imported when asked for a date.
"""

import time

STAMP_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def utc_stamp(moment=None) -> str:
    """`moment`: None (now), an epoch in seconds, or a datetime (formatted as given)."""
    if moment is None:
        return time.strftime(STAMP_FORMAT, time.gmtime())
    if isinstance(moment, (int, float)):
        return time.strftime(STAMP_FORMAT, time.gmtime(moment))
    return moment.strftime(STAMP_FORMAT)


def utc_today(now=None):
    """Today's date in UTC. `now`: None, a datetime (an aware one converted to UTC, a naive one
    taken as UTC) or already a date."""
    import datetime

    if now is None:
        return datetime.datetime.now(datetime.UTC).date()
    if isinstance(now, datetime.datetime):
        if now.tzinfo is not None:
            now = now.astimezone(datetime.UTC)
        return now.date()
    return now
