"""The tree-v3 digest and the provenance log (spec §2.5).

Every digest is checked against `reference()`: a slow, independent rendering of the spec that asks
git for everything (`ls-files`, `submodule foreach`, and one `git hash-object --no-filters` per
file, i.e. git's own raw-byte blob id) — so "equals the reference" means "bit-for-bit the
original Maestro's value", whatever maestro's stat cache reused.
"""

import os
import re
import shutil
import stat
import subprocess
import time

import pytest
from testing.git import git

from maestro.provenance import digest as provenance
from maestro.provenance import log as provenance_log

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("quiet_git")]
LATER_NS = 10 * 10**9  # a run "10 s later": files written by the test are old enough to cache


def make_repo(path, files=None):
    """Unlike testing.git.git_repo: byte contents, an existing directory is fine, git's default branch, and the
    identity comes from the environment (quiet_git), as in a submodule clone."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    for name, data in (files or {"a.txt": b"alpha\n", "src/b.py": b"print('b')\n"}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_bytes(data)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "init")
    return path


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo")


def reference(start) -> str:
    """The spec, slowly: roots by BFS, per-root byte-sorted paths, one hash-object per file."""
    top = os.path.realpath(git(start, "rev-parse", "--show-toplevel").decode().strip())
    roots, queue = [], [top]
    while queue:
        root = queue.pop(0)
        if root in roots:
            continue
        roots.append(root)
        found = [line for line in git(root, "submodule", "foreach", "--recursive", "--quiet", "pwd -P")
                 .decode().splitlines() if line]
        for path in git(root, "ls-files", "--others", "--exclude-standard", "-z").decode().split("\0"):
            if path and os.path.exists(os.path.join(root, path.rstrip("/"), ".git")):
                found.append(os.path.join(root, path.rstrip("/")))
        for candidate in found:
            done = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=candidate, capture_output=True)
            if done.returncode == 0 and os.path.realpath(done.stdout.decode().strip()) == os.path.realpath(candidate):
                queue.append(os.path.realpath(candidate))
    stream = b""
    for root in sorted(set(os.fsencode(r) for r in roots)):
        listed = git(root, "ls-files", "-z") + git(root, "ls-files", "--others", "--exclude-standard", "-z")
        stream += b"worktree\0" + root + b"\0"
        for path in sorted(set(p for p in listed.split(b"\0") if p)):
            full = os.path.join(root, path)
            if os.path.islink(full):
                kind, mode, contents = b"link", b"120000", os.readlink(full)
            elif os.path.isfile(full):
                kind, mode = b"file", b"100755" if os.access(full, os.X_OK) else b"100644"
                contents = git(root, "hash-object", "--no-filters", "--", path).strip()
            elif os.path.lexists(full):
                kind, mode, contents = b"other", b"other", b"unavailable"
            else:
                kind = mode = contents = b"absent"
            stream += b"path\0%s\0type\0%s\0mode\0%s\0contents\0%s\0" % (path, kind, mode, contents)
    return "tree-v3:" + git(top, "hash-object", "--no-filters", "--stdin", input=stream).decode().strip()


def digest(path, **kwargs) -> str:
    value, why = provenance.digest(str(path), **kwargs)
    assert value, why
    return value


def checked(path, **kwargs) -> str:
    """The digest, asserted equal to the reference and to the uncached path."""
    value = digest(path, **kwargs)
    assert value == reference(path)
    assert value == digest(path, use_cache=False)
    return value


def cache_of(repo) -> dict:
    return provenance._load_cache(os.fsencode(repo / ".git" / provenance.CACHE_NAME))


# --------------------------------------------------------------------------- what is seen --
@pytest.mark.in_process
def test_plain_repo_equals_the_reference_and_is_self_describing(repo):
    value = checked(repo)
    assert re.fullmatch(r"tree-v3:[0-9a-f]{40}", value)
    assert digest(repo / "src") == value  # any directory of the worktree names the same tree


@pytest.mark.in_process
def test_untracked_files_are_visible_and_ignored_files_are_not(repo):
    before = checked(repo)
    (repo / ".gitignore").write_text("*.log\nbuild/\n")
    with_ignore = checked(repo)
    assert with_ignore != before
    (repo / "debug.log").write_text("noise\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_bytes(b"\0" * 10)
    assert checked(repo) == with_ignore
    (repo / "notes.md").write_text("untracked\n")
    assert checked(repo) != with_ignore


@pytest.mark.in_process
def test_deletion_exec_bit_and_symlinks_are_visible(repo):
    base = checked(repo)
    os.chmod(repo / "a.txt", 0o755)
    executable = checked(repo)
    assert executable != base
    os.chmod(repo / "a.txt", 0o644)
    assert checked(repo) == base
    os.symlink("a.txt", repo / "link")
    linked = checked(repo)
    os.unlink(repo / "link")
    os.symlink("src/b.py", repo / "link")
    assert checked(repo) not in (base, linked)
    os.unlink(repo / "link")
    (repo / "a.txt").unlink()
    assert checked(repo) != base
    os.symlink("/nonexistent/target", repo / "dangling")
    checked(repo)


@pytest.mark.in_process
def test_commits_and_index_only_changes_are_invisible(repo):
    (repo / "a.txt").write_text("edited by codex\n")
    (repo / "new.txt").write_text("new\n")
    dirty = checked(repo)
    git(repo, "add", "a.txt")
    assert checked(repo) == dirty  # the index is not the tree
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the same bytes, committed")
    assert checked(repo) == dirty
    git(repo, "commit", "-q", "--allow-empty", "-m", "empty")
    git(repo, "branch", "elsewhere")
    assert checked(repo) == dirty


@pytest.mark.in_process
def test_submodule_checkout_and_dirt_are_visible_inner_commits_are_not(tmp_path):
    dep = make_repo(tmp_path / "dep", {"f.txt": b"v1\n"})
    (dep / "f.txt").write_text("v2\n")
    git(dep, "commit", "-q", "-am", "v2")
    sup = make_repo(tmp_path / "sup", {"s.sh": b"echo\n"})
    git(sup, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(dep), "dep")
    git(sup, "commit", "-q", "-m", "add submodule")
    base = checked(sup)
    git(sup / "dep", "checkout", "-q", "HEAD~1")
    bumped = checked(sup)
    assert bumped != base
    git(sup / "dep", "checkout", "-q", "-")
    assert checked(sup) == base
    (sup / "dep" / "f.txt").write_text("DIRTY IN SUBMODULE\n")
    dirty = checked(sup)
    assert dirty != base
    git(sup / "dep", "commit", "-q", "-am", "commit inside the submodule")
    git(sup / "dep", "commit", "-q", "--allow-empty", "-m", "again")
    assert checked(sup) == dirty
    assert digest(sup / "dep") == dirty  # from inside the submodule: the same write domain


@pytest.mark.in_process
def test_untracked_nested_repository_is_observed(repo):
    nested = make_repo(repo / "vendor", {"seed.txt": b"seed\n"})
    before = checked(repo)
    (nested / "seed.txt").write_text("changed inside the nested repository\n")
    assert checked(repo) != before


@pytest.mark.in_process
def test_other_worktrees_are_invisible(repo, tmp_path):
    other = tmp_path / "other-wt"
    git(repo, "worktree", "add", "-q", str(other), "-b", "side")
    main_before, other_before = checked(repo), checked(other)
    assert main_before != other_before
    (other / "a.txt").write_text("worktree-only change\n")
    assert checked(repo) == main_before
    assert checked(other) != other_before


@pytest.mark.in_process
def test_a_moved_repository_reads_as_a_different_tree(repo, tmp_path):
    before = checked(repo)
    moved = tmp_path / "moved"
    shutil.move(str(repo), str(moved))
    assert checked(moved) != before


# ------------------------------------------------------- raw bytes, whatever git converts --
@pytest.mark.in_process
def test_a_clean_filter_cannot_hide_bytes(tmp_path):
    repo = make_repo(tmp_path / "repo", {".gitattributes": b"*.txt filter=up\n"})
    git(repo, "config", "filter.up.clean", "tr a-z A-Z")
    git(repo, "config", "filter.up.smudge", "cat")
    (repo / "value.txt").write_text("lower case\n")
    git(repo, "add", "value.txt")
    git(repo, "commit", "-q", "-m", "filtered")
    index_id = git(repo, "ls-files", "-s", "value.txt").split()[1].decode()
    raw_id = provenance.blob_id(b"lower case\n")
    assert index_id != raw_id  # git stored the cleaned bytes
    first = checked(repo, clock_ns=lambda: time.time_ns() + LATER_NS)
    assert checked(repo) == first  # now from the cache
    stream_ids = {record[provenance._KEY.size:][:40].decode() for record in cache_of(repo).values()}
    assert raw_id in stream_ids and index_id not in stream_ids
    (repo / "value.txt").write_text("LOWER CASE\n")  # same cleaned bytes, different raw bytes
    assert checked(repo) != first


@pytest.mark.in_process
def test_autocrlf_and_eol_attributes_do_not_change_what_is_hashed(tmp_path):
    repo = make_repo(tmp_path / "repo", {"seed": b"x\n"})
    git(repo, "config", "core.autocrlf", "true")
    (repo / ".gitattributes").write_text("*.crlf text eol=crlf\n")
    (repo / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    (repo / "doc.crlf").write_bytes(b"a\r\nb\r\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "crlf")
    assert git(repo, "ls-files", "-s", "win.txt").split()[1].decode() != provenance.blob_id(b"one\r\ntwo\r\n")
    value = checked(repo, clock_ns=lambda: time.time_ns() + LATER_NS)
    assert checked(repo) == value
    git(repo, "config", "core.autocrlf", "false")  # settings changed after the add: still raw bytes
    (repo / ".gitattributes").write_text("")
    assert checked(repo) != value  # only .gitattributes changed ...
    (repo / ".gitattributes").write_text("*.crlf text eol=crlf\n")
    assert checked(repo) == value  # ... and restoring it restores the digest


@pytest.mark.in_process
def test_a_one_off_conversion_at_add_time_does_not_leak_into_the_digest(repo):
    """Why maestro keeps its own stat cache: git's index can hold a converted blob for a file it
    calls clean, with nothing in today's config or attributes to say so."""
    once = repo / "once.txt"
    once.write_bytes(b"crlf\r\n")
    git(repo, "-c", "core.autocrlf=true", "add", "once.txt")
    git(repo, "commit", "-q", "-m", "once")
    past = time.time() - 3600
    os.utime(once, (past, past))  # not racily clean any more ...
    git(repo, "-c", "core.autocrlf=true", "update-index", "-q", "--refresh")  # ... and stat-clean
    assert git(repo, "ls-files", "-s", "once.txt").split()[1].decode() == provenance.blob_id(b"crlf\n")
    assert subprocess.run(["git", "diff-files", "--quiet"], cwd=repo).returncode == 0
    checked(repo, clock_ns=lambda: time.time_ns() + LATER_NS)
    checked(repo)


