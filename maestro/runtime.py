"""Where this maestro runs from, and its shipped rules/skills payload (zip-safe).

In the built archive the payload lives inside the package (`maestro/payload/…`, read through
`importlib.resources`); in a source checkout it is the repository's top-level `rules/` and
`skills/`. Both views expose the same relative names.
"""

import os


def archive_path():
    """Absolute path of the maestro.pyz this code is imported from, or None (source tree): the archive whose
    bundle serves maestro's modules (maestro/bundle.py; maestro/__init__.py finds it, through zipimport or
    shiv's extracting bootstrap — outside a source tree, nothing else can have imported this module)."""
    from maestro import bundle

    found = bundle.installed()
    return os.path.abspath(found.archive) if found is not None else None


def payload_root():
    from importlib.resources import files

    packaged = files("maestro").joinpath("payload")
    if packaged.is_dir():
        return packaged
    from pathlib import Path

    return Path(__file__).resolve().parent.parent


def payload_bytes(relative: str) -> bytes:
    node = payload_root()
    for part in relative.split("/"):
        node = node.joinpath(part)
    return node.read_bytes()
