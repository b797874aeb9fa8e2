"""Calendar days of 'YYYY-MM-DD' stamps without `datetime` (the hooks' hot paths: ~1 ms of import).

`ordinal` equals datetime.date.fromisoformat(stamp[:10]).toordinal() for every stamp that method
accepts in the 'YYYY-MM-DD' form with ASCII digits, and is None where it raises (tests compare the two).
"""

_BEFORE_MONTH = (0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)
_MONTH_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def ordinal(stamp: str):
    """Days since 0001-01-01 (that day is 1) of a stamp starting 'YYYY-MM-DD', or None."""
    if not isinstance(stamp, str) or len(stamp) < 10:
        return None
    day = stamp[:10]
    digits = day[:4] + day[5:7] + day[8:]
    if day[4] != "-" or day[7] != "-" or not digits.isascii() or not digits.isdigit():
        return None
    year, month, date = int(day[:4]), int(day[5:7]), int(day[8:])
    if year < 1 or not 1 <= month <= 12:
        return None
    if not 1 <= date <= _MONTH_DAYS[month] + (month == 2 and _leap(year)):
        return None
    before = year - 1
    return (before * 365 + before // 4 - before // 100 + before // 400 + _BEFORE_MONTH[month]
            + (month > 2 and _leap(year)) + date)


def is_day(value) -> bool:
    """Whether `value` is exactly 'YYYY-MM-DD' (ASCII digits) naming a real calendar day (what `ordinal`
    accepts, without its arithmetic: a daily dir of a year is checked name by name on every recall)."""
    if not isinstance(value, str) or len(value) != 10 or value[4] != "-" or value[7] != "-":
        return False
    digits = value[:4] + value[5:7] + value[8:]
    if not digits.isascii() or not digits.isdigit():
        return False
    year, month, date = int(value[:4]), int(value[5:7]), int(value[8:])
    return year >= 1 and 1 <= month <= 12 and 1 <= date <= _MONTH_DAYS[month] + (month == 2 and _leap(year))
