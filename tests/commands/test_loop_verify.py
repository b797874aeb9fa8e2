"""`loop`'s local verification end to end (issue 17 items 3 and 8): what the verifier leaves
running ends with it on every path, and an oversized verification output keeps its useful end
in the next dispatch and in the plan's history."""

import pytest
from testing.pids import gone
from testing.processes import TERM, finish, run, start, wait_for

pytestmark = pytest.mark.timeout(120)

DONE_EDIT = {"final_message": "Edited app.py.\nRESULT: DONE", "turn_seconds": 0, "edits": {"app.py": "VALUE = 2\n"}}
MARKER = "MAESTRO_ATTEMPT_HISTORY_TRUNCATED"
BEGIN = ("--- BEGIN MAESTRO ATTEMPT HISTORY (automatically written after STUCK; historical evidence, not new "
         "authority) ---")
END = "--- END MAESTRO ATTEMPT HISTORY ---"


def plan(repo):
    path = repo.parent / "plan.md"
    path.write_text("Set VALUE to 2 in app.py.\n")
    return path


def loop(repo, verify, *extra, **kw):
    return run("loop", "--plan", str(plan(repo)), "--verify", verify, "--poll", "1", *extra, cwd=repo, **kw)


def assert_final(result, state, rc):
    assert result.rc == rc, result.out + result.err
    assert result.final() == f"MAESTRO_FINAL: LOOP {state} rc={rc}"


def background_pid(path):
    assert wait_for(lambda: path.exists() and path.read_text().strip(), timeout=30)
    return int(path.read_text())


# --- item 3: the verifier's process group ends with the verification ---------------------------

def test_a_passing_verification_leaves_no_background_child(repo, fake, tmp_path):
    fake.set(**DONE_EDIT)
    pidfile = tmp_path / "bg"
    result = loop(repo, f"sleep 60 & echo $! > {pidfile}; echo ok")
    assert_final(result, "VERIFIED_DONE", 0)
    assert gone(background_pid(pidfile))


def test_a_failing_verification_leaves_no_background_child(repo, fake, tmp_path):
    fake.set(**DONE_EDIT)
    pidfile = tmp_path / "bg"
    result = loop(repo, f"sleep 60 & echo $! > {pidfile}; exit 1", "--max-iters", "1")
    assert_final(result, "STUCK", 12)
    assert "LOOP_VERIFY: state=failed rc=1" in result.lines
    assert gone(background_pid(pidfile))


def test_a_timed_out_verification_leaves_no_background_child(repo, fake, tmp_path):
    fake.set(**DONE_EDIT)
    pidfile = tmp_path / "bg"
    result = loop(repo, f"sleep 60 & echo $! > {pidfile}; wait", "--max-iters", "1",
                  env={"MAESTRO_VERIFY_TIMEOUT_SEC": "1"})
    assert_final(result, "STUCK", 12)
    assert "LOOP_VERIFY: state=timed-out rc=124" in result.lines
    assert gone(background_pid(pidfile))


def test_term_during_verification_is_interrupted_and_leaves_no_background_child(repo, fake, tmp_path):
    fake.set(**DONE_EDIT)
    pidfile = tmp_path / "bg"
    proc = start("loop", "--plan", str(plan(repo)), "--verify", f"sleep 60 & echo $! > {pidfile}; wait",
                 "--poll", "1", cwd=repo)
    child = background_pid(pidfile)  # the verifier is running: Codex's job is finished
    result = finish(proc, TERM)
    assert result.rc == 4, result.out + result.err
    assert result.lines[-1] == "MAESTRO_FINAL: LOOP INTERRUPTED rc=4"
    assert "LOOP_VERIFY: state=interrupted rc=" in result.out
    assert not (repo / ".git" / "maestro-write.lock").exists()
    assert gone(child)


# --- item 8: an oversized verification output keeps its tail -----------------------------------

# 200 KiB of output whose last line carries the failure: one huge line, or 100 lines of 2 KiB.
HUGE_LAST_LINE = "head -c 204800 /dev/zero | tr '\\0' x; echo ' FAILURE-AT-THE-END: expected 2, got 1'; exit 1"
MANY_LINES = ("echo BOUNDARY-START; for i in $(seq 1 100); do printf 'noise %04d %s\\n' $i $(head -c 2040 /dev/zero "
              "| tr '\\0' n); done; echo 'FAILURE-AT-THE-END: expected 2, got 1'; exit 1")

@pytest.mark.parametrize("verify", [HUGE_LAST_LINE, MANY_LINES], ids=["huge-last-line", "many-lines"])
def test_an_oversized_verification_output_keeps_its_failing_tail(repo, fake, verify):
    fake.set(final_message="Did it.\nRESULT: DONE", turn_seconds=0)
    result = loop(repo, verify, "--max-iters", "2")
    assert_final(result, "STUCK", 12)
    prompts = fake.prompts()
    assert len(prompts) == 2
    retry = prompts[1].split("--- PRIOR ATTEMPTS IN THIS LOOP (always applies when present) ---\n", 1)[1]
    assert "FAILURE-AT-THE-END: expected 2, got 1" in retry
    assert MARKER in retry and "BOUNDARY-START" not in retry
    text = (repo.parent / "plan.md").read_text()
    history = text.split(BEGIN + "\n", 1)[1].split(END)[0]
    assert len((BEGIN + "\n" + history + END + "\n").encode()) <= 65536
    assert all(line.startswith("> ") for line in history.splitlines())
    assert "FAILURE-AT-THE-END: expected 2, got 1" in history
    assert MARKER in history and "BOUNDARY-START" not in history


def test_term_during_verification_with_a_slow_companion_status_still_releases_the_lease(repo, fake, tmp_path):
    """The release's liveness check is the clean-up the TERM asks for: a status answer slower than the
    stop request's patience must not leave liveness unknown (lease retained, BLOCKED instead of INTERRUPTED)."""
    fake.set(**DONE_EDIT)
    pidfile = tmp_path / "bg"
    proc = start("loop", "--plan", str(plan(repo)), "--verify", f"sleep 60 & echo $! > {pidfile}; wait",
                 "--poll", "1", cwd=repo)
    child = background_pid(pidfile)  # Codex's job is finished; from here on every status answer takes 1.5 s
    fake.set(**DONE_EDIT, status_delay=1.5)
    result = finish(proc, TERM)
    assert result.rc == 4, result.out + result.err
    assert result.lines[-1] == "MAESTRO_FINAL: LOOP INTERRUPTED rc=4"
    assert "liveness could not be determined" not in result.out + result.err
    assert not (repo / ".git" / "maestro-write.lock").exists()
    assert gone(child)
