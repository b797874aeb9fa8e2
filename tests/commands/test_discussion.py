"""`discuss` end to end against the fake companion: the original suite's seven scenarios
(spec §5 discussion.sh) plus the transcript protocol, its locks, its caps and its recovery."""

import os
import re
import stat
from pathlib import Path

import pytest
from testing.archive_cases import first_on_archive
from testing.git import git
from testing.processes import TERM, finish, run, start, wait_for

from maestro.workflow import transcripts
from maestro.workflow.read_turn import read_routing
from maestro.locks.transcript_lock import TranscriptLock
from maestro.codex.pins import Pins

pytestmark = pytest.mark.timeout(60)

REPLY = "STANCE: AGREE\nThe plan holds; the riskiest assumption is the cache key.\n"


def discuss(*args, cwd, **kw):
    return run("discuss", *args, cwd=cwd, **kw)


def assert_final(result, state, rc):
    assert result.rc == rc, result.out + result.err
    assert result.final() == f"MAESTRO_FINAL: DISCUSSION {state} rc={rc}"
    assert sum(line.startswith("MAESTRO_FINAL:") for line in result.lines) == 1


def new(cwd, slug="main", topic="cache design") -> Path:
    result = discuss("--new", topic, slug, cwd=cwd)
    assert_final(result, "CONTINUE", 0)
    match = re.search(r"^DISCUSSION: started .* → (.+)$", result.out, re.M)
    assert match, result.out
    return Path(match.group(1))


def turn_file(repo, text="My opening position: cache per tenant.\n", name="turn.md") -> Path:
    path = repo.parent / name
    path.write_text(text)
    return path


def take_turn(repo, path, slug="main", idle="30", poll="0.05", env=None):
    return discuss("--turn", str(path), slug, idle, poll, cwd=repo, env=env)


def state_of(transcript: Path) -> str:
    return (transcript.parent / (transcript.name + ".state")).read_text()


def headings(transcript: Path, who: str) -> int:
    return len(re.findall(rf"^### {who} \(turn ", transcript.read_text(), re.M))


# -- the original suite (spec §5 discussion.sh, 7 scenarios) ----------------------------------
def test_colliding_workspace_names_get_distinct_private_transcripts(tmp_path, fake, home):
    left, right = tmp_path / "collision" / "a-b", tmp_path / "collision" / "a" / "b"
    twin = tmp_path / "elsewhere" / "a-b"  # same basename: only the root's hash tells them apart
    for path in (left, right, twin):
        path.mkdir(parents=True)
        git(path, "init", "-q")
    left_t, right_t, twin_t = new(left, "same"), new(right, "same"), new(twin, "same")
    assert len({left_t, right_t, twin_t}) == 3
    assert left_t.parent == right_t.parent == twin_t.parent == home / ".maestro" / "discussions"
    assert stat.S_IMODE(left_t.parent.stat().st_mode) == 0o700
    for transcript in (left_t, right_t):
        assert stat.S_IMODE(transcript.stat().st_mode) == 0o600
        assert stat.S_IMODE(Path(str(transcript) + ".state").stat().st_mode) == 0o600
    # the original's names, so a debate started there continues here
    assert left_t.name.startswith("a-b--") and left_t.name.endswith("-same.md")
    assert state_of(left_t) == "turns=0\nawaiting_reply=0\nrollback_bytes=0\n"


