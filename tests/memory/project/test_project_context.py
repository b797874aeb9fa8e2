"""The project block of the SessionStart context (maestro/memory/project/context.py): open work
first, then the learned patterns that apply to the files in play — always within its budget — and
how `session-start` (maestro/hooks/session_start.py) combines it with the snapshot and the pin line.
"""

import hashlib
import json
import os
import random

import pytest
from testing.git import git, git_repo

from maestro.memory.project import handoffs
from maestro.memory.project import files as project
from maestro.memory.project import context as project_context

pytestmark = pytest.mark.timeout(60)

CONTEXT_CAP = 10_000


@pytest.fixture
def repo(tmp_path):
    return git_repo(tmp_path / "repo", ("app.py", "src/old.py", "src/keep.py", "docs.md"), "x = 1\n")


def memory_for(path):
    return project.ProjectMemory.for_cwd(str(path))


def write_patterns(memory, patterns=(), avoid=()):
    project.write_json(memory.patterns_file, {"version": 1, "project": memory.project, "last_updated": None,
                                              "patterns": list(patterns), "avoid": list(avoid)})


def pattern(n, applies_to, title=None):
    return {"id": f"P{n:03d}", "title": title or f"pattern {n}", "source": "manual", "confidence": "medium",
            "applies_to": applies_to}


def avoid(n, applies_to, title=None, reason="it broke"):
    return {"id": f"A{n:03d}", "title": title or f"avoid {n}", "reason": reason, "source": "manual",
            "confidence": "medium", "applies_to": applies_to}


def open_task(memory, task_id, files=(), title=None, state="STUCK", updated_at=None):
    handoffs.write(memory, task_id=task_id, kind="loop", title=title or f"Task {task_id}", state=state,
                   plan="/p/plan.md", iterations=2, next_command="maestro loop --plan /p/plan.md", files=files,
                   updated_at=updated_at)


def render(memory, max_chars=2000):
    return project_context.render(os.path.dirname(os.path.dirname(memory.dir)), memory.project, max_chars)


def pattern_ids(text):
    return [line.split("]")[0][3:] for line in text.splitlines() if line.startswith("- [")]


# ------------------------------------------------------------------------------------------ bounded


@pytest.mark.in_process
def test_render_is_bounded_for_any_budget(repo):
    memory = memory_for(repo)
    rng = random.Random(45)
    for i in range(40):
        title = "".join(rng.choice("abc def\n\t—é😀\x1b") for _ in range(rng.randint(0, 400)))
        open_task(memory, f"t{i}", files=[f"f{i}.py"], title=title or "t", updated_at=f"2024-05-01T10:{i:02d}:00Z")
    handoffs.write(memory, task_id="session-s", kind="session", title="s", state="x" * 400, next_command="y" * 400,
                   doing="z" * 400)
    write_patterns(memory, [pattern(i, [], "p" * rng.randint(1, 400)) for i in range(1, 20)],
                   [avoid(i, ["*"], "a" * 300, "r" * 300) for i in range(1, 20)])
    full = render(memory, 100_000)
    assert "Open work" in full and "Known patterns" in full
    for max_chars in list(range(0, 120)) + [rng.randint(0, 3000) for _ in range(150)] + [3000]:
        text = render(memory, max_chars)
        assert len(text) <= max_chars, max_chars
        assert not text or text.endswith("\n\n")
        if text.count("\n") > 2:  # whole lines, from the top: only a lone first line is ever cut
            assert full.startswith(text[:-1])


def test_bounded_keeps_whole_lines_and_cuts_only_the_first():
    lines = ["a" * 10, "b" * 10, "c" * 10]
    assert project_context.bounded(lines, 1000) == "aaaaaaaaaa\nbbbbbbbbbb\ncccccccccc\n\n"
    assert project_context.bounded(lines, 23) == "aaaaaaaaaa\nbbbbbbbbbb\n\n"
    assert project_context.bounded(lines, 8) == "aaaaa…\n\n"
    for limit in range(0, 40):
        assert len(project_context.bounded(lines, limit)) <= limit
    assert project_context.bounded([], 100) == ""


@pytest.mark.in_process
def test_nothing_to_say_renders_nothing(repo):
    memory = memory_for(repo)
    assert render(memory) == ""
    write_patterns(memory)  # an empty document: no block either
    assert render(memory) == ""


# ------------------------------------------------------------------------------------ files in play


