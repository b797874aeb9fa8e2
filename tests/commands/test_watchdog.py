"""`watchdog` end to end: one Write turn under one lease; every exit state with real processes."""

import pytest
from testing.processes import TERM, finish, run, start, wait_for

pytestmark = pytest.mark.timeout(90)


def watchdog(repo, *args, **kw):
    plan = repo.parent / "plan.md"
    plan.write_text("Set VALUE to 2.\n")
    return run("watchdog", "--file", str(plan), "30", "1", *args, cwd=repo, **kw)


def assert_final(result, state, rc):
    assert result.rc == rc, result.out + result.err
    assert result.final() == f"MAESTRO_FINAL: WATCHDOG {state} rc={rc}"
    assert sum(line.startswith("MAESTRO_FINAL:") for line in result.lines) == 1


@pytest.mark.parametrize("message, state, rc", [
    ("Edited.\nRESULT: DONE", "DONE", 0),
    ("RESULT: NEEDS_ANSWERS\nQUESTIONS:\n1. which file?", "NEEDS_ANSWERS", 10),
    ("RESULT: BLOCKED — credentials", "BLOCKED", 11),
    ("tests red\nRESULT: FAILED", "FAILED", 4),
])
def test_result_record_maps_to_the_exit_state(repo, fake, message, state, rc):
    fake.set(final_message=message, turn_seconds=0)
    result = watchdog(repo)
    assert_final(result, state, rc)
    assert message.splitlines()[0] in result.out
    assert result.err.splitlines()[-1] == f"IMPLEMENTER_STATE: {state}"
    assert not (repo / ".git" / "maestro-write.lock").exists()
    assert any(line.startswith("WATCHDOG: started task-") and "write mode" in line for line in result.lines)


def test_plan_text_as_an_argument(repo, fake):
    fake.set(turn_seconds=0)
    result = run("watchdog", "Set VALUE to 2.", cwd=repo)
    assert_final(result, "DONE", 0)
    assert fake.prompts()[0].startswith("Set VALUE to 2.")


def test_idle_job_is_poisoned_125_with_result_blocked(repo, fake):
    fake.set(turn_seconds=None)
    plan = repo.parent / "plan.md"
    plan.write_text("x\n")
    result = run("watchdog", "--file", str(plan), "1", "1", cwd=repo)
    assert_final(result, "POISONED", 125)
    assert "RESULT: BLOCKED" in result.out
    assert "WATCHDOG_POISONED" in result.err and "IMPLEMENTER_STATE" not in result.err
    assert (repo / ".git" / "maestro-write.lock" / "metadata").exists()


def test_externally_cancelled_job_poisons(repo, fake):
    fake.set(turn_seconds=None, external_cancel_after=0.3)
    result = watchdog(repo)
    assert_final(result, "POISONED", 125)
    assert "state=cancelled; write lease poisoned" in result.out
    assert fake.calls("cancel") == []  # observed, not requested


def test_launch_without_job_id_keeps_both_locks(repo, fake):
    fake.set(launch_output="Started.")
    result = watchdog(repo)
    assert_final(result, "POISONED", 125)
    assert "COMPANION_FAILURE" in result.err
    assert (repo / ".git" / "maestro-write.lock").exists() and (repo / ".git" / "maestro-job-lock").exists()


def test_launch_failure_is_failed_3(repo, fake):
    fake.set(launch_exit=1)
    assert_final(watchdog(repo), "FAILED", 3)


def test_flag_drift_refuses_to_dispatch(repo, fake):
    fake.set(help_write=False)
    result = watchdog(repo)
    assert_final(result, "FAILED", 3)
    assert "without --write" in result.err and fake.calls("task") == []


def test_unpinned_codex_cannot_start(repo, fake, home):
    (home / ".codex" / "config.toml").write_text("")
    result = watchdog(repo)
    assert_final(result, "FAILED", 3)
    assert "no Codex model/effort pinned" in result.err


@pytest.mark.parametrize("args", [[], ["--file"], ["--file", "/nonexistent"], ["--bogus"], ["plan", "x"],
                                  ["plan", "1", "1", "extra"]])