# ---------------------------------------------------------------------- the stat cache --
@pytest.mark.in_process
def test_a_racily_clean_edit_is_seen(repo):
    path = repo / "a.txt"
    path.write_bytes(b"aaaa\n")
    git(repo, "add", "a.txt")
    before = os.stat(path)
    first = checked(repo)
    path.write_bytes(b"bbbb\n")  # same size, same second as the add, and the mtime put back
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_mtime_ns == before.st_mtime_ns and os.stat(path).st_size == before.st_size
    assert checked(repo) != first


@pytest.mark.in_process
def test_a_cached_id_is_not_reused_when_only_ctime_moved(repo):
    path = repo / "a.txt"
    first = checked(repo, clock_ns=lambda: time.time_ns() + LATER_NS)
    assert os.fsencode(path) in cache_of(repo)
    before = os.stat(path)
    path.write_bytes(b"ALPHA\n")  # same size; mtime restored; only ctime tells
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert checked(repo) != first


@pytest.mark.in_process
def test_recent_files_are_never_cached(repo):
    """An entry written within the margin could change again inside the same timestamp tick."""
    (repo / "fresh.txt").write_text("just written\n")
    checked(repo)
    cached = cache_of(repo)
    assert os.fsencode(repo / "fresh.txt") not in cached
    checked(repo, clock_ns=lambda: time.time_ns() + LATER_NS)
    assert os.fsencode(repo / "fresh.txt") in cache_of(repo)


