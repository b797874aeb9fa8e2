"""`loop` end to end: real processes, a real git repo, the fake companion. Every exit state."""

import subprocess
import threading

import pytest
from testing.processes import TERM, finish, run, start, wait_for

pytestmark = pytest.mark.timeout(90)

VERIFY_OK = "grep -q 'VALUE = 2' app.py"
DONE_EDIT = {"final_message": "Edited app.py.\nRESULT: DONE", "turn_seconds": 0, "edits": {"app.py": "VALUE = 2\n"}}


def plan(repo, text="Set VALUE to 2 in app.py.\n"):
    path = repo.parent / "plan.md"
    path.write_text(text)
    return path


def loop(repo, plan_path, verify=VERIFY_OK, *extra, **kw):
    return run("loop", "--plan", str(plan_path), "--verify", verify, "--poll", "1", *extra, cwd=repo, **kw)


def records(result):
    return [line for line in result.lines if line.startswith(("LOOP", "MAESTRO_", "CODEX", "WATCHDOG", "PROVENANCE"))]


def assert_final(result, state, rc):
    assert result.rc == rc, result.out + result.err
    assert result.final() == f"MAESTRO_FINAL: LOOP {state} rc={rc}"
    assert result.lines[-2].startswith(f"LOOP_STATE: {state}")
    assert sum(line.startswith("MAESTRO_FINAL:") for line in result.lines) == 1


def lease_dir(repo):
    return repo / ".git" / "maestro-write.lock"


def test_verified_done_after_a_passing_local_verification(repo, fake):
    fake.set(**DONE_EDIT)
    result = loop(repo, plan(repo))
    assert_final(result, "VERIFIED_DONE", 0)
    assert "LOOP: iteration 1/4 — dispatching to Codex" in result.lines
    assert f"LOOP: RESULT: DONE on iteration 1 — verifying locally: {VERIFY_OK}" in result.lines
    assert "Edited app.py." in result.out
    assert not lease_dir(repo).exists() and not (repo / ".git" / "maestro-job-lock").exists()
    log = (repo / ".git" / "maestro-provenance.log").read_text().splitlines()
    assert " type=dispatch job=task-" in log[-1] and "before=tree-v3:" in log[-1] and "after=tree-v3:" in log[-1]
    task = fake.calls("task")[0]["argv"]
    assert task[:6] == ["task", "--background", "--write", "--model", "gpt-test", "--effort"]
    assert "--- IMPLEMENTER CONTRACT (always applies) ---" in task[-1] and task[-2] == "--"


