"""`status --watch [SECONDS]` (issue 12 §2): redraws until the lease is free (or needs recovery), then prints the final
state with `status`'s exit code; plain lines, one per change, when stdout is not a terminal. The clock and the sleep
are injected: nothing here really waits."""

import os
import shutil

import pytest

from maestro import cli
from maestro.commands import status_watch
from maestro.locks import identity, run_notes
from maestro.locks.job_ledger import JobLedger

pytestmark = pytest.mark.in_process

GENERATION = "0123456789abcdef0123456789abcdef"


def write_lease(git_dir, job="task-ab12", started=1000):
    lock = git_dir / "maestro-write.lock"
    lock.mkdir()
    (lock / "generation").write_text(GENERATION + "\n")
    record = {"token": "f" * 32, "generation": GENERATION, "pid": str(os.getpid()),
              "process_start": identity.process_start(os.getpid()), "job_id": job, "session_id": "s",
              "started_epoch": str(started)}
    (lock / "metadata").write_text("".join(f"{k}={v}\n" for k, v in record.items()))
    return lock


class Rounds:
    """The injected sleep: runs the next scripted change of the world, advances the injected clock."""

    def __init__(self, monkeypatch, changes):
        self.now, self.changes, self.slept = 1010.0, list(changes), []
        monkeypatch.setattr(status_watch, "clock", lambda: self.now)
        monkeypatch.setattr(status_watch, "sleep", self.sleep)

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds
        change = self.changes.pop(0) if self.changes else None
        if change is not None:
            change()
        assert len(self.slept) < 20, "watch did not end"


def watch(capsys, *args):
    rc = cli.main(["status", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_follows_a_loop_until_the_lease_is_free_then_prints_the_final_state(repo, monkeypatch, capsys):
    git_dir = repo / ".git"
    lock = write_lease(git_dir)
    log = repo.parent / "job.log"
    log.write_text("Starting Codex Task.\nRunning command: \x1b[31mpytest -q\n\n")
    JobLedger(str(git_dir)).write({"id": "task-ab12", "kind": "write", "log_file": str(log), "state": "running"})
    run_notes.note_run(str(git_dir), "loop", "/p/fix-auth.md", 2, 4, "codex")
    rounds = Rounds(monkeypatch, [
        None,  # nothing changes: no new line
        lambda: run_notes.note_run(str(git_dir), "loop", "/p/fix-auth.md", 2, 4, "verify"),
        lambda: shutil.rmtree(lock),
    ])
    monkeypatch.setattr("sys.stdout.isatty", lambda: False, raising=False)
    rc, out, err = watch(capsys, "--watch", "0.5")
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert rounds.slept == [0.5, 0.5, 0.5]
    assert lines[0].endswith(" lease HELD by job=task-ab12 (running) · loop fix-auth.md 2/4 codex · 10s · "
                             "last: Running command: [31mpytest -q"), lines
    assert lines[1].endswith(" lease HELD by job=task-ab12 (running) · loop fix-auth.md 2/4 verify · 11s · "
                             "last: Running command: [31mpytest -q"), lines
    assert "\x1b" not in out
    assert lines[2].startswith("worktree: ") and "lease: free" in lines[3:]


def test_a_lease_that_turns_poisoned_ends_the_watch_with_its_recovery(repo, monkeypatch, capsys):
    lock = write_lease(repo / ".git")

    def poison():
        text = (lock / "metadata").read_text()
        (lock / "metadata.new").write_text(text + "quiescence=unconfirmed\nunconfirmed_job=task-ab12\n")

    Rounds(monkeypatch, [poison])
    rc, out, _ = watch(capsys, "--watch")
    assert rc == 11
    assert "lease: POISONED by job=task-ab12" in out and "recover with: maestro loop --clear-lease" in out


def test_on_a_terminal_the_line_is_redrawn(repo, monkeypatch, capsys):
    lock = write_lease(repo / ".git")
    Rounds(monkeypatch, [None, lambda: shutil.rmtree(lock)])
    monkeypatch.setattr(status_watch.sys.stdout, "isatty", lambda: True, raising=False)
    rc, out, _ = watch(capsys, "--watch", "1")
    assert rc == 0 and out.count(status_watch.CLEAR) == 3  # two rounds, then cleared for the final state
    assert "(watching every 1s until the lease is free — Ctrl-C stops)" in out
    assert out.split(status_watch.CLEAR)[-1].startswith("worktree: ")


def test_ctrl_c_stops_watching_and_still_prints_the_state(repo, monkeypatch, capsys):
    write_lease(repo / ".git")

    def interrupt(seconds):
        raise KeyboardInterrupt

    monkeypatch.setattr(status_watch, "sleep", interrupt)
    rc, out, _ = watch(capsys, "--watch", "5")
    assert rc == 0 and "status --watch: stopped watching" in out and "lease: HELD by job=task-ab12" in out


def test_a_free_lease_prints_the_state_at_once(repo, monkeypatch, capsys):
    monkeypatch.setattr(status_watch, "sleep", lambda seconds: pytest.fail("slept"))
    rc, out, _ = watch(capsys, "--watch")
    assert rc == 0 and "lease: free" in out


@pytest.mark.parametrize("args", [["--watch", "0"], ["--watch", "nan"], ["--watch", "inf"], ["--watch", "-1"],
                                  ["--watch", "soon"], ["--watch", "5", "--json"]])
def test_bad_seconds_or_json_are_usage_errors(repo, capsys, args):
    rc, out, err = watch(capsys, *args)
    assert rc == 3 and out == "" and err.startswith("maestro status: ") and err.count("\n") == 1