def test_quoted_headings_are_inert_and_the_last_marker_wins(repo, fake):
    transcript = new(repo, "control")
    fake.set(turn_seconds=0, final_message="STANCE: REFRAME\nCONVERGED: rejected draft\nESCALATE: actual final fork")
    first = turn_file(repo, "Quote examples only:\n### Claude\n### Claude\n### Codex\n### Claude\n")
    result = take_turn(repo, first, "control", env={"MAESTRO_MAX_ROUNDS": "2"})
    assert_final(result, "ESCALATE", 0)
    assert "DISCUSSION_STATE: ESCALATE" in result.out
    fake.set(turn_seconds=0, final_message="STANCE: AGREE\nCONTINUE")
    result = take_turn(repo, turn_file(repo, "second real turn\n", "second.md"), "control",
                       env={"MAESTRO_MAX_ROUNDS": "2"})
    assert_final(result, "CONTINUE", 0)
    assert headings(transcript, "Claude") == 2 and headings(transcript, "Codex") == 2
    assert state_of(transcript).startswith("turns=2\nawaiting_reply=0\n")


@pytest.mark.parametrize("start_time", ["dead", "reused"])
def test_a_dead_owners_transcript_lock_is_reclaimed(repo, fake, start_time):
    transcript = new(repo, "stale")
    lock = Path(str(transcript) + ".lock")
    lock.mkdir()
    # the original's record (no generation); "reused" = a live pid that started at another time
    pid = 999999 if start_time == "dead" else os.getpid()
    (lock / "metadata").write_text(f"token=dead\npid={pid}\nprocess_start=Thu Jan  1 00:00:00 1970\n")
    fake.set(turn_seconds=0, final_message=REPLY)
    result = take_turn(repo, turn_file(repo), "stale")
    assert_final(result, "CONTINUE", 0)
    assert f"DISCUSSION: reclaimed stale transcript lock {lock}" in result.out
    assert not lock.exists()


def test_status_loss_burns_the_configured_retries(repo, fake):
    transcript = new(repo, "status-loss")
    fake.set(turn_seconds=None, status_mode="malformed")
    result = take_turn(repo, turn_file(repo), "status-loss",
                       env={"MAESTRO_DISCUSSION_RETRIES": "2", "MAESTRO_RETRY_SLEEP": "0"})
    assert_final(result, "FAILED", 4)
    assert len(fake.calls("task")) == 3 and len(fake.calls("cancel")) == 3
    assert len(re.findall(r"^DISCUSSION_RETRY: ", result.err, re.M)) == 2
    assert "retrying in 0s (2 retries left)" in result.err and "(1 retry left)" in result.err
    assert "reason=status-lost" in result.err and "DISCUSSION_HUNG" not in result.err
    assert "DISCUSSION_FAILED: no reply after 3 attempt(s)" in result.err
    assert "awaiting_reply=1" in state_of(transcript)


def test_term_cancels_the_read_job_once_and_the_pending_turn_recovers(repo, fake):
    transcript = new(repo, "signal")
    fake.set(turn_seconds=None, log_growth_bytes=5)
    path = turn_file(repo, "interrupt this read turn\n")
    proc = start("discuss", "--turn", str(path), "signal", "30", "0.05", cwd=repo)
    assert wait_for(lambda: len(fake.calls("status")) >= 2, timeout=20)
    result = finish(proc, TERM)
    assert_final(result, "INTERRUPTED", 4)
    job = fake.calls("status")[0]["argv"][1]
    assert job.startswith("task-")
    assert [c["argv"] for c in fake.calls("cancel")] == [["cancel", job]]
    assert "reason=signal-term request=acknowledged source=signal-handler" in result.err
    assert not Path(str(transcript) + ".lock").exists()
    assert not (repo / ".git" / "maestro-job-lock").exists()
    assert "awaiting_reply=1" in state_of(transcript)
    fake.set(turn_seconds=0, final_message=REPLY)
    result = take_turn(repo, path, "signal")
    assert_final(result, "CONTINUE", 0)
    assert "rolled back turn 1" in result.out
    assert headings(transcript, "Claude") == 1 and headings(transcript, "Codex") == 1
    assert transcript.read_text().count("interrupt this read turn") == 1


