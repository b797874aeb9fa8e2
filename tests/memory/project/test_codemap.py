"""`memory codemap-init | codemap-probe | codemap-audit` against real git repositories (spec
memory.md §1.2–1.5, scenarios 1–11), plus the port's guards: ids that cannot escape, values that
round-trip, --worktree, no rewrite of identical bytes, --task-id."""

import datetime
import hashlib
import json
import os
import subprocess

import pytest
from testing.archive_cases import first_on_archive
from testing.git import git, git_repo

pytestmark = pytest.mark.timeout(60)

FRONTMATTER_KEYS = ["source_paths", "verified_commit", "generated_at", "confidence", "stale_note"]


@pytest.fixture
def repo(tmp_path):
    return git_repo(tmp_path / "repo", {"src/a.py": "A = 1\n", "src/b.py": "B = 1\n"})


def head(repo) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()


def commit_change(repo, name="src/a.py", text="A = 2\n"):
    (repo / name).write_text(text)
    git(repo, "commit", "-qam", "change")


@pytest.fixture
def codemaps(mem_root, repo):  # noqa: F811
    digest = hashlib.sha1(os.path.realpath(repo).encode()).hexdigest()[:12]
    return mem_root / "projects" / digest / "codemaps"


@pytest.fixture
def cm(maestro, repo):
    """`maestro memory codemap-<verb> …` run from the repository."""
    def run(verb, *args, cwd=None):
        return maestro("memory", f"codemap-{verb}", *args, cwd=cwd or repo)
    return run


def split(path):
    text = path.read_text()
    end = text.index("\n---", 3)
    return text[:end], text[end:]


def meta_lines(path) -> list:
    return split(path)[0].split("\n")[1:]


def keys(path) -> list:
    return [line.partition(":")[0] for line in meta_lines(path) if not line.startswith(" ")]


def write_map(codemaps, name, text):
    path = codemaps / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def plain_map(sources="  - src/a.py", commit='""', extra=""):
    return f"---\nsource_paths:\n{sources}\nverified_commit: {commit}\nconfidence: high\n{extra}---\n\n# Body\n"


# -- scenarios 1–3: init -------------------------------------------------------------------------
def test_init_writes_the_template_with_the_spec_key_order_and_the_resolved_commit(cm, repo, codemaps):
    result = cm("init", "r", "My Mod", "--source-path", "src/a.py", "--verified-commit", "HEAD")
    path = codemaps / "r" / "my-mod.md"
    assert result.rc == 0, result.err
    assert result.out == f"Initialized CodeMap: {path}\n"
    assert keys(path) == FRONTMATTER_KEYS
    lines = meta_lines(path)
    assert lines[:3] == ["source_paths:", "  - src/a.py", f"verified_commit: {head(repo)}"]
    assert lines[4:] == ["confidence: medium", "stale_note: run maestro memory codemap-probe before trusting this map"]
    stamp = lines[3].partition(": ")[2]
    assert datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")
    body = split(path)[1]
    for section in ("# CodeMap: r / my-mod", "## Purpose", "## Entry points", "## Dependencies in / out",
                    "## Invariants & constraints", "## Hot files for changes", "## Open questions / low confidence"):
        assert f"\n{section}\n" in body + "\n"


def test_init_json_reports_the_spec_fields(cm, codemaps):
    result = cm("init", "r", "Mod_Two", "--source-path", "src/a.py", "--source-path", "src/b.py",
                "--confidence", "high", "--purpose", "parses things", "--json")
    data = json.loads(result.out)
    path = codemaps / "r" / "mod-two.md"
    assert result.rc == 0
    assert {k: data[k] for k in ("status", "codemap_path", "repo_id", "module_slug", "source_paths")} == {
        "status": "ok", "codemap_path": str(path), "repo_id": "r", "module_slug": "mod-two",
        "source_paths": ["src/a.py", "src/b.py"]}
    assert "confidence: high" in meta_lines(path) and "\n## Purpose\n\nparses things\n" in path.read_text()
    assert 'verified_commit: ""' in meta_lines(path)


