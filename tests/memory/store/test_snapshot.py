"""The bounded snapshot (spec memory.md §2.6; §4 scenarios 27–34 adapted).

Most tests call the pure renderer on a store written straight to disk (fixed dates, so the
daily section is deterministic); the `memory snapshot` verb is tested black-box against the
selected target.
"""

import datetime
import hashlib
import json
import os

import pytest
from testing.memory import all_files

from maestro.memory.store import layout, snapshot
from maestro.memory.store.errors import StoreError

TODAY = datetime.date(2024, 5, 2)
YESTERDAY = "2024-05-01"
TITLES = ["# Session", "# Global Memory", "# User Memory", "# Project Key Memory", "# Project Context",
          "# Project Knowledge", "# Recent Daily"]


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "project"
    path.mkdir()
    return str(path.resolve())


def project_dir(root, project):
    return root / "projects" / hashlib.sha1(project.encode()).hexdigest()[:12]


def write(path, entries):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(("\n§\n".join(entries) + "\n").encode() if entries else b"")


def populate(root, project):
    write(root / "MEMORY.md", ["[2024-04-01 09:00] [summary:g1] global one"])
    write(root / "USER.md", ["[2024-04-01 09:00] [summary:u1] user one"])
    write(project_dir(root, project) / "KEY.md", ["[id:0000000a] [2024-04-01] [summary:k1] key one"])
    write(project_dir(root, project) / "MEMORY.md", ["[2024-04-01 09:00] [summary:p1] project one"])
    (project_dir(root, project) / "REFERENCE.md").write_text("# Reference\nbuild with make\n")
    write(root / "daily" / f"{TODAY}.md", ["[10:00] [summary:d1] today one"])


def render(root, project=None, **kwargs):
    return snapshot.render(str(root), project=project, today=TODAY, **kwargs)


def row(snap, key):
    return next(s for s in snap.sections if s.key == key)


def section_body(snap, title):
    start = snap.text.index(title + "\n") + len(title) + 1
    end = snap.text.find("\n\n", start)
    return snap.text[start:end]


# --------------------------------------------------------------------------------------- 27 order


def test_27_all_tracks_populated_render_in_spec_order_with_the_note_last_once(mem_root, project):
    populate(mem_root, project)
    snap = render(mem_root, project, branch="main", session_id="sid-1", session_name="demo")
    positions = [snap.text.index(title + "\n") for title in TITLES]
    assert positions == sorted(positions)
    assert snap.text.startswith("# Session\nsessionId: sid-1 | sessionName: demo\n\n# Global Memory\n")
    assert snap.text.count(snapshot.NOTE) == 1 and snap.text.endswith("\n\n" + snapshot.NOTE + "\n")
    assert [s.key for s in snap.sections] == ["session", "memory", "user", "key", "autoRecall", "reference",
                                              "recentDaily"]
    assert all(s.entries == 1 and s.dropped == 0 and s.truncated == 0 for s in snap.sections)
    assert not snap.empty and snap.total_bytes == len(snap.text.encode())


def test_27_without_a_project_there_are_no_key_or_project_sections_but_the_note_stays(mem_root, project):
    populate(mem_root, project)
    snap = render(mem_root)
    for title in ("# Project Key Memory", "# Project Context", "# Project Knowledge"):
        assert title not in snap.text
    assert "# Global Memory\n" in snap.text and "# Recent Daily\n" in snap.text
    assert snap.text.count(snapshot.NOTE) == 1
    assert [s.key for s in snap.sections] == ["memory", "user", "recentDaily"]


def test_27_an_empty_or_absent_store_is_empty_and_renders_only_the_note(mem_root, project):
    snap = render(mem_root, project)
    assert snap.empty and snap.text == snapshot.NOTE + "\n"
    assert all(s.entries == 0 and s.bytes == 0 for s in snap.sections)


# -------------------------------------------------------------------------------------- 28 budget


