"""session-start's memory part, issue 10 §3: the 10,000-character cap counted as Claude Code counts
it (UTF-16 code units: an emoji outside the BMP is 2), and project memory found through a
symlinked checkout path and from a subdirectory, also when git cannot say (missing, or refusing
a checkout another user owns as "dubious ownership")."""

import json
import os

import pytest
from maestro.util.text import utf16_cut, utf16_len
from testing.git import git_repo
from testing.memory import write_track as write

SID = "session-test"
CAP = 10_000
PARTY = "\U0001f389"  # 🎉: one code point, two UTF-16 code units


def utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def start(maestro, cwd=None, env=None):
    body = {"source": "startup", "session_id": SID}
    if cwd is not None:
        body["cwd"] = str(cwd)
    result = maestro("session-start", stdin=json.dumps(body), env=env)
    assert result.rc == 0 and result.err == "", result
    return result.out


# ------------------------------------------------------------------------------ the 10,000 cap


def test_an_emoji_heavy_store_stays_under_10000_utf16_units(maestro, mem_root, project):
    from maestro.memory.store.layout import Layout

    lay = Layout(str(mem_root))
    for track in ("memory", "user", "key", "project"):
        write(type(mem_root)(lay.target(track, str(project.resolve())).path),
              [f"[2024-04-01 09:00] {track} {i} " + PARTY * 700 for i in range(30)])
    (type(mem_root)(lay.target("reference", str(project.resolve())).path)).write_text(PARTY * 3000)
    write(type(mem_root)(lay.target("daily").path), [f"[09:00] day {PARTY * 600}"])
    out = start(maestro, project)
    assert utf16_units(out) < CAP, (len(out), utf16_units(out))
    assert utf16_units(out) > len(out) + 1000  # the store really is emoji-heavy
    assert out.count(PARTY) > 1000 and "# Global Memory\n" in out


def test_the_snapshot_bound_counts_utf16_units_and_never_splits_an_emoji(mem_root):
    from maestro.memory.store import snapshot

    write(mem_root / "MEMORY.md", ["a" + PARTY * 5000])
    for limit in (700, 701, 2000, 2001):
        snap = snapshot.render(str(mem_root), max_chars=limit, caps={"memory": 100_000})
        assert utf16_units(snap.text) <= limit, limit
        snap.text.encode("utf-8")  # no lone surrogate: an emoji is kept or dropped whole
    assert utf16_len("a" + PARTY) == 3 and utf16_cut("a" + PARTY, 2) == "a"
    assert json.loads(json.dumps(snapshot.render(str(mem_root)).as_dict()))["totalUtf16"] > 0


# ------------------------------------------------------------------------- locating the project


@pytest.fixture
def checkout(tmp_path, mem_root):
    """A repository with a subdirectory, a symlink to it, and one project entry stored from its root."""
    repo = git_repo(tmp_path / "repo")
    (repo / "src" / "deep").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(repo)
    from maestro.memory.store.tracks import Store

    Store(str(mem_root)).add("project", "stored from the root", cwd=str(repo))
    return repo, link


def no_git(tmp_path, behaviour):
    """A PATH whose `git` is missing, or refuses every repository as another user's (exit 128)."""
    bin_dir = tmp_path / f"bin-{behaviour}"
    bin_dir.mkdir()
    if behaviour == "dubious":
        fake = bin_dir / "git"
        fake.write_text("#!/bin/sh\necho \"fatal: detected dubious ownership in repository at '$PWD'\" >&2\n"
                        "exit 128\n")
        fake.chmod(0o755)
    return {"PATH": str(bin_dir)}


CWDS = ["root", "sub", "link", "link-sub"]


def cwd_of(checkout, which):
    repo, link = checkout
    return {"root": repo, "sub": repo / "src" / "deep", "link": link, "link-sub": link / "src" / "deep"}[which]


@pytest.mark.parametrize("which", CWDS)
@pytest.mark.parametrize("git", ["git", "missing", "dubious"])
def test_session_start_finds_the_project_memory_from_any_path_into_the_checkout(maestro, tmp_path, checkout,
                                                                                which, git):
    env = None if git == "git" else no_git(tmp_path, git)
    out = start(maestro, cwd_of(checkout, which), env=env)
    assert "# Project Context\n" in out and "stored from the root" in out, out


@pytest.mark.parametrize("which", CWDS)
@pytest.mark.parametrize("git", ["git", "missing", "dubious"])
def test_memory_list_cwd_finds_the_same_project_memory(maestro, tmp_path, checkout, which, git):
    env = None if git == "git" else no_git(tmp_path, git)
    result = maestro("memory", "list", "project", "--cwd", str(cwd_of(checkout, which)), env=env)
    assert result.rc == 0, result
    assert "stored from the root" in result.out


def test_an_add_through_the_symlinked_subdirectory_lands_in_the_same_project(maestro, tmp_path, checkout):
    repo, link = checkout
    env = no_git(tmp_path, "dubious")
    assert maestro("memory", "add", "project", "added from the link", "--cwd", str(link / "src"), env=env).rc == 0
    listed = maestro("memory", "list", "project", "--cwd", str(repo)).out
    assert "stored from the root" in listed and "added from the link" in listed


def test_outside_any_checkout_the_directory_is_its_own_project(maestro, tmp_path, mem_root):
    plain = tmp_path / "plain" / "sub"
    plain.mkdir(parents=True)
    assert maestro("memory", "add", "project", "plain entry", "--cwd", str(plain)).rc == 0
    assert "plain entry" not in maestro("memory", "list", "project", "--cwd", str(plain.parent)).out
    assert "plain entry" in maestro("memory", "list", "project", "--cwd", str(plain),
                                    env=no_git(tmp_path, "missing")).out
    assert os.path.isdir(mem_root / "projects")
