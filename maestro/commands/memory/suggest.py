"""`memory suggest` (being moved here from the domain module it imports)."""

from maestro.memory.store.queue import suggest as main  # noqa: F401
