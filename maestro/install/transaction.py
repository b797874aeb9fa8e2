"""Publish a set of files all-or-nothing: snapshot each path before its first change, roll every
changed path back (in reverse order) if a later step fails.

Directories it creates get 0755 at most, whatever the umask: Claude Code reads ~/.claude/hooks,
rules and skills, and nobody else may write there. `sweep_interrupted` removes the temp files an
install killed mid-write left behind (the archive's is megabytes)."""

import os
import stat

from maestro.util import atomic


PUBLIC_DIR_MODE = 0o755  # readable by Claude Code, writable by us alone (the umask can only narrow it)


def sweep_interrupted(destinations) -> int:
    """Remove the stale `write_atomic` temp files beside each destination; how many went."""
    return sum(atomic.sweep_stale_temps(path) for path in destinations)


class Transaction:
    def __init__(self):
        self._snapshots = {}  # path -> (bytes, mode) or None when it did not exist
        self._order = []

    def _snapshot(self, path: str) -> None:
        if path in self._snapshots:
            return
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            self._snapshots[path] = None
        else:
            with open(path, "rb") as handle:
                self._snapshots[path] = (handle.read(), stat.S_IMODE(st.st_mode))
        self._order.append(path)

    @property
    def changed(self):
        return list(self._order)

    def write(self, path: str, data: bytes, mode: int) -> None:
        self._snapshot(path)
        atomic.make_dirs(os.path.dirname(path), PUBLIC_DIR_MODE)
        atomic.write_atomic(path, data, mode)

    def remove(self, path: str) -> None:
        self._snapshot(path)
        os.unlink(path)

    def rollback(self):
        """Restore every changed path; return the paths that could not be restored."""
        failures = []
        for path in reversed(self._order):
            snapshot = self._snapshots[path]
            try:
                if snapshot is None:
                    try:
                        os.unlink(path)
                    except FileNotFoundError:
                        pass
                else:
                    atomic.write_atomic(path, snapshot[0], snapshot[1])
            except OSError as exc:
                failures.append(f"{path}: {exc.strerror or exc}")
        return failures
