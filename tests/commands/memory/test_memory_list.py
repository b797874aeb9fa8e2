"""`memory list --date`: an invalid day is a usage error (issue 16 item 11: it printed an error and exited 0)."""

import json

import pytest

from maestro.errors import Exit


@pytest.mark.parametrize("date", ["yesterday", "2024-02-30", "../../x", "2024-1-2", ""])
def test_an_invalid_date_exits_with_the_usage_code_and_lists_nothing(maestro, home, date):
    result = maestro("memory", "list", "daily", "--date", date)
    assert (result.rc, result.out) == (Exit.USAGE, "")
    assert result.err.startswith(f"maestro memory list: invalid date {date!r} (") and result.err.count("\n") == 1
    assert not (home / ".maestro" / "memory" / "daily").exists()


def test_an_invalid_date_in_json_mode_is_a_failed_envelope(maestro):
    result = maestro("memory", "list", "daily", "--date", "yesterday", "--json")
    assert result.rc == Exit.USAGE
    envelope = json.loads(result.out)
    assert envelope["ok"] is False and envelope["error"]["reason"] == "usage"
    assert "invalid date 'yesterday'" in envelope["error"]["message"]


def test_a_valid_date_without_entries_lists_nothing_and_exits_0(maestro):
    result = maestro("memory", "list", "daily", "--date", "2024-02-29")
    assert (result.rc, result.out, result.err) == (0, "", "")


def test_date_on_another_track_is_still_refused(maestro):
    result = maestro("memory", "list", "user", "--date", "yesterday")
    assert result.rc == Exit.USAGE and "--date applies to the daily track only" in result.err