def test_init_refuses_to_overwrite_without_force(cm, codemaps):
    assert cm("init", "r", "My Mod", "--source-path", "src/a.py").rc == 0
    path = codemaps / "r" / "my-mod.md"
    before = path.read_bytes()
    again = cm("init", "r", "My Mod", "--source-path", "src/b.py")
    assert again.rc == 1 and "already exists" in again.err and "(use --force to overwrite)" in again.err
    assert path.read_bytes() == before
    forced = cm("init", "r", "My Mod", "--source-path", "src/b.py", "--force")
    assert forced.rc == 0 and "  - src/b.py" in meta_lines(path)


@pytest.mark.parametrize("slug", first_on_archive(["!!!", "@ -- #", " _ "]))  # one slug check (testing/archive_cases.py)
def test_a_slug_with_nothing_left_is_refused(cm, codemaps, slug):
    result = cm("init", "r", slug, "--source-path", "src/a.py")
    assert result.rc == 1 and result.err.strip().endswith("module_slug cannot be empty")
    assert not codemaps.exists()


@pytest.mark.parametrize("repo_id", first_on_archive(["../x", "..", "a/b", "/abs", ".hidden", "a\\b", ""]))  # one id check
def test_a_repo_id_that_could_escape_the_codemaps_dir_is_refused(cm, tmp_path, mem_root, repo_id):  # noqa: F811
    result = cm("init", repo_id, "mod", "--source-path", "src/a.py")
    assert result.rc == 1 and "invalid repo_id" in result.err and len(result.err.strip().splitlines()) == 1
    assert not mem_root.exists() or not [p for p in mem_root.rglob("*") if p.is_file()]


def test_a_slug_is_slugified_and_cannot_carry_a_path(cm, codemaps):
    assert cm("init", "r", "../../Etc/Passwd", "--source-path", "src/a.py").rc == 0
    assert [p.name for p in (codemaps / "r").iterdir()] == ["etcpasswd.md"]


def test_init_needs_a_source_path(cm, codemaps):
    result = cm("init", "r", "mod")
    assert result.rc == 3 and "--source-path" in result.err and not codemaps.exists()


# -- scenarios 4–8: probe ------------------------------------------------------------------------
def init(cm, *extra, slug="mod", sources=("src/a.py",)):
    args = [a for s in sources for a in ("--source-path", s)]
    result = cm("init", "r", slug, *args, "--verified-commit", "HEAD", *extra)
    assert result.rc == 0, result.err
    return result


def test_probe_of_an_unchanged_source_is_fresh(cm, codemaps):
    init(cm)
    result = cm("probe", "r/mod.md")
    assert (result.rc, result.out) == (0, "stale=False reason=ok\n")


def test_a_committed_change_makes_it_stale_and_write_touches_only_the_frontmatter(cm, repo, codemaps):
    init(cm)
    path = codemaps / "r" / "mod.md"
    before_head, before_body = meta_lines(path), split(path)[1]
    commit_change(repo)
    result = cm("probe", "r/mod.md", "--write")
    assert result.rc == 1
    assert result.out == f"stale=True reason=sources_changed_or_missing\nchanged: src/a.py\nupdated frontmatter in {path}\n"
    assert split(path)[1] == before_body
    lines = meta_lines(path)
    assert keys(path) == FRONTMATTER_KEYS + ["codemap_probe_at", "codemap_stale"]
    assert "confidence: low" in lines and lines[-1] == "codemap_stale: true"
    assert [line for line in lines if not line.startswith(("confidence", "codemap_"))] == \
        [line for line in before_head if not line.startswith("confidence")]
    data = json.loads(cm("probe", "r/mod.md", "--json").out)
    assert data["changed_paths"] == ["src/a.py"] and data["stale"] is True and data["suggested_confidence"] == "low"


def test_probe_json_carries_every_spec_field(cm, repo, codemaps):
    init(cm)
    result = cm("probe", "r/mod.md", "--json")
    data = json.loads(result.out)
    assert result.rc == 0
    assert {k: data[k] for k in ("codemap_path", "source_paths", "verified_commit", "stale", "reason",
                                 "changed_paths", "missing_paths", "git_error", "suggested_confidence", "wrote")} == {
        "codemap_path": str(codemaps / "r" / "mod.md"), "source_paths": ["src/a.py"], "verified_commit": head(repo),
        "stale": False, "reason": "ok", "changed_paths": [], "missing_paths": [], "git_error": None,
        "suggested_confidence": "medium", "wrote": False}
    assert "uncommitted_paths" not in data


