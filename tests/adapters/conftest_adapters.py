"""Helpers and fixtures for the write/read adapters: a real git repo, the fake companion, pinned Codex models,
and a runner that starts maestro as a real process (source tree or built archive)."""

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

import pytest
from conftest import PYZ, ROOT, TARGET

FAKE = ROOT / "tests" / "fixtures" / "fake_companion.py"


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    path = tmp_path / "repo"
    path.mkdir()
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "t@example.com")
    git(path, "config", "user.name", "t")
    (path / "app.py").write_text("VALUE = 1\n")
    git(path, "add", ".")
    git(path, "commit", "-qm", "init")
    monkeypatch.chdir(path)
    return path


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
        entries = [json.loads(line) for line in self.call_log.read_text().splitlines() if line.strip()]
        return [e for e in entries if subcommand is None or (e["argv"][:1] == [subcommand])]

    def prompts(self):
        """The prompt of each `task` launch (the argument after `--`, or the prompt file's text)."""
        found = []
        for entry in self.calls("task"):
            argv = entry["argv"]
            found.append(argv[argv.index("--") + 1] if "--" in argv else entry.get("prompt", ""))
        return found


@pytest.fixture
def fake(tmp_path, monkeypatch, home):
    companion = FakeCompanion(tmp_path)
    monkeypatch.setenv("MAESTRO_COMPANION", str(FAKE))
    monkeypatch.setenv("FAKE_COMPANION_STATE", str(companion.dir / "state"))
    monkeypatch.setenv("FAKE_COMPANION_KNOBS", str(companion.knobs_path))
    monkeypatch.setenv("FAKE_COMPANION_CALL_LOG", str(companion.call_log))
    monkeypatch.setenv("MAESTRO_RESULT_RETRY_SEC", "0.05")
    monkeypatch.setenv("MAESTRO_TERM_GRACE_SEC", "0.2")
    codex = home / ".codex"
    codex.mkdir(exist_ok=True)
    (codex / "config.toml").write_text('model = "gpt-test"\nmodel_reasoning_effort = "high"\n')
    (codex / "maestro-impl-effort").write_text("medium\n")
    return companion


@dataclass
class Run:
    rc: int
    out: str
    err: str

    @property
    def lines(self):
        return self.out.splitlines()

    def final(self):
        return self.lines[-1] if self.lines else ""


def command(*args):
    if TARGET == "pyz":
        return [sys.executable, "-I", "-S", str(PYZ), *args]
    return [sys.executable, "-c", "import sys; sys.path.insert(0, %r); from maestro.cli import main; "
            "raise SystemExit(main(sys.argv[1:]))" % str(ROOT), *args]


def run(*args, cwd=None, timeout=60, env=None, stdin="") -> Run:
    proc = subprocess.run(command(*args), cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})), input=stdin)
    return Run(proc.returncode, proc.stdout, proc.stderr)


_STARTED = []


def start(*args, cwd=None, env=None) -> subprocess.Popen:
    proc = subprocess.Popen(command(*args), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, **(env or {})), start_new_session=True)
    _STARTED.append(proc)
    return proc


@pytest.fixture(autouse=True)
def reap_started():
    """A test that fails mid-way must not leave a maestro process (or its pipes) behind."""
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.communicate()


def wait_for(predicate, timeout=10.0, step=0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False


def finish(proc: subprocess.Popen, sig=None, timeout=30) -> Run:
    if sig is not None:
        os.kill(proc.pid, sig)
    out, err = proc.communicate(timeout=timeout)
    return Run(proc.returncode, out, err)


TERM = signal.SIGTERM
