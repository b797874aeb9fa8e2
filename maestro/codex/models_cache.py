"""The models and efforts the user's Codex plan really has (issue 12 §1.6): `$CODEX_HOME/models_cache.json`.

Codex writes that file from the account's model list: `{"fetched_at", "etag", "models": [{"slug",
"supported_reasoning_levels": [{"effort", "description"}], "default_reasoning_level", "visibility", …}]}`
(the shape in openai/codex's models manager and every reader of the file we found). A model missing from
it does not exist for this account; an effort missing from a model's non-empty level list is refused by
that model (a model without `ultra`, codex-plugin-cc #648). Reading never raises: an absent, unreadable
or foreign-shaped file checks nothing (the companion then reports what it reports), and a model entry
without a level list accepts every effort. Only a regular file is read (not a symlink, FIFO or device).
"""

import os

from maestro import paths
from maestro.util.text import printable

MAX_BYTES = 16 * 1024 * 1024


# The companion's own model aliases (codex-plugin-cc: `--model spark`, any case): the cache lists the model itself.
ALIASES = {"spark": "gpt-5.3-codex-spark"}


def canonical(model: str) -> str:
    """The model the companion really asks Codex for when given `model`."""
    return ALIASES.get(model.lower(), model)


def cache_path() -> str:
    return os.path.join(paths.codex_dir(), "models_cache.json")


def read_models():
    """{slug: tuple of efforts ('' tuple = not listed)} from the cache, or None when there is nothing to check."""
    import json

    from maestro.util.atomic import NotRegular, read_regular

    try:  # non-blocking, links not followed: a FIFO or a symlink planted there checks nothing
        raw = read_regular(cache_path(), MAX_BYTES)
        data = json.loads(raw.decode("utf-8")) if raw else None
    except (OSError, NotRegular, ValueError, UnicodeDecodeError, RecursionError):
        return None
    entries = data.get("models") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    models = {}
    for entry in entries:
        slug = entry.get("slug") if isinstance(entry, dict) else None
        if not isinstance(slug, str) or not slug:
            continue
        levels = entry.get("supported_reasoning_levels")
        levels = levels if isinstance(levels, list) else []
        models[slug] = tuple(level["effort"] for level in levels
                             if isinstance(level, dict) and isinstance(level.get("effort"), str))
    return models or None


def problem(*pairs) -> str:
    """'' when every (model, effort) pair exists in the cache (or there is no cache); else why not,
    with the list of what exists."""
    models = read_models()
    if models is None:
        return ""
    where = paths.home_relative(cache_path())
    for asked, effort in pairs:
        model = canonical(asked)
        shown = model if model == asked else f"{asked} (= {model})"
        if model not in models:
            return (f"model '{shown}' is not one your Codex account offers (per {where}); models there: "
                    f"{printable(', '.join(sorted(models)))}")
        efforts = models[model]
        if efforts and effort not in efforts:
            return (f"model '{shown}' does not offer effort '{effort}' (per {where}); its efforts: "
                    f"{printable(', '.join(efforts))}")
    return ""
