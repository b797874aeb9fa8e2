"""tree-v3 pinned on a tricky tree: the stream every digest implementation must hash, written out by hand.

The expected stream below was checked against the digest as it was before the speed work of issue 13 (slice
13C: batched lstat, one combined listing, a new cache format), so a faster digest cannot drift from the value a
provenance log written by an older maestro holds. It covers what the digest promises to see — exec bits, symlinks
(to a file, to a directory, dangling, replacing a tracked file), deletions, a tracked file replaced by a directory,
untracked-not-ignored files, an untracked nested repository (its own root), non-UTF-8 names, names with spaces and
newlines, conflict stages (one path listed three times), an empty file and one over the 1 MiB read chunk — and what
it promises not to see (ignored files, the index, HEAD).
"""

import hashlib
import os
import time

import pytest
from testing.git import git

from maestro.provenance import digest as provenance

pytestmark = [pytest.mark.timeout(60), pytest.mark.in_process, pytest.mark.usefixtures("quiet_git")]
LATER_NS = 10 * 10**9  # a run "10 s later": every file written by the test is old enough to cache


def blob(data: bytes) -> bytes:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest().encode()


def write(path, data: bytes, mode=0o644):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.chmod(path, mode)


BIG = bytes(range(256)) * 6000  # 1.5 MB: more than one read chunk
NON_UTF8 = b"caf\xe9.txt"


def tricky_tree(tmp_path):
    """The tree, and the entries the digest must describe for each root (root -> [(path, type, mode, contents)])."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    root = os.fsencode(os.path.realpath(repo))
    write(repo / "plain.txt", b"plain\n")
    write(repo / "tool.sh", b"#!/bin/sh\n", 0o755)
    write(repo / "empty", b"")
    write(repo / "big.bin", BIG)
    write(repo / "gone.txt", b"deleted later\n")
    write(repo / "becomes-dir", b"a file, then a directory\n")
    write(repo / "becomes-link", b"a file, then a symlink\n")
    write(repo / "loses-x.sh", b"exec, then not\n", 0o755)
    write(repo / "with space" / "and\nnewline.txt", b"odd name\n")
    write(repo / ".gitignore", b"*.log\nbuild/\n")
    os.symlink("plain.txt", repo / "link-to-file")
    os.symlink("with space", repo / "link-to-dir")
    write(repo / os.fsdecode(NON_UTF8), b"latin-1 name\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    # Changes after the commit: none of them staged.
    os.unlink(repo / "gone.txt")
    os.unlink(repo / "becomes-dir")
    write(repo / "becomes-dir" / "inside.txt", b"inside\n")
    os.unlink(repo / "becomes-link")
    os.symlink("nowhere", repo / "becomes-link")
    os.chmod(repo / "loses-x.sh", 0o644)
    write(repo / "plain.txt", b"plain, edited\n")
    write(repo / "new.txt", b"untracked\n")
    write(repo / "new-x", b"untracked exec\n", 0o755)
    os.symlink("missing-target", repo / "dangling")
    write(repo / "ignored.log", b"never seen\n")
    write(repo / "build" / "out.o", b"never seen either\n")
    write(repo / os.fsdecode(b"dir-\xff") / "x", b"non-UTF-8 directory\n")
    # One path in three conflict stages (index only: the worktree file is what is hashed, once).
    write(repo / "conflict.txt", b"<<<<<<< ours\n=======\n>>>>>>> theirs\n")
    stages = b""
    for n in (1, 2, 3):
        stage_id = git(repo, "hash-object", "-w", "--stdin", input=b"stage %d\n" % n).strip()
        stages += b"100644 %s %d\tconflict.txt\n" % (stage_id, n)
    git(repo, "update-index", "--index-info", input=stages)
    # An untracked nested repository: its own root, seen through a symlink as well.
    nested = repo / "nested"
    nested.mkdir()
    git(nested, "init", "-q")
    write(nested / "inner.txt", b"inner\n")
    git(nested, "add", "-A")
    git(nested, "commit", "-q", "-m", "inner")
    write(nested / "inner-new.txt", b"inner untracked\n", 0o755)
    os.symlink("nested", repo / "link-to-nested")

    f = lambda data, mode=b"100644": (b"file", mode, blob(data))  # noqa: E731
    link = lambda target: (b"link", b"120000", target)  # noqa: E731
    other, absent = (b"other", b"other", b"unavailable"), (b"absent", b"absent", b"absent")
    outer = {
        b".gitignore": f(b"*.log\nbuild/\n"),
        b"becomes-dir": other,
        b"becomes-dir/inside.txt": f(b"inside\n"),
        b"becomes-link": link(b"nowhere"),
        b"big.bin": f(BIG),
        NON_UTF8: f(b"latin-1 name\n"),
        b"conflict.txt": f(b"<<<<<<< ours\n=======\n>>>>>>> theirs\n"),
        b"dangling": link(b"missing-target"),
        b"dir-\xff/x": f(b"non-UTF-8 directory\n"),
        b"empty": f(b""),
        b"gone.txt": absent,
        b"link-to-dir": link(b"with space"),
        b"link-to-file": link(b"plain.txt"),
        b"link-to-nested": link(b"nested"),
        b"loses-x.sh": f(b"exec, then not\n"),
        b"nested/": other,
        b"new-x": f(b"untracked exec\n", b"100755"),
        b"new.txt": f(b"untracked\n"),
        b"plain.txt": f(b"plain, edited\n"),
        b"tool.sh": f(b"#!/bin/sh\n", b"100755"),
        b"with space/and\nnewline.txt": f(b"odd name\n"),
    }
    inner = {b"inner-new.txt": f(b"inner untracked\n", b"100755"), b"inner.txt": f(b"inner\n")}
    return repo, {root: outer, root + b"/nested": inner}


def expected_value(roots) -> str:
    stream = b""
    for root in sorted(roots):
        stream += b"worktree\0" + root + b"\0"
        for path in sorted(roots[root]):
            kind, mode, contents = roots[root][path]
            stream += b"path\0%s\0type\0%s\0mode\0%s\0contents\0%s\0" % (path, kind, mode, contents)
    return "tree-v3:" + blob(stream).decode()


def test_the_tricky_tree_hashes_to_the_pinned_stream(tmp_path):
    repo, roots = tricky_tree(tmp_path)
    want = expected_value(roots)
    cache = repo / ".git" / provenance.CACHE_NAME
    assert provenance.digest(str(repo), use_cache=False) == (want, "")
    assert not cache.exists()
    assert provenance.digest(str(repo)) == (want, "")  # cold: files too young to cache
    later = lambda: time.time_ns() + LATER_NS  # noqa: E731
    assert provenance.digest(str(repo), clock_ns=later) == (want, "")  # records the cache
    assert cache.exists()
    entries = {}
    assert provenance.digest(str(repo / "with space"), clock_ns=later, entries=entries) == (want, "")  # warm
    assert set(entries) == {os.fsdecode(path) for path in roots[min(roots)]} | {
        os.fsdecode(b"nested/" + path) for path in roots[min(roots) + b"/nested"]}
    assert entries["plain.txt"] == b"path\0plain.txt\0type\0file\0mode\x00100644\0contents\0%s\0" % blob(
        b"plain, edited\n")
