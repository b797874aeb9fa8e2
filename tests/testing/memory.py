"""Helpers for the memory tests: a fixed clock, real `maestro` processes, where the store keeps things.

The fixtures that use them (`mem_root`, `clock`, `store`, `project`, `clean_memory_env`) are in tests/conftest.py."""

import datetime
import hashlib
import os
import subprocess
import sys
from pathlib import Path

from testing.paths import PYZ, ROOT, TARGET, note_launch

CANONICAL_TIME = datetime.datetime(2024, 5, 1, 10, 7)
STAMP_RE = r"\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}\]"


class Clock:
    def __init__(self, now=CANONICAL_TIME):
        self.now = now

    def __call__(self):
        return self.now


def command(*args):
    """argv that runs `maestro <args>` as a separate process against the selected target."""
    note_launch()
    if TARGET == "pyz":
        return [sys.executable, "-I", "-S", str(PYZ), *args]
    return [sys.executable, "-S", "-m", "maestro", *args]  # no `site`, as the archive runs (PYTHONPATH: process_env)


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


def key_file(mem_root, project):
    """Where a project's key track lives: projects/<first 12 hex of sha1(project root)>/KEY.md."""
    digest = hashlib.sha1(os.path.realpath(project).encode()).hexdigest()[:12]
    return mem_root / "projects" / digest / "KEY.md"


def write_track(path, entries) -> None:
    """A track file holding `entries`, as the store writes them (each followed by the § delimiter line)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(("\n§\n".join(entries) + "\n").encode())


def project_dir(mem_root, project) -> Path:
    """Where the store keeps the project tracks of the checkout `project`."""
    return Path(mem_root) / "projects" / hashlib.sha1(os.path.realpath(project).encode()).hexdigest()[:12]


def same_as_files(root, query, monkeypatch, **kwargs) -> list:
    """The texts of a search's hits, after checking that the index's hits equal a parse of the files'."""
    from maestro.memory.store import search as memsearch

    fast = memsearch.search(str(root), query, **kwargs)
    monkeypatch.setenv("MAESTRO_MEMORY_INDEX", "off")
    slow = memsearch.search(str(root), query, **kwargs)
    monkeypatch.delenv("MAESTRO_MEMORY_INDEX")
    assert fast == slow
    return [hit.text for hit in fast]