def test_missing_and_escaping_sources_are_listed_as_missing(cm, repo, tmp_path, codemaps):
    (tmp_path / "outside").write_text("x\n")
    init(cm, sources=("src/a.py", "src/gone.py", "../outside"))
    result = cm("probe", "r/mod.md")
    assert result.rc == 1
    assert result.out == "stale=True reason=sources_changed_or_missing\nmissing: src/gone.py, ../outside\n"


def test_a_blank_verified_commit_is_reported_but_not_a_failure(cm, codemaps):
    assert cm("init", "r", "mod", "--source-path", "src/a.py", "--confidence", "high").rc == 0
    path = codemaps / "r" / "mod.md"
    result = cm("probe", "r/mod.md", "--write")
    assert result.rc == 0 and result.out.startswith("stale=None reason=no_verified_commit\n")
    lines = meta_lines(path)
    assert "confidence: high" in lines and lines[-1] == "codemap_stale: false"
    assert lines[-2].startswith("codemap_probe_at: ")


@pytest.mark.parametrize("text, reason", first_on_archive([  # one codemap reader (testing/archive_cases.py)
    ("# no frontmatter\n", "invalid_frontmatter"),
    ("---\n---\nempty\n", "invalid_frontmatter"),
    ("---\nsource_paths: []\nverified_commit: abc\n---\n", "missing_source_paths"),
    (plain_map(commit="deadbeef"), "invalid_verified_commit"),
    (plain_map(commit='"--output=/tmp/x"'), "invalid_verified_commit"),
]))
def test_malformed_codemaps_fail_with_their_reason(cm, codemaps, text, reason):
    path = write_map(codemaps, "r/bad.md", text)
    before = path.read_bytes()
    result = cm("probe", "r/bad.md", "--write")
    assert (result.rc, result.out.splitlines()[0]) == (1, f"stale=None reason={reason}")
    assert path.read_bytes() == before


def test_outside_git_the_probe_says_so(maestro, tmp_path, mem_root):  # noqa: F811
    plain = tmp_path / "plain"
    plain.mkdir()
    path = write_map(tmp_path, "map.md", plain_map(commit="abc123"))
    result = maestro("memory", "codemap-probe", str(path), "--cwd", str(plain))
    assert result.rc == 1 and result.out.startswith("stale=None reason=not_a_git_repository\ngit_error: ")


def test_an_absent_codemap_is_file_not_found(cm):
    result = cm("probe", "r/nothing.md", "--json")
    assert result.rc == 1 and json.loads(result.out)["reason"] == "file_not_found"


def test_an_uncommitted_edit_is_invisible_without_worktree(cm, repo, codemaps):
    init(cm)
    (repo / "src" / "a.py").write_text("A = 3\n")
    assert cm("probe", "r/mod.md").out == "stale=False reason=ok\n"


@pytest.mark.parametrize("change", ["unstaged", "staged", "untracked"])
def test_worktree_counts_uncommitted_changes_as_stale(cm, repo, codemaps, change):
    init(cm, sources=("src/a.py", "src/new.py" if change == "untracked" else "src/b.py"))
    if change == "untracked":
        (repo / "src" / "new.py").write_text("N = 1\n")
    else:
        (repo / "src" / "b.py").write_text("B = 2\n")
        if change == "staged":
            git(repo, "add", "src/b.py")
    assert cm("probe", "r/mod.md").rc == 0
    result = cm("probe", "r/mod.md", "--worktree", "--json")
    data = json.loads(result.out)
    assert result.rc == 1 and data["reason"] == "sources_changed_or_missing" and data["stale"] is True
    assert data["uncommitted_paths"] == [repo.joinpath("src", "new.py" if change == "untracked" else "b.py")
                                         .relative_to(repo).as_posix()]
    assert data["changed_paths"] == [] and data["missing_paths"] == []
    assert cm("probe", "r/mod.md", "--worktree").out.splitlines()[1].startswith("uncommitted: src/")