def test_term_during_a_retry_cancels_only_the_current_job(repo, fake):
    new(repo, "retry-signal")
    fake.set(script=[{"job_id": "task-oldretry-aaaaaa", "turn_seconds": 0, "turn_status": "failed"},
                     {"job_id": "task-newretry-bbbbbb", "turn_seconds": None}])
    proc = start("discuss", "--turn", str(turn_file(repo)), "retry-signal", "30", "0.05", cwd=repo,
                 env={"MAESTRO_DISCUSSION_RETRIES": "1", "MAESTRO_RETRY_SLEEP": "0"})
    assert wait_for(lambda: any(c["argv"][1] == "task-newretry-bbbbbb" for c in fake.calls("status")), timeout=20)
    result = finish(proc, TERM)
    assert_final(result, "INTERRUPTED", 4)
    assert [c["argv"] for c in fake.calls("cancel")] == [["cancel", "task-newretry-bbbbbb"]]
    assert "DISCUSSION_RETRY: attempt 1 failed" in result.err


def test_launch_failure_is_failed_3_without_retry(repo, fake):
    transcript = new(repo, "pre-dispatch")
    fake.set(launch_exit=9)
    result = take_turn(repo, turn_file(repo), "pre-dispatch",
                       env={"MAESTRO_DISCUSSION_RETRIES": "2", "MAESTRO_RETRY_SLEEP": "0"})
    assert_final(result, "FAILED", 3)
    assert len(fake.calls("task")) == 1 and "DISCUSSION_RETRY" not in result.err
    assert "could not start Codex job (exit 9)" in result.err and "Your turn is saved" in result.err
    assert "awaiting_reply=1" in state_of(transcript)


# -- the protocol -------------------------------------------------------------------------------
def test_a_turn_sends_transcript_and_doctrine_and_records_the_reply(repo, fake):
    transcript = new(repo)
    fake.set(turn_seconds=0, final_message=REPLY)
    result = take_turn(repo, turn_file(repo))
    assert_final(result, "CONTINUE", 0)
    assert REPLY.strip() in result.out and "DISCUSSION_STATE: CONTINUE" in result.out
    assert re.search(r"^CODEX: started task-\S+ \(model=gpt-test effort=high, read mode, max_idle=30s poll=0.05s\)$",
                     result.out, re.M)
    prompt = fake.prompts()[0]
    assert prompt.startswith("# Discussion: cache design\n") and "### Claude (turn 1)" in prompt
    assert "--- DISCUSSION DOCTRINE (always applies) ---" in prompt and "STANCE: PUSHBACK" in prompt
    argv = fake.calls("task")[0]["argv"]
    assert "--write" not in argv and argv[argv.index("--model") + 1] == "gpt-test"
    assert argv[argv.index("--effort") + 1] == "high"
    text = transcript.read_text()
    assert "### Codex (turn 1 · model=gpt-test effort=high)\n\nSTANCE: AGREE" in text
    assert state_of(transcript) == "turns=1\nawaiting_reply=0\nrollback_bytes=28\n"
    assert "DISCUSSION_WARN" not in result.err
    assert not (repo / ".git" / "maestro-job-lock").exists()


@pytest.mark.parametrize("reply, state", first_on_archive([  # one marker reader (testing/archive_cases.py)
    ("STANCE: AGREE\nCONVERGED: cache per tenant", "CONVERGED"),
    ("STANCE: PUSHBACK\nESCALATE: per tenant or global — the user decides", "ESCALATE"),
    ("STANCE: AGREE\nESCALATE: first\nCONVERGED: second", "CONVERGED"),
    ("STANCE: AGREE\n  CONVERGED: indented is not a marker", "CONTINUE"),
    ("STANCE: AGREE\n> CONVERGED: quoted is not a marker", "CONTINUE"),
    ("STANCE: AGREE\nCONVERGED:no space after the colon", "CONTINUE"),
]))
def test_the_last_marker_line_decides_the_state(repo, fake, reply, state):
    new(repo)
    fake.set(turn_seconds=0, final_message=reply)
    result = take_turn(repo, turn_file(repo))
    assert_final(result, state, 0)
    assert f"DISCUSSION_STATE: {state} —" in result.out


