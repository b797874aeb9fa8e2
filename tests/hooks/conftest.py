"""Fixtures the hook tests share."""

import pytest


@pytest.fixture
def source_maestro(maestro):
    """The in-process runner only: monkeypatching cannot reach a separate process."""
    if maestro.target == "pyz":
        pytest.skip("source_only: monkeypatches maestro internals")
    return maestro