def test_a_value_with_hash_or_quote_survives_a_write_round_trip(cm, repo, codemaps):
    sha = head(repo)
    text = ('---\nsource_paths:\n  - "src/a.py"\nverified_commit: ' + sha + '\nconfidence: medium\n'
            'stale_note: "see #12 # and \\"quoted\\" text"\nowner: \'it\'\'s: mine\'\n---\nbody ---\n')
    path = write_map(codemaps, "r/odd.md", text)
    commit_change(repo)
    assert cm("probe", "r/odd.md", "--write").rc == 1
    from maestro.memory.project import frontmatter

    meta = frontmatter.parse(frontmatter.split(path.read_text())[0])
    assert meta["stale_note"] == 'see #12 # and "quoted" text' and meta["owner"] == "it's: mine"
    assert meta["source_paths"] == ["src/a.py"] and path.read_text().endswith("\n---\nbody ---\n")
    second = cm("probe", "r/odd.md", "--write", "--json")
    assert json.loads(second.out)["source_paths"] == ["src/a.py"]
    meta2 = frontmatter.parse(frontmatter.split(path.read_text())[0])
    assert {k: v for k, v in meta2.items() if k != "codemap_probe_at"} == \
        {k: v for k, v in meta.items() if k != "codemap_probe_at"}


def test_write_leaves_identical_bytes_alone(repo, codemaps, cm, capsys):
    from maestro.memory.project import codemap_probe

    init(cm)
    path = str(codemaps / "r" / "mod.md")
    now = datetime.datetime(2024, 5, 1, 10, 7, tzinfo=datetime.timezone.utc)
    first, rc = codemap_probe.probe(path, os.path.realpath(repo), write=True, now=now)
    assert (rc, first["wrote"]) == (0, True)
    stat = os.stat(path)
    second, rc = codemap_probe.probe(path, os.path.realpath(repo), write=True, now=now)
    assert (rc, second["wrote"]) == (0, False)
    assert os.stat(path).st_ino == stat.st_ino and os.stat(path).st_mtime_ns == stat.st_mtime_ns


def test_probe_paths_resolve_against_cwd_then_the_codemaps_dir(cm, repo, codemaps):
    init(cm)
    local = write_map(repo, "local.md", plain_map(commit=head(repo)))
    assert cm("probe", "local.md", "--json").out and json.loads(cm("probe", "local.md", "--json").out)[
        "codemap_path"] == str(local)
    sub = repo / "src"
    assert json.loads(cm("probe", "r/mod.md", "--json", cwd=sub).out)["reason"] == "ok"
    assert cm("probe", str(codemaps / "r" / "mod.md"), "--cwd", str(repo), cwd=sub.parent.parent).rc == 0


def test_git_that_cannot_run_is_one_line_and_exit_1(cm, repo, codemaps, monkeypatch, capsys):
    from maestro.commands.memory import codemap
    from maestro.memory.project import codemap_probe

    init(cm)

    def broken(*args, **kwargs):
        raise OSError(8, "Exec format error")

    monkeypatch.setattr(codemap_probe.subprocess, "run", broken)
    rc = codemap.probe_main(["r/mod.md", "--cwd", str(repo)])
    err = capsys.readouterr().err
    assert rc == 1 and err == "maestro memory codemap-probe: cannot run git: Exec format error\n"


def test_git_that_hangs_times_out_as_one_line(cm, repo, codemaps, monkeypatch, capsys):
    from maestro.commands.memory import codemap
    from maestro.memory.project import codemap_probe

    init(cm)

    def hang(args, **kwargs):
        raise subprocess.TimeoutExpired(args, kwargs["timeout"])

    monkeypatch.setattr(codemap_probe.subprocess, "run", hang)
    rc = codemap.audit_main(["--cwd", str(repo)])
    assert rc == 1 and "timed out" in capsys.readouterr().err


# -- scenarios 9–10: audit -----------------------------------------------------------------------
def five_mixed(repo, codemaps):
    sha = head(repo)
    write_map(codemaps, "r/a-nofm.md", "# just a body\n")
    write_map(codemaps, "r/b-bogus.md", plain_map(commit="deadbeef"))
    write_map(codemaps, "r/c-stale.md", plain_map(commit=sha))
    write_map(codemaps, "r/sub/d-stale.md", plain_map(commit=sha))
    write_map(codemaps, "r/e-nocommit.md", plain_map())
    commit_change(repo)


