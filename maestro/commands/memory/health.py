"""`memory health` (being moved here from the domain module it imports)."""

from maestro.memory.store.health import main  # noqa: F401