@pytest.mark.in_process
def test_an_old_mtime_with_a_fresh_ctime_is_never_cached(repo):
    """Racily clean is judged on ctime too: an mtime put back (touch -d, a restore tool) does not make a file
    written just now safe to cache, for another write in the same ctime tick would leave the stat key as it is."""
    path = repo / "backdated.txt"
    path.write_text("written just now\n")
    old = time.time_ns() - 3600 * 10**9
    os.utime(path, ns=(old, old))
    assert os.stat(path).st_mtime_ns == old and os.stat(path).st_ctime_ns > old  # ctime: just now
    checked(repo)
    assert os.fsencode(path) not in cache_of(repo)
    checked(repo, clock_ns=lambda: time.time_ns() + LATER_NS)
    assert os.fsencode(path) in cache_of(repo)  # once ctime is old enough too, it is


@pytest.mark.in_process
def test_the_cache_is_used_and_only_trusted_for_matching_stat(repo):
    value = checked(repo, clock_ns=lambda: time.time_ns() + LATER_NS)
    cache_file = repo / ".git" / provenance.CACHE_NAME
    assert stat.S_IMODE(cache_file.stat().st_mode) == 0o600
    full = os.fsencode(repo / "a.txt")
    records = cache_of(repo)
    forged = records[full][: provenance._KEY.size] + b"f" * 40 + b"0" * 24
    cache_file.write_bytes(provenance._dump_cache({**records, full: forged}))
    assert digest(repo) != value  # proof the record was reused rather than re-hashed
    assert digest(repo, use_cache=False) == value
    (repo / "a.txt").write_text("alpha\n")  # rewrite: new ctime, so the forged record no longer applies
    assert digest(repo) == value


