"""Usage, rate and quota limits in a Codex job's failure text (issue 12 §1.4).

A job that ran into the plan's usage limit did not fail the plan: the loop ends BLOCKED with
reason `quota` (and the reset time when the message names one) instead of counting an attempt.
The texts are Codex's own (codex-rs: "You've hit your usage limit. … try again at 3:45 PM.",
"… try again in 2 days 4 hours.", a 429 "Too Many Requests" after its retries, "Quota exceeded",
the API codes `usage_limit_reached`, `rate_limit_exceeded`, `insufficient_quota`).

Only Codex's own failure text is scanned: the job's `errorMessage` and the companion's own
`[<ISO time>] Codex error: …` log lines (lib/codex.mjs). Never the result text, the job's summary
(the plan's first line) or command output: a plan or a reply about rate-limit middleware, or a
test named test_429, is not a usage limit.
"""

import os
import re

_LIMIT = re.compile(
    r"usage[ _-]limit|rate[ _-]limit|quota[ _-]?exceeded|exceeded (?:your|the) (?:current )?quota|insufficient[ _]quota"
    r"|too many requests|\b429\b.{0,40}(?:requests|limit)|hit your (?:usage )?limit",
    re.IGNORECASE)
_RESET = re.compile(
    r"(?:try again|resets?|reset time|available again|retry)\s*(?:is\s+)?(at|in|after|on)\s+"
    r"(.{1,80}?)(?=\.\s|\.$|\)|$|\n|,\s*(?:or|and)\b)",
    re.IGNORECASE | re.MULTILINE)
MAX_SCAN = 65536
LOG_TAIL_BYTES = 8192
_CODEX_ERROR_LINE = re.compile(r"^\[\d{4}-\d\d-\d\dT[0-9:.]+Z?\] Codex error: (.*)$", re.MULTILINE)


def log_errors(log_file: str) -> str:
    """The companion's own `Codex error: …` lines at the end of a job's log (their messages), or ''."""
    try:
        with open(log_file, "rb") as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - LOG_TAIL_BYTES))
            tail = handle.read().decode("utf-8", "replace")
    except (OSError, TypeError, ValueError):
        return ""
    return "\n".join(_CODEX_ERROR_LINE.findall(tail))


def limit_hit(text: str):
    """(True, reset text or '') when `text` reports a usage/rate/quota limit, else (False, '')."""
    text = (text or "")[-MAX_SCAN:]
    match = _LIMIT.search(text)
    if match is None:
        return False, ""
    reset = _RESET.search(text, max(0, match.start() - 200))
    if reset is None:
        return True, ""
    when = " ".join(reset.group(2).split())
    return True, f"{reset.group(1).lower()} {when}"
