"""`memory codemap` (being moved here from the domain module it imports)."""

from maestro.memory.project.codemap import audit_main, init_main, probe_main  # noqa: F401
