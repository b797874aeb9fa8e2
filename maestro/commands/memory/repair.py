"""`memory repair` (being moved here from the domain module it imports)."""

from maestro.memory.store.repair import main  # noqa: F401
