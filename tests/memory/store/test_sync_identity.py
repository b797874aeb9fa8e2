"""The project identity of `memory sync` (maestro/memory/store/sync_identity.py): from the repository itself,
so clones at different paths are one project."""

import pytest

from testing.git import git, git_repo

from maestro.memory.store import sync_identity as identity
from maestro.memory.store.errors import StoreError

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)


@pytest.mark.parametrize("url", [
    "git@github.com:Me/Shop.git", "https://github.com/Me/Shop", "https://tok3n@github.com/Me/Shop.git/",
    "ssh://git@GitHub.com:22/Me/Shop.git", "https://alice:pw@github.com/Me/Shop.git",
])
def test_one_remote_spelled_five_ways_normalises_to_one_name_without_credentials(url):
    assert identity.normalise_url(url) == "github.com/Me/Shop"


def test_a_local_path_remote_is_kept_as_a_path():
    assert identity.normalise_url("/srv/git/shop.git") == "/srv/git/shop"


def test_clones_at_different_paths_share_the_root_commit_identity(tmp_path):
    origin = git_repo(tmp_path / "origin")
    for where in ("a/x", "b/deeper/y"):
        (tmp_path / where).parent.mkdir(parents=True)
        git(tmp_path / where.split("/")[0], "clone", "-q", str(origin), str(tmp_path / where))
    found = {identity.discover(str(tmp_path / where), "localhash").key for where in ("a/x", "b/deeper/y")}
    root = git(origin, "rev-list", "--max-parents=0", "HEAD").decode().strip()
    assert found == {f"root-{root[:20]}"}


def test_of_several_root_commits_the_sorted_first_names_the_project(tmp_path):
    repo = git_repo(tmp_path / "repo")
    git(repo, "checkout", "-q", "--orphan", "other")
    git(repo, "commit", "-q", "--allow-empty", "-m", "second root")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--allow-unrelated-histories", "-m", "join", "other")
    roots = sorted(git(repo, "rev-list", "--max-parents=0", "HEAD").decode().split())
    assert len(roots) == 2 and identity.discover(str(repo), "h").value == roots[0]


def test_without_commits_the_origin_url_and_without_either_the_path(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    assert identity.discover(str(empty), "h") == identity.Identity("path", str(empty), "h")
    git(empty, "remote", "add", "origin", "https://user:secret@example.com/team/shop.git")
    found = identity.discover(str(empty), "h")
    assert found.kind == "origin" and found.value == "example.com/team/shop" and "secret" not in found.text


def test_a_shallow_clone_does_not_trust_its_cut_off_root(tmp_path):
    origin = git_repo(tmp_path / "origin")
    (origin / "more.txt").write_text("more\n")
    git(origin, "add", ".")
    git(origin, "commit", "-qm", "second")
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", "shallow")
    assert identity.discover(str(tmp_path / "shallow"), "h").kind == "origin"


def test_a_pinned_identity_reads_back_and_garbage_does_not():
    for made in (identity.explicit("team-notes"), identity.Identity("root", "a" * 40, "root-" + "a" * 20)):
        assert identity.from_text(made.text, "h") == made
    assert identity.from_text("root:not-a-sha", "h") is None and identity.from_text("nonsense", "h") is None


@pytest.mark.parametrize("bad", ["", ".hidden", "a/b", "a..b", "x.lock", "tab\there", "x" * 65, None])
def test_an_unsafe_project_id_is_a_usage_error(bad):
    with pytest.raises(StoreError) as caught:
        identity.check_project_id(bad)
    assert caught.value.reason == "usage"