def test_28_twenty_small_memory_entries_render_the_newest_8_and_drop_12(mem_root):
    write(mem_root / "MEMORY.md", [f"[2024-04-01 09:{i:02d}] fact number {i}" for i in range(20)])
    snap = render(mem_root)
    stats = row(snap, "memory")
    assert (stats.entries, stats.dropped, stats.truncated, stats.cap, stats.budget) == (8, 12, 0, 2048, 8)
    body = section_body(snap, "# Global Memory")
    assert body.split("\n---\n") == [f"[2024-04-01 09:{i:02d}] fact number {i}" for i in range(12, 20)]
    assert stats.bytes == len(body.encode())


def test_28_older_entries_stop_at_the_first_that_does_not_fit_the_cap(mem_root):
    entries = ["old " + "a" * 100, "mid " + "b" * 1950, "new " + "c" * 100]  # mid does not fit after new
    write(mem_root / "MEMORY.md", entries)
    stats = row(render(mem_root), "memory")
    assert (stats.entries, stats.dropped) == (1, 2)  # contiguous: `old` would fit but is not reached


def test_28_key_entries_are_branch_filtered_and_untagged_ones_always_show(mem_root, project):
    write(project_dir(mem_root, project) / "KEY.md",
          ["[id:0000000a] [2024-04-01] [branch:main] use pnpm", "[id:0000000b] [2024-04-01] [branch:dev] use yarn",
           "[id:0000000c] [2024-04-01] always lint"])
    text = render(mem_root, project, branch="main").text
    assert "use pnpm" in text and "always lint" in text and "use yarn" not in text
    assert "use yarn" in render(mem_root, project, branch=None).text


# ------------------------------------------------------------------------------------ 29–30 oversize


def test_29_oversize_untagged_entry_is_truncated_on_a_utf8_boundary(mem_root):
    huge = "[2024-04-01 09:00] " + "é" * 4500  # ≈ 9,000 B, two bytes a character
    (mem_root).mkdir(parents=True)
    (mem_root / "MEMORY.md").write_bytes(huge.encode() + b"\n")
    snap = render(mem_root)
    stats = row(snap, "memory")
    body = section_body(snap, "# Global Memory")
    assert body.endswith("é…[truncated]") and body.startswith("[2024-04-01 09:00] éé")
    assert stats.truncated == 1 and stats.entries == 1
    assert stats.bytes == len(body.encode()) <= 4096 and stats.bytes >= 4096 - 2
    assert "\ufffd" not in body


def test_29_an_entry_between_cap_and_twice_the_cap_is_kept_whole(mem_root):
    entry = "[2024-04-01 09:00] " + "x" * 3000
    write(mem_root / "MEMORY.md", ["older", entry])
    stats = row(render(mem_root), "memory")
    assert (stats.entries, stats.dropped, stats.truncated, stats.bytes) == (1, 1, 0, len(entry))


def test_30_oversize_entry_with_a_summary_is_compacted_to_header_and_summary(mem_root):
    write(mem_root / "USER.md", ["[2024-04-01 09:00] [summary:s] " + "body " * 2000])
    snap = render(mem_root)
    assert section_body(snap, "# User Memory") == "[2024-04-01 09:00] [summary:s]"
    assert "body body" not in snap.text
    assert row(snap, "user").truncated == 0


# ---------------------------------------------------------------------------------- 31 project context


def test_31_five_project_entries_render_the_newest_4(mem_root, project):
    write(project_dir(mem_root, project) / "MEMORY.md", [f"[2024-04-0{i} 09:00] step {i}" for i in range(1, 6)])
    snap = render(mem_root, project)
    stats = row(snap, "autoRecall")
    assert section_body(snap, "# Project Context").split("\n---\n") == [
        f"[2024-04-0{i} 09:00] step {i}" for i in range(2, 6)]
    assert (stats.entries, stats.dropped, stats.cap, stats.budget) == (4, 1, 1024, 4)


