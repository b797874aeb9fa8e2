"""`scout` end to end against the fake companion: the original suite's scenarios (spec §5 scout.sh,
re-expressed without the selector verb: the pin file is written the way the selector writes it)."""

import pytest
from testing.processes import TERM, finish, run, start, wait_for

from maestro.locks.joblock import JobLock

pytestmark = pytest.mark.timeout(60)

REPLY = "The selector lives in hooks/select.sh:12.\nSCOUT_SUMMARY: hooks/select.sh:12 picks the model"


def pin(home, text="model=fake-small\neffort=low\n"):
    path = home / ".codex" / "maestro-scout"
    path.write_text(text)
    return path


def scout(repo, *args, **kw):
    query = repo.parent / "query.md"
    query.write_text("find the selector\n")
    return run("scout", *(args or ("--query", str(query))), cwd=repo, **kw)


def assert_final(result, state, rc):
    assert result.rc == rc, result.out + result.err
    assert result.final() == f"MAESTRO_FINAL: SCOUT {state} rc={rc}"
    assert sum(line.startswith("MAESTRO_FINAL:") for line in result.lines) == 1


def model_and_effort(argv):
    return argv[argv.index("--model") + 1], (argv[argv.index("--effort") + 1] if "--effort" in argv else None)


# -- the original suite (spec §5 scout.sh) -----------------------------------------------------
@pytest.mark.parametrize("model, effort", [("fake-small", "low"), ("gpt-5.1-codex_mini", "xhigh"), ("m", "none")])
def test_the_pin_file_round_trips_into_the_dispatch(repo, fake, home, model, effort):
    pin(home, f"model={model}\neffort={effort}\n")
    fake.set(turn_seconds=0, final_message=REPLY)
    assert_final(scout(repo), "DONE", 0)
    assert model_and_effort(fake.calls("task")[0]["argv"]) == (model, effort)


@pytest.mark.parametrize("text, message", [
    ("model=fake-small\neffort=max\n", "invalid scout effort 'max'"),
    ("model=bad/model\neffort=low\n", "invalid scout model 'bad/model'"),
    ("model=bad model\neffort=low\n", "invalid scout model 'bad model'"),
    ("model=fake-small\n", "invalid scout effort ''"),
    ("fake-small low\n", "invalid scout model ''"),
])
def test_invalid_pin_values_block_11_without_a_job(repo, fake, home, text, message):
    pin(home, text)
    result = scout(repo)
    assert_final(result, "BLOCKED", 11)
    assert message in result.err and "model-select --scout <model> <effort>" in result.err
    assert fake.calls() == []


def test_unpinned_scout_blocks_11_before_any_job_or_lock(repo, fake):
    result = scout(repo)
    assert_final(result, "BLOCKED", 11)
    assert "SCOUT_BLOCKED: scout pin is missing" in result.err
    assert "maestro model-select --scout <model> <effort>" in result.err
    assert fake.calls() == [] and not (repo / ".git" / "maestro-job-lock").exists()


def test_a_pinned_scout_dispatches_read_only_with_its_own_model_and_effort(repo, fake, home):
    pin(home)
    fake.set(turn_seconds=0, final_message=REPLY)
    result = scout(repo)
    assert_final(result, "DONE", 0)
    assert "fixture" not in result.err and REPLY in result.out
    argv = fake.calls("task")[0]["argv"]
    assert model_and_effort(argv) == ("fake-small", "low") and "--write" not in argv
    assert "CODEX: started task-" in result.out and "(model=fake-small effort=low, read mode, max_idle=300s poll=20s)" \
        in result.out
    prompt = fake.prompts()[0]
    assert prompt.startswith("find the selector\n") and "--- SCOUT CONTRACT (always applies) ---" in prompt
    assert "path:line" in prompt and "SCOUT_SUMMARY:" in prompt
    assert not (repo / ".git" / "maestro-job-lock").exists()
    assert fake.calls("status") and all(c["argv"][:2] != ["--help"] for c in fake.calls())  # no write probe


def test_a_held_job_lock_blocks_11_without_a_job(repo, fake, home):
    pin(home)
    holder = JobLock(str(repo / ".git"), "read", job_status=lambda job: None, emit=lambda line: None)
    assert holder.acquire() == 0  # this test process: a live holder
    try:
        result = scout(repo, env={"MAESTRO_LOCK_WAIT_SEC": "0"})
    finally:
        holder.release()
    assert_final(result, "BLOCKED", 11)
    assert "MAESTRO_JOB_LOCK: companion job lock is busy" in result.out
    assert fake.calls("task") == []


def test_a_corrupt_pin_blocks_11(repo, fake, home):
    pin(home, "model=fake-small\neffort=ultra\n")
    result = scout(repo)
    assert_final(result, "BLOCKED", 11)
    assert "invalid scout effort 'ultra'" in result.err and fake.calls() == []


# -- beyond the original suite -----------------------------------------------------------------
def test_the_scout_needs_no_debate_pin(repo, fake, home):
    (home / ".codex" / "config.toml").write_text("")
    pin(home)
    fake.set(turn_seconds=0, final_message=REPLY)
    assert_final(scout(repo), "DONE", 0)


def test_the_scout_ignores_the_discussion_override(repo, fake, home):
    pin(home)
    fake.set(turn_seconds=0, final_message=REPLY)
    result = scout(repo, env={"MAESTRO_COMPANION_MODEL": "other"})
    assert_final(result, "DONE", 0)
    assert model_and_effort(fake.calls("task")[0]["argv"]) == ("fake-small", "low")


@pytest.mark.parametrize("knobs", [{"turn_seconds": 0, "turn_status": "failed"},
                                   {"turn_seconds": 0, "result_mode": "error"}])
def test_a_failed_job_is_failed_4(repo, fake, home, knobs):
    pin(home)
    fake.set(**knobs)
    assert_final(scout(repo), "FAILED", 4)


def test_a_job_past_its_budget_is_cancelled_and_failed_4(repo, fake, home):
    pin(home)
    fake.set(turn_seconds=None)
    result = scout(repo, env={"MAESTRO_MAX_DISPATCH_SEC": "0.5"})
    assert_final(result, "FAILED", 4)
    assert "SCOUT_FAILED: job task-" in result.err and "cancelled (deadline)" in result.err
    assert len(fake.calls("cancel")) == 1


def test_a_launch_failure_is_failed_3(repo, fake, home):
    pin(home)
    fake.set(launch_exit=1)
    result = scout(repo)
    assert_final(result, "FAILED", 3)
    assert "could not start Codex job (exit 1)" in result.err and len(fake.calls("task")) == 1


def test_term_cancels_the_scout_job_once(repo, fake, home):
    pin(home)
    fake.set(turn_seconds=None, log_growth_bytes=5)
    query = repo.parent / "query.md"
    query.write_text("q\n")
    proc = start("scout", "--query", str(query), cwd=repo)
    assert wait_for(lambda: len(fake.calls("status")) >= 2, timeout=20)
    result = finish(proc, TERM)
    assert_final(result, "INTERRUPTED", 4)
    assert [c["argv"][0] for c in fake.calls("cancel")] == ["cancel"]
    assert not (repo / ".git" / "maestro-job-lock").exists()


@pytest.mark.parametrize("args", [["--query"], ["--query", "/nonexistent"], ["--bogus", "x"], ["q.md"],
                                  ["--query", "a", "b"]])
def test_bad_arguments_fail_3(repo, fake, home, args):
    pin(home)
    result = scout(repo, *args)
    assert_final(result, "FAILED", 3)
    assert result.err.startswith("SCOUT_ERROR: ") and fake.calls() == []
