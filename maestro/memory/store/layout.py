"""Where each track lives under the store root (spec memory.md §2.1).

    MEMORY.md, USER.md (+ -archive.md)           global (alias memory), user
    daily/YYYY-MM-DD.md                          daily (local date)
    projects/<h>/MEMORY.md, KEY.md (+ archives)  project (timeline), key (decisions)
    projects/<h>/REFERENCE.md                    reference
    .maestro-memory/                             write-block.json, store.lock, later: backups, flags, sync

`<h>` is the first 12 hex digits of the sha1 of the project root: the git toplevel of the working
directory, else the directory itself (dsh hashed the raw cwd; a session started at the repository
root gives the same hash, one started in a subdirectory now shares the project's files).
"""

import collections
import datetime
import os
import re

from maestro import paths
from maestro.memory.store.errors import StoreError

TRACKS = ("memory", "user", "project", "key", "daily", "reference")
ALIASES = {"global": "memory"}
PROJECT_TRACKS = ("project", "key", "reference")
_FILES = {"memory": "MEMORY.md", "user": "USER.md", "project": "MEMORY.md", "key": "KEY.md",
          "reference": "REFERENCE.md"}
_ARCHIVES = {"memory": "MEMORY-archive.md", "user": "USER-archive.md", "project": "MEMORY-archive.md",
             "key": "KEY-archive.md"}
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
META_DIR = ".maestro-memory"


def track_name(name: str) -> str:
    track = ALIASES.get(name, name)
    if track not in TRACKS:
        raise StoreError(f"unknown track '{name}' (tracks: global|memory, user, project, key, daily, reference)",
                         "usage")
    return track


def check_date(value: str) -> str:
    """A daily file name: YYYY-MM-DD and a real calendar day (also the path-traversal guard)."""
    if not isinstance(value, str) or not _DATE.fullmatch(value):
        raise StoreError(f"invalid date {value!r} (expected YYYY-MM-DD)", "usage")
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        raise StoreError(f"invalid date {value!r} (no such day)", "usage") from None
    return value


def project_hash(project_root: str) -> str:
    try:  # the builtin module: importing hashlib (OpenSSL) costs session-start ~2 ms
        from _sha1 import sha1
    except ImportError:  # pragma: no cover - a build without it
        from hashlib import sha1
    return sha1(project_root.encode("utf-8", "surrogateescape")).hexdigest()[:12]


def project_root(cwd: str = None) -> str:
    from maestro.util import git as gitscope

    directory = os.path.realpath(cwd or os.getcwd())
    if not os.path.isdir(directory):
        raise StoreError(f"not a directory: {cwd}", "usage")
    return gitscope.toplevel(directory) or directory


class Target(collections.namedtuple("Target", "track path archive", defaults=(None,))):
    """One track file, resolved: what a read or a write of that track touches (`archive` None:
    the track has no archive). Namedtuples, not dataclasses: the session-start hook imports this."""

    __slots__ = ()

    @property
    def daily(self) -> bool:
        return self.track == "daily"


class Layout(collections.namedtuple("Layout", "root")):
    __slots__ = ()

    @classmethod
    def default(cls) -> "Layout":
        return cls(paths.memory_dir())

    @property
    def meta_dir(self) -> str:
        return os.path.join(self.root, META_DIR)

    @property
    def write_block(self) -> str:
        return os.path.join(self.meta_dir, "write-block.json")

    @property
    def lock_file(self) -> str:
        return os.path.join(self.meta_dir, "store.lock")

    @property
    def daily_dir(self) -> str:
        return os.path.join(self.root, "daily")

    def project_dir(self, project_root: str) -> str:
        return os.path.join(self.root, "projects", project_hash(project_root))

    def target(self, track: str, project: str = None, date: str = None) -> Target:
        """`project` is a project root (see `project_root`); `date` a daily date (default: today)."""
        track = track_name(track)
        if track == "daily":
            day = check_date(date) if date is not None else datetime.date.today().isoformat()
            return Target(track, os.path.join(self.daily_dir, f"{day}.md"))
        if track in PROJECT_TRACKS:
            if not project:
                raise StoreError(f"the {track} track needs a project directory (--cwd)", "usage")
            base = self.project_dir(project)
        else:
            base = self.root
        archive = os.path.join(base, _ARCHIVES[track]) if track in _ARCHIVES else None
        return Target(track, os.path.join(base, _FILES[track]), archive)