@pytest.mark.parametrize("junk", [b"", b"garbage\n", b"maestro-digest-cache 1 5 3\nabc"])
@pytest.mark.in_process
def test_a_damaged_cache_is_ignored(repo, junk):
    value = checked(repo, clock_ns=lambda: time.time_ns() + LATER_NS)
    (repo / ".git" / provenance.CACHE_NAME).write_bytes(junk)
    assert digest(repo) == value


@pytest.mark.in_process
def test_a_symlinked_cache_is_not_followed(repo, tmp_path):
    target = tmp_path / "elsewhere"
    target.write_bytes(b"keep me")
    os.symlink(target, repo / ".git" / provenance.CACHE_NAME)
    value = checked(repo, clock_ns=lambda: time.time_ns() + LATER_NS)
    assert target.read_bytes() == b"keep me"
    assert not (repo / ".git" / provenance.CACHE_NAME).is_symlink()
    assert digest(repo) == value


# ------------------------------------------------------------------------ no digest at all --
def test_outside_git_there_is_no_digest(tmp_path):
    (tmp_path / "plain").mkdir()
    assert provenance.digest(str(tmp_path / "plain")) == (None, provenance.NOT_A_WORKTREE)
    assert provenance.digest_or_unavailable(str(tmp_path / "plain")) == "unavailable"


