"""util.days: the calendar arithmetic the hooks use instead of importing datetime agrees with datetime."""

import datetime
import random

import pytest

from maestro.util import days

pytestmark = pytest.mark.in_process


def expected(stamp):
    try:
        return datetime.date.fromisoformat(stamp[:10]).toordinal()
    except (ValueError, TypeError):
        return None


@pytest.mark.parametrize("stamp", ["0001-01-01", "9999-12-31", "2024-02-29", "2023-02-29", "1900-02-29",
                                   "2000-02-29", "2024-04-31", "2024-13-01", "2024-00-10", "2024-01-00",
                                   "0000-01-01", "2024-05-01 10:00", "2024-5-01", "2024/05/01", "", "2024-05-0",
                                   "２０２４-05-01", "abcd-ef-gh", "2024-05-01T10:00"])
def test_ordinal_agrees_with_datetime(stamp):
    assert days.ordinal(stamp) == expected(stamp)


def test_ordinal_agrees_with_datetime_on_random_days():
    rng = random.Random(1)
    for _ in range(3000):
        stamp = f"{rng.randint(1, 9999):04d}-{rng.randint(0, 13):02d}-{rng.randint(0, 32):02d}"
        assert days.ordinal(stamp) == expected(stamp)


def test_is_day_wants_exactly_a_date():
    assert days.is_day("2024-02-29") and not days.is_day("2023-02-29")
    assert not days.is_day("2024-02-01 ") and not days.is_day(None) and not days.is_day("2024-02-1")


def test_is_day_agrees_with_ordinal_on_random_names():
    rng = random.Random(2)
    for _ in range(3000):
        name = f"{rng.randint(0, 9999):04d}-{rng.randint(0, 13):02d}-{rng.randint(0, 32):02d}"
        assert days.is_day(name) == (days.ordinal(name) is not None)


def test_day_is_the_inverse_of_ordinal_as_datetime_gives_it():
    rng = random.Random(3)
    numbers = [1, 2, 59, 60, 365, 366, 730119, 730120, 3652058, 3652059] + [rng.randint(1, 3652059) for _ in range(5000)]
    for number in numbers:
        assert days.day(number) == datetime.date.fromordinal(number).isoformat()
        assert days.ordinal(days.day(number)) == number
    for number in (0, -1, 3652060):
        with pytest.raises(ValueError):
            days.day(number)


def test_month_length_is_how_many_days_is_day_accepts_in_that_month():
    rng = random.Random(4)
    months = ["2024-02", "2023-02", "1900-02", "2000-02", "0001-01", "9999-12", "0000-01", "2024-00", "2024-13",
              "2024-1", "2024/01", "２０２４-01", "2024-0١", "+024-01", " 024-01", "2024-01 ", None, 202401]
    months += [f"{rng.randint(0, 9999):04d}-{rng.randint(0, 13):02d}" for _ in range(500)]
    for month in months:
        accepted = [d for d in range(1, 40) if days.is_day(f"{month}-{d:02d}")] if isinstance(month, str) else []
        assert days.month_length(month) == len(accepted), month
        assert accepted == list(range(1, len(accepted) + 1)), month
