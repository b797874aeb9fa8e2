"""The backups `install --force` makes of the files it replaces although maestro does not own their
bytes (a rule the user edited, a file maestro never installed).

Each such install gets a new directory of its own, `~/.maestro/backups/install-<UTC time>[-N]`,
made with mkdir: never an existing one, so an older backup is never overwritten and nothing
planted at that name is followed. Inside, each file sits at its manifest key's path
(`rules/coding-discipline.md`), created exclusively (O_EXCL|O_NOFOLLOW) with mode 0600 in
directories of mode 0700: a backup holds whatever the user had put in the file. A symlinked,
foreign or non-directory `~/.maestro` or `~/.maestro/backups` is refused (util/atomic's
NotPrivate). Uninstall leaves backups alone: they are the user's bytes.
"""

import os
import time

from maestro import paths
from maestro.util import atomic

STAMP_FORMAT = "%Y%m%dT%H%M%SZ"


def root() -> str:
    return os.path.join(paths.maestro_dir(), "backups")


def new_directory(now: float = None) -> str:
    """Create and return this install's own backup directory."""
    atomic.ensure_private_dir(paths.maestro_dir())
    atomic.ensure_private_dir(root())
    base = os.path.join(root(), "install-" + time.strftime(STAMP_FORMAT, time.gmtime(now)))
    for attempt in range(1000):
        candidate = base if attempt == 0 else f"{base}-{attempt}"
        try:
            os.mkdir(candidate, 0o700)
        except FileExistsError:
            continue  # an earlier backup (or anything else) already has this name
        return candidate
    raise FileExistsError(f"no free backup directory name beside {base}")


def save(directory: str, key: str, data: bytes) -> str:
    """Write `data` as `key` inside `directory` (made by new_directory); its path."""
    target = os.path.join(directory, *key.split("/"))
    atomic.make_private_dirs(os.path.dirname(target))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(target, flags, 0o600)
    try:
        atomic.write_all(fd, data)
    finally:
        os.close(fd)
    atomic.fsync_dir(os.path.dirname(target))
    return target


def discard(directory: str) -> None:
    """Remove a backup directory this install made (its replacements were rolled back); never raises."""
    import shutil

    shutil.rmtree(directory, ignore_errors=True)
