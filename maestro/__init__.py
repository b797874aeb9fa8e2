"""maestro: a supervised orchestrator/implementer workflow for Claude Code (stdlib only)."""

__version__ = "0.1.0"

if getattr(getattr(__spec__, "loader", None), "archive", None):  # imported from the built archive
    from maestro import bundle as _bundle

    _bundle.install(__spec__)  # the other modules come from its code bundle (maestro/bundle.py)
    del _bundle
