"""`uninstall` (being moved here from maestro/install/uninstall.py)."""

from maestro.install.uninstall import main  # noqa: F401