def test_31_long_project_entries_are_cut_to_600_chars_and_the_section_to_1024_bytes(mem_root, project):
    write(project_dir(mem_root, project) / "MEMORY.md", [f"[2024-04-0{i} 09:00] " + str(i) * 900 for i in range(1, 6)])
    snap = render(mem_root, project)
    stats = row(snap, "autoRecall")
    body = section_body(snap, "# Project Context")
    assert all(len(piece) <= 600 for piece in body.split("\n---\n"))
    assert stats.bytes == len(body.encode()) <= 1024
    assert (stats.entries, stats.dropped, stats.truncated) == (1, 4, 1)


def test_31_reference_is_cut_to_its_first_2048_chars(mem_root, project):
    (project_dir(mem_root, project)).mkdir(parents=True)
    (project_dir(mem_root, project) / "REFERENCE.md").write_text("R" * 5000)
    snap = render(mem_root, project)
    stats, body = row(snap, "reference"), section_body(snap, "# Project Knowledge")
    assert len(body) == 2048 and body.endswith("R…[truncated]")
    assert (stats.entries, stats.truncated, stats.bytes) == (1, 1, len(body.encode()))


# ---------------------------------------------------------------------------------------- 32 daily


def test_32_daily_shows_yesterdays_last_before_todays_last(mem_root):
    write(mem_root / "daily" / f"{YESTERDAY}.md", ["[09:00] yesterday first", "[18:00] yesterday last"])
    write(mem_root / "daily" / f"{TODAY}.md", ["[09:00] today first", "[11:00] today last"])
    snap = render(mem_root)
    assert section_body(snap, "# Recent Daily") == "[18:00] yesterday last\n---\n[11:00] today last"
    assert (row(snap, "recentDaily").entries, row(snap, "recentDaily").cap) == (2, 512)


def test_32_daily_with_a_cap_of_40_keeps_today_only(mem_root):
    write(mem_root / "daily" / f"{YESTERDAY}.md", ["[18:00] yesterday last entry"])
    write(mem_root / "daily" / f"{TODAY}.md", ["[11:00] today last entry"])
    snap = render(mem_root, caps={"recentDaily": 40})
    assert section_body(snap, "# Recent Daily") == "[11:00] today last entry"
    assert (row(snap, "recentDaily").entries, row(snap, "recentDaily").dropped) == (1, 1)


# --------------------------------------------------------------------------------------- 33 braces


def test_33_brace_runs_collapse_to_one_brace(mem_root):
    write(mem_root / "MEMORY.md", ["template {{x}} and {{{y}}}", "plain {z}"])
    text = render(mem_root).text
    assert "{{" not in text and "}}" not in text
    assert "template {x} and {y}" in text and "plain {z}" in text


# ----------------------------------------------------------------------------------- 34 huge store


def fill_huge(root, project, per_track=1000, size=400):
    def entries(tag):
        return [f"[2024-04-01 09:00] [summary:{tag} {i}] {tag} {i} " + "w" * size for i in range(per_track)]

    write(root / "MEMORY.md", entries("global"))
    write(root / "USER.md", entries("user"))
    write(project_dir(root, project) / "KEY.md", [f"[id:{i:08x}] " + e for i, e in enumerate(entries("key"))])
    write(project_dir(root, project) / "MEMORY.md", entries("project"))
    (project_dir(root, project) / "REFERENCE.md").write_text("ref " * 5000)
    write(root / "daily" / f"{YESTERDAY}.md", entries("yday"))
    write(root / "daily" / f"{TODAY}.md", entries("today"))


def test_34_huge_store_output_is_at_most_the_sum_of_caps_plus_the_fixed_text(mem_root, project):
    fill_huge(mem_root, project)
    snap = render(mem_root, project, branch="main")
    fixed = sum(len(t.encode()) + 3 for t in TITLES[1:]) + len(snapshot.NOTE.encode()) + 1
    assert snap.total_bytes <= sum(cap for _, cap, _ in snapshot.SECTIONS.values()) + fixed
    assert sum(s.dropped for s in snap.sections) > 3900  # daily counts only its 2 candidates
    assert all(s.bytes <= s.cap for s in snap.sections if s.key != "reference")  # reference: a cap in chars
    assert len(section_body(snap, "# Project Knowledge")) <= 2048


