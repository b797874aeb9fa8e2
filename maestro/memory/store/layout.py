"""Where each track lives under the store root (spec memory.md §2.1).

    MEMORY.md, USER.md (+ -archive.md)           global (alias memory), user
    daily/YYYY-MM-DD.md                          daily (local date)
    projects/<h>/MEMORY.md, KEY.md (+ archives)  project (timeline), key (decisions)
    projects/<h>/REFERENCE.md                    reference
    .maestro-memory/                             write-block.json, store.lock, later: backups, flags, sync

`<h>` is the first 12 hex digits of the sha1 of the project root: the git toplevel of the real
path of the working directory, else (git missing, slow, or refusing a checkout another user owns)
the nearest directory holding `.git`, else the directory itself. dsh hashed the raw cwd; here a
session started in a subdirectory or through a symlinked checkout path shares the project's files.
`project_root` (commands) and `locate` (the session-start hook, with the branch) agree on it.
"""

import os

from maestro import paths
from maestro.memory.store.errors import StoreError
from maestro.util import days
from maestro.util.record import record

TRACKS = ("memory", "user", "project", "key", "daily", "reference")
ALIASES = {"global": "memory"}
PROJECT_TRACKS = ("project", "key", "reference")
_FILES = {"memory": "MEMORY.md", "user": "USER.md", "project": "MEMORY.md", "key": "KEY.md",
          "reference": "REFERENCE.md"}
_ARCHIVES = {"memory": "MEMORY-archive.md", "user": "USER-archive.md", "project": "MEMORY-archive.md",
             "key": "KEY-archive.md"}
META_DIR = ".maestro-memory"


def track_name(name: str) -> str:
    track = ALIASES.get(name, name)
    if track not in TRACKS:
        raise StoreError(f"unknown track '{name}' (tracks: global|memory, user, project, key, daily, reference)",
                         "usage")
    return track


def _today() -> str:
    import datetime

    return datetime.date.today().isoformat()


def check_date(value: str) -> str:
    """A daily file name: YYYY-MM-DD and a real calendar day (also the path-traversal guard)."""
    if not isinstance(value, str) or len(value) != 10 or value[4] != "-" or value[7] != "-" \
            or not (value[:4] + value[5:7] + value[8:]).isascii() or not (value[:4] + value[5:7] + value[8:]).isdigit():
        raise StoreError(f"invalid date {value!r} (expected YYYY-MM-DD)", "usage")
    if not days.is_day(value):
        raise StoreError(f"invalid date {value!r} (no such day)", "usage")
    return value


def project_hash(project_root: str) -> str:
    try:  # the builtin module: importing hashlib (OpenSSL) costs session-start ~2 ms
        from _sha1 import sha1
    except ImportError:  # pragma: no cover - a build without it
        from hashlib import sha1
    return sha1(project_root.encode("utf-8", "surrogateescape")).hexdigest()[:12]


PROJECT_GIT_TIMEOUT_SEC = 30  # util.git's GIT_TIMEOUT_SEC: a command waits for git as every git call does


def project_root(cwd: str = None) -> str:
    """The git toplevel of `cwd`'s real path (util.git.toplevel's answer: the same environment), else
    `nearest_checkout`. Git is spawned as `locate` does: a memory command (search, add) need not
    import `subprocess` for it."""
    directory = os.path.realpath(cwd or os.getcwd())
    if not os.path.isdir(directory):
        raise StoreError(f"not a directory: {cwd}", "usage")
    result = _git(directory, ["rev-parse", "--show-toplevel"], PROJECT_GIT_TIMEOUT_SEC)
    top = result[1].strip() if result is not None and result[0] == 0 else ""
    return os.path.realpath(top) if top else nearest_checkout(directory)


def nearest_checkout(directory: str) -> str:
    """The nearest of `directory` (a real path) and its parents holding a `.git`, else `directory`:
    the project root when git cannot say (not installed, too slow, a checkout owned by another
    user that git refuses as "dubious"), so a subdirectory still shares its repository's memory."""
    current = directory
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return directory
        current = parent


class Target(record("Target", "track path archive", defaults=(None,), module=__name__)):
    """One track file, resolved: what a read or a write of that track touches (`archive` None:
    the track has no archive). Namedtuples, not dataclasses: the session-start hook imports this."""

    __slots__ = ()

    @property
    def daily(self) -> bool:
        return self.track == "daily"


class Layout(record("Layout", "root", module=__name__)):
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
            day = check_date(date) if date is not None else _today()
            return Target(track, os.path.join(self.daily_dir, f"{day}.md"))
        if track in PROJECT_TRACKS:
            if not project:
                raise StoreError(f"the {track} track needs a project directory (--cwd)", "usage")
            base = self.project_dir(project)
        else:
            base = self.root
        archive = os.path.join(base, _ARCHIVES[track]) if track in _ARCHIVES else None
        return Target(track, os.path.join(base, _FILES[track]), archive)


# --- the project of a working directory, at hook speed ------------------------------------------


def _git(directory: str, args, timeout: float):
    """(exit status, stdout) of `git -C directory <args>`, or None when git is missing or too slow.

    posix_spawn and a pipe instead of `subprocess`: importing that module would cost the
    session-start hook ~3.5 ms, most of its memory budget."""
    import select
    import time

    env = {k: v for k, v in os.environ.items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
    env.update(LC_ALL="C", GIT_OPTIONAL_LOCKS="0")
    read_fd, write_fd = os.pipe()  # both close-on-exec; the child gets write_fd as its stdout only
    try:
        try:
            pid = os.posix_spawnp("git", ["git", "-C", directory, *args], env, file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, write_fd, 1),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
        finally:
            os.close(write_fd)
        chunks, deadline, done = [], time.monotonic() + timeout, False
        waiting = select.poll()  # not select.select: a long-lived process (the MCP server) may hold fds ≥ 1024
        waiting.register(read_fd, select.POLLIN)
        while not done:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not waiting.poll(max(1, int(remaining * 1000))):
                import signal  # only on a timeout: the import costs the hook ~0.5 ms

                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return None
            chunk = os.read(read_fd, 65536)
            chunks.append(chunk)
            done = not chunk
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    except OSError:
        return None
    finally:
        os.close(read_fd)
    return status, b"".join(chunks).decode("utf-8", "surrogateescape")


def locate(cwd: str, timeout: float = 2.0):
    """(project root, branch or None) of a working directory with one short `git rev-parse`.

    The same root as `project_root`, for the session-start hook: one spawned git (no `subprocess`
    import), the same fallback to `nearest_checkout` when git cannot say (outside git: the
    directory itself). An unborn or detached HEAD gives no branch; a slow or missing git is the
    same as no git. Never writes."""
    directory = os.path.realpath(cwd)
    if not os.path.isdir(directory):
        raise StoreError(f"not a directory: {cwd}", "usage")
    result = _git(directory, ["rev-parse", "--show-toplevel", "--abbrev-ref", "HEAD"], timeout)
    if result is None:
        return nearest_checkout(directory), None
    status, out = result
    lines = out.splitlines()
    root = os.path.realpath(lines[0]) if lines and os.path.isabs(lines[0]) else nearest_checkout(directory)
    branch = lines[1].strip() if status == 0 and len(lines) > 1 else None
    return root, (branch if branch and branch != "HEAD" else None)
