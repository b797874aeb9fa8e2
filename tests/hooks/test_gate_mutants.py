"""Gate rules that planted bugs (bench/mutants.py) showed no test held: a tree is free only when
every entry below it was seen and is free (past the walk limit, or unreadable, it is source; a
protected file inside makes it protected), a data-looking dotfile name is not `.env`, a special file
reached through a symlinked TMPDIR is not scratch, a bug in one program's table fails closed, and
code with more interpolations than the gate analyses fails closed.
"""

import json
import os

import pytest

from maestro.hooks import classify
from maestro.hooks import inline_languages

SID = "mutants-1"
REPO = "/nonexistent-maestro/repo"


def bash(maestro, command, cwd, env=None):
    body = {"session_id": SID, "cwd": str(cwd), "tool_name": "Bash", "tool_input": {"command": command}}
    return maestro("gate", stdin=json.dumps(body), env=env)


def write(maestro, file_path, env=None):
    body = {"session_id": SID, "cwd": REPO, "tool_name": "Write", "tool_input": {"file_path": str(file_path)}}
    return maestro("gate", stdin=json.dumps(body), env=env)


@pytest.fixture
def real_home(outside_tmp, monkeypatch):
    """HOME outside every scratch root, as on a real machine (the test HOME lives under /tmp)."""
    home = outside_tmp / "users" / "me"
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    return home


def test_a_tree_past_the_walk_limit_is_source_even_when_every_seen_entry_is_data(maestro, outside_tmp):
    repo = outside_tmp / "repo"
    small, big = repo / "notes", repo / "docs"
    small.mkdir(parents=True)
    big.mkdir()
    for k in range(5):
        (small / f"n{k}.md").write_text("")
    for k in range(classify.TREE_WALK_LIMIT + 1):
        (big / f"d{k:04d}.md").write_text("")
    assert bash(maestro, "rm -r notes", repo).rc == 0
    result = bash(maestro, "rm -r docs", repo)
    assert result.rc == 2, result
    assert "rm would delete docs" in result.err


def test_a_tree_that_cannot_be_listed_is_source(outside_tmp, monkeypatch):
    docs = outside_tmp / "repo" / "docs"
    docs.mkdir(parents=True)
    (docs / "a.md").write_text("")
    classify.begin_decision()
    assert classify.judge_tree(str(docs), str(outside_tmp), "") == classify.FREE

    def unreadable(top, onerror=None, **kwargs):  # what os.walk meets in a directory it may not list
        onerror(PermissionError(13, "Permission denied", str(top)))
        return iter(())

    monkeypatch.setattr(classify.os, "walk", unreadable)
    classify.begin_decision()
    assert classify.judge_tree(str(docs), str(outside_tmp), "") == classify.SOURCE


def test_a_tree_holding_a_gate_control_is_named_protected_whatever_follows_it(maestro, real_home):
    maestro_dir = real_home / ".maestro"
    (maestro_dir / "sub").mkdir(parents=True)
    (maestro_dir / "install-manifest.json").write_text("{}")
    (maestro_dir / "sub" / "tool.py").write_text("")  # walked after the manifest: source
    result = bash(maestro, "rm -r ~/.maestro", real_home)
    assert result.rc == 2, result
    assert "which controls Claude Code's hooks or maestro's gate" in result.err


@pytest.mark.parametrize("name", [".engine.py", ".endpoints.js", ".enum.rb"])
def test_a_dotfile_named_like_env_but_with_a_code_extension_is_source(maestro, name):
    assert write(maestro, f"{REPO}/src/{name}").rc == 2
    assert write(maestro, f"{REPO}/src/.env").rc == 0  # the real .env stays data


def test_a_special_file_reached_through_a_symlinked_tmpdir_is_not_scratch(maestro, outside_tmp):
    repo = outside_tmp / "repo"
    repo.mkdir()
    os.mkfifo(repo / "pipe.py")
    link = outside_tmp / "tmp-link"
    link.symlink_to(repo)
    result = write(maestro, link / "pipe.py", env={"TMPDIR": str(link)})
    assert result.rc == 2, result


@pytest.mark.source_only
def test_a_bug_in_one_programs_table_fails_closed(maestro, outside_tmp, monkeypatch):
    if maestro.target == "pyz":
        pytest.skip("plants a bug in-process")
    from maestro.hooks import bash_channels_files

    def broken(*args):
        raise KeyError("a table bug")

    monkeypatch.setitem(bash_channels_files.HANDLERS, "truncate", broken)
    result = bash(maestro, "truncate -s0 /tmp/scratch.txt", outside_tmp)
    assert result.rc == 2, result
    assert "an unanalysable truncate" in result.err


def test_code_with_more_interpolations_than_the_gate_analyses_fails_closed(maestro, outside_tmp):
    def ruby(count):
        return " ".join(f'puts "#{{File.write(%q(/tmp/f{k}), 1)}}";' for k in range(count))

    assert bash(maestro, f"ruby -e '{ruby(3)}'", outside_tmp).rc == 0  # scratch writes: free
    result = bash(maestro, f"ruby -e '{ruby(inline_languages.MAX_INNER + 1)}'", outside_tmp)
    assert result.rc == 2, result
    assert "interpolated code the gate could not analyse" in result.err
