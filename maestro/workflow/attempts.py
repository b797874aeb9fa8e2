"""The attempts log the loop feeds into each re-dispatch (spec §1.1): what failed and how.

Bounded like the original's `attempt_history_bound`: the last 120 lines, then the last bytes
that fit, so the end of the evidence (where a verifier prints its failure) always survives and
the head is what goes; a `MAESTRO_ATTEMPT_HISTORY_TRUNCATED` line marks the cut. The byte cut
may start inside a line: with one 200 KiB line, its end is the evidence. The byte budget leaves
room for the wrappers the text is shown in (the dispatch header here, the plan's quoted
attempt history in workflow/history.py: "> " on every line and its BEGIN/END lines), so neither
has to cut again and lose the marker.
"""

MAX_LINES = 120
MAX_BYTES = 65536
HEADER = "\n\n--- PRIOR ATTEMPTS IN THIS LOOP (always applies when present) ---\n"
TRUNCATED = ("MAESTRO_ATTEMPT_HISTORY_TRUNCATED: earlier attempt text was dropped to stay within 120 lines / 64 KiB; "
             "the most recent evidence is kept")
WRAPPER_RESERVE = 256  # the larger wrapper: the plan history's BEGIN/END lines (~170 bytes); HEADER is ~70
QUOTE_RESERVE = 2 * (MAX_LINES + 1)  # "> " before every line when written into the plan
BUDGET = MAX_BYTES - WRAPPER_RESERVE - QUOTE_RESERVE


class AttemptsLog:
    def __init__(self):
        self.text = ""

    def add(self, heading: str, body: str) -> None:
        entry = f"## {heading}\n{body.rstrip()}\n" if body.strip() else f"## {heading}\n"
        self.text = bounded(self.text + entry)

    def dispatch_suffix(self) -> str:
        return HEADER + self.text if self.text else ""


def bounded(text: str) -> str:
    """`text` within MAX_LINES lines and BUDGET bytes, marker included: the tail is kept."""
    lines = text.rstrip("\n").split("\n")
    truncated = lines[0] == TRUNCATED  # an earlier cut: its marker is re-added on top, never kept inside
    if truncated:
        lines = lines[1:]
    if len(lines) > (MAX_LINES - 1 if truncated else MAX_LINES):
        lines, truncated = lines[-(MAX_LINES - 1):], True
    body = "\n".join(lines) + "\n"
    data = body.encode("utf-8")
    marker = (TRUNCATED + "\n").encode("utf-8")
    if len(data) > (BUDGET - len(marker) if truncated else BUDGET):
        # A cut inside a multi-byte character loses that character's head only ("ignore").
        body, truncated = data[-(BUDGET - len(marker)):].decode("utf-8", "ignore"), True
    return f"{TRUNCATED}\n{body}" if truncated else body
