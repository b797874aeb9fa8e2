"""`scout --codemap REPO_ID SLUG`: a DONE answer becomes a codemap in maestro memory (never in the
repository), built from the answer's path:line citations; an existing one is kept unless --force."""

import hashlib
import os
import stat
import subprocess

import pytest
from testing.processes import run

pytestmark = pytest.mark.timeout(60)

REPLY = ("The value lives in app.py:1 and is read by ./app.py:1-2.\n"
         "Docs mention `hooks/select.sh:12` and /etc/passwd:1 and ../outside.py:3.\n"
         "SCOUT_SUMMARY: app.py:1 defines VALUE")


@pytest.fixture
def scout_env(fake, home, monkeypatch):  # noqa: F811
    monkeypatch.delenv("MAESTRO_MEMORY_DIR", raising=False)
    (home / ".codex" / "maestro-scout").write_text("model=fake-small\neffort=low\n")
    fake.set(turn_seconds=0, final_message=REPLY)
    return fake


def codemap_path(home, repo):  # noqa: F811
    digest = hashlib.sha1(os.path.realpath(repo).encode()).hexdigest()[:12]
    return home / ".maestro" / "memory" / "projects" / digest / "codemaps" / "app" / "value-lookup.md"


def scout(repo, *extra):  # noqa: F811
    query = repo.parent / "query.md"
    query.write_text("Where is VALUE defined?\n")
    return run("scout", "--query", str(query), "--codemap", "app", "Value Lookup", *extra, cwd=repo)


def test_a_scout_answer_is_saved_as_a_codemap_of_its_cited_files(repo, scout_env, home):  # noqa: F811
    result = scout(repo)
    path = codemap_path(home, repo)
    assert result.rc == 0, result.out + result.err
    assert result.final() == "MAESTRO_FINAL: SCOUT DONE rc=0"
    assert f"SCOUT_CODEMAP: {path} (1 source paths)" in result.lines
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    text = path.read_text()
    assert text.startswith(f"---\nsource_paths:\n  - app.py\nverified_commit: {head}\ngenerated_at: ")
    assert "\nconfidence: medium\n" in text
    assert "\n## Purpose\n\nWhere is VALUE defined?\n\nScout answer:\n\nThe value lives in app.py:1" in text
    assert "\n## Entry points\n" in text and "\n## Open questions / low confidence\n" in text
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo,
                            capture_output=True, text=True).stdout
    assert status == ""  # read-only for the repository: the codemap lives in maestro memory
    probe = run("memory", "codemap-probe", "app/value-lookup.md", cwd=repo)
    assert probe.rc == 0 and probe.out.startswith("stale=False reason=ok")


def test_an_existing_codemap_is_kept_without_force_and_no_job_starts(repo, scout_env, home):  # noqa: F811
    assert scout(repo).rc == 0
    path = codemap_path(home, repo)
    path.write_text(path.read_text() + "hand-written notes\n")
    before = path.read_bytes()
    launched = len(scout_env.calls("task"))
    refused = scout(repo)
    assert refused.rc == 3 and "SCOUT_ERROR: --codemap: CodeMap already exists" in refused.err
    assert path.read_bytes() == before and len(scout_env.calls("task")) == launched
    forced = scout(repo, "--force")
    assert forced.rc == 0 and b"hand-written notes" not in path.read_bytes()


def test_an_unsafe_repo_id_is_refused_before_the_job(repo, scout_env):  # noqa: F811
    query = repo.parent / "query.md"
    query.write_text("q\n")
    result = run("scout", "--query", str(query), "--codemap", "../x", "slug", cwd=repo)
    assert result.rc == 3 and "invalid repo_id" in result.err and scout_env.calls("task") == []


SECRET_REPLY = ("VALUE is in app.py:1.\npassword: hunter2\napi_key=ABCDEF1234567890XYZ\n"
                "SCOUT_SUMMARY: app.py:1 defines VALUE")


def test_secrets_and_the_companion_trailer_never_reach_the_codemap(repo, scout_env, home):  # noqa: F811
    scout_env.set(turn_seconds=0, final_message=SECRET_REPLY)
    query = repo.parent / "query.md"
    query.write_text("Where is VALUE? my key is sk-abcdefghijklmnop1234567890\n")
    result = run("scout", "--query", str(query), "--codemap", "app", "Value Lookup", cwd=repo)
    assert result.rc == 0, result.out + result.err
    text = codemap_path(home, repo).read_text()
    assert "[Filtered:API key]" in text and "[Filtered:password]" in text and "SCOUT_SUMMARY: app.py:1" in text
    assert "Codex session ID" not in text and "Resume in Codex" not in text
    # The companion's own job files and log hold the prompt and the reply verbatim (its job record, not
    # maestro's memory): they live in maestro's private companion data directory (0700, and each workspace's too).
    companion_data = str(home / ".maestro" / "companion-data")
    for directory, subdirs, names in os.walk(home / ".maestro"):
        if directory == companion_data:
            assert subdirs and stat.S_IMODE(os.lstat(directory).st_mode) == 0o700
            assert all(stat.S_IMODE(os.lstat(os.path.join(directory, sub)).st_mode) == 0o700 for sub in subdirs)
            subdirs.clear()
            continue
        for name in names:
            path = os.path.join(directory, name)
            if os.path.isfile(path):
                with open(path, "rb") as handle:
                    data = handle.read()
                for secret in (b"sk-abcdefghijklmnop1234567890", b"hunter2", b"ABCDEF1234567890XYZ"):
                    assert secret not in data, path


def test_the_trailer_is_stripped_and_only_at_the_end():
    from maestro.memory.project.codemap_scout import strip_trailer

    answer = "See a.py:1.\nCodex session ID: thr_1 is quoted here\nend\n\nCodex session ID: thr_1\n" \
             "Resume in Codex: codex resume thr_1\n"
    assert strip_trailer(answer) == "See a.py:1.\nCodex session ID: thr_1 is quoted here\nend"
