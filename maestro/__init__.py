"""maestro: a supervised orchestrator/implementer workflow for Claude Code (stdlib only)."""

__version__ = "0.1.0"
