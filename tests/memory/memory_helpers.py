"""Helpers for the memory store tests: the store root, a fixed clock, real `maestro` processes."""

import datetime
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PYZ, ROOT, TARGET

CANONICAL_TIME = datetime.datetime(2024, 5, 1, 10, 7)
STAMP_RE = r"\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}\]"


@pytest.fixture(autouse=True)
def clean_memory_env(monkeypatch):
    """No test may read a developer's MAESTRO_MEMORY_DIR or lock knob."""
    monkeypatch.delenv("MAESTRO_MEMORY_DIR", raising=False)
    monkeypatch.delenv("MAESTRO_MEMORY_LOCK_TIMEOUT_SEC", raising=False)


@pytest.fixture
def mem_root(home) -> Path:
    return home / ".maestro" / "memory"


class Clock:
    def __init__(self, now=CANONICAL_TIME):
        self.now = now

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(mem_root, clock):
    from maestro.memory.store.tracks import Store

    return Store(str(mem_root), clock=clock)


def command(*args):
    """argv that runs `maestro <args>` as a separate process against the selected target."""
    if TARGET == "pyz":
        return [sys.executable, "-I", "-S", str(PYZ), *args]
    return [sys.executable, "-m", "maestro", *args]


def process_env(extra=None):
    env = dict(os.environ, **(extra or {}))
    if TARGET != "pyz":
        env["PYTHONPATH"] = str(ROOT)
    return env


def spawn(*args, env=None, cwd=None, **kwargs):
    return subprocess.Popen(command(*args), env=process_env(env), cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def site_path() -> str:
    """Where a helper process imports maestro from: the source tree, or inside the archive."""
    return f"{PYZ}/site-packages" if TARGET == "pyz" else str(ROOT)


def all_files(root: Path):
    return sorted(p for p in root.rglob("*") if p.is_file())


def leftovers(root: Path):
    """Temp and lock debris: anything but track files, archives, backups and the permanent lock."""
    return [p for p in all_files(root) if "tmp" in p.name or p.name == ".maestro.lock"]


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env=dict(os.environ, GIT_CONFIG_NOSYSTEM="1"))


def git_repo(path: Path, files=("app.py",), content="VALUE = 1\n") -> Path:
    """A committed git repository at `path` holding `files` (parents created)."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "t@example.com")
    git(path, "config", "user.name", "t")
    for name in files:
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(content)
    git(path, "add", ".")
    git(path, "commit", "-qm", "init")
    return path.resolve()


def key_file(mem_root, project):
    """Where a project's key track lives: projects/<first 12 hex of sha1(project root)>/KEY.md."""
    digest = hashlib.sha1(os.path.realpath(project).encode()).hexdigest()[:12]
    return mem_root / "projects" / digest / "KEY.md"


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "project"
    path.mkdir()
    return path
