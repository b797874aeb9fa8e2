"""The ownership manifest `~/.maestro/install-manifest.json` (spec §2.9).

`{"version": 1, "files": {"hooks/<f>" | "rules/<f>" | "skills/<n>/SKILL.md": "<sha256>"}}`, plus
maestro's optional `settings_before` record. The original Maestro writes the same file, so its
entries (`hooks/*.mjs`, `hooks/*.sh`) are read here too and drive the migration.
"""

import hashlib
import json
import os
import stat

from maestro import paths

_HEX = frozenset("0123456789abcdef")


class ManifestError(ValueError):
    pass


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
