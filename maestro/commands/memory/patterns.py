"""`memory patterns` (being moved here from the domain module it imports)."""

from maestro.memory.project.patterns import main  # noqa: F401
