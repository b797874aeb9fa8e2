"""The digest's stat cache, format 2 (maestro/provenance/digest_cache.py): trusted only when it is ours and
whole, a slot reused only while its stat key matches, and every path through it — an unchanged listing (the
cached stream), a changed one (slots found by name), no cache — gives the uncached value."""

import os
import time

import pytest
from testing.git import git

from maestro.provenance import digest as provenance
from maestro.provenance import digest_cache
from maestro.provenance import digest_scan

pytestmark = [pytest.mark.timeout(60), pytest.mark.in_process, pytest.mark.usefixtures("quiet_git")]
LATER = lambda: time.time_ns() + 10 * 10**9  # noqa: E731 - a run "10 s later": the test's files may be cached


def committed(path, name: str, data: bytes, message: str):
    """A new repository at `path` with one committed file."""
    path.mkdir()
    git(path, "init", "-q")
    (path / name).write_bytes(data)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", message)
    return path


@pytest.fixture
def repo(tmp_path):
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q")
    for index in range(6):
        (path / "d" / f"f{index}.txt").parent.mkdir(exist_ok=True)
        (path / "d" / f"f{index}.txt").write_bytes(b"file %d\n" % index)
    (path / "run.sh").write_bytes(b"#!/bin/sh\n")
    os.chmod(path / "run.sh", 0o755)
    os.symlink("d/f0.txt", path / "link")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "init")
    return path


def value(path, **kwargs) -> str:
    found, why = provenance.digest(str(path), **kwargs)
    assert found, why
    return found


def warm(repo) -> str:
    """Record the cache, then check the value is the uncached one and a second run leaves the file alone."""
    first = value(repo, clock_ns=LATER)
    assert first == value(repo, use_cache=False)
    before = os.stat(cache_file(repo))
    assert value(repo, clock_ns=LATER) == first
    after = os.stat(cache_file(repo))
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # nothing new: not rewritten
    return first


def cache_file(repo):
    return repo / ".git" / provenance.CACHE_NAME


def forge(repo, path="d/f1.txt") -> bytes:
    """Rewrite the cache so the slot of `path` claims another id (its stat key kept): b"f" * 40."""
    data = cache_file(repo).read_bytes()
    cache = digest_cache.parse_cache(data)
    slot = cache.paths.index(os.fsencode(repo / path))
    at = data.index(b"\n") + 1 + len(cache.names) + len(cache.keys) + slot * digest_cache.ID_SIZE
    real = data[at:at + 40]
    forged = data[:at] + b"f" * 40 + data[at + 40:]
    return forged.replace(b"contents\0" + real, b"contents\0" + b"f" * 40)  # the cached stream too


def test_an_unchanged_tree_is_served_from_the_cached_stream(repo):
    """Proof the fast path is taken (a forged slot is believed while the stat key matches) and left when a
    file changes: the changed file is hashed, the rest still comes from the cache."""
    clean = warm(repo)
    cache_file(repo).write_bytes(forge(repo))
    assert value(repo) != clean
    (repo / "d" / "f1.txt").write_bytes(b"file 1\n")  # same bytes, new ctime: the slot no longer matches
    assert value(repo) == clean
    (repo / "d" / "f2.txt").write_bytes(b"changed\n")
    assert value(repo) == value(repo, use_cache=False) != clean


@pytest.mark.parametrize("change", ["add", "delete", "rename", "chmod", "replace-with-link", "commit"])
def test_a_changed_listing_finds_slots_by_name_and_equals_the_uncached_value(repo, change):
    clean = warm(repo)
    if change == "add":
        (repo / "d" / "new.txt").write_bytes(b"new\n")
    elif change == "delete":
        os.unlink(repo / "d" / "f3.txt")
    elif change == "rename":
        os.rename(repo / "d" / "f3.txt", repo / "d" / "moved.txt")
    elif change == "chmod":
        os.chmod(repo / "d" / "f3.txt", 0o755)
    elif change == "replace-with-link":
        os.unlink(repo / "d" / "f3.txt")
        os.symlink("f4.txt", repo / "d" / "f3.txt")
    else:
        (repo / "d" / "f3.txt").write_bytes(b"committed\n")
        git(repo, "commit", "-q", "-am", "more")
    changed = value(repo, clock_ns=LATER)
    assert changed != clean
    assert changed == value(repo, use_cache=False) == value(repo, clock_ns=LATER)


