"""`memory maintenance` (being moved here from the domain module it imports)."""

from maestro.memory.store.maintenance import main  # noqa: F401