@pytest.mark.parametrize("reply, warned", [
    ("I agree with all of it.\nSTANCE: AGREE", True),
    ("STANCE: MAYBE\nsure", True),
    ("\nSTANCE: ALTERNATIVE\nuse a queue", False),
])
def test_a_reply_without_a_stance_line_is_flagged(repo, fake, reply, warned):
    new(repo)
    fake.set(turn_seconds=0, final_message=reply)
    result = take_turn(repo, turn_file(repo))
    assert_final(result, "CONTINUE", 0)
    assert ("DISCUSSION_WARN: reply opened without a STANCE line" in result.err) == warned


def test_the_default_cap_is_six_turns_then_escalate_5(repo, fake):
    transcript = new(repo)
    Path(str(transcript) + ".state").write_text("turns=6\nawaiting_reply=0\nrollback_bytes=0\n")
    before = transcript.read_bytes()
    result = take_turn(repo, turn_file(repo))
    assert_final(result, "ESCALATE", 5)
    assert "DISCUSSION_CAP: 6 turns exhausted" in result.err
    assert fake.calls("task") == [] and transcript.read_bytes() == before


def test_the_cap_follows_max_rounds(repo, fake):
    new(repo)
    fake.set(turn_seconds=0, final_message=REPLY)
    assert_final(take_turn(repo, turn_file(repo), env={"MAESTRO_MAX_ROUNDS": "1"}), "CONTINUE", 0)
    result = take_turn(repo, turn_file(repo), env={"MAESTRO_MAX_ROUNDS": "1"})
    assert_final(result, "ESCALATE", 5)
    assert "DISCUSSION_CAP: 1 turns exhausted" in result.err and len(fake.calls("task")) == 1


def test_an_unanswered_turn_is_rolled_back_by_byte_count(repo, fake):
    transcript = new(repo)
    fake.set(launch_exit=1)
    assert_final(take_turn(repo, turn_file(repo, "first draft that never got an answer\n")), "FAILED", 3)
    pending = transcript.read_text()
    assert "first draft" in pending and state_of(transcript) == "turns=1\nawaiting_reply=1\nrollback_bytes=28\n"
    fake.set(turn_seconds=0, final_message=REPLY)
    result = take_turn(repo, turn_file(repo, "second draft\n", "second.md"))
    assert_final(result, "CONTINUE", 0)
    text = transcript.read_text()
    assert "first draft" not in text and "### Claude (turn 1)\n\nsecond draft\n" in text
    assert headings(transcript, "Claude") == 1 and state_of(transcript).startswith("turns=1\nawaiting_reply=0\n")
    assert "DISCUSSION: rolled back turn 1, which never got its reply" in result.out


@pytest.mark.parametrize("content", first_on_archive([  # one state reader (testing/archive_cases.py)
    "turns=x\nawaiting_reply=0\nrollback_bytes=0\n",
    "turns=1\nawaiting_reply=2\nrollback_bytes=0\n",
    "turns=1\nawaiting_reply=0\n",
    "turns=1\nawaiting_reply=0\nrollback_bytes=0\nextra=1\n",
    "turns=1\nturns=1\nawaiting_reply=0\nrollback_bytes=0\n",
    "turns=0\nawaiting_reply=1\nrollback_bytes=0\n",
    "turns=1\nawaiting_reply=1\nrollback_bytes=99999\n",
    "",
]))
def test_a_malformed_state_fails_3_and_changes_nothing(repo, fake, content):
    transcript = new(repo)
    state = Path(str(transcript) + ".state")
    state.write_text(content)
    before = transcript.read_bytes()
    result = take_turn(repo, turn_file(repo))
    assert_final(result, "FAILED", 3)
    assert "transcript state is malformed" in result.err
    assert fake.calls("task") == [] and transcript.read_bytes() == before and state.read_text() == content
    assert not Path(str(transcript) + ".lock").exists()


