"""provenance-check outside a git repository (issue 16 item 11): it said "no baseline yet" and exited 0,
which reads as a repository the loop has not written to yet. Now: one line on stderr, exit 3."""

from maestro.errors import Exit


def test_outside_a_git_repository_it_says_so_and_exits_with_the_usage_code(maestro, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    result = maestro("provenance-check", cwd=str(plain))
    assert (result.rc, result.out) == (Exit.USAGE, "")
    assert result.err == (f"maestro provenance-check: no comparison — not inside a git work tree ({plain.resolve()}); "
                          "run it in the repository the loop writes to\n")
    assert "no baseline" not in result.err


def test_inside_a_repository_s_git_directory_it_is_not_a_work_tree_either(maestro, repo):
    result = maestro("provenance-check", cwd=str(repo / ".git"))
    assert result.rc == Exit.USAGE and "not inside a git work tree" in result.err and result.out == ""


def test_a_repository_without_a_baseline_still_says_no_baseline_and_exits_0(maestro, repo):
    result = maestro("provenance-check", cwd=str(repo))
    assert result.rc == 0 and result.out.startswith("PROVENANCE: no baseline") and result.err == ""
