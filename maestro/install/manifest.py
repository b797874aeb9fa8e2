"""The ownership manifest `~/.maestro/install-manifest.json` (spec §2.9).

`{"version": 1, "files": {"hooks/<f>" | "rules/<f>" | "skills/<n>/SKILL.md": "<sha256>"}}`, plus
maestro's optional `settings_before` record. A file the user edited keeps the sha256 of what
install last wrote there, and the new version install put beside it is recorded under its own
key, `<key>.maestro-new` (maestro/install/upgrade.py). The original Maestro writes the same file, so its
entries (`hooks/*.mjs`, `hooks/*.sh`) are read here too and drive the migration.

Every writer of the manifest — `install`, `uninstall`, `memory skill promote` — rewrites it under
one lock, `locked()`: an flock on `~/.maestro/install-manifest.lock`, so a promote racing an
install or uninstall cannot lose an entry. The lock file sits beside the manifest; `uninstall`
removes it last (holding the lock), so an otherwise empty `~/.maestro` still goes; a waiter that
then wakes on the removed file notices and locks a fresh one.
"""

import contextlib
import hashlib
import json
import os
import stat

from maestro import paths

_HEX = frozenset("0123456789abcdef")


LOCK_NAME = "install-manifest.lock"
LOCK_TIMEOUT_SEC = 10.0


class ManifestError(ValueError):
    pass


class ManifestBusy(OSError):
    """Another maestro held the manifest lock for the whole wait."""


def lock_path() -> str:
    return os.path.join(paths.maestro_dir(), LOCK_NAME)


@contextlib.contextmanager
def locked(timeout: float = None):
    """Hold the one install-manifest lock (creating ~/.maestro 0700 if needed). ManifestBusy after
    `timeout` seconds (default LOCK_TIMEOUT_SEC); OSError when ~/.maestro is not a private dir."""
    import time

    from maestro.util import atomic

    path = lock_path()
    deadline = time.monotonic() + (LOCK_TIMEOUT_SEC if timeout is None else timeout)
    while True:
        atomic.ensure_private_dir(paths.maestro_dir())
        # Our own descriptor pins the inode: if the path still names it once the flock is held,
        # flock_file locked that very file (uninstall may have unlinked an older one meanwhile).
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        entered = False
        try:
            with atomic.flock_file(path, max(0.0, deadline - time.monotonic())):
                entered = True
                held = os.fstat(fd)
                try:
                    now = os.stat(path, follow_symlinks=False)
                    current = (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)
                except FileNotFoundError:
                    current = False
                if current:
                    yield path
                    return
        except atomic.LockBusy:
            if entered:  # raised by the caller's own code, not by our wait
                raise
            raise ManifestBusy(f"the install manifest is locked by another maestro ({path}); try again") from None
        finally:
            os.close(fd)
        if time.monotonic() >= deadline:
            raise ManifestBusy(f"the install manifest is locked by another maestro ({path}); try again")


def drop_lock_file() -> bool:
    """Remove the lock file, holding the lock (uninstall: maestro leaves nothing of its own in
    ~/.maestro, which then goes when otherwise empty). True when removed; never raises."""
    try:
        if not stat.S_ISDIR(os.lstat(paths.maestro_dir()).st_mode):
            return False
        with locked(0.0) as path:
            os.unlink(path)
            return True
    except OSError:
        return False


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_sha256(value) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(ch in _HEX for ch in value)


def is_managed_key(key) -> bool:
    """hooks|rules|skills/… relative, no `..`, no empty or absolute segments."""
    if not isinstance(key, str) or not key or key.startswith("/") or "\\" in key or "\0" in key:
        return False
    parts = key.split("/")
    return parts[0] in ("hooks", "rules", "skills") and len(parts) >= 2 and all(
        part not in ("", ".", "..") for part in parts
    )


def key_path(key: str) -> str:
    return os.path.join(paths.claude_dir(), *key.split("/"))


def empty() -> dict:
    return {"version": 1, "files": {}}


def read(strict: bool = True):
    """The manifest dict, an empty one if absent. Invalid ⇒ ManifestError (strict) or None."""
    path = paths.install_manifest()
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return empty()
    try:
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
            raise ManifestError(f"ownership manifest is not a regular file: {path}")
        with open(path, "rb") as handle:
            value = json.loads(handle.read().decode("utf-8"))
        if not isinstance(value, dict) or value.get("version") != 1 or not isinstance(value.get("files"), dict):
            raise ManifestError(f"ownership manifest has an unsupported schema: {path}")
        if not all(is_sha256(h) for h in value["files"].values()):
            raise ManifestError(f"ownership manifest has an invalid hash: {path}")
        return value
    except (OSError, ValueError) as exc:
        if strict:
            raise ManifestError(str(exc) if isinstance(exc, ManifestError) else f"ownership manifest is unreadable: {path}") from None
        return None


def dumps(manifest: dict) -> bytes:
    return (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def original_maestro_keys(manifest: dict):
    """Keys the original Bash/Node Maestro owns: its hook scripts."""
    return sorted(
        key
        for key in manifest.get("files", {})
        if is_managed_key(key) and key.startswith("hooks/") and key.count("/") == 1 and key.endswith((".mjs", ".sh"))
    )