@pytest.mark.in_process
def test_patterns_follow_the_files_of_open_handoffs(repo):
    memory = memory_for(repo)
    write_patterns(memory, [pattern(1, ["lib/auth"]), pattern(2, ["web/*.js"])], [avoid(1, ["db/schema.sql"])])
    assert "Known patterns" not in render(memory)
    open_task(memory, "a", files=["lib/auth/login.py"])
    text = render(memory)
    assert text.startswith("Open work (maestro project memory):\nResuming: Task a — STUCK")
    assert "Known patterns for the files in play:\n- [P001] pattern 1\n" in text
    assert pattern_ids(text) == ["P001"]
    open_task(memory, "b", files=["db/schema.sql"])
    assert pattern_ids(render(memory)) == ["P001", "A001"]
    assert "- [A001] avoid: avoid 1 — it broke\n" in render(memory)


@pytest.mark.in_process
def test_done_handoffs_do_not_bring_their_files_into_play(repo):
    memory = memory_for(repo)
    write_patterns(memory, [pattern(1, ["lib/auth"])])
    open_task(memory, "a", files=["lib/auth/login.py"], state="VERIFIED_DONE")
    assert render(memory) == ""


@pytest.mark.in_process
def test_patterns_follow_modified_untracked_and_renamed_files(repo):
    memory = memory_for(repo)
    write_patterns(memory, [pattern(1, ["app.py"]), pattern(2, ["new/deep/*.py"]), pattern(3, ["src/renamed.py"]),
                            pattern(4, ["docs.md"]), pattern(5, ["src/keep.py"])])
    assert render(memory) == ""  # a clean worktree, no open work: nothing in play
    (repo / "app.py").write_text("x = 2\n")  # modified, unstaged
    assert pattern_ids(render(memory)) == ["P001"]
    (repo / "new" / "deep").mkdir(parents=True)
    (repo / "new" / "deep" / "mod.py").write_text("y = 1\n")  # untracked, in an untracked directory
    assert pattern_ids(render(memory)) == ["P001", "P002"]
    git(repo, "mv", "src/old.py", "src/renamed.py")  # a staged rename
    assert pattern_ids(render(memory)) == ["P001", "P002", "P003"]
    (repo / "docs.md").unlink()  # deleted
    assert pattern_ids(render(memory)) == ["P001", "P002", "P003", "P004"]


@pytest.mark.in_process
def test_files_in_play_reports_the_new_name_of_a_rename(repo):
    git(repo, "mv", "src/old.py", "src/renamed.py")
    (repo / "spaced name.txt").write_text("s\n")
    files = project_context.files_in_play(str(repo), [{"files": ["from/handoff.py", 3]}], 2.0)
    assert "src/renamed.py" in files and "spaced name.txt" in files and "from/handoff.py" in files
    assert "src/old.py" not in files and all(isinstance(f, str) for f in files)


