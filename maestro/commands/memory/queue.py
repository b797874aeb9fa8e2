"""`memory queue` (being moved here from the domain module it imports)."""

from maestro.memory.store.queue import main  # noqa: F401
