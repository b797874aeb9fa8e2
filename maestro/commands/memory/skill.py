"""`memory skill` (being moved here from the domain module it imports)."""

from maestro.memory.project.skills import main  # noqa: F401
