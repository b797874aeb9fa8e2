"""Validated environment knobs (spec §1.0 table). Time is a knob so tests never wait for real
deadlines: every budget comes from here, and small values (decimals allowed) make tests fast.

An invalid value never silently changes behaviour: it yields a warning line (the caller emits it
on the progress channel) and the documented fallback.
"""

import os

from maestro.util.record import record

# value, and a warning: non-empty when the environment held an invalid value. A record (util/record.py),
# not a dataclass or namedtuple: the inject hook imports this module (the memory index's knob), and
# `import dataclasses` costs it ~10 ms, `import collections` ~1.5 ms.
Knob = record("Knob", "value warning", defaults=("",), module=__name__)


def _number(text: str):
    head, dot, tail = text.partition(".")
    if head.isdigit() and (not dot or tail.isdigit()):
        return float(text)
    return None


def seconds(name: str, default: float, *, minimum: float = 0.01, prefix: str = "MAESTRO_POLL",
            invalid=None, message: str = "") -> Knob:
    """A duration in seconds. Unset ⇒ default. Invalid (non-number, below minimum) ⇒ `invalid`
    (default: the default) plus a warning."""
    raw = os.environ.get(name)
    if raw is None:
        return Knob(default)
    value = _number(raw.strip())
    if value is not None and value >= minimum:
        return Knob(value)
    fallback = default if invalid is None else invalid
    text = message or f"{prefix}: ignoring invalid {name}={raw!r}; using {fallback:g}s"
    return Knob(fallback, text)


def max_dispatch(write: bool) -> Knob:
    default = 2400 if write else 1200
    return seconds("MAESTRO_MAX_DISPATCH_SEC", default, invalid=1200,
                   message=f"MAESTRO_POLL: ignoring invalid MAESTRO_MAX_DISPATCH_SEC={os.environ.get('MAESTRO_MAX_DISPATCH_SEC')!r}; using 1200s")


def companion_timeout() -> Knob:
    raw = os.environ.get("MAESTRO_COMPANION_TIMEOUT_SEC")
    return seconds("MAESTRO_COMPANION_TIMEOUT_SEC", 120,
                   message=f"MAESTRO_COMPANION: ignoring invalid timeout_seconds={raw!r}; using 120s")


def verify_timeout() -> Knob:
    return seconds("MAESTRO_VERIFY_TIMEOUT_SEC", 900, prefix="MAESTRO_VERIFY")


def digest_timeout() -> Knob:
    """The tree digest's whole budget (maestro/provenance/digest.py)."""
    raw = os.environ.get("MAESTRO_DIGEST_TIMEOUT_SEC")
    return seconds("MAESTRO_DIGEST_TIMEOUT_SEC", 120,
                   message=f"MAESTRO_DIGEST: ignoring invalid timeout_seconds={raw!r}; using 120s")


def lock_wait() -> Knob:
    """Total time to wait for a busy lease/job lock. 0 = do not wait; invalid ⇒ no waiting."""
    return seconds("MAESTRO_LOCK_WAIT_SEC", 14400, minimum=0, prefix="MAESTRO_LOCK", invalid=0,
                   message=f"MAESTRO_LOCK: ignoring invalid MAESTRO_LOCK_WAIT_SEC={os.environ.get('MAESTRO_LOCK_WAIT_SEC')!r}; waiting is disabled")


def lock_wait_poll(for_job_lock: bool = False) -> Knob:
    if for_job_lock:  # the job lock silently falls back to 1 s (spec §1.0)
        knob = seconds("MAESTRO_LOCK_WAIT_POLL_SEC", 5, minimum=0.01, invalid=1)
        return Knob(knob.value)
    return seconds("MAESTRO_LOCK_WAIT_POLL_SEC", 5, minimum=0.01, prefix="MAESTRO_LOCK", invalid=0,
                   message=f"MAESTRO_LOCK: ignoring invalid MAESTRO_LOCK_WAIT_POLL_SEC={os.environ.get('MAESTRO_LOCK_WAIT_POLL_SEC')!r}; waiting is disabled")


def heartbeat_interval() -> Knob:
    return seconds("MAESTRO_LOCK_HEARTBEAT_INTERVAL_SEC", 20, minimum=0.01, prefix="MAESTRO_LOCK")


def heartbeat_stale() -> Knob:
    """0 = a heartbeat never goes stale."""
    return seconds("MAESTRO_LOCK_HEARTBEAT_STALE_SEC", 90, minimum=0, prefix="MAESTRO_LOCK")


def initializing_grace() -> Knob:
    """How long a lock without metadata counts as 'still initializing' (5 s in the original)."""
    return seconds("MAESTRO_LOCK_INIT_GRACE_SEC", 5, minimum=0, prefix="MAESTRO_LOCK")


def retry_sleep() -> Knob:
    return seconds("MAESTRO_RESULT_RETRY_SEC", 3, minimum=0, prefix="MAESTRO_COMPANION")


def terminate_grace() -> Knob:
    return seconds("MAESTRO_TERM_GRACE_SEC", 2, minimum=0, prefix="MAESTRO_PROCESS")


def count(name: str, default: int, *, minimum: int = 0, maximum: int = None) -> Knob:
    """A whole number the run cannot proceed without (spec §1.0: the discussion bounds). Unlike the
    duration knobs an invalid value is not replaced: `warning` carries the refusal and the caller
    stops with rc 3, because silently debating for a different number of rounds is worse."""
    raw = os.environ.get(name)
    if raw is None:
        return Knob(default)
    text = raw.strip()
    if not text.isdigit() or not text.isascii():
        return Knob(default, f"{name} must be a non-negative integer: {raw!r}")
    value = int(text)
    if value < minimum:
        return Knob(default, f"{name} must be at least {minimum}: {raw!r}")
    if maximum is not None and value > maximum:
        return Knob(default, f"{name} must be at most {maximum}: {raw!r}")
    return Knob(value)


def max_rounds() -> Knob:
    """Claude turns a discussion may hold before it must be decided or escalated."""
    return count("MAESTRO_MAX_ROUNDS", 6, minimum=1)


def discussion_retries() -> Knob:
    """Extra attempts for a discussion turn whose reply was lost (failed job, status loss)."""
    return count("MAESTRO_DISCUSSION_RETRIES", 2, maximum=10)


def discussion_retry_sleep() -> Knob:
    return count("MAESTRO_RETRY_SLEEP", 5)


def recall_budget() -> Knob:
    """How long the inject hook's recall may search (maestro/hooks/recall.py) before the prompt goes on
    without its "Relevant memory" block."""
    return seconds("MAESTRO_RECALL_BUDGET_SEC", 0.25, prefix="MAESTRO_RECALL")


def memory_index_enabled() -> bool:
    """MAESTRO_MEMORY_INDEX=off (also 0/false/no) keeps memory search off its SQLite index
    (maestro/memory/store/index.py): every search parses the track files instead. Same results."""
    return os.environ.get("MAESTRO_MEMORY_INDEX", "").strip().lower() not in ("off", "0", "false", "no")


def queued_stall() -> Knob:
    """How long a companion job may stay `queued` before its wait ends as a stall (issue 12 §1.3)."""
    return seconds("MAESTRO_QUEUED_STALL_SEC", 120)
