"""`memory skill`: list, show, archive, restore and the person-only promote, which installs
~/.claude/skills/<slug>/SKILL.md tracked in the install manifest so that `uninstall` removes it."""

import hashlib
import json
import os
from pathlib import Path

import pytest

from maestro.memory.project import outcomes
from maestro.memory.project.files import ProjectMemory

pytestmark = pytest.mark.timeout(60)

CHECK = outcomes.failure_signature("make test", "ERROR: test_login failed after 3.2s")


@pytest.fixture
def slug(maestro, project):
    memory = ProjectMemory.for_cwd(str(project))
    for day in (1, 2):
        rec = outcomes.record(kind="loop", task_id="plan-abc12345", state="STUCK",
                              started_at=f"2026-01-0{day}T00:00:00Z", files_changed=["src/login.py"],
                              attempts=[{"n": 1, "result": "verify_failed", "check": CHECK, "summary": "s"}])
        outcomes.save(memory, rec)
    result = maestro("memory", "patterns", "extract", "--cwd", str(project), "--json")
    assert result.rc == 0, result.err
    (candidate,) = json.loads(result.out)["candidates"]
    return candidate["slug"]


def skill(maestro, project, *args):
    return maestro("memory", "skill", *args, "--cwd", str(project))


def candidate_md(project, slug):
    memory = ProjectMemory.for_cwd(str(project))
    return Path(memory.candidate_skills, slug, "candidate-skill.md").read_text()


def manifest(home):
    path = home / ".maestro" / "install-manifest.json"
    return json.loads(path.read_text()) if path.exists() else None


def frontmatter(text):
    assert text.startswith("---\n")
    head, _, body = text[4:].partition("\n---\n")
    fields = dict(line.split(": ", 1) for line in head.splitlines())
    return fields, body


def test_list_and_show(maestro, project, slug):
    listed = skill(maestro, project, "list")
    assert listed.rc == 0 and slug in listed.out and "candidate" in listed.out
    as_json = json.loads(skill(maestro, project, "list", "--json").out)
    assert [s["slug"] for s in as_json["skills"]] == [slug] and as_json["skills"][0]["occurrences"] == 2
    shown = skill(maestro, project, "show", slug)
    assert shown.rc == 0 and shown.out == candidate_md(project, slug)


def test_promote_writes_skill_md_with_frontmatter_and_a_manifest_entry(maestro, project, slug, home):
    result = skill(maestro, project, "promote", slug)
    assert result.rc == 0, result.err
    path = home / ".claude" / "skills" / slug / "SKILL.md"
    data = path.read_bytes()
    fields, body = frontmatter(data.decode())
    assert fields["name"] == slug and set(fields) == {"name", "description"}
    description = json.loads(fields["description"])  # a double-quoted scalar: valid YAML and JSON
    assert "\n" not in description and "verify check keeps failing" in description
    assert "## What to do" in body
    assert manifest(home)["files"] == {f"skills/{slug}/SKILL.md": hashlib.sha256(data).hexdigest()}
    assert oct(path.stat().st_mode & 0o777) == "0o644"
    meta, _ = frontmatter(candidate_md(project, slug))
    assert meta["status"] == "promoted" and meta["promoted_at"].endswith("Z")
    again = skill(maestro, project, "promote", slug)  # ours: refreshing is allowed
    assert again.rc == 0 and path.read_bytes() == data


def test_uninstall_removes_a_promoted_skill_without_an_install(maestro, project, slug, home):
    assert skill(maestro, project, "promote", slug).rc == 0
    assert maestro("uninstall").rc == 0
    assert not (home / ".claude" / "skills" / slug).exists()
    assert manifest(home) is None


def test_install_then_promote_then_uninstall_removes_everything(maestro, project, slug, home):
    assert maestro("install").rc == 0
    installed = set(manifest(home)["files"])
    assert skill(maestro, project, "promote", slug).rc == 0
    assert set(manifest(home)["files"]) == installed | {f"skills/{slug}/SKILL.md"}
    assert maestro("install").rc == 0  # a re-install keeps the promoted skill's entry
    assert f"skills/{slug}/SKILL.md" in manifest(home)["files"]
    assert maestro("uninstall").rc == 0
    assert not (home / ".claude" / "skills" / slug).exists() and manifest(home) is None


def test_a_foreign_skill_is_not_overwritten_without_force(maestro, project, slug, home):
    path = home / ".claude" / "skills" / slug / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"my own skill\n")
    result = skill(maestro, project, "promote", slug)
    assert result.rc == 4 and "does not own" in result.err
    assert path.read_bytes() == b"my own skill\n" and manifest(home) is None
    assert "status: candidate" in candidate_md(project, slug)
    assert skill(maestro, project, "promote", slug, "--force").rc == 0
    assert path.read_bytes() != b"my own skill\n" and f"skills/{slug}/SKILL.md" in manifest(home)["files"]


