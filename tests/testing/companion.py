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

    def job_log(self, job):
        """A job's log file wherever the fake keeps its state (maestro runs it with a private CLAUDE_PLUGIN_DATA)."""
        return next(self.job_files(f"{job}.log"), self.dir / "state" / "jobs" / f"{job}.log")

    def job_files(self, pattern="task-*.json"):
        """The jobs' own files (`jobs/<id>.json`, `.log`) wherever the fake keeps them: under maestro's private
        CLAUDE_PLUGIN_DATA (~/.maestro/companion-data/<ws>/state/<ws>/jobs/) or, without one, FAKE_COMPANION_STATE."""
        home = self.dir.parent / "home" / ".maestro" / "companion-data"
        return iter(sorted(home.glob(f"*/state/*/jobs/{pattern}")) + sorted(self.dir.glob(f"state/jobs/{pattern}")))

    def brokers(self):
        """Every broker process the fake started (knob broker=true): [{"pid", "state_dir", "data"}]."""
        path = self.dir / "state" / "brokers.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []

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

