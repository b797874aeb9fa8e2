"""`memory batch` (being moved here from the domain module it imports)."""

from maestro.commands.memory.store_cli import batch as main  # noqa: F401
