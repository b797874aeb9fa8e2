"""Calendar days of 'YYYY-MM-DD' stamps without `datetime` (the hooks' hot paths: ~1 ms of import).

`ordinal` equals datetime.date.fromisoformat(stamp[:10]).toordinal() for every stamp that method
accepts in the 'YYYY-MM-DD' form with ASCII digits, and is None where it raises; `day` is
datetime.date.fromordinal(n).isoformat() (tests compare them).
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


def month_length(year_month) -> int:
    """The number of days of the month 'YYYY-MM' (ASCII digits, year ≥ 1), 0 when it names no month:
    `is_day(f"{year_month}-{dd}")` holds exactly for the dd of '01'…that number (a year of daily files is
    listed on every recall: one check per month instead of one per name)."""
    if not isinstance(year_month, str) or len(year_month) != 7 or year_month[4] != "-":
        return 0
    digits = year_month[:4] + year_month[5:]
    if not digits.isascii() or not digits.isdigit():
        return 0
    year, month = int(year_month[:4]), int(year_month[5:])
    if year < 1 or not 1 <= month <= 12:
        return 0
    return _MONTH_DAYS[month] + (month == 2 and _leap(year))


def day(number: int) -> str:
    """The 'YYYY-MM-DD' of a day number (1 is 0001-01-01), as datetime.date.fromordinal gives it."""
    if not 1 <= number <= 3652059:  # 9999-12-31
        raise ValueError(f"day number out of range: {number}")
    left = number - 1
    cycles400, left = divmod(left, 146097)
    cycles100, left = divmod(left, 36524)
    cycles4, left = divmod(left, 1461)
    years, left = divmod(left, 365)
    year = cycles400 * 400 + cycles100 * 100 + cycles4 * 4 + years + 1
    if years == 4 or cycles100 == 4:  # the last day of a leap cycle
        return f"{year - 1:04d}-12-31"
    leap = years == 3 and (cycles4 != 24 or cycles100 == 3)
    month = (left + 50) >> 5
    before = _BEFORE_MONTH[month] + (month > 2 and leap)
    if before > left:
        month -= 1
        before -= _MONTH_DAYS[month] + (month == 2 and leap)
    return f"{year:04d}-{month:02d}-{left - before + 1:02d}"
