"""Fixtures of the lock tests."""

import pytest


@pytest.fixture
def git_dir(tmp_path):
    """A repository's git dir, empty: where the leases, job locks and the job ledger live."""
    path = tmp_path / "repo" / ".git"
    path.mkdir(parents=True)
    return str(path)
