"""The digest's own git runner (maestro/provenance/digest_git.py): util.process.run's contract without its
imports — nothing the child leaves in its process group outlives the call, a chatty child cannot block on a
full pipe, a missing git is rc 127, and the digest verb does not import util.process or subprocess."""

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from testing.git import git

from maestro.provenance import digest as provenance
from maestro.provenance import digest_git

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(provenance.__file__))))
pytestmark = [pytest.mark.timeout(60), pytest.mark.in_process]


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "MAESTRO_DIGEST_TIMEOUT_SEC"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q")
    (path / "a.txt").write_bytes(b"a\n")
    return path


def shim(tmp_path, monkeypatch, body):
    real = shutil.which("git")
    directory = tmp_path / "shim"
    directory.mkdir()
    (directory / "git").write_text(f'#!/bin/sh\n{body}\nexec "{real}" "$@"\n')
    (directory / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{directory}{os.pathsep}{os.environ['PATH']}")


def survivors(marker: str) -> list:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if marker.encode() in handle.read():
                    with open(f"/proc/{pid}/stat", "rb") as handle:
                        if handle.read().rsplit(b")", 1)[1].split()[0] != b"Z":
                            found.append(pid)
        except OSError:
            continue
    return found


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_what_git_leaves_in_its_group_is_ended(repo, tmp_path, monkeypatch):
    shim(tmp_path, monkeypatch, "sleep 47.31853 &")  # a child of the child, in its process group
    value, why = provenance.digest(str(repo))
    assert value, why
    deadline = time.monotonic() + 5  # TERM, then a bounded wait while the group empties
    while survivors("47.31853") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert survivors("47.31853") == []


def test_a_chatty_child_cannot_block_on_a_full_pipe(repo, tmp_path, monkeypatch):
    shim(tmp_path, monkeypatch, "head -c 2000000 /dev/zero >&2")  # far beyond a pipe's 64 KiB
    assert provenance.digest(str(repo))[0] == provenance.digest(str(repo), use_cache=False)[0]


def test_a_timeout_and_a_missing_git_keep_the_codes_of_util_process(repo, tmp_path, monkeypatch):
    env = digest_git.git_env()
    started = time.monotonic()
    done = digest_git.run(["-c", "alias.wait=!sleep 30", "wait"], cwd=os.fsencode(repo), env=env, timeout=0.3,
                          grace=0.2)
    assert (done.rc, done.timed_out) == (digest_git.TIMEOUT_RC, True) and time.monotonic() - started < 10
    # a child that would outlive the call: only the stop flag can end it before the (long) timeout
    done = digest_git.run(["-c", "alias.wait=!sleep 30", "wait"], cwd=os.fsencode(repo), env=env, timeout=25,
                          should_stop=lambda: True, grace=0.2)
    assert (done.interrupted, done.timed_out) == (True, False) and done.rc != 0
    monkeypatch.setenv("PATH", str(tmp_path))
    done = digest_git.run(["status"], cwd=os.fsencode(repo), env=digest_git.git_env(), timeout=5)
    assert done.rc == 127 and done.err_text.startswith("git: ")


def test_a_child_reaped_by_an_ignored_sigchld_counts_as_exited(repo):
    """SIGCHLD set to SIG_IGN (inherited across exec) makes the kernel reap the child: waitpid fails with
    ECHILD. That is an exit (rc 0, as subprocess says), not a child still running until the timeout."""
    previous = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        done = digest_git.run(["rev-parse", "--show-toplevel"], cwd=os.fsencode(repo), env=digest_git.git_env(),
                              timeout=20)
        value, why = provenance.digest(str(repo), use_cache=False)
    finally:
        signal.signal(signal.SIGCHLD, previous)
    assert (done.rc, done.timed_out, done.interrupted) == (0, False, False)
    assert value == provenance.digest(str(repo), use_cache=False)[0], why


def test_the_environment_is_util_git_s(monkeypatch):
    from maestro.util import git as gitscope

    monkeypatch.setenv("GIT_DIR", "/elsewhere")
    monkeypatch.setenv("GIT_INDEX_FILE", "/elsewhere/index")
    assert digest_git.git_env() == gitscope.git_env(drop=digest_git.DROPPED_ENV)


@pytest.mark.source_only
def test_the_digest_does_not_import_subprocess_or_util_process():
    code = ("import sys; import maestro.provenance.digest; "
            "print(sorted({'subprocess', 'tempfile', 'dataclasses', 'maestro.util.process'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.stdout == "[]\n"


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd")
def test_no_pipe_outlives_the_call(repo):
    # A pipe dropped at end-of-file without a close leaked two descriptors per git call; a loop digests twice
    # per dispatch, so select() would fail past fd 1024 after a few hundred dispatches.
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(5):
        assert digest_git.run(["status", "--porcelain"], cwd=os.fsencode(repo), env=digest_git.git_env(), timeout=30).rc == 0
    assert len(os.listdir("/proc/self/fd")) == before
