"""Adapters: the public write/read workflows (loop, watchdog, status, …)."""
