"""Machines for the sync tests (tests/memory/store/test_sync_*.py), in-process: each machine is its own
memory store (its own root, a fixed clock) and its own clone of one project repository at its own path;
they all meet on one local bare repository (no network). The domain functions are called directly."""

import subprocess
from pathlib import Path

from testing.git import git, git_repo
from testing.memory import Clock

from maestro.memory.store import layout
from maestro.memory.store import sync
from maestro.memory.store.todos import Todos
from maestro.memory.store.tracks import Store

FILES = sync.FILES


class Machine:
    def __init__(self, world, name: str, checkout: Path):
        self.world, self.name, self.checkout = world, name, checkout
        self.store = Store(str(world.base / f"machine-{name}" / "memory"), clock=Clock())
        self.todos = Todos(self.store)
        self.enabled = False

    @property
    def cwd(self) -> str:
        return str(self.checkout)

    @property
    def project_dir(self) -> Path:
        return Path(self.store.layout.project_dir(layout.project_root(self.cwd)))

    def sync(self, **kwargs) -> dict:
        """One `memory sync` (`--remote` the first time); raises SyncError like the domain does."""
        remote = None if self.enabled else self.world.remote_url
        result = sync.sync(self.store, self.cwd, remote=remote, **kwargs)
        self.enabled = True
        return result

    def conflicted_sync(self) -> list:
        """A sync expected to stop on conflicts: the conflicts it recorded."""
        try:
            self.sync()
        except sync.SyncError as exc:
            assert exc.reason == "conflict", exc.message
            return exc.result["conflicts"]
        raise AssertionError(f"{self.name}: the sync found no conflict")

    def resolve(self, how: str, only_id=None) -> list:
        return sync.resolve(self.store, how, self.cwd, only_id)

    def add(self, text: str, track: str = "key") -> str:
        return self.store.add(track, text, cwd=self.cwd).entry

    def replace(self, match: str, text: str, track: str = "key") -> None:
        self.store.replace(track, match, text, cwd=self.cwd)

    def remove(self, match: str, track: str = "key") -> None:
        self.store.remove(track, match, cwd=self.cwd)

    def entries(self, name: str = "KEY.md") -> list:
        data = self.file(name)
        return sync.grammar.parse_entries(data.decode()) if data else []

    def file(self, name: str) -> bytes:
        """A synced file's bytes (a missing file reads as empty: sync writes none for nothing)."""
        path = self.project_dir / name
        return path.read_bytes() if path.exists() else b""

    def files(self) -> dict:
        return {name: self.file(name) for name in FILES}


class World:
    """`machines` clones of one repository at different paths, and the bare memory remote."""

    def __init__(self, base: Path, machines=("one", "two")):
        self.base = base
        base.mkdir(parents=True, exist_ok=True)
        self.origin = git_repo(base / "origin", {"README.md": "the project\n"})
        self.remote = base / "memory.git"
        subprocess.run(["git", "init", "-q", "--bare", str(self.remote)], check=True, capture_output=True)
        self.remote_url = str(self.remote)
        self.machines = {}
        for index, name in enumerate(machines):
            checkout = base / f"machine-{name}" / ("src" if index % 2 else "code") / f"work-{index}" / "project"
            checkout.parent.mkdir(parents=True)
            git(checkout.parent, "clone", "-q", str(self.origin), str(checkout))
            self.machines[name] = Machine(self, name, checkout)

    def __getitem__(self, name: str) -> Machine:
        return self.machines[name]

    def remote_file(self, key: str, name: str = "KEY.md") -> bytes:
        done = subprocess.run(["git", "--git-dir", str(self.remote), "show",
                               f"maestro-memory/{key}:projects/{key}/{name}"], capture_output=True)
        return done.stdout if done.returncode == 0 else b""

    def remote_branches(self) -> list:
        out = subprocess.run(["git", "--git-dir", str(self.remote), "branch", "--format=%(refname:short)"],
                             capture_output=True, check=True).stdout.decode()
        return sorted(out.split())