def test_without_git_there_is_no_digest_and_it_says_why(repo, tmp_path, monkeypatch):
    (tmp_path / "empty-path").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty-path"))
    value, why = provenance.digest(str(repo))
    assert value is None and why.startswith("cannot run git")


def git_shim(tmp_path, monkeypatch, body):
    real = shutil.which("git")
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "git").write_text(f'#!/bin/sh\n{body}\nexec "{real}" "$@"\n')
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")


@pytest.mark.in_process
def test_a_failing_submodule_enumeration_means_no_digest(tmp_path, monkeypatch):
    dep = make_repo(tmp_path / "dep", {"f": b"1\n"})
    sup = make_repo(tmp_path / "sup", {"s": b"1\n"})
    git(sup, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(dep), "dep")
    git_shim(tmp_path, monkeypatch, 'for a in "$@"; do [ "$a" = submodule ] && exit 1; done')
    value, why = provenance.digest(str(sup))
    assert value is None and "submodule" in why


@pytest.mark.in_process
def test_a_hanging_git_is_bounded_and_heartbeats(repo, tmp_path, monkeypatch):
    git_shim(tmp_path, monkeypatch, 'case "$*" in *ls-files*) sleep 30;; esac')
    ticks = []
    started = time.monotonic()
    value, why = provenance.digest(str(repo), timeout=1.5, tick=lambda: ticks.append(1))
    assert value is None and "timed out" in why
    assert time.monotonic() - started < 20  # far below the hanging git's 30 s, whatever the machine's load
    assert ticks


def test_should_stop_interrupts(repo):
    assert provenance.digest(str(repo), should_stop=lambda: True) == (None, "interrupted")


@pytest.mark.parametrize("raw", ["abc", "", "0", "-5"])
def test_an_invalid_timeout_warns_and_uses_120s(monkeypatch, raw):
    monkeypatch.setenv("MAESTRO_DIGEST_TIMEOUT_SEC", raw)
    lines = []
    assert provenance.timeout_knob(lines.append) == 120
    assert lines == [f"MAESTRO_DIGEST: ignoring invalid timeout_seconds={raw!r}; using 120s"]


def test_a_valid_timeout_is_used_silently(monkeypatch):
    monkeypatch.setenv("MAESTRO_DIGEST_TIMEOUT_SEC", "7")
    lines = []
    assert provenance.timeout_knob(lines.append) == 7 and lines == []


# ------------------------------------------------------------------------- the log --
def test_records_have_the_original_format_and_a_private_log(repo):
    git_dir = str(repo / ".git")
    old = os.umask(0)  # a permissive umask must not leak into the log's mode
    try:
        assert provenance_log.log_dispatch(git_dir, "dispatch", "task-1", "sess", "tree-v3:aa", "tree-v3:bb",
                                       clock=lambda: 0)
    finally:
        os.umask(old)
    assert provenance_log.log_dispatch(git_dir, "orphan-adopted", "task-2", None, "unavailable", "tree-v3:cc",
                                   clock=lambda: 86400)
    assert provenance_log.log_gap(git_dir, "task-2", "sess", "tree-v3:cc", "tree-v3:dd", clock=lambda: 86401)
    log = repo / ".git" / provenance.LOG_NAME
    assert log.read_text().splitlines() == [
        "1970-01-01T00:00:00Z type=dispatch job=task-1 session=sess before=tree-v3:aa after=tree-v3:bb",
        "1970-01-02T00:00:00Z type=orphan-adopted job=task-2 session=unknown before=unavailable after=tree-v3:cc",
        "1970-01-02T00:00:01Z type=gap prior_job=task-2 session=sess expected=tree-v3:cc observed=tree-v3:dd",
    ]
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert provenance_log.read_baseline(git_dir) == ("1970-01-02T00:00:00Z", "task-2", "tree-v3:cc")
    with pytest.raises(ValueError):
        provenance_log.log_dispatch(git_dir, "gap", "j", "s", "b", "a")