def test_audit_summarizes_five_mixed_codemaps(cm, repo, codemaps):
    five_mixed(repo, codemaps)
    result = cm("audit", "--json")
    data = json.loads(result.out)
    assert result.rc == 1
    assert data["summary"] == {"total": 5, "fresh": 0, "stale": 2, "missing_verified_commit": 1, "invalid": 2,
                               "written": 0}
    assert data["status"] == "ok" and data["base_path"] == str(codemaps)
    assert [os.path.relpath(r["codemap_path"], codemaps) for r in data["results"]] == [
        "r/a-nofm.md", "r/b-bogus.md", "r/c-stale.md", "r/e-nocommit.md", "r/sub/d-stale.md"]
    text = cm("audit")
    assert text.rc == 1 and text.out.splitlines()[-1] == \
        "total=5 fresh=0 stale=2 missing_verified_commit=1 invalid=2 written=0"
    assert "r/c-stale.md: stale=True reason=sources_changed_or_missing; changed: src/a.py" in text.out


def test_audit_write_counts_what_it_wrote(cm, repo, codemaps):
    five_mixed(repo, codemaps)
    data = json.loads(cm("audit", "--write", "--json").out)
    assert data["summary"]["written"] == 3  # two stale + the commit-less one; invalid files stay untouched
    assert (codemaps / "r" / "a-nofm.md").read_text() == "# just a body\n"


def test_audit_of_commit_less_codemaps_only_succeeds(cm, codemaps):
    write_map(codemaps, "r/one.md", plain_map())
    write_map(codemaps, "r/two.md", plain_map())
    result = cm("audit", "--json")
    assert result.rc == 0 and json.loads(result.out)["summary"]["missing_verified_commit"] == 2


def test_audit_of_a_single_file_and_of_a_missing_path(cm, repo, codemaps):
    init(cm)
    single = json.loads(cm("audit", "r/mod.md", "--json").out)
    assert single["summary"]["total"] == 1 and single["summary"]["fresh"] == 1
    missing = cm("audit", "r/none")
    assert missing.rc == 1 and "CodeMap path not found" in missing.err
    assert cm("audit", cwd=repo / "src").rc == 0


def test_audit_without_any_codemaps_is_path_not_found(cm):
    result = cm("audit")
    assert result.rc == 1 and "CodeMap path not found" in result.err


def project_dir(codemaps):
    return codemaps.parent


@pytest.mark.parametrize("how", ["handoff", "outcome"])
def test_audit_task_id_saves_the_payload_under_the_task(cm, repo, codemaps, how):
    init(cm)
    if how == "handoff":
        write_map(project_dir(codemaps), "handoffs/T-1.json", '{"task_id": "T-1"}')
    else:
        write_map(project_dir(codemaps), "outcomes/o1.json", '{"task_id": "other"}')
        write_map(project_dir(codemaps), "outcomes/o2.json", '{"task_id": "T-1"}')
        write_map(project_dir(codemaps), "outcomes/broken.json", "{not json")
    result = cm("audit", "--task-id", "T-1", "--json")
    assert result.rc == 0, result.err
    saved = json.loads((project_dir(codemaps) / "tasks" / "T-1" / "codemap-audit.json").read_text())
    assert saved["summary"]["fresh"] == 1 and saved == {k: v for k, v in json.loads(result.out).items()
                                                         if k not in ("version", "command", "ok")}


def test_an_unknown_task_fails_after_the_writes(cm, repo, codemaps):
    init(cm)
    commit_change(repo)
    result = cm("audit", "--task-id", "nope", "--write")
    assert result.rc == 1 and result.err.strip().endswith("Task not found: nope")
    assert "codemap_stale: true" in meta_lines(codemaps / "r" / "mod.md")
    assert not (project_dir(codemaps) / "tasks").exists()


def test_an_unsafe_task_id_is_refused_before_probing(cm, codemaps):
    init(cm)
    result = cm("audit", "--task-id", "../x", "--write")
    assert result.rc == 1 and "invalid task id" in result.err
    assert "codemap_probe_at" not in (codemaps / "r" / "mod.md").read_text()


def test_the_memory_dir_override_is_honoured(maestro, repo, tmp_path, monkeypatch):
    other = tmp_path / "elsewhere"
    monkeypatch.setenv("MAESTRO_MEMORY_DIR", str(other))
    result = maestro("memory", "codemap-init", "r", "mod", "--source-path", "src/a.py", cwd=repo)
    assert result.rc == 0 and result.out.startswith(f"Initialized CodeMap: {other}/projects/")


