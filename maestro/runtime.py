"""Where this maestro runs from, and its shipped rules/skills payload (zip-safe).

In the built archive the payload lives inside the package (`maestro/payload/…`, read through
`importlib.resources`); in a source checkout it is the repository's top-level `rules/` and
`skills/`. Both views expose the same relative names.
"""

import os


def archive_path():
    """Absolute path of the maestro.pyz this code is imported from, or None (source tree): its bundle's
    (maestro/bundle.py: also when shiv's extracting bootstrap runs it), else zipimport's."""
    from maestro import bundle

    found = bundle.installed()
    if found is not None:
        return os.path.abspath(found.archive)
    import maestro

    archive = getattr(getattr(maestro, "__spec__", None), "loader", None)
    archive = getattr(archive, "archive", None)
    return os.path.abspath(archive) if archive else None


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