@pytest.mark.parametrize("limit", [9000, 3000, 800])
@pytest.mark.in_process
def test_34_max_chars_bounds_the_text_even_when_every_newest_entry_is_oversize(mem_root, project, limit):
    fill_huge(mem_root, project, per_track=50, size=20000)
    snap = render(mem_root, project, max_chars=limit)
    assert len(snap.text) <= limit
    assert snap.text.endswith(snapshot.NOTE + "\n")


@pytest.mark.in_process
def test_34_the_last_resort_clip_counts_its_own_marker(mem_root, project):
    """When scaling every cap down is not enough (the fixed text alone is too long), the text is clipped: the
    clipped text, its truncation marker included, still fits `max_chars` (the hook's 10,000-character cap)."""
    fill_huge(mem_root, project, per_track=5, size=20000)
    clipped = []
    for limit in range(300, 1300, 20):
        snap = render(mem_root, project, max_chars=limit, session_id="s" * 300, session_name="n" * 300)
        assert len(snap.text) <= limit, (limit, len(snap.text))
        if snap.clipped and snap.text:
            clipped.append(limit)
            assert snap.text.endswith(snapshot.TRUNCATED + "\n\n" + snapshot.NOTE + "\n")
            assert len(snap.text) >= limit - 1  # the clip keeps as much of the head as fits
    assert len(clipped) >= 10  # the last-resort path was really taken, at many limits


def test_rendering_writes_nothing(mem_root, project):
    populate(mem_root, project)
    before = {p: p.read_bytes() for p in all_files(mem_root)}
    render(mem_root, project, branch="main")
    render(mem_root / "absent", project)
    assert {p: p.read_bytes() for p in all_files(mem_root)} == before
    assert not (mem_root / "absent").exists()


def test_a_file_that_is_not_utf8_is_shown_with_replacement_characters_and_named(mem_root):
    """Issue 10 §3 (it was an error that hid the whole store; more in test_damaged_files.py)."""
    mem_root.mkdir(parents=True)
    (mem_root / "MEMORY.md").write_bytes(b"bad \xff entry\n")
    snap = render(mem_root)
    assert "# Global Memory\nbad \ufffd entry\n" in snap.text
    assert snap.damaged == ((str(mem_root / "MEMORY.md"), "not UTF-8 (byte 4)"),)


def test_utf8_cut_never_splits_a_character():
    assert snapshot.utf8_cut("aé€😀", 1) == "a"
    assert snapshot.utf8_cut("aé€😀", 2) == "a"
    assert snapshot.utf8_cut("aé€😀", 3) == "aé"
    assert snapshot.utf8_cut("aé€😀", 9) == "aé€"
    assert snapshot.utf8_cut("aé€😀", 10) == "aé€😀"


# ------------------------------------------------------------------------------------- the verb