def test_bad_arguments_are_failed_3(repo, fake, args):
    result = run("watchdog", *args, cwd=repo)
    assert_final(result, "FAILED", 3)
    assert result.err.startswith("WATCHDOG_ERROR:")


def test_malformed_status_four_times_is_status_lost(repo, fake):
    fake.set(turn_seconds=None, status_mode="malformed")
    plan = repo.parent / "plan.md"
    plan.write_text("Set VALUE to 2.\n")
    # the four losses are counted in polls, not seconds: a short poll makes the same four status calls, ~3 s sooner
    result = run("watchdog", "--file", str(plan), "30", "0.1", cwd=repo)
    assert_final(result, "POISONED", 125)
    assert "malformed or unreachable 4x in a row" in result.out and "reason=status-lost" in result.err


def test_result_transport_failure_is_blocked_without_retry(repo, fake):
    fake.set(turn_seconds=0, result_mode="error")
    result = watchdog(repo)
    assert_final(result, "BLOCKED", 11)
    assert "MAESTRO_COMPANION_RESULT_TRANSPORT: job=task-" in result.err
    assert len(fake.calls("result")) == 2 and len(fake.calls("task")) == 1


def test_result_retried_once(repo, fake):
    fake.set(turn_seconds=0, result_mode="fail_once")
    assert_final(watchdog(repo), "DONE", 0)


def test_failed_turn_is_a_companion_failure(repo, fake):
    fake.set(turn_seconds=0, turn_status="failed")
    result = watchdog(repo)
    assert_final(result, "BLOCKED", 11)
    assert "IMPLEMENTER_STATE: COMPANION_FAILURE" in result.err


def test_term_during_the_turn_poisons_and_cancels_once(repo, fake):
    fake.set(turn_seconds=None, log_growth_bytes=5)
    plan = repo.parent / "plan.md"
    plan.write_text("x\n")
    proc = start("watchdog", "--file", str(plan), "30", "1", cwd=repo)
    assert wait_for(lambda: fake.calls("task"), timeout=20)
    result = finish(proc, TERM)
    assert result.rc == 125, result.out + result.err
    assert result.out.splitlines()[-1] == "MAESTRO_FINAL: WATCHDOG POISONED rc=125"
    assert "RESULT: BLOCKED" in result.out
    assert len(fake.calls("cancel")) == 1
    assert "CANCELLATION_FACT: job=task-" in result.err and "request=acknowledged source=signal-handler" in result.err


def test_pin_verification_mismatch_only_warns(repo, fake, home):
    (home / ".codex" / "maestro-impl-model").write_text("gpt-impl\n")
    fake.set(turn_seconds=0)
    result = watchdog(repo)
    assert_final(result, "DONE", 0)
    assert fake.calls("task")[0]["argv"][3:5] == ["--model", "gpt-impl"]
    assert "pin verification warning" not in result.out  # the job ran on the pinned model: nothing to say
    fake.set(turn_seconds=0, recorded_model="gpt-substituted")  # the companion ran the job on another model
    result = watchdog(repo)
    assert_final(result, "DONE", 0)  # a warning, not a refusal
    assert fake.calls("task")[1]["argv"][3:5] == ["--model", "gpt-impl"]
    warnings = [line for line in result.out.splitlines() if "pin verification warning" in line]
    assert len(warnings) == 1 and "requested model=gpt-impl" in warnings[0], result.out
    assert "recorded model=gpt-substituted" in warnings[0]


def test_read_only_model_override_refuses_a_write_before_any_lock_or_job(repo, fake):
    fake.set(turn_seconds=0)
    result = watchdog(repo, env={"MAESTRO_COMPANION_MODEL": "gpt-other", "MAESTRO_COMPANION_EFFORT": "low"})
    assert_final(result, "FAILED", 3)
    assert "override read-only turns only" in result.err
    assert fake.calls("task") == [] and not (repo / ".git" / "maestro-job-lock").exists()
