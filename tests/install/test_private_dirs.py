"""Directories install creates, under the most permissive umask (issue 17, item 12): ~/.claude's hooks, rules and
skills are read by Claude Code (0755 at most, never group/other-writable); ~/.maestro is private (0700)."""

import os
import stat

import pytest
from testing import install as H


@pytest.fixture
def umask_zero():
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def _dirs(root):
    found = {root: stat.S_IMODE(os.lstat(root).st_mode)}
    for dirpath, dirnames, _ in os.walk(root):
        for name in dirnames:
            path = os.path.join(dirpath, name)
            found[path] = stat.S_IMODE(os.lstat(path).st_mode)
    return found


def test_install_under_umask_zero_creates_no_writable_directory(maestro, home, umask_zero):
    H.assert_ok(maestro("install", "--with-workflow"))

    claude = _dirs(str(home / ".claude"))
    assert {os.path.relpath(p, home) for p in claude} >= {
        ".claude", ".claude/hooks", ".claude/rules", ".claude/skills", ".claude/skills/plan-authoring",
        ".claude/skills/ralph-protocol"}
    for path, mode in claude.items():
        assert mode == 0o755, (path, oct(mode))  # Claude Code reads them; only we write
    for path, mode in _dirs(str(home / ".maestro")).items():
        assert mode == 0o700, (path, oct(mode))
    assert H.mode(H.manifest_path(home)) == 0o600


def test_install_under_a_strict_umask_keeps_directories_private(maestro, home):
    old = os.umask(0o077)
    try:
        H.assert_ok(maestro("install"))
    finally:
        os.umask(old)
    for path, mode in _dirs(str(home / ".claude")).items():
        assert mode == 0o700, (path, oct(mode))  # the umask may narrow, never widen
