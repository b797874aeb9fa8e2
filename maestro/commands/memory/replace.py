"""`memory replace` (being moved here from the domain module it imports)."""

from maestro.commands.memory.store_cli import replace as main  # noqa: F401
