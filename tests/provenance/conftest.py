"""Fixtures of the provenance tests."""

import pytest


@pytest.fixture
def quiet_git(monkeypatch):
    """git as the digest tests expect it: no system config, an identity for commits (clones and
    submodules carry no local one), never pointed elsewhere, the digest's own timeout unset."""
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "t")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "t@example.invalid")
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "MAESTRO_DIGEST_TIMEOUT_SEC"):
        monkeypatch.delenv(name, raising=False)
