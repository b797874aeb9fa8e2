"""`maestro worktrees`' own text: the rows a person reads, and the empty list (the JSON form and `remove` run
end to end in test_loop_worktree*.py)."""

import pytest

from maestro.commands import worktrees

pytestmark = pytest.mark.in_process

ROW = {"name": "fix", "branch": "maestro/fix", "path": "/r/.maestro-worktrees/fix", "exists": True, "lease": "free",
       "job_lock": "free", "last_outcome": "VERIFIED_DONE", "last_epoch": 1000, "title": "Fix it"}


def test_rows_name_branch_lease_outcome_and_how_to_merge_or_discard():
    text = worktrees.render([ROW, dict(ROW, name="gone", branch="maestro/gone", path="/x", exists=False,
                                       lease="orphaned", last_outcome="", last_epoch=0)], now=1000 + 7200)
    assert text.splitlines() == [
        "fix  maestro/fix  lease=free  last=VERIFIED_DONE 2h ago",
        "  /r/.maestro-worktrees/fix",
        "gone  maestro/gone  lease=orphaned  last=running or never finished",
        "  /x (directory missing)",
        "merge one from your checkout with `git merge maestro/NAME`; discard one with `maestro worktrees remove NAME`",
    ]


def test_an_empty_list_says_how_to_make_one():
    assert "maestro loop --worktree" in worktrees.render([], now=0)


def test_outside_git_is_a_usage_error(tmp_path, monkeypatch):
    from maestro.errors import MaestroError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(MaestroError, match="not inside a git repository") as raised:
        worktrees.main([])
    assert raised.value.code == 3