def test_a_slot_whose_inode_changed_is_rehashed_though_size_and_mtime_match(repo):
    path = repo / "d" / "f2.txt"
    clean = warm(repo)
    before = os.stat(path)
    replacement = repo / "d" / "f2.new"
    replacement.write_bytes(b"FILE 2\n")  # same size
    os.utime(replacement, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(replacement, path)  # a new inode with the old size and mtime
    assert os.stat(path).st_ino != before.st_ino and os.stat(path).st_mtime_ns == before.st_mtime_ns
    assert value(repo) == value(repo, use_cache=False) != clean


def test_a_moved_repository_does_not_reuse_the_old_stream(repo, tmp_path):
    warm(repo)
    moved = tmp_path / "moved"
    os.rename(repo, moved)
    assert value(moved) == value(moved, use_cache=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving the cache to another owner needs root")
def test_a_cache_owned_by_someone_else_is_ignored(repo):
    clean = warm(repo)
    cache_file(repo).write_bytes(forge(repo))
    os.chown(cache_file(repo), 12345, 12345)
    assert value(repo) == clean


def test_a_cache_others_may_write_is_ignored(repo):
    clean = warm(repo)
    cache_file(repo).write_bytes(forge(repo))
    os.chmod(cache_file(repo), 0o622)
    assert value(repo) == clean


def test_a_symlink_to_a_forged_cache_is_not_read(repo, tmp_path):
    clean = warm(repo)
    planted = tmp_path / "planted"
    planted.write_bytes(forge(repo))
    os.chmod(planted, 0o600)
    cache_file(repo).unlink()
    os.symlink(planted, cache_file(repo))
    assert value(repo) == clean


def damaged(data: bytes) -> list:
    header, _, body = data.partition(b"\n")
    words = header.split(b" ")
    return [
        data[:-1],  # torn
        data + b"x",
        b"maestro-digest-cache 1 " + b" ".join(words[2:4]) + b"\n" + body,  # format 1
        b" ".join(words[:2] + [b"%d" % (int(words[2]) + 1)] + words[3:]) + b"\n" + body,  # count off by one
        data[:-8] + b"\xff" * 8,  # the last offset is not the stream's end
        data.replace(b"\0", b"\1", 1),  # a NUL of the names gone
    ]


def test_a_damaged_cache_reads_as_empty_and_is_replaced(repo):
    clean = warm(repo)
    for index, junk in enumerate(damaged(cache_file(repo).read_bytes())):
        cache_file(repo).write_bytes(junk)
        os.chmod(cache_file(repo), 0o600)
        assert digest_cache.read_cache(os.fsencode(cache_file(repo))) is None, index
        assert value(repo, clock_ns=LATER) == clean, index
        assert digest_cache.read_cache(os.fsencode(cache_file(repo))) is not None, index  # written afresh


def test_the_cache_is_private_and_written_by_replacing_it(repo):
    warm(repo)
    before = os.stat(cache_file(repo))
    (repo / "d" / "f5.txt").write_bytes(b"changed\n")
    os.utime(repo / "d" / "f5.txt", ns=(1, 1))  # old mtime: only ctime stops it being cached now
    value(repo, clock_ns=LATER)
    after = os.stat(cache_file(repo))
    assert after.st_ino != before.st_ino  # a new file renamed over the old one, never rewritten in place
    assert after.st_mode & 0o777 == 0o600
    assert not [name for name in os.listdir(repo / ".git") if ".maestro-tmp-" in name]


def test_dump_and_load_keep_the_id_only_view(repo):
    """The view tests and tools use: path -> stat key + padded id, for the slots that hold one."""
    warm(repo)
    records = provenance._load_cache(os.fsencode(cache_file(repo)))
    assert os.fsencode(repo / "d" / "f0.txt") in records and os.fsencode(repo / "link") not in records
    assert digest_cache.parse_cache(provenance._dump_cache(records)).paths == list(records)


def test_from_a_submodule_the_digest_is_the_superproject_s(tmp_path):
    """A submodule's root holds `.git` too: the digest starts there on a guess and must start again at the
    superproject, the scope root, when git says so (with both caches warm)."""
    dep = committed(tmp_path / "dep", "f", b"1\n", "dep")
    sup = committed(tmp_path / "sup", "s", b"1\n", "sup")
    git(sup, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(dep), "dep")
    want = value(sup, use_cache=False)
    assert value(sup / "dep", clock_ns=LATER) == value(sup, clock_ns=LATER) == want
    assert value(sup / "dep") == value(sup) == want


def test_a_warm_run_hashes_nothing_in_a_submodule_or_a_nested_repository(tmp_path, monkeypatch):
    """Every root keeps its own cache in its own git dir: a second warm run of a tree with a submodule and an
    untracked nested repository hashes no file and parses no listing (each is byte for byte the cached one,
    links and directories included); a nested cache others may write is ignored like the scope root's."""
    dep = committed(tmp_path / "dep", "f", b"1\n", "dep")
    sup = committed(tmp_path / "sup", "s", b"1\n", "sup")
    git(sup, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(dep), "dep")
    (sup / "dep" / "untracked").write_bytes(b"2\n")
    nested = committed(sup / "nested", "inner.txt", b"inner\n", "inner")
    (nested / "new.txt").write_bytes(b"new\n")
    os.symlink("nested", sup / "link-to-nested")
    want = value(sup, use_cache=False)
    assert value(sup, clock_ns=LATER) == want
    assert (sup / ".git" / "modules" / "dep" / provenance.CACHE_NAME).is_file() and cache_file(nested).is_file()
    hashed, parsed = [], []
    real_hash, real_parse = digest_scan.hash_file, digest_scan.parse_listing
    monkeypatch.setattr(digest_scan, "hash_file", lambda path, *rest: hashed.append(path) or real_hash(path, *rest))
    monkeypatch.setattr(digest_scan, "parse_listing", lambda out: parsed.append(out) or real_parse(out))
    assert value(sup, clock_ns=LATER) == want
    assert (hashed, parsed) == ([], [])
    cache_file(nested).write_bytes(forge(nested, "inner.txt"))
    os.chmod(cache_file(nested), 0o622)
    assert value(sup) == want


def test_untracked_membership_read_from_the_listing_is_the_parsed_truth():
    """The cached-listing path asks `? <path>` of git's raw listing instead of parsing it: same answers for
    the first record, a path that is a prefix of another, a tracked path that looks like an untracked record."""
    blob = b"0" * 40
    out = (b"? a\0? a b/\0? nested/\0H 100644 " + blob + b" 0\t? a\0H 160000 " + blob + b" 0\tdep\0"
           b"H 100644 " + blob + b" 0\tnested\0")
    paths, untracked, _ = digest_scan.parse_listing(out)
    asked = digest_scan.untracked_in(out)
    for path in paths + [b"", b"a b", b"nested", b"? a", b"dep/", b"b/"]:
        assert asked(path) == (path in untracked), path
