"""What the digest sees that `git status` does not: why the digest keeps its own stat pass.

Issue 13 §1 tried a fast path that let `git status` do the stat work and took every file status
called unchanged from its index entry (slice 13D; the experiment, its differential test and its
numbers are in docs/performance.md). git compares a file with its index entry by mtime, size,
inode and ctime in whole seconds (nanoseconds only when built with USE_NSEC, which common builds
are not), and its racily-clean rule looks at mtime alone. So a same-size rewrite whose mtime is
put back, within the second in which git recorded the file, is invisible to `git status` for as
long as the index entry lives, while the digest's stat key (ctime in ns, recorded only for files
2 s old) sees it. These tests pin that: any digest built on git's verdict fails them.
"""

import os
import time

import pytest
from testing.git import git

from maestro.provenance import digest as provenance

pytestmark = [pytest.mark.timeout(60), pytest.mark.in_process, pytest.mark.usefixtures("quiet_git")]
LATER_NS = 10 * 10**9  # a run "10 s later": the files are old enough for the stat cache


def blob(data: bytes) -> str:
    return provenance.blob_id(data)


def hidden_rewrite(tmp_path):
    """A committed file with an old mtime that git has just recorded (`git add`: its ctime is now),
    rewritten at once with bytes of the same size and its mtime put back."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    target = repo / "f.txt"
    target.write_bytes(b"one\n")
    hour_ago = time.time_ns() - 3600 * 10**9
    os.utime(target, ns=(hour_ago, hour_ago))  # old mtime: git's racily-clean rule does not apply
    git(repo, "add", "f.txt")
    git(repo, "commit", "-q", "-m", "init")
    return repo, target, hour_ago


def rewrite(target, hour_ago):
    target.write_bytes(b"two\n")
    os.utime(target, ns=(hour_ago, hour_ago))


def test_a_same_size_rewrite_with_its_mtime_put_back_is_seen_without_a_cache(tmp_path):
    repo, target, hour_ago = hidden_rewrite(tmp_path)
    before = provenance.digest(str(repo), use_cache=False)[0]
    git(repo, "update-index", "--refresh")  # git records the file's stat now: ctime this second
    rewrite(target, hour_ago)
    after = provenance.digest(str(repo))
    assert after == provenance.digest(str(repo), use_cache=False)
    assert after[0] != before
    entries = {}
    provenance.digest(str(repo), entries=entries)
    assert entries["f.txt"].endswith(b"contents\0%s\0" % blob(b"two\n").encode())


def test_a_same_size_rewrite_with_its_mtime_put_back_is_seen_through_a_warm_cache(tmp_path):
    repo, target, hour_ago = hidden_rewrite(tmp_path)
    later = lambda: time.time_ns() + LATER_NS  # noqa: E731
    before = provenance.digest(str(repo), clock_ns=later)  # records f.txt in the stat cache
    assert (repo / ".git" / provenance.CACHE_NAME).exists()
    git(repo, "update-index", "--refresh")
    rewrite(target, hour_ago)
    after = provenance.digest(str(repo), clock_ns=later)
    assert after == provenance.digest(str(repo), use_cache=False) != before
