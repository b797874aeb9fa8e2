"""`memory todo` (being moved here from the domain module it imports)."""

from maestro.memory.store.todos import main  # noqa: F401
