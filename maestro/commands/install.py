"""`install` (being moved here from maestro/install/install.py)."""

from maestro.install.install import main  # noqa: F401
