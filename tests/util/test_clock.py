"""maestro/util/clock.py: one UTC timestamp format for every record maestro writes."""

import datetime
import re
import time

import pytest

from maestro.util.clock import STAMP_FORMAT, utc_stamp, utc_today

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def test_utc_stamp_of_an_epoch():
    assert utc_stamp(0) == "1970-01-01T00:00:00Z"
    assert utc_stamp(1700000000) == "2023-11-14T22:13:20Z"
    assert utc_stamp(1700000000.999) == "2023-11-14T22:13:20Z"  # seconds, never rounded up


def test_utc_stamp_of_now():
    before = time.time()
    stamp = utc_stamp()
    assert STAMP.fullmatch(stamp)
    assert utc_stamp(int(before)) <= stamp <= utc_stamp(time.time() + 1)


def test_utc_stamp_of_a_datetime_is_formatted_as_given():
    assert utc_stamp(datetime.datetime(2024, 5, 1, 10, 7)) == "2024-05-01T10:07:00Z"
    aware = datetime.datetime(2024, 5, 1, 10, 7, 3, 999999, tzinfo=datetime.timezone.utc)
    assert utc_stamp(aware) == "2024-05-01T10:07:03Z"
    assert STAMP_FORMAT == "%Y-%m-%dT%H:%M:%SZ"


def test_utc_today():
    before = datetime.datetime.now(datetime.UTC).date()
    assert utc_today() in (before, datetime.datetime.now(datetime.UTC).date())  # midnight may pass in between
    minus5 = datetime.timezone(datetime.timedelta(hours=-5))
    assert utc_today(datetime.datetime(2026, 3, 10, 23, 30, tzinfo=minus5)) == datetime.date(2026, 3, 11)
    assert utc_today(datetime.datetime(2026, 3, 10, 23, 30)) == datetime.date(2026, 3, 10)  # naive: taken as UTC
    assert utc_today(datetime.date(2024, 5, 2)) == datetime.date(2024, 5, 2)
