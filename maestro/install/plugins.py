"""Whether the ralph-loop Claude Code plugin is installed: the outer loop of rules/workflow.md
(`install --with-workflow`) runs on its `/ralph-loop` and `/cancel-ralph` commands.

Claude Code records installed plugins in `<claude dir>/plugins/installed_plugins.json`, keyed
`<plugin>@<marketplace>` (`{"version": 2, "plugins": {"ralph-loop@claude-plugins-official": [{…}]}}`;
version 1 held one object per key), and unpacks each into
`<claude dir>/plugins/cache/<marketplace>/<plugin>/<version>/` — the directory doctor looks in for
the Codex plugin. Either record counts. The answer only decides whether install warns: an
unreadable, oversized or malformed file means "not found", never a failure.
"""

import os

from maestro import paths
from maestro.util import atomic

RALPH_LOOP_NAMES = ("ralph-loop", "ralph-wiggum")  # its name, and the one it had until January 2026
RECORD_LIMIT = 4 * 1024 * 1024


def plugins_dir() -> str:
    return os.path.join(paths.claude_dir(), "plugins")


def _recorded_names() -> set:
    import json

    try:
        raw = atomic.read_regular(os.path.join(plugins_dir(), "installed_plugins.json"), RECORD_LIMIT)
        value = json.loads(raw.decode("utf-8-sig")) if raw is not None else None
    except (OSError, ValueError, atomic.NotRegular):
        return set()
    plugins = value.get("plugins") if isinstance(value, dict) else None
    if not isinstance(plugins, dict):
        return set()
    return {key.partition("@")[0] for key, entry in plugins.items() if isinstance(key, str) and entry}


def _cached_names() -> set:
    cache = os.path.join(plugins_dir(), "cache")
    names = set()
    try:
        marketplaces = os.listdir(cache)
    except OSError:
        return names
    for marketplace in marketplaces:
        try:
            names.update(name for name in os.listdir(os.path.join(cache, marketplace))
                         if os.path.isdir(os.path.join(cache, marketplace, name)))
        except OSError:
            continue
    return names


def has_ralph_loop() -> bool:
    return any(name in RALPH_LOOP_NAMES for name in _recorded_names() | _cached_names())