def test_a_missing_state_fails_3(repo, fake):
    transcript = new(repo)
    os.unlink(str(transcript) + ".state")
    result = take_turn(repo, turn_file(repo))
    assert_final(result, "FAILED", 3)
    assert "transcript state is missing" in result.err


def test_a_live_turn_holding_the_transcript_lock_makes_another_fail_3(repo, fake):
    transcript = new(repo)
    held = TranscriptLock(str(transcript), emit=lambda line: None)
    assert held.acquire() == ""  # this test process: alive, with its real start time
    try:
        result = take_turn(repo, turn_file(repo))
        assert_final(result, "FAILED", 3)
        assert f"another turn is in progress (pid={os.getpid()})" in result.err
        assert fake.calls("task") == [] and state_of(transcript).startswith("turns=0\n")
    finally:
        held.release()
    assert not Path(str(transcript) + ".lock").exists()


def test_a_lock_without_an_owner_record_is_never_broken(repo, fake):
    transcript = new(repo)
    lock = Path(str(transcript) + ".lock")
    lock.mkdir()
    result = take_turn(repo, turn_file(repo))
    assert_final(result, "FAILED", 3)
    assert "owner cannot be disproved" in result.err and lock.is_dir()


def test_a_stalled_job_is_cancelled_and_hung_124_without_retry(repo, fake):
    transcript = new(repo)
    fake.set(turn_seconds=None)
    result = take_turn(repo, turn_file(repo), idle="0.4", poll="0.1",
                       env={"MAESTRO_DISCUSSION_RETRIES": "2", "MAESTRO_RETRY_SLEEP": "0"})
    assert_final(result, "HUNG", 124)
    assert "DISCUSSION_HUNG: job task-" in result.err and "(idle); cancelled" in result.err
    assert len(fake.calls("task")) == 1 and len(fake.calls("cancel")) == 1
    assert "DISCUSSION_RETRY" not in result.err and "awaiting_reply=1" in state_of(transcript)


def test_a_failed_job_is_retried_and_the_second_reply_counts(repo, fake):
    transcript = new(repo)
    fake.set(script=[{"turn_seconds": 0, "turn_status": "error"}, {"turn_seconds": 0, "final_message": REPLY}])
    result = take_turn(repo, turn_file(repo), env={"MAESTRO_RETRY_SLEEP": "0"})
    assert_final(result, "CONTINUE", 0)
    assert len(fake.calls("task")) == 2 and "DISCUSSION_RETRY: attempt 1 failed" in result.err
    assert headings(transcript, "Codex") == 1


def test_a_busy_job_lock_blocks_without_burning_retries(repo, fake):
    from maestro.locks.joblock import JobLock

    new(repo)
    holder = JobLock(str(repo / ".git"), "write", job_status=lambda job: None, emit=lambda line: None)
    assert holder.acquire() == 0
    try:
        result = take_turn(repo, turn_file(repo), env={"MAESTRO_LOCK_WAIT_SEC": "0"})
    finally:
        holder.release()
    assert_final(result, "BLOCKED", 11)
    assert "DISCUSSION_BLOCKED" in result.err and fake.calls("task") == []


def test_term_while_waiting_for_the_job_lock_interrupts_at_once(repo, fake):
    from maestro.locks.joblock import JobLock

    transcript = new(repo)
    holder = JobLock(str(repo / ".git"), "write", job_status=lambda job: None, emit=lambda line: None)
    assert holder.acquire() == 0
    try:
        proc = start("discuss", "--turn", str(turn_file(repo)), "main", "30", "0.05", cwd=repo,
                     env={"MAESTRO_LOCK_WAIT_SEC": "30", "MAESTRO_LOCK_WAIT_POLL_SEC": "5"})
        assert wait_for(lambda: "awaiting_reply=1" in state_of(transcript), timeout=20)
        result = finish(proc, TERM, timeout=5)
    finally:
        holder.release()
    assert_final(result, "INTERRUPTED", 4)
    assert fake.calls("task") == [] and "awaiting_reply=1" in state_of(transcript)
    assert not Path(str(transcript) + ".lock").exists()


