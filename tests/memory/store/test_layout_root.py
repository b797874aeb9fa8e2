"""layout.project_root spawns git itself (no `subprocess` import for a memory command) and must name
the same project as util.git.toplevel did, with the same fallback when git cannot say."""

import os
import subprocess

import pytest

from maestro.memory.store import layout
from maestro.util import git as gitscope

pytestmark = pytest.mark.in_process


def git_init(path):
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def reference(directory) -> str:
    directory = os.path.realpath(directory)
    return gitscope.toplevel(directory) or layout.nearest_checkout(directory)


def test_the_project_of_a_directory_is_what_git_toplevel_says(tmp_path, monkeypatch):
    outer = git_init(tmp_path / "outer")
    (outer / "src" / "deep").mkdir(parents=True)
    inner = git_init(outer / "vendor" / "inner")  # an independent repository inside another
    plain = tmp_path / "plain" / "sub"
    plain.mkdir(parents=True)
    os.symlink(outer / "src", tmp_path / "link")
    monkeypatch.setenv("GIT_DIR", str(inner / ".git"))  # never followed: both drop it
    for directory in (outer, outer / "src" / "deep", inner, plain, tmp_path / "link"):
        assert layout.project_root(str(directory)) == reference(directory), directory
    assert layout.project_root(str(outer / "src" / "deep")) == os.path.realpath(outer)
    assert layout.project_root(str(plain)) == os.path.realpath(plain)


def test_without_git_the_nearest_checkout_is_the_project(tmp_path, monkeypatch):
    repo = git_init(tmp_path / "repo")
    (repo / "a" / "b").mkdir(parents=True)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))  # git cannot be found
    assert layout.project_root(str(repo / "a" / "b")) == os.path.realpath(repo)


def test_a_missing_directory_is_a_usage_error(tmp_path):
    with pytest.raises(layout.StoreError):
        layout.project_root(str(tmp_path / "gone"))


def test_git_is_read_even_when_its_pipe_lands_past_fd_1024(tmp_path):
    """A long-lived process (the MCP server) may hold many files: select() refuses fds ≥ 1024, poll does not."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip("cannot open 1,100 files here")
    repo = git_init(tmp_path / "repo")
    (repo / "sub").mkdir()
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200) if hard == resource.RLIM_INFINITY
                                                 else min(max(soft, 1200), hard), hard))
    held = []
    try:
        while not held or held[-1] < 1030:
            held.append(os.open(os.devnull, os.O_RDONLY))
        assert layout.project_root(str(repo / "sub")) == os.path.realpath(repo)
        assert layout.locate(str(repo / "sub"))[0] == os.path.realpath(repo)
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
