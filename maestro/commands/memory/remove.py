"""`memory remove` (being moved here from the domain module it imports)."""

from maestro.commands.memory.store_cli import remove as main  # noqa: F401
