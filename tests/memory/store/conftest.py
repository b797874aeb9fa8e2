"""Fixtures of the memory store's tests (the memory root, clock and project fixtures are in tests/conftest.py:
tests/commands/memory and tests/hooks use them too)."""

import pytest


@pytest.fixture
def store(mem_root, clock):
    """The store under test, on the isolated memory root, with the injected clock."""
    from maestro.memory.store.tracks import Store

    return Store(str(mem_root), clock=clock)
