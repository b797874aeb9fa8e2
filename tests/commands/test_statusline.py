"""`maestro statusline` (issue 12 §2): one short line for the session's worktree from local files only — lease free /
held (phase, elapsed, iteration i/n) / POISONED or ORPHANED with its fix; a Codex job running; the memory backlog
alert; an active direct-edit grant — and one line, exit 0, whatever arrives on stdin."""

import json
import os
import subprocess
import re
import sys
import time

import pytest
from testing.paths import ROOT

from maestro import direct_edit, paths
from maestro.locks import identity, run_notes
from maestro.commands import statusline
from maestro.memory.store import write_guard

SESSION = "sess-1"
NOW = 1_700_000_000  # an injected clock gives exact elapsed times; against the real one only a shape is checked


def payload(directory, session=SESSION, **extra):
    return json.dumps({"session_id": session, "cwd": "/nonexistent", "workspace": {"current_dir": str(directory)},
                       **extra})


def line(maestro, stdin):
    result = maestro("statusline", stdin=stdin)
    assert result.rc == 0 and result.err == "" and result.out.count("\n") == 1, result
    return result.out.rstrip("\n")


def write_lease(git_dir, pid=None, staged=False, job="task-ab12", started=None):
    lock = git_dir / "maestro-write.lock"
    lock.mkdir()
    (lock / "generation").write_text("0123456789abcdef0123456789abcdef\n")
    record = {"token": "f" * 32, "generation": "0123456789abcdef0123456789abcdef", "pid": str(pid or os.getpid()),
              "process_start": identity.process_start(pid or os.getpid()), "job_id": job, "session_id": SESSION,
              "started_epoch": str(int(started if started is not None else time.time() - 192))}
    (lock / "metadata").write_text("".join(f"{k}={v}\n" for k, v in record.items()))
    if staged:
        (lock / "metadata.new").write_text("".join(f"{k}={v}\n" for k, v in dict(
            record, quiescence="unconfirmed", unconfirmed_job=job).items()))
    return lock


def test_a_free_lease(maestro, repo):
    assert line(maestro, payload(repo)) == "maestro: lease free"
    (repo / "sub").mkdir()
    assert line(maestro, payload(repo / "sub")) == "maestro: lease free"


@pytest.mark.parametrize("stdin", [b"", b"garbage", b"\xff\xfe\x00", b"[1, 2]", b'{"session_id": 5, "cwd": 7}',
                                   b'{"workspace": {"current_dir": "relative/dir"}}', b"{" * 5000, b'"\x1b[2J"'])
def test_garbage_on_stdin_still_gives_one_line_and_rc_0(maestro, tmp_path, stdin):
    assert line(maestro, stdin).startswith("maestro: ")


def test_a_loop_holding_the_lease_shows_its_plan_iteration_phase_elapsed_and_job(maestro, repo):
    git_dir = repo / ".git"
    write_lease(git_dir, started=NOW)
    run_notes.note_run(str(git_dir), "loop", "/home/u/.maestro/plans/fix-auth.md", 2, 4, "codex")
    text = line(maestro, payload(repo))  # end to end, on the real clock
    assert re.fullmatch(r"maestro: loop fix-auth\.md 2/4 codex \d+h\d\dm job task-ab12", text), text
    assert statusline.line_for(json.loads(payload(repo)), NOW + 192) == (
        "maestro: loop fix-auth.md 2/4 codex 3m12s job task-ab12")  # an injected clock: exact
    run_notes.note_run(str(git_dir), "loop", "/p/fix-auth.md", 2, 4, "verify")
    assert " 2/4 verify " in line(maestro, payload(repo))


def test_a_run_status_not_of_the_lease_holder_is_not_shown(maestro, repo):
    git_dir = repo / ".git"
    write_lease(git_dir, started=NOW)
    run_notes.note_run(str(git_dir), "loop", "/p/old.md", 3, 4, "codex")
    status = git_dir / run_notes.RUN_STATUS_NAME
    status.write_text(status.read_text().replace(f"pid={os.getpid()}", "pid=1"))
    assert re.fullmatch(r"maestro: lease held \S+ job task-ab12", line(maestro, payload(repo)))
    assert statusline.line_for(json.loads(payload(repo)), NOW + 5) == "maestro: lease held 5s job task-ab12"


