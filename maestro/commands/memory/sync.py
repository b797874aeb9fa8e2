"""`memory sync` (being moved here from the domain module it imports)."""

from maestro.memory.store.sync import main  # noqa: F401
