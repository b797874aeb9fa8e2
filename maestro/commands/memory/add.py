"""`memory add` (being moved here from the domain module it imports)."""

from maestro.commands.memory.store_cli import add as main  # noqa: F401