def test_snapshot_verb_prints_the_text_and_the_json_envelope_with_stats(maestro, mem_root, tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    write(mem_root / "MEMORY.md", [f"fact {i}" for i in range(10)])
    result = maestro("memory", "snapshot", "--cwd", str(project))
    assert result.rc == 0, result.err
    assert result.out.startswith("# Global Memory\nfact 2\n---\n") and result.out.endswith(snapshot.NOTE + "\n")
    result = maestro("memory", "snapshot", "--cwd", str(project), "--branch", "main", "--json")
    assert result.rc == 0, result.err
    envelope = json.loads(result.out)
    assert (envelope["version"], envelope["command"], envelope["ok"]) == (1, "memory snapshot", True)
    assert envelope["branch"] == "main" and envelope["project"] == os.path.realpath(project)
    memory = next(s for s in envelope["sections"] if s["key"] == "memory")
    assert (memory["entries"], memory["dropped"], memory["truncated"]) == (8, 2, 0)
    assert envelope["totalBytes"] == len(envelope["text"].encode())
    assert sorted(p.name for p in mem_root.iterdir()) == ["MEMORY.md"]  # nothing written


def test_snapshot_verb_renders_a_store_with_a_non_utf8_file_and_names_it(maestro, mem_root):
    mem_root.mkdir(parents=True)
    (mem_root / "USER.md").write_bytes(b"\xff\n")
    result = maestro("memory", "snapshot", "--json")
    assert result.rc == 0, result
    envelope = json.loads(result.out)
    assert envelope["damaged"] == [{"file": str(mem_root / "USER.md"), "why": "not UTF-8 (byte 0)"}]
    assert "# User Memory\n\ufffd\n" in envelope["text"]


def test_snapshot_verb_in_a_git_repository_uses_the_checked_out_branch(maestro, mem_root, tmp_path):
    from testing.git import git

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "feature")
    git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "x")
    write(project_dir(mem_root, str(repo.resolve())) / "KEY.md",
          ["[id:0000000a] [branch:feature] on feature", "[id:0000000b] [branch:other] on other"])
    envelope = json.loads(maestro("memory", "snapshot", "--cwd", str(repo / "."), "--json").out)
    assert envelope["branch"] == "feature"
    assert "on feature" in envelope["text"] and "on other" not in envelope["text"]


# ------------------------------------------------------------------------------------- locate


def test_locate_outside_git_is_the_directory_without_a_branch(tmp_path):
    assert layout.locate(str(tmp_path)) == (str(tmp_path.resolve()), None)


def test_locate_unborn_and_detached_heads_have_no_branch(tmp_path):
    from testing.git import git

    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    assert layout.locate(str(repo / "sub")) == (str(repo.resolve()), None)  # unborn
    git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "x")
    assert layout.locate(str(repo / "sub")) == (str(repo.resolve()), "main")
    git(repo, "checkout", "-q", "--detach")
    assert layout.locate(str(repo)) == (str(repo.resolve()), None)


@pytest.mark.in_process
def test_locate_with_a_missing_or_hanging_git_falls_back_to_the_directory(tmp_path, monkeypatch):
    import time

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    assert layout.locate(str(tmp_path)) == (str(tmp_path.resolve()), None)  # no git at all
    fake = bin_dir / "git"
    fake.write_text("#!/bin/sh\nexec /bin/sleep 40\n")
    fake.chmod(0o755)
    began = time.monotonic()
    assert layout.locate(str(tmp_path), timeout=0.3) == (str(tmp_path.resolve()), None)
    assert time.monotonic() - began < 20  # bounded by its timeout, not the hanging git (room for a busy machine)


def test_locate_refuses_a_missing_directory(tmp_path):
    with pytest.raises(StoreError, match="not a directory"):
        layout.locate(str(tmp_path / "nope"))


def test_the_branch_tag_screen_is_the_case_insensitive_ascii_pattern():
    """snapshot.has_branch_tag (no pattern compiled on a start) finds exactly what `\\[branch:` with
    IGNORECASE | ASCII finds: no character outside ASCII lowercases to a letter of `[branch:`."""
    import random
    import re

    pattern = re.compile(r"\[branch:", re.IGNORECASE | re.ASCII)
    assert not [code for code in range(128, 0x110000) if set(chr(code).lower()) & set("[branch:")]
    rng = random.Random(5)
    pieces = ["[branch:", "[BRANCH:", "[Branch:", "[bRaNcH:", "[brAnch", "branch:", "[ branch:", "İ", "K", "ß", "[",
              "ＢＲＡＮＣＨ", "[bra", "nch:", "x", " ", "\n"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        assert snapshot.has_branch_tag(text) == bool(pattern.search(text)), text


def test_collapse_braces_without_doubled_braces_returns_the_text_itself():
    import re

    for text in ["", "plain", "{x}", "}{", "{{a}}", "a {{{b}}} c }}", "{ {"]:
        assert snapshot.collapse_braces(text) == re.sub(r"\{\{+|\}\}+", lambda m: m.group(0)[0], text)
