"""`memory archive` (being moved here from the domain module it imports)."""

from maestro.commands.memory.store_cli import archive as main  # noqa: F401