def test_records_go_to_fd3_and_the_result_to_stdout(repo, fake, tmp_path):
    fake.set(**DONE_EDIT)
    records_file = tmp_path / "records"
    from testing.processes import command

    proc = subprocess.run(["bash", "-c", 'exec "$@" 3>"$0"', str(records_file),
                           *command("loop", "--plan", str(plan(repo)), "--verify", VERIFY_OK, "--poll", "1")],
                          cwd=repo, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert "MAESTRO_FINAL" not in proc.stdout and "Edited app.py." in proc.stdout
    assert records_file.read_text().splitlines()[-1] == "MAESTRO_FINAL: LOOP VERIFIED_DONE rc=0"


def test_failed_verification_feeds_the_next_dispatch_then_stuck(repo, fake):
    fake.set(final_message="Did it.\nRESULT: DONE", turn_seconds=0)
    plan_path = plan(repo)
    original = plan_path.read_text()
    result = loop(repo, plan_path, "echo 'assertion failed: expected 2'; exit 1", "--max-iters", "2")
    assert_final(result, "STUCK", 12)
    prompts = fake.prompts()
    assert len(prompts) == 2
    assert "PRIOR ATTEMPTS IN THIS LOOP" not in prompts[0]
    assert "## Attempt 1 — claimed DONE but LOCAL verification failed (exit 1)" in prompts[1]
    assert "assertion failed: expected 2" in prompts[1]
    text = plan_path.read_text()
    assert text.startswith(original)
    assert "--- BEGIN MAESTRO ATTEMPT HISTORY (automatically written after STUCK; historical evidence, not new " \
           "authority) ---" in text
    history = text.split("authority) ---\n", 1)[1].split("--- END MAESTRO ATTEMPT HISTORY ---")[0]
    assert history and all(line.startswith("> ") for line in history.splitlines())
    assert "LOOP_STUCK:" in result.err


def test_implementer_failure_is_retried_with_its_evidence(repo, fake):
    fake.set(turn_seconds=0, script=[{"final_message": "pytest: 3 failed\nRESULT: FAILED"}, DONE_EDIT])
    result = loop(repo, plan(repo))
    assert_final(result, "VERIFIED_DONE", 0)
    assert "## Attempt 1 — RESULT: FAILED" in fake.prompts()[1] and "pytest: 3 failed" in fake.prompts()[1]


def test_needs_answers_appends_the_questions_to_the_plan(repo, fake):
    answer = "RESULT: NEEDS_ANSWERS\nQUESTIONS:\n1. Which module owns VALUE?"
    fake.set(final_message=answer, turn_seconds=0)
    plan_path = plan(repo)
    result = loop(repo, plan_path)
    assert_final(result, "NEEDS_ANSWERS", 10)
    assert "1. Which module owns VALUE?" in result.out
    text = plan_path.read_text()
    assert "--- BEGIN MAESTRO STOP HISTORY (automatically written after iteration 1) ---" in text
    assert "> 1. Which module owns VALUE?" in text and text.rstrip().endswith("(iteration 1) ---")
    assert not lease_dir(repo).exists()


def test_implementer_blocked_is_blocked(repo, fake):
    fake.set(final_message="RESULT: BLOCKED — needs the production token", turn_seconds=0)
    result = loop(repo, plan(repo))
    assert_final(result, "BLOCKED", 11)
    assert len(fake.calls("task")) == 1


def test_a_result_without_a_valid_record_is_a_companion_failure_without_retry(repo, fake):
    fake.set(final_message="RESULT: DONEISH", turn_seconds=0)
    result = loop(repo, plan(repo))
    assert_final(result, "BLOCKED", 11)
    assert "IMPLEMENTER_STATE: COMPANION_FAILURE" in result.err
    assert "did not consume another implementation attempt" in result.lines[-2]
    assert len(fake.calls("task")) == 1


def test_launch_failure_is_failed_3(repo, fake):
    fake.set(launch_exit=1)
    result = loop(repo, plan(repo))
    assert_final(result, "FAILED", 3)
    assert "could not start Codex job (exit 1)" in result.err
    assert not lease_dir(repo).exists()


@pytest.mark.parametrize("args, message", [
    (["--plan", "PLAN", "--verify", "true", "--max-iters", "0"], "0 is prohibited"),
    (["--plan", "PLAN", "--verify", "true", "--poll", "x"], "--poll must be"),
    (["--plan", "PLAN"], "--verify"),
    (["--plan", "/nonexistent/plan.md", "--verify", "true"], "plan file not found"),
    (["--plan", "PLAN", "--verify", "true", "extra"], "unknown argument: extra"),
    (["--clear-lease", "--clear-job-lock"], "mutually exclusive"),
    (["--clear-lease", "--plan", "PLAN"], "mutually exclusive"),
])
def test_bad_arguments_fail_with_3_before_any_lease(repo, fake, args, message):
    plan_path = plan(repo)
    result = run("loop", *[str(plan_path) if a == "PLAN" else a for a in args], cwd=repo)
    assert result.rc == 3 and result.final() == "MAESTRO_FINAL: LOOP FAILED rc=3"
    assert result.err.startswith("LOOP_ERROR:") and message in result.err
    assert not lease_dir(repo).exists() and fake.calls() == []


def test_flag_like_verify_string_is_one_argument(repo, fake):
    fake.set(**DONE_EDIT)
    result = loop(repo, plan(repo), "--version >/dev/null 2>&1; grep -q 'VALUE = 2' app.py")
    assert_final(result, "VERIFIED_DONE", 0)


def test_verifier_runs_at_the_repo_root_without_lease_variables(repo, fake):
    fake.set(**DONE_EDIT)
    sub = repo / "sub"
    sub.mkdir()
    probe = repo.parent / "probe"
    result = run("loop", "--plan", str(plan(repo)), "--verify",
                 f"pwd > {probe}; (env | grep -c '^MAESTRO_LOCK_' || true) >> {probe}",
                 "--poll", "1", cwd=sub, env={"MAESTRO_LOCK_TOKEN": "leaked"})
    assert result.rc == 0, result.out + result.err
    assert probe.read_text().splitlines() == [str(repo), "0"]


def test_verifier_timeout_counts_as_a_failed_attempt(repo, fake):
    fake.set(**DONE_EDIT)
    result = loop(repo, plan(repo), "sleep 20", "--max-iters", "1", env={"MAESTRO_VERIFY_TIMEOUT_SEC": "0.5"})
    assert_final(result, "STUCK", 12)
    assert "timed out after 0.5s (exit 124)" in (repo.parent / "plan.md").read_text()


def test_idle_job_is_cancelled_poisoned_and_blocks_until_cleared(repo, fake):
    fake.set(turn_seconds=None)
    result = loop(repo, plan(repo), "true", "--max-idle", "1")
    assert_final(result, "BLOCKED", 11)
    assert "WATCHDOG_POISONED" in result.err and "reason=idle" in result.err
    assert (lease_dir(repo) / "metadata").read_text().count("quiescence=unconfirmed") == 1
    assert len(fake.calls("cancel")) == 1
    status = run("status", cwd=repo)
    assert status.rc == 11 and "POISONED" in status.out and "loop --clear-lease" in status.out
    again = loop(repo, plan(repo), "true")
    assert_final(again, "BLOCKED", 11)
    assert "quiescence is unconfirmed" in again.out and len(fake.calls("task")) == 1
    cleared = run("loop", "--clear-lease", cwd=repo)
    assert cleared.rc == 0 and cleared.final() == "MAESTRO_FINAL: LOOP CLEARED rc=0"
    assert not lease_dir(repo).exists()


def test_term_during_a_live_turn_cancels_the_job_and_poisons(repo, fake):
    fake.set(turn_seconds=None, log_growth_bytes=10)
    proc = start("loop", "--plan", str(plan(repo)), "--verify", "true", "--poll", "1", cwd=repo)
    assert wait_for(lambda: fake.calls("task"), timeout=20)
    result = finish(proc, TERM)
    assert result.rc == 11, result.out + result.err
    assert result.out.splitlines()[-1] == "MAESTRO_FINAL: LOOP BLOCKED rc=11"
    assert "reason=signal-term" in result.err
    assert len(fake.calls("cancel")) >= 1


def test_term_before_any_launch_is_interrupted_and_releases_the_lease(repo, fake):
    fake.set(help_mode="hang")
    proc = start("loop", "--plan", str(plan(repo)), "--verify", "true", "--poll", "1", cwd=repo)
    assert wait_for(lambda: fake.calls("--help"), timeout=20)
    result = finish(proc, TERM)
    assert result.rc == 4, result.out + result.err
    assert result.out.splitlines()[-1] == "MAESTRO_FINAL: LOOP INTERRUPTED rc=4"
    assert fake.calls("task") == [] and not lease_dir(repo).exists()


def test_busy_lease_blocks_a_second_loop(repo, fake):
    fake.set(turn_seconds=None, log_growth_bytes=10)
    first = start("loop", "--plan", str(plan(repo)), "--verify", "true", "--poll", "1", cwd=repo)
    assert wait_for(lambda: fake.calls("task"), timeout=20)
    # the job id reaches the lease's metadata a moment after the companion saw the task: wait for that, not a clock
    assert wait_for(lambda: "job_id=task-" in _read(lease_dir(repo) / "metadata"), timeout=20)
    second = run("loop", "--plan", str(plan(repo)), "--verify", "true", cwd=repo, env={"MAESTRO_LOCK_WAIT_SEC": "0"})
    assert second.rc == 11 and "write dispatch blocked; held by job=task-" in second.out
    finish(first, TERM)


def _read(path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def read_until(proc, needle, timeout):
    """Read `proc`'s stdout line by line until a line holds `needle` (True) or `timeout` passes (False).
    The lines read are consumed: a later `finish` returns only what follows."""
    found = threading.Event()

    def reader():
        for line in proc.stdout:
            if needle in line:
                found.set()
                return

    threading.Thread(target=reader, daemon=True).start()
    return found.wait(timeout)


def test_term_while_waiting_for_the_lease_spares_the_owner(repo, fake):
    fake.set(turn_seconds=None, log_growth_bytes=10)
    owner = start("loop", "--plan", str(plan(repo)), "--verify", "true", "--poll", "1", cwd=repo)
    assert wait_for(lambda: fake.calls("task"), timeout=20)
    waiter = start("loop", "--plan", str(plan(repo)), "--verify", "true", cwd=repo,
                   env={"MAESTRO_LOCK_WAIT_SEC": "600", "MAESTRO_LOCK_WAIT_POLL_SEC": "30"})
    # TERM only once the waiter says it waits (it sleeps 30 s between looks): a fixed sleep is too short on a
    # busy machine, and a TERM before its signal handlers are in place would kill it outright.
    assert read_until(waiter, "MAESTRO_LOCK: waiting for the write lease", timeout=30)
    result = finish(waiter, TERM, timeout=10)
    assert result.rc == 4 and result.out.splitlines()[-1] == "MAESTRO_FINAL: LOOP INTERRUPTED rc=4"
    assert "interrupted while waiting for the write lease" in result.out
    assert (repo / ".git" / "maestro-write.lock" / "metadata").is_file()
    assert owner.poll() is None  # the owner runs on
    finish(owner, TERM)


def test_an_unreadable_plan_fails_before_the_lease_is_taken(repo, fake):
    result = loop(repo, "/proc/self/mem")  # a regular file by isfile(), unreadable by read()
    assert result.rc == 3 and result.final() == "MAESTRO_FINAL: LOOP FAILED rc=3"
    assert "plan file is not readable: /proc/self/mem" in result.out + result.err
    assert not lease_dir(repo).exists() and fake.calls("task") == []