def test_a_record_field_cannot_break_the_line_format(repo):
    git_dir = str(repo / ".git")
    provenance_log.log_dispatch(git_dir, "dispatch", "job with spaces\nand lines", "s", "tree-v3:a", "tree-v3:b")
    assert provenance_log.read_baseline(git_dir).job == "job_with_spaces_and_lines"


def test_the_baseline_is_the_last_completed_snapshot(repo):
    git_dir = str(repo / ".git")
    (repo / ".git" / provenance.LOG_NAME).write_text("\n".join([
        "2026-01-01T00:00:00Z type=dispatch job=one session=s before=tree-v3:0 after=tree-v3:1",
        "2026-01-01T00:00:01Z type=dispatch job=legacy before=tree-v2:x after=tree-v2:y",
        "2026-01-01T00:00:02Z type=gap prior_job=legacy session=s expected=tree-v2:y observed=tree-v3:2",
        "2026-01-01T00:00:03Z type=dispatch job=bad value session=s before=a after=b",
        "not a record at all",
        "",
    ]))
    assert provenance_log.read_baseline(git_dir) == ("2026-01-01T00:00:01Z", "legacy", "tree-v2:y")
    assert provenance.BASELINE_RE.fullmatch("t type=orphan-adopted job=j before=b after=a")
    assert not provenance.BASELINE_RE.fullmatch("t type=dispatch job=j session=s before=b after=a extra")


def test_a_gap_is_reported_and_recorded_only_between_observed_digests(repo):
    git_dir = str(repo / ".git")
    lines = []

    def check(value):
        return provenance_log.baseline_check(str(repo), git_dir, value, "sess", emit=lines.append, clock=lambda: 0)

    assert check("tree-v3:bbb") is None  # no log yet
    provenance_log.log_dispatch(git_dir, "dispatch", "task-9", "s", "tree-v3:aaa", "tree-v3:aaa")
    assert check("tree-v3:aaa") is None
    assert check("unavailable") is None
    gap = ("PROVENANCE: BASELINE GAP — tree at acquisition differs from the prior completed snapshot "
           "(prior_job=task-9, expected=tree-v3:aaa, observed=tree-v3:bbb); author unknown")
    assert check("tree-v3:bbb") == gap and lines == [gap]
    last = (repo / ".git" / provenance.LOG_NAME).read_text().splitlines()[-1]
    assert last == ("1970-01-01T00:00:00Z type=gap prior_job=task-9 session=sess "
                    "expected=tree-v3:aaa observed=tree-v3:bbb")
    provenance_log.log_dispatch(git_dir, "dispatch", "task-10", "s", "tree-v2:x", "tree-v2:y")
    assert check("tree-v3:ccc") is None and len(lines) == 1  # a v2 baseline is no observation


def test_a_symlinked_log_is_replaced_not_followed(repo, tmp_path):
    git_dir = str(repo / ".git")
    target = tmp_path / "victim"
    target.write_text("2026-01-01T00:00:00Z type=dispatch job=planted session=s before=tree-v3:a after=tree-v3:a\n")
    log = repo / ".git" / provenance.LOG_NAME
    os.symlink(target, log)
    assert provenance_log.read_baseline(git_dir) is None  # a symlinked log holds no baseline
    assert provenance_log.log_dispatch(git_dir, "dispatch", "task-1", "s", "tree-v3:a", "tree-v3:b", clock=lambda: 0)
    assert not log.is_symlink() and stat.S_IMODE(log.stat().st_mode) == 0o600
    assert log.read_text() == ("1970-01-01T00:00:00Z type=dispatch job=task-1 session=s "
                               "before=tree-v3:a after=tree-v3:b\n")
    assert "planted" in target.read_text() and "task-1" not in target.read_text()