@pytest.mark.parametrize("damage", ["empty metadata", "malformed metadata", "unreadable metadata", "no metadata",
                                    "no generation", "another generation"])
def test_a_lease_status_calls_unidentifiable_is_shown_so_with_its_fix_never_as_starting(maestro, repo, damage):
    lock = write_lease(repo / ".git")
    metadata = lock / "metadata"
    if damage == "empty metadata":
        metadata.write_text("")
    elif damage == "malformed metadata":
        metadata.write_text("this is not a record\n")
    elif damage == "unreadable metadata":
        metadata.unlink()
        metadata.mkdir()
    elif damage == "no metadata":
        metadata.unlink()
    elif damage == "no generation":
        (lock / "generation").unlink()
    else:
        (lock / "generation").write_text("f" * 32 + "\n")
    text = line(maestro, payload(repo))
    assert text.startswith("maestro: lease UNIDENTIFIABLE (") and text.endswith(") fix: maestro loop --clear-lease")
    status = maestro("status", cwd=str(repo))
    assert "lease: UNIDENTIFIABLE" in status.out, status.out + status.err


def test_a_poisoned_lease_names_its_fix(maestro, repo):
    write_lease(repo / ".git", staged=True)
    assert line(maestro, payload(repo)) == (
        "maestro: lease POISONED (job task-ab12) fix: maestro loop --clear-lease")


def test_an_orphaned_lease_names_its_fix(maestro, repo):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    write_lease(repo / ".git", pid=dead.pid)
    assert line(maestro, payload(repo)) == "maestro: lease ORPHANED (owner gone) fix: maestro loop --clear-lease"


def test_escape_sequences_in_the_records_never_reach_the_terminal(maestro, repo):
    write_lease(repo / ".git", job="task-\x1b]0;pwned\x07x")
    text = line(maestro, payload(repo))
    assert "\x1b" not in text and "\x07" not in text and "task-]0;pwnedx" in text


def test_a_codex_read_job_under_the_job_lock_and_the_session_alerts(maestro, repo, home):
    lock = repo / ".git" / "maestro-job-lock"
    lock.mkdir()
    (lock / "metadata").write_text(f"class=read\njob=task-cd34\nsession=s\npid={os.getpid()}\n")
    direct_edit.set_flag(SESSION)
    write_guard.write_state(paths.memory_dir(), SESSION, dict(write_guard.fresh_state(), alert=True))
    assert line(maestro, payload(repo)) == (
        "maestro: lease free · Codex read job task-cd34 running · memory backlog · direct edits ON")
    assert line(maestro, payload(repo, session="other")) == "maestro: lease free · Codex read job task-cd34 running"


def test_a_linked_worktree_reads_its_own_git_dir(maestro, tmp_path):
    own = tmp_path / "main.git" / "worktrees" / "wt"
    own.mkdir(parents=True)
    worktree = tmp_path / "wt"
    (worktree / "src").mkdir(parents=True)
    (worktree / ".git").write_text(f"gitdir: {own}\n")
    write_lease(own, staged=True)
    assert "POISONED" in line(maestro, payload(worktree / "src"))
    assert line(maestro, payload(tmp_path)) == "maestro: no git repository"


@pytest.mark.source_only
def test_its_path_imports_no_json_argparse_or_subprocess(repo):
    """It runs after every assistant message: the hot-path rule (measured: bench/hooks.py)."""
    code = ("import sys; sys.path.insert(0, %r); from maestro.cli import main; main(['statusline']); "
            "print(sorted(m for m in ('json', 'argparse', 'subprocess', 'shutil', 're') if m in sys.modules))"
            % str(ROOT))
    write_lease(repo / ".git")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], input=payload(repo), capture_output=True,
                          text=True, timeout=30)
    assert done.stdout.splitlines()[-1] == "[]", done.stdout + done.stderr


@pytest.mark.source_only
def test_the_bench_times_a_held_lease_with_its_run_status(maestro, tmp_path):
    """bench/hooks.py's statusline row times the lines a status bar shows most, not the cheap "lease free"."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("hooks_bench", ROOT / "bench" / "hooks.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    repo = bench.statusline_fixture(str(tmp_path))
    assert re.fullmatch(r"maestro: loop bench-plan\.md 2/4 codex \S+ job task-bench1", line(maestro, payload(repo)))