# -- routing --------------------------------------------------------------------------------------
@pytest.mark.parametrize("env", [
    {"MAESTRO_COMPANION_MODEL": "fake-small"},
    {"MAESTRO_COMPANION_EFFORT": "low"},
    {"MAESTRO_COMPANION_MODEL": "bad/model", "MAESTRO_COMPANION_EFFORT": "low"},
    {"MAESTRO_COMPANION_MODEL": "fake-small", "MAESTRO_COMPANION_EFFORT": "max"},
])
def test_a_partial_or_invalid_override_fails_3_before_any_lock(repo, fake, env):
    transcript = new(repo)
    result = take_turn(repo, turn_file(repo), env=env)
    assert_final(result, "FAILED", 3)
    assert "MAESTRO_COMPANION_" in result.err
    assert fake.calls() == [] and not (repo / ".git" / "maestro-job-lock").exists()
    assert state_of(transcript).startswith("turns=0\n")


def test_a_complete_override_steers_the_read_job(repo, fake):
    new(repo)
    fake.set(turn_seconds=0, final_message=REPLY)
    result = take_turn(repo, turn_file(repo),
                       env={"MAESTRO_COMPANION_MODEL": "fake-small", "MAESTRO_COMPANION_EFFORT": "low"})
    assert_final(result, "CONTINUE", 0)
    argv = fake.calls("task")[0]["argv"]
    assert argv[argv.index("--model") + 1] == "fake-small" and argv[argv.index("--effort") + 1] == "low"


def test_a_max_debate_effort_is_left_to_the_config(repo, fake, home):
    (home / ".codex" / "config.toml").write_text('model = "gpt-test"\nmodel_reasoning_effort = "max"\n')
    transcript = new(repo)
    fake.set(turn_seconds=0, final_message=REPLY)
    result = take_turn(repo, turn_file(repo))
    assert_final(result, "CONTINUE", 0)
    assert "--effort" not in fake.calls("task")[0]["argv"]
    assert "CODEX: companion wrapper cannot express debate effort=max" in result.out
    assert "pin verification warning" not in result.out
    assert "### Codex (turn 1 · model=gpt-test effort=max)" in transcript.read_text()


def test_read_routing_rules():
    pins = Pins(model="m", debate_effort="high")
    assert read_routing(pins, {})[0].flag == "high"
    assert read_routing(Pins(), {})[1].startswith("no Codex model/effort pinned")
    assert read_routing(Pins(model="m", debate_effort="loud"), {})[1].startswith("the pinned debate effort")
    override = {"MAESTRO_COMPANION_MODEL": "x.y_z-1", "MAESTRO_COMPANION_EFFORT": "none"}
    assert read_routing(Pins(), override)[0] == read_routing(pins, override)[0]
    assert read_routing(pins, {"MAESTRO_COMPANION_MODEL": "", "MAESTRO_COMPANION_EFFORT": "low"})[0] is None


