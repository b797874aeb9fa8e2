"""The fake Codex companion (tests/fixtures/fake_companion.py) as a test drives it: knobs it re-reads at every
call, and the log of the calls it received. The `fake` fixture (tests/conftest.py) points maestro at it."""

import json
import os


class FakeCompanion:
    def __init__(self, tmp_path):
        self.dir = tmp_path / "fake"
        self.dir.mkdir()
        self.knobs_path = self.dir / "knobs.json"
        self.call_log = self.dir / "calls.jsonl"
        self.set()

    def set(self, **knobs):
        tmp = self.knobs_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(knobs))
        os.replace(tmp, self.knobs_path)  # the fake re-reads the file at every call

    def calls(self, subcommand=None):
        if not self.call_log.exists():
            return []
        # Only whole lines: the fake may be appending one while we read, and a reader can see part of it.
        complete = self.call_log.read_text().split("\n")[:-1]
        entries = [json.loads(line) for line in complete if line.strip()]
        return [e for e in entries if subcommand is None or (e["argv"][:1] == [subcommand])]

    def prompts(self):
        """The prompt of each `task` launch (the argument after `--`, or the prompt file's text)."""
        found = []
        for entry in self.calls("task"):
            argv = entry["argv"]
            found.append(argv[argv.index("--") + 1] if "--" in argv else entry.get("prompt", ""))
        return found

