"""`memory list` (being moved here from the domain module it imports)."""

from maestro.commands.memory.store_cli import list_ as main  # noqa: F401
