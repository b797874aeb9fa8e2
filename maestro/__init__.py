"""maestro: a supervised orchestrator/implementer workflow for Claude Code (stdlib only)."""

__version__ = "0.1.0"


def _archive():
    """The built archive this package was imported from, or None (a source tree): zipimport's, or the
    one shiv's extracting bootstrap runs (`MAESTRO_SHIV_EXTRACT=1 python3 maestro.pyz …`: it extracts
    this file, the bundle's reader and the payload, and runs from its argv[0])."""
    archive = getattr(getattr(__spec__, "loader", None), "archive", None)
    if archive:
        return archive
    import os
    import sys

    if "_bootstrap" in sys.modules and os.environ.get("MAESTRO_SHIV_EXTRACT") == "1" and sys.argv[:1] != [""]:
        return os.path.abspath(sys.argv[0])
    return None


_path = _archive()
if _path:  # the other modules come from the archive's bundle (maestro/bundle.py)
    from maestro import bundle as _bundle

    _bundle.install(_path, type(__spec__))
    del _bundle
del _path, _archive
