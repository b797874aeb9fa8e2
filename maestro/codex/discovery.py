"""Finding the Codex companion script (spec §3, discovery only).

`MAESTRO_COMPANION=<path>` wins (a `.py` runs under this interpreter, isolated and without `site`
like maestro itself — a stand-in companion needs only the standard library, and `site` alone costs a
Python 10 ms of every call —; anything else under `node`); otherwise the newest cached plugin version under
`~/.claude/plugins/cache/openai-codex/codex/<ver>/scripts/codex-companion.mjs`.
Version order: strip a leading `v`, split the prerelease at the first `-`, compare dot parts
numerically (missing = 0); a non-numeric part compares as text; a release beats its prerelease.
`doctor` warns when the plugin's version (its plugin.json) is outside TESTED_RANGE.
"""

import os
from dataclasses import dataclass

from maestro import paths


@dataclass(frozen=True)
class Companion:
    path: str
    version: str  # plugin cache directory name, or "override"
    source: str  # "MAESTRO_COMPANION" or "plugin cache"

    def argv(self, python: str = "") -> list:
        import sys

        if self.path.endswith(".py"):
            return [python or sys.executable, "-I", "-S", self.path]
        return ["node", self.path]


def _version_key(version: str):
    text = version[1:] if version[:1] in ("v", "V") else version
    release, dash, pre = text.partition("-")
    parts = []
    for part in release.split("."):
        parts.append((0, int(part), "") if part.isdigit() else (1, 0, part))
    return parts, dash == "", pre


def compare_versions(a: str, b: str) -> int:
    """-1, 0, 1 like a classic comparator (a < b ⇒ -1)."""
    pa, release_a, pre_a = _version_key(a)
    pb, release_b, pre_b = _version_key(b)
    for index in range(max(len(pa), len(pb))):
        left = pa[index] if index < len(pa) else (0, 0, "")
        right = pb[index] if index < len(pb) else (0, 0, "")
        if left[0] == 0 and right[0] == 0:
            if left[1] != right[1]:
                return -1 if left[1] < right[1] else 1
        else:
            ls = left[2] or str(left[1])
            rs = right[2] or str(right[1])
            if ls != rs:
                return -1 if ls < rs else 1
    if release_a != release_b:
        return 1 if release_a else -1
    if pre_a != pre_b:
        return -1 if pre_a < pre_b else 1
    return 0


TESTED_RANGE = ("1.0.5", "1.0.6")  # the companion versions maestro's behaviour was tested against


def plugin_version(companion: Companion) -> str:
    """The plugin's own version: `<plugin root>/.claude-plugin/plugin.json` (the companion reads it for its
    client version), else the plugin cache directory's name, else '' (unknown: an override elsewhere)."""
    import json

    manifest = os.path.join(os.path.dirname(os.path.dirname(companion.path)), ".claude-plugin", "plugin.json")
    try:
        with open(manifest, "rb") as handle:
            version = json.loads(handle.read(65536).decode("utf-8")).get("version")
    except (OSError, ValueError, UnicodeDecodeError, AttributeError):
        version = None
    if isinstance(version, str) and version.strip() and version.isprintable():
        return version.strip()[:64]
    return companion.version if companion.source == "plugin cache" else ""


def outside_tested_range(version: str) -> bool:
    low, high = TESTED_RANGE
    return bool(version) and (compare_versions(version, low) < 0 or compare_versions(version, high) > 0)


def plugin_cache_dir() -> str:
    return os.path.join(paths.claude_dir(), "plugins", "cache", "openai-codex", "codex")


def find_companion():
    override = os.environ.get("MAESTRO_COMPANION")
    if override:
        return Companion(os.path.abspath(override), "override", "MAESTRO_COMPANION") if os.path.isfile(override) else None
    base = plugin_cache_dir()
    try:
        versions = os.listdir(base)
    except OSError:
        return None
    import functools

    for version in sorted(versions, key=functools.cmp_to_key(compare_versions), reverse=True):
        candidate = os.path.join(base, version, "scripts", "codex-companion.mjs")
        if os.path.isfile(candidate):
            return Companion(candidate, version, "plugin cache")
    return None
