"""Usage, rate and quota limit messages (maestro/codex/quota.py, issue 12 §1.4)."""

import pytest

from maestro.codex import quota

pytestmark = pytest.mark.in_process


@pytest.mark.parametrize("text, reset", [
    ("You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro) or try again at 3:45 PM.",
     "at 3:45 PM"),
    ("You've hit your usage limit. Visit https://chatgpt.com/codex/settings/usage to purchase more credits or try "
     "again in 2 days 4 hours 12 minutes.", "in 2 days 4 hours 12 minutes"),
    ("stream error: exceeded retry limit, last status: 429 Too Many Requests", ""),
    ("Codex error: Rate limit reached for gpt-5 in organization org-x on tokens per min. Please try again in 1.2s.",
     "in 1.2s"),
    ("insufficient_quota: You exceeded your current quota, please check your plan and billing details.", ""),
    ("usage_limit_reached (resets at 2026-12-02T00:00:00Z)", "at 2026-12-02T00:00:00Z"),
])
def test_limit_messages_are_recognised_with_their_reset_time(text, reset):
    assert quota.limit_hit(text) == (True, reset)


@pytest.mark.parametrize("text", [
    "", "RESULT: FAILED\ntests/test_app.py::test_login FAILED", "authentication expired; run codex login",
    "Cancelled by user.", "A prompt is required for this Codex run.",
])
def test_other_failures_are_not_limits(text):
    assert quota.limit_hit(text) == (False, "")


def test_only_the_companions_own_codex_error_lines_of_a_log_are_scanned(tmp_path):
    log = tmp_path / "job.log"
    log.write_text("[2026-12-01T10:00:00.000Z] Starting Codex Task.\n"
                   "[2026-12-01T10:00:01.000Z] Running command: pytest -k rate_limit\n"
                   "FAILED tests/test_limits.py::test_429 - AssertionError: error: rate limit not enforced\n"
                   "[2026-12-01T10:00:02.000Z] Command failed: error: usage limit middleware missing (exit 1)\n")
    assert quota.log_errors(str(log)) == "" and quota.limit_hit(quota.log_errors(str(log))) == (False, "")
    with open(log, "a") as handle:
        handle.write("[2026-12-01T10:00:03.000Z] Codex error: You've hit your usage limit. Try again at 3:45 PM.\n")
    assert quota.log_errors(str(log)) == "You've hit your usage limit. Try again at 3:45 PM."
    assert quota.limit_hit(quota.log_errors(str(log))) == (True, "at 3:45 PM")
    assert quota.log_errors(str(tmp_path / "absent.log")) == "" and quota.log_errors("") == ""