# -- arguments and places --------------------------------------------------------------------------
@pytest.mark.parametrize("args, env", first_on_archive([  # one argument parser (testing/archive_cases.py)
    ([], {}), (["--bogus"], {}), (["--new"], {}), (["--new", "t", "bad slug"], {}), (["--new", "  "], {}),
    (["--new", "t", "s", "extra"], {}), (["--turn"], {}), (["--turn", "missing.md"], {}),
    (["--turn", "TURN", "main", "0"], {}), (["--turn", "TURN", "main", "30", "-1"], {}),
    (["--turn", "TURN", "main", "30", "1", "x"], {}), (["--turn", "TURN"], {"MAESTRO_MAX_ROUNDS": "0"}),
    (["--turn", "TURN"], {"MAESTRO_MAX_ROUNDS": "six"}), (["--turn", "TURN"], {"MAESTRO_DISCUSSION_RETRIES": "11"}),
    (["--turn", "TURN"], {"MAESTRO_RETRY_SLEEP": "0.5"}), (["--turn", "TURN", "other"], {}), (["--show"], {}),
    (["--list", "x"], {}),
]))
def test_bad_arguments_fail_3_before_anything_runs(repo, fake, args, env):
    new(repo)
    args = [str(turn_file(repo)) if a == "TURN" else a for a in args]
    result = discuss(*args, cwd=repo, env=env)
    assert_final(result, "FAILED", 3)
    assert result.err.startswith("DISCUSSION_ERROR: ")
    assert fake.calls() == []


def test_new_refuses_an_existing_transcript(repo, fake):
    transcript = new(repo)
    result = discuss("--new", "again", cwd=repo)
    assert_final(result, "FAILED", 3)
    assert "transcript already exists" in result.err and "cache design" in transcript.read_text()


def test_a_turn_outside_git_fails_3_and_leaves_the_transcript_alone(tmp_path, fake):
    plain = tmp_path / "plain"
    plain.mkdir()
    transcript = new(plain)
    result = take_turn(plain, turn_file(plain))
    assert_final(result, "FAILED", 3)
    assert "not inside a git repository" in result.err and state_of(transcript).startswith("turns=0\n")


def test_a_symlinked_discussions_directory_is_refused(tmp_path, fake, home):
    (home / ".maestro").mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", home / ".maestro" / "discussions")
    result = discuss("--new", "topic", cwd=tmp_path)
    assert_final(result, "FAILED", 3)
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_list_and_show_find_this_workspaces_debates(repo, fake, tmp_path):
    first = new(repo, "alpha", "first topic")
    new(repo, "beta", "second topic")
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    new(other, "gamma", "elsewhere")
    fake.set(turn_seconds=0, final_message="STANCE: AGREE\nCONVERGED: done")
    assert_final(take_turn(repo, turn_file(repo), "alpha"), "CONVERGED", 0)

    result = discuss("--list", cwd=repo)
    assert_final(result, "LISTED", 0)
    assert f"DISCUSSIONS: 2 in {repo}" in result.out
    assert re.search(r"^alpha  turns=1  CONVERGED  \S+  first topic$", result.out, re.M)
    assert re.search(r"^beta  turns=0  NEW  \S+  second topic$", result.out, re.M)
    assert "gamma" not in result.out and f"  {first}" in result.out
    everywhere = discuss("--list", "--all", cwd=repo)
    assert_final(everywhere, "LISTED", 0)
    assert "DISCUSSIONS: 3 in every workspace" in everywhere.out
    assert re.search(r"^gamma  turns=0  NEW", everywhere.out, re.M)

    shown = discuss("--show", "alpha", cwd=repo)
    assert_final(shown, "SHOWN", 0)
    assert shown.out.startswith(first.read_text()) and "CONVERGED: done" in shown.out
    missing = discuss("--show", "gamma", cwd=repo)
    assert_final(missing, "FAILED", 3)
    assert "no transcript 'gamma' for this workspace" in missing.err


def test_workspace_prefix_matches_the_original_naming():
    # `printf '%s' /w/my repo | git hash-object --stdin` and `basename | tr -c 'A-Za-z0-9' '-'`
    import hashlib

    root = "/w/my repo"
    digest = hashlib.sha1(b"blob 10\0/w/my repo").hexdigest()[:12]
    assert transcripts.workspace_prefix(root) == f"my-repo--{digest}-"
    accented = hashlib.sha1("blob 5\0/w/é".encode()).hexdigest()[:12]
    assert transcripts.workspace_prefix("/w/é") == f"----{accented}-"  # two bytes, the newline, the separator
