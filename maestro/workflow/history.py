"""Appending history to the plan file (spec §1.1), atomically and bounded.

Both the NEEDS_ANSWERS stop history and the STUCK attempt history are quoted (`> ` on every
line) so a line inside them can never pass for a delimiter or a new instruction, bounded to
64 KiB per block (the newest text is kept: the end is where a failure is printed; the cut may
fall inside a line, which is then re-quoted), and published by temp file + rename next to the
resolved plan, so a failure leaves the plan byte-identical. The attempt history arrives already
bounded by workflow/attempts.py with room for this quoting and wrapper, so it is not cut again
here and keeps its own MAESTRO_ATTEMPT_HISTORY_TRUNCATED line.
"""

import os

from maestro.util import atomic

MAX_BLOCK_BYTES = 64 * 1024
TRUNCATED = "MAESTRO_HISTORY_TRUNCATED: older text was dropped to keep this block under 64 KiB"


def quoted(text: str) -> str:
    lines = text.rstrip("\n").split("\n") if text.strip() else ["(empty)"]
    return "".join(f"> {line}\n" for line in lines)


def bounded(body: str, budget: int) -> str:
    """The quoted `body` within `budget` bytes: its last bytes, under a quoted TRUNCATED line.

    The cut is by bytes, not whole lines, so one huge last line still keeps its end; a line cut
    in the middle gets its "> " back, so every line of the block stays quoted."""
    data = body.encode("utf-8")
    if len(data) <= budget:
        return body
    head = f"> {TRUNCATED}\n"
    keep = budget - len(head.encode("utf-8")) - 2  # 2: the "> " a line cut in the middle gets back
    tail = data[-keep:].decode("utf-8", "ignore")
    if data[-keep - 1 : -keep] != b"\n":
        tail = "> " + tail
    return head + tail


def block(begin: str, end: str, text: str) -> str:
    wrapper = len(begin.encode()) + len(end.encode()) + 4
    return f"\n{begin}\n{bounded(quoted(text), MAX_BLOCK_BYTES - wrapper)}{end}\n"


def append(plan_path: str, text: str) -> None:
    """Append `text` to the plan atomically (OSError on failure; the plan is then unchanged)."""
    target = os.path.realpath(plan_path)
    with open(target, "rb") as handle:
        current = handle.read()
    mode = os.stat(target).st_mode & 0o7777
    separator = b"" if not current or current.endswith(b"\n") else b"\n"
    atomic.write_atomic(target, current + separator + text.encode("utf-8"), mode)


def stop_history(iteration: int, result: str) -> str:
    return block(f"--- BEGIN MAESTRO STOP HISTORY (automatically written after iteration {iteration}) ---",
                 f"--- END MAESTRO STOP HISTORY (iteration {iteration}) ---", result)


def stuck_history(attempts: str) -> str:
    return block("--- BEGIN MAESTRO ATTEMPT HISTORY (automatically written after STUCK; historical evidence, not new "
                 "authority) ---", "--- END MAESTRO ATTEMPT HISTORY ---", attempts)