# -------------------------------------------------------------- the manual check --
@pytest.mark.in_process
def test_check_line_speaks_in_every_state(repo, tmp_path):
    git_dir = str(repo / ".git")
    cwd = str(repo)
    assert provenance_log.check_line(cwd) == (provenance.NO_BASELINE, 0)
    (repo / ".git" / provenance.LOG_NAME).write_text(
        "2026-01-01T00:00:00Z type=dispatch job=old before=aaa after=bbb\n")
    line, rc = provenance_log.check_line(cwd)
    assert rc == 0 and line.startswith("PROVENANCE: comparison unavailable") and "not observed" in line
    current = digest(repo)
    provenance_log.log_dispatch(git_dir, "dispatch", "task-5", "s", "tree-v3:x", current, clock=lambda: 0)
    assert provenance_log.check_line(cwd) == (
        "PROVENANCE: tree matches the prior completed snapshot (job=task-5, at 1970-01-01T00:00:00Z)", 0)
    (repo / "a.txt").write_text("changed while no lease was held\n")
    line, rc = provenance_log.check_line(cwd)
    assert rc == 1 and line == (f"PROVENANCE: BASELINE GAP — tree differs from the prior completed snapshot "
                                f"(prior_job=task-5, expected={current}, observed={digest(repo)}); author unknown")
    lease = repo / ".git" / provenance.LEASE_DIR
    lease.mkdir()
    (lease / "metadata").write_text("token=t\njob_id=task-6\n")
    assert provenance_log.check_line(cwd) == (
        "PROVENANCE: in flight — a write lease is held (job=task-6), so the tree is mid-dispatch", 0)
    (tmp_path / "plain").mkdir()
    assert provenance_log.check_line(str(tmp_path / "plain")) == (provenance.NO_BASELINE, 0)


# ----------------------------------------------------------------------------- verbs --
def test_digest_verb_prints_the_digest(maestro, repo):
    result = maestro("digest", cwd=str(repo))
    assert (result.rc, result.err) == (0, "")
    assert result.out == reference(repo) + "\n"
    assert maestro("digest", "--no-cache", cwd=str(repo)).out == result.out


def test_digest_verb_outside_git_is_one_line_and_exit_3(maestro, tmp_path):
    (tmp_path / "plain").mkdir()
    result = maestro("digest", cwd=str(tmp_path / "plain"))
    assert result.rc == 3 and result.out == ""
    assert result.err == f"maestro digest: no digest — {provenance.NOT_A_WORKTREE}\n"


def test_digest_verb_keeps_stdout_for_the_digest(maestro, repo):
    result = maestro("digest", cwd=str(repo), env={"MAESTRO_DIGEST_TIMEOUT_SEC": "soon"})
    assert result.rc == 0 and re.fullmatch(r"tree-v3:[0-9a-f]{40}\n", result.out)
    assert result.err == "MAESTRO_DIGEST: ignoring invalid timeout_seconds='soon'; using 120s\n"


def test_provenance_check_verb_prints_one_line_and_exits_1_on_a_gap(maestro, repo):
    result = maestro("provenance-check", cwd=str(repo))
    assert (result.rc, result.out) == (0, provenance.NO_BASELINE + "\n")
    provenance_log.log_dispatch(str(repo / ".git"), "dispatch", "task-7", "s", "tree-v3:x", reference(repo))
    result = maestro("provenance-check", cwd=str(repo))
    assert result.rc == 0 and result.out.startswith("PROVENANCE: tree matches") and result.out.count("\n") == 1
    (repo / "src" / "b.py").write_text("print('changed')\n")
    result = maestro("provenance-check", cwd=str(repo))
    assert result.rc == 1 and result.out.count("\n") == 1
    assert result.out.startswith("PROVENANCE: BASELINE GAP — tree differs")
