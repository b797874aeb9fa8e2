"""The attempts log the loop feeds into each re-dispatch (spec §1.1): what failed and how."""

MAX_LINES = 120
MAX_BYTES = 65536
HEADER = "\n\n--- PRIOR ATTEMPTS IN THIS LOOP (always applies when present) ---\n"
TRUNCATED = "MAESTRO_ATTEMPT_HISTORY_TRUNCATED: older attempt lines were dropped to stay within 120 lines / 64 KiB"


class AttemptsLog:
    def __init__(self):
        self.text = ""

    def add(self, heading: str, body: str) -> None:
        entry = f"## {heading}\n{body.rstrip()}\n" if body.strip() else f"## {heading}\n"
        self.text = self._bounded(self.text + entry)

    @staticmethod
    def _bounded(text: str) -> str:
        lines = text.rstrip("\n").split("\n")
        truncated = False
        if len(lines) > MAX_LINES:
            lines, truncated = lines[-(MAX_LINES - 1):], True
        while len(("\n".join(lines) + "\n").encode()) + len(HEADER) + len(TRUNCATED) + 1 > MAX_BYTES:
            lines, truncated = lines[1:], True
        body = "\n".join(lines) + "\n"
        return f"{TRUNCATED}\n{body}" if truncated else body

    def dispatch_suffix(self) -> str:
        return HEADER + self.text if self.text else ""
