"""The one managed-file check: may maestro write this path under ~/.claude?

Both publishers use it — `install` (hooks/maestro.pyz, rules, skills) and `memory skill promote`
(a learned skill) — so a destination is judged the same way whoever writes it: no symlinked
directory between ~/.claude and the file (~/.claude itself may be a symlink), no symlink or
non-file at the destination, and existing bytes only when maestro owns them (the sha256 the
install manifest records, or — for install — the bytes it is about to write anyway, or `force`).
The check raises `Refused` naming the problem and the path; each caller words it for its own
users and maps it to its own exit code.
"""

import os
import stat

from maestro import paths
from maestro.install import manifest

SYMLINKED_DIRECTORY = "symlinked directory"  # a directory between ~/.claude and the destination
SYMLINK = "symlink"  # the destination itself
NOT_A_FILE = "not a file"  # the destination is a directory, fifo, socket, …
UNOWNED = "unowned"  # a regular file whose bytes maestro did not publish


class Refused(Exception):
    """The destination may not be written: `problem` is one of the constants above, `path` the culprit."""

    def __init__(self, problem: str, path: str):
        super().__init__(f"{problem}: {path}")
        self.problem = problem
        self.path = path


def read_file(path: str):
    """The file's bytes, or None when it does not exist."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def holds_recorded(path: str, recorded: str):
    """Whether `path` is still a regular file holding the bytes whose sha256 the manifest recorded:
    None when nothing is there any more, False when it was changed or replaced (the user's now)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return stat.S_ISREG(st.st_mode) and manifest.sha256(read_file(path)) == recorded


def is_symlink(path: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def current_bytes(destination: str, recorded, also_owned=None, force: bool = False):
    """The destination's current bytes (None when absent) once it is safe to replace them.

    `recorded` is the sha256 the manifest holds for it (None when it holds none); `also_owned` is
    another sha256 that counts as ours (install: the bytes it is about to publish); `force` accepts
    any regular file. Directories are checked from the nearest one up, then the destination.
    """
    claude = paths.claude_dir()
    parent = os.path.dirname(destination)
    while parent.startswith(claude + os.sep):
        if is_symlink(parent):
            raise Refused(SYMLINKED_DIRECTORY, parent)
        parent = os.path.dirname(parent)
    if is_symlink(destination):
        raise Refused(SYMLINK, destination)
    try:
        st = os.lstat(destination)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise Refused(NOT_A_FILE, destination)
    current = read_file(destination)
    if not force and manifest.sha256(current) not in (recorded, also_owned):
        raise Refused(UNOWNED, destination)
    return current