def test_the_subcommands_are_listed_in_memory_help(maestro):
    out = maestro("memory", "--help").out
    assert all(f"  codemap-{verb}" in out for verb in ("init", "probe", "audit"))


def test_an_unusable_cwd_is_exit_1(cm, tmp_path):
    result = cm("init", "r", "mod", "--source-path", "a", "--cwd", str(tmp_path / "absent"))
    assert result.rc == 1 and "not a directory" in result.err


# -- review fixes: secrets, odd files, symlinked directories, floats -------------------------------
def files_under(root) -> dict:
    found = {}
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as handle:
                    found[path] = handle.read()
    return found


def test_the_purpose_passes_the_secret_filter_before_it_reaches_disk(cm, codemaps, mem_root):  # noqa: F811
    result = cm("init", "r", "mod", "--source-path", "src/a.py", "--purpose",
                "password: x9secret and sk-abcdefghijklmnop1234567890", "--verified-commit", "tok-ghp_" + "a" * 36)
    assert result.rc == 0, result.err
    text = (codemaps / "r" / "mod.md").read_text()
    assert "[Filtered:password]" in text and "[Filtered:API key]" in text
    for content in files_under(mem_root).values():
        assert b"x9secret" not in content and b"sk-abcdefghijklmnop" not in content and b"a" * 36 not in content


def test_render_filters_the_purpose_and_the_notes():
    from maestro.memory.project.codemap import render_codemap

    text = render_codemap({"source_paths": ["a"]}, "r", "m", purpose="password: x", notes="api_key=ABCDEF1234567890XYZ")
    assert "password: x" not in text and "ABCDEF1234567890XYZ" not in text and "[Filtered:password]" in text


@pytest.mark.timeout(20)
@pytest.mark.parametrize("kind", ["fifo", "symlink-to-dev-zero", "symlink-to-a-file", "too-big"])
def test_a_fifo_a_device_link_or_a_huge_file_is_invalid_and_never_read(cm, repo, codemaps, kind):
    from maestro.memory.project import codemap
    from maestro.memory.project import codemap_probe

    init(cm)
    odd = codemaps / "r" / "x.md"
    if kind == "fifo":
        os.mkfifo(odd)
    elif kind == "symlink-to-dev-zero":
        os.symlink("/dev/zero", odd)
    elif kind == "symlink-to-a-file":
        os.symlink(codemaps / "r" / "mod.md", odd)
    else:
        odd.write_bytes(plain_map().encode() + b"x" * codemap_probe.MAX_BYTES)
    payload, rc = codemap.audit(str(codemaps), str(repo), write=True)
    assert rc == 1 and payload["summary"]["total"] == 2 and payload["summary"]["invalid"] == 1
    bad = [r for r in payload["results"] if r["codemap_path"].endswith("x.md")][0]
    assert bad["reason"] == "invalid_frontmatter" and bad["error"] and not bad["wrote"]
    result = cm("audit")
    assert result.rc == 1 and "r/x.md: stale=None reason=invalid_frontmatter; error: " in result.out


@pytest.mark.parametrize("link", ["codemaps", "repo_id"])
def test_a_symlinked_codemaps_directory_is_refused(cm, codemaps, tmp_path, link):
    outside = tmp_path / "outside"
    outside.mkdir()
    if link == "codemaps":
        codemaps.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(outside, codemaps)
    else:
        codemaps.mkdir(parents=True)
        os.symlink(outside, codemaps / "r")
    result = cm("init", "r", "mod", "--source-path", "src/a.py")
    assert result.rc == 1 and "refusing to write a codemap through" in result.err and "symlink" in result.err
    assert list(outside.iterdir()) == []


def test_a_float_that_does_not_round_trip_survives_a_write_byte_for_byte(cm, repo, codemaps):
    path = write_map(codemaps, "r/f.md", plain_map(commit=head(repo), extra="huge: 1.0e400\ntiny: 1.0e-400\n"
                                                   "padded: 1.50\nhalf: 0.5\n"))
    assert cm("probe", str(path), "--write").rc == 0
    lines = meta_lines(path)
    assert {"huge: 1.0e400", "tiny: 1.0e-400", "padded: 1.50", "half: 0.5"} <= set(lines)