def test_a_symlinked_target_is_refused_even_with_force(maestro, project, slug, home, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (home / ".claude" / "skills").mkdir(parents=True)
    os.symlink(elsewhere, home / ".claude" / "skills" / slug)
    result = skill(maestro, project, "promote", slug, "--force")
    assert result.rc == 4 and "symlink" in result.err
    assert list(elsewhere.iterdir()) == [] and manifest(home) is None


def test_shipped_skill_names_and_unknown_or_invalid_slugs_are_refused(maestro, project, slug):
    assert skill(maestro, project, "promote", "plan-authoring").rc == 4
    unknown = skill(maestro, project, "promote", "no-such-skill")
    assert unknown.rc == 4 and "no candidate skill" in unknown.err and len(unknown.err.splitlines()) == 1
    assert json.loads(skill(maestro, project, "show", "nope", "--json").out)["error"]["reason"] == "no_match"
    for bad in ("../x", "a/b", ".hidden"):
        result = skill(maestro, project, "promote", bad)
        assert result.rc == 3 and "invalid skill slug" in result.err


def test_archive_needs_a_reason_blocks_promotion_and_restore_undoes_it(maestro, project, slug, home):
    assert skill(maestro, project, "archive", slug).rc == 3
    result = skill(maestro, project, "archive", slug, "--reason", "too specific; token=abc123secret")
    assert result.rc == 0
    meta, _ = frontmatter(candidate_md(project, slug))
    assert meta["status"] == "archived" and meta["archived_at"].endswith("Z")
    assert meta["archive_reason"].startswith("too specific;") and "abc123secret" not in candidate_md(project, slug)
    blocked = skill(maestro, project, "promote", slug)
    assert blocked.rc == 4 and "restore" in blocked.err and not (home / ".claude" / "skills" / slug).exists()
    assert skill(maestro, project, "restore", slug).rc == 0
    meta, _ = frontmatter(candidate_md(project, slug))
    assert meta["status"] == "candidate" and meta["archived_at"] == meta["archive_reason"] == ""
    assert skill(maestro, project, "restore", slug).rc == 4  # not archived
    assert skill(maestro, project, "promote", slug).rc == 0
    assert skill(maestro, project, "archive", "unknown-one", "--reason", "x").rc == 4


def test_a_malformed_candidate_fails_closed(maestro, project, slug):
    path = Path(ProjectMemory.for_cwd(str(project)).candidate_skills, slug, "candidate-skill.md")
    path.write_text("no frontmatter here\n")
    result = skill(maestro, project, "promote", slug)
    assert result.rc == 3 and "malformed" in result.err and path.read_text() == "no frontmatter here\n"
    assert "(malformed)" in skill(maestro, project, "list").out
    assert maestro("memory", "patterns", "extract", "--cwd", str(project)).rc == 3
    assert path.read_text() == "no frontmatter here\n"


def _hold_manifest_lock(home):
    """Take the shared install-manifest lock from this process (its own open file description)."""
    import fcntl

    (home / ".maestro").mkdir(mode=0o700, exist_ok=True)
    fd = os.open(home / ".maestro" / "install-manifest.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_promote_refuses_busy_while_the_install_manifest_lock_is_held(maestro, project, slug, home, monkeypatch):
    monkeypatch.setenv("MAESTRO_MEMORY_LOCK_TIMEOUT_SEC", "0.2")
    fd = _hold_manifest_lock(home)
    try:
        result = skill(maestro, project, "promote", slug)
    finally:
        os.close(fd)
    assert result.rc == 4 and "install manifest is locked by another maestro" in result.err
    assert not (home / ".claude" / "skills" / slug).exists() and manifest(home) is None
    assert "status: candidate" in candidate_md(project, slug)
    assert skill(maestro, project, "promote", slug).rc == 0  # released: it goes through
    assert f"skills/{slug}/SKILL.md" in manifest(home)["files"]


def test_install_and_uninstall_wait_for_the_lock_promote_takes(maestro, project, slug, home):
    import threading
    import time

    assert skill(maestro, project, "promote", slug).rc == 0
    for verb in ("install", "uninstall"):
        fd = _hold_manifest_lock(home)
        threading.Timer(0.5, os.close, (fd,)).start()
        started = time.monotonic()
        assert maestro(verb).rc == 0
        assert time.monotonic() - started >= 0.45, verb  # it waited for the holder
        if verb == "install":
            assert f"skills/{slug}/SKILL.md" in manifest(home)["files"]  # the promoted entry survived
    assert manifest(home) is None and not (home / ".maestro" / "install-manifest.lock").exists()