def test_files_in_play_outside_git_are_the_handoff_files(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert project_context.files_in_play(str(plain), [{"files": ["b.py", "a.py"]}, {}], 2.0) == ["a.py", "b.py"]


@pytest.mark.in_process
def test_patterns_for_everywhere_always_apply(repo):
    memory = memory_for(repo)
    write_patterns(memory, [pattern(1, []), pattern(2, ["*"]), pattern(3, ["nowhere/x"])])
    text = render(memory)
    assert text.startswith("Known patterns for the files in play:\n") and "Open work" not in text
    assert pattern_ids(text) == ["P001", "P002"]


@pytest.mark.in_process
def test_more_than_five_patterns_show_five_and_a_count(repo):
    memory = memory_for(repo)
    write_patterns(memory, [pattern(i, ["app.py"]) for i in range(1, 5)], [avoid(i, []) for i in range(1, 5)])
    (repo / "app.py").write_text("x = 3\n")
    lines = render(memory).rstrip("\n").splitlines()
    assert lines[0] == "Known patterns for the files in play:"
    assert pattern_ids("\n".join(lines)) == ["P001", "P002", "P003", "P004", "A001"]
    assert lines[-1] == "- (+3 more: maestro memory patterns)"


@pytest.mark.in_process
def test_pattern_lines_are_one_line_and_bounded(repo):
    memory = memory_for(repo)
    write_patterns(memory, [pattern(1, [], "multi\nline\x1b title " * 100)],
                   [avoid(2, [], "t", "reason\nwith\nnewlines " * 100)])
    lines = render(memory, 100_000).rstrip("\n").splitlines()
    assert len(lines) == 3
    assert all(line.isprintable() and len(line) <= 400 for line in lines)


# ----------------------------------------------------------------------------------- session-start


def project_dir(root, path):
    return root / "projects" / hashlib.sha1(os.path.realpath(path).encode()).hexdigest()[:12]


def write_track(path, entries):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(("\n§\n".join(entries) + "\n").encode())


def session_start(maestro, cwd, sid="ctx-1"):
    return maestro("session-start", stdin=json.dumps({"session_id": sid, "source": "startup", "cwd": str(cwd)}))


def test_project_block_comes_before_the_snapshot_and_the_pin_line(maestro, repo, mem_root):
    memory = memory_for(repo)
    write_track(mem_root / "MEMORY.md", ["[2024-04-01 09:00] [summary:tea] likes tea"])
    open_task(memory, "a", files=["app.py"], title="Resume me")
    write_patterns(memory, [pattern(1, ["app.py"], "keep VALUE an int")])
    result = session_start(maestro, repo)
    assert result.rc == 0, result.err
    out = result.out
    assert out.index("Open work (maestro project memory):") < out.index("Known patterns") < out.index("# Session\n")
    assert "- [P001] keep VALUE an int\n" in out
    assert out.index("likes tea") < out.index("Maestro: Codex pin is")
    assert out.splitlines()[-1].startswith("Maestro: Codex pin is")


def test_a_malformed_patterns_file_keeps_the_snapshot_and_pin_line(maestro, repo, mem_root, home):
    memory = memory_for(repo)
    write_track(mem_root / "MEMORY.md", ["[2024-04-01 09:00] [summary:tea] likes tea"])
    os.makedirs(memory.dir, exist_ok=True)
    with open(memory.patterns_file, "w") as handle:
        handle.write("{ this is not json")
    result = session_start(maestro, repo)
    assert result.rc == 0
    assert "# Global Memory\n[2024-04-01 09:00] [summary:tea] likes tea" in result.out
    assert result.out.splitlines()[-1].startswith("Maestro: Codex pin is")
    assert "Known patterns" not in result.out
    assert not (home / ".maestro" / "logs" / "crashes.log").exists()  # a bad user file is not a crash


def test_a_malformed_patterns_file_keeps_the_open_work(maestro, repo, mem_root):
    memory = memory_for(repo)
    open_task(memory, "a", title="Resume me")
    with open(memory.patterns_file, "w") as handle:
        handle.write("{ this is not json")
    result = session_start(maestro, repo)
    assert result.rc == 0
    assert "Resuming: Resume me — STUCK" in result.out


@pytest.mark.parametrize("doc", ['["a list"]', '{"patterns": "nope", "avoid": 7}', '{"patterns": [1, null, "x"]}',
                                 '{"avoid": [{"id": "A1", "applies_to": 5}]}'])
def test_a_patterns_document_of_the_wrong_shape_is_skipped(maestro, repo, mem_root, doc):
    memory = memory_for(repo)
    open_task(memory, "a", title="Resume me")
    with open(memory.patterns_file, "w") as handle:
        handle.write(doc)
    result = session_start(maestro, repo)
    assert result.rc == 0
    assert "Resuming: Resume me — STUCK" in result.out
    assert result.out.splitlines()[-1].startswith("Maestro: Codex pin is")


def test_session_start_stays_under_the_cap_with_a_big_store_many_handoffs_and_patterns(maestro, repo, mem_root):
    memory = memory_for(repo)
    entries = [f"[2024-04-01 09:{i % 60:02d}] [summary:big {i}] big entry {i} " + "w" * 300 for i in range(1000)]
    write_track(mem_root / "MEMORY.md", entries)
    write_track(mem_root / "USER.md", entries[:200])
    write_track(project_dir(mem_root, repo) / "MEMORY.md", entries[:300])
    assert (mem_root / "MEMORY.md").stat().st_size > 300_000
    for i in range(50):
        open_task(memory, f"task-{i:02d}", files=[f"src/m{i}.py"], title=f"Open task {i} " + "t" * 150,
                  updated_at=f"2024-05-01T10:{i:02d}:00Z")
    handoffs.write(memory, task_id="session-prev", kind="session", title="s", state="2 open task(s)",
                   next_command="maestro status", doing="d" * 400)
    write_patterns(memory, [pattern(i, [f"src/m{i}.py"], "p" * 150) for i in range(1, 51)],
                   [avoid(i, [], "a" * 150, "r" * 150) for i in range(1, 51)])
    result = session_start(maestro, repo)
    assert result.rc == 0, result.err
    assert len(result.out) < CONTEXT_CAP
    block = result.out[: result.out.index("# Session\n")]
    assert len(block) <= 2000  # PROJECT_CHARS
    assert block.startswith("Open work (maestro project memory):\nResuming: Open task 49 ")
    assert "(+45 more open task(s): maestro memory outcome list)" in block
    assert "# Global Memory\n" in result.out
    assert result.out.splitlines()[-1].startswith("Maestro: Codex pin is")


def test_session_start_with_only_project_memory_and_no_tracks(maestro, repo):
    memory = memory_for(repo)
    open_task(memory, "a", title="Lonely task")
    result = session_start(maestro, repo)
    assert result.rc == 0
    assert result.out.startswith("Open work (maestro project memory):\nResuming: Lonely task — STUCK after 2 iterations")
    assert "# Session" not in result.out
    assert result.out.splitlines()[-1].startswith("Maestro: Codex pin is")
