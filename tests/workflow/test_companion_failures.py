"""The companion's real failure modes (issue 12 §1.1–4), each reproduced with the fake companion and ending in its
defined state: a Claude session's SessionEnd, a job lost from the companion's table, a dead worker, a job stuck in
the queue, a usage limit. Source tree (in-process) and archive (a real process)."""

import json
import os
import stat
import subprocess
import sys

import pytest
from testing.paths import ROOT
from testing.pids import gone
from testing.processes import finish, start, wait_for

from maestro.codex import plugin_data

pytestmark = pytest.mark.timeout(90)

VERIFY_OK = "grep -q 'VALUE = 2' app.py"
DONE_EDIT = {"final_message": "Edited app.py.\nRESULT: DONE", "turn_seconds": 0, "edits": {"app.py": "VALUE = 2\n"}}
HOOK = ROOT / "tests" / "fixtures" / "session_lifecycle_hook.py"
USAGE_LIMIT = ("You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit "
               "https://chatgpt.com/codex/settings/usage to purchase more credits or try again at 3:45 PM.")


def plan(repo):
    path = repo.parent / "plan.md"
    path.write_text("Set VALUE to 2 in app.py.\n")
    return path


def loop_args(repo, *extra):
    return ("loop", "--plan", str(plan(repo)), "--verify", VERIFY_OK, "--poll", "0.1", *extra)


def lines(result):
    return result.out.splitlines()  # progress records, the last one MAESTRO_FINAL (evidence goes to stderr)


def data_dir(repo):
    return plugin_data.data_dir(os.path.realpath(repo))


def poison(repo):
    text = (repo / ".git" / "maestro-write.lock" / "metadata").read_text()  # the promoted poison: key=value lines
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def ledger(repo):
    folder = repo / ".git" / "maestro-jobs"
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


def session_end(repo, data, session=""):
    """The plugin's SessionEnd hook as Claude Code runs it, with the given CLAUDE_PLUGIN_DATA."""
    payload = json.dumps({"hook_event_name": "SessionEnd", "cwd": str(repo), "session_id": session})
    subprocess.run([sys.executable, str(HOOK), "SessionEnd"], input=payload, text=True, check=True, cwd=repo,
                   env=dict(os.environ, CLAUDE_PLUGIN_DATA=str(data)), timeout=30)


# -- 1. maestro's own data directory, its broker stopped after the work ----------------------------------------------
def test_every_call_runs_in_maestros_private_data_dir_at_the_root_and_the_broker_is_stopped(repo, fake, maestro,
                                                                                             tmp_path):
    fake.set(broker=True, **DONE_EDIT)
    user_data = tmp_path / "user-plugin-data"  # what the user's Claude session exports to its Bash tool
    (repo / "src").mkdir()
    user_broker = subprocess.Popen(["sleep", "60"])  # the user's own broker, in the user's own data dir
    user_state = plugin_data.state_dir(str(user_data), os.path.realpath(repo))
    os.makedirs(user_state)
    with open(os.path.join(user_state, "broker.json"), "w") as handle:
        json.dump({"pid": user_broker.pid, "endpoint": "unix:/nonexistent/user-broker.sock"}, handle)
    user_env = {"CLAUDE_PLUGIN_DATA": str(user_data), "CODEX_COMPANION_APP_SERVER_ENDPOINT": "unix:/user/broker.sock",
                "CODEX_COMPANION_APP_SERVER_PID_FILE": "/user/broker.pid"}
    try:
        result = maestro(*loop_args(repo), cwd=str(repo / "src"), env=user_env)
        assert user_broker.poll() is None  # the user's broker survives maestro's loop
    finally:
        user_broker.kill()
        user_broker.wait()
    assert result.rc == 0 and lines(result)[-1] == "MAESTRO_FINAL: LOOP VERIFIED_DONE rc=0", result.out + result.err
    assert plugin_data.broker_record(str(user_data), os.path.realpath(repo))["pid"] == user_broker.pid
    data = data_dir(repo)
    calls = fake.calls()
    assert calls and all(c["broker_endpoint"] is None for c in calls)  # never sent to the user's broker
    ours = [c for c in calls if c["argv"][:2] != ["status", "--all"]]  # the writer list also asks the user's table
    assert ours and {c["plugin_data"] for c in ours} == {data} and fake.calls("task")
    assert {c["plugin_data"] for c in calls} == {data, str(user_data)}
    assert {os.path.realpath(c["cwd"]) for c in calls} == {os.path.realpath(repo)}  # the root, not src/
    assert stat.S_IMODE(os.lstat(data).st_mode) == 0o700 and not list(user_data.glob("state/*/jobs/*.json"))
    brokers = fake.brokers()
    assert brokers and all(gone(b["pid"]) for b in brokers)  # maestro's broker did not outlive the loop
    assert plugin_data.broker_record(data, os.path.realpath(repo)) is None


def test_a_symlinked_data_dir_is_refused_before_anything_is_launched(repo, fake, maestro, tmp_path):
    fake.set(**DONE_EDIT)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    target = data_dir(repo)
    os.makedirs(os.path.dirname(target), mode=0o700)
    os.symlink(elsewhere, target)
    result = maestro(*loop_args(repo), cwd=str(repo))
    assert result.rc == 3 and "is a symlink" in result.out + result.err
    assert fake.calls("task") == [] and list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("same_data_dir", [False, True], ids=["user-session", "maestros-own-dir"])
def test_a_claude_session_end_does_not_reach_maestros_job(repo, fake, tmp_path, same_data_dir):
    """The user's SessionEnd (/clear) with the user's CLAUDE_PLUGIN_DATA leaves maestro's running job alone; the
    same hook run in maestro's own data dir kills it — and then the dead worker ends the loop at once."""
    flag = tmp_path / "finish"
    fake.set(broker=True, finish_flag=str(flag), **{k: v for k, v in DONE_EDIT.items() if k != "turn_seconds"})
    user_data = tmp_path / "user-plugin-data"
    proc = start(*loop_args(repo, "--max-idle", "300"), cwd=repo, env={"CLAUDE_PLUGIN_DATA": str(user_data)})
    assert wait_for(lambda: any(True for _ in fake.job_files()) and fake.brokers(), timeout=30)
    session_end(repo, data_dir(repo) if same_data_dir else user_data)
    if same_data_dir:
        result = finish(proc)
        assert result.rc == 11 and "MAESTRO_FINAL: LOOP BLOCKED rc=11" in result.out, result.out + result.err
        assert "died" in result.out and poison(repo)["unconfirmed_reason"] == "worker-dead"
        return
    flag.write_text("go")
    result = finish(proc)
    assert result.rc == 0 and result.out.splitlines()[-1] == "MAESTRO_FINAL: LOOP VERIFIED_DONE rc=0", result.err


# -- 2. a job lost from the companion's table, and maestro's own ledger ----------------------------------------------
@pytest.mark.parametrize("wording", [None, 'Unknown job reference "{}".'], ids=["no-job-found", "reworded"])
def test_a_job_lost_from_the_table_is_followed_in_its_own_file_and_recorded_in_the_ledger(repo, fake, maestro,
                                                                                          wording):
    fake.set(lost_from_table=True, no_job_wording=wording, **DONE_EDIT)  # whatever the companion's words for it
    result = maestro(*loop_args(repo), cwd=str(repo))
    text = result.out + result.err
    assert result.rc == 0 and "MAESTRO_FINAL: LOOP VERIFIED_DONE rc=0" in text, text
    assert "missing from the companion's job table" in text
    (entry,) = ledger(repo)
    assert entry["kind"] == "write" and entry["state"] == "completed" and entry["lease_generation"]
    assert entry["id"].startswith("task-") and entry["launched_at"].endswith("Z") and entry["log_file"]
    assert entry["data_dir"] == data_dir(repo)
    folder = repo / ".git" / "maestro-jobs"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / f"{entry['id']}.json").stat().st_mode) == 0o600


def test_clear_lease_refuses_while_the_ledger_shows_a_live_worker_the_table_lost(repo, fake, maestro):
    fake.set(lost_from_table=True, turn_seconds=None, worker_seconds=60)
    result = maestro(*loop_args(repo), cwd=str(repo), env={"MAESTRO_MAX_DISPATCH_SEC": "0.5"})
    assert result.rc == 11 and poison(repo)["unconfirmed_reason"] == "deadline", result.out + result.err
    (entry,) = ledger(repo)
    refused = maestro("loop", "--clear-lease", cwd=str(repo))
    assert refused.rc == 11 and f"job ledger shows write job={entry['id']}" in refused.out + refused.err
    assert data_dir(repo) in refused.out + refused.err
    os.kill(entry["worker_pid"], 15)
    assert gone(entry["worker_pid"])
    cleared = maestro("loop", "--clear-lease", cwd=str(repo))
    assert cleared.rc == 0, cleared.out + cleared.err


# -- 3. a dead worker, a job stuck in the queue ----------------------------------------------------------------------
def test_a_dead_worker_ends_the_wait_within_two_polls_and_poisons_the_lease(repo, fake, maestro):
    # the worker lives 0.3 s; the log keeps growing, so only the worker check can end the wait before the deadline
    fake.set(turn_seconds=None, log_growth_bytes=200, worker_seconds=0.3)
    result = maestro(*loop_args(repo, "--max-idle", "300"), cwd=str(repo), env={"MAESTRO_MAX_DISPATCH_SEC": "60"})
    text = result.out + result.err
    assert result.rc == 11 and "MAESTRO_FINAL: LOOP BLOCKED rc=11" in text, text
    died = next(line for line in text.splitlines() if "Codex worker of job=" in line)
    assert "died" in died and "instead of after --max-idle" in died
    assert poison(repo)["unconfirmed_reason"] == "worker-dead"
    assert "ended because its Codex worker process died" in text and data_dir(repo) in text
    # never the companion's cancel: it kills the pid's process tree, and that pid may be someone else's by now
    assert fake.calls("cancel") == [] and "reason=worker-dead request=not-attempted" in text
    (entry,) = ledger(repo)
    assert entry["state"] == "poisoned" and entry["reason"] == "worker-dead"
    # alive while the sleeper ran (0.3 s at a 0.1 s poll), then two polls: far from the 60 s the deadline allows
    assert len(fake.calls("status")) <= 15 + 2


def test_a_job_queued_past_the_stall_limit_is_a_stall(repo, fake, maestro):
    fake.set(queued_seconds=1000, turn_seconds=None)
    result = maestro(*loop_args(repo), cwd=str(repo), env={"MAESTRO_QUEUED_STALL_SEC": "0.3"})
    text = result.out + result.err
    assert result.rc == 11 and "still queued after 0.3s" in text, text
    assert poison(repo)["unconfirmed_reason"] == "queued-stall"


# -- 4. usage limits: BLOCKED reason quota, no attempt, no failed outcome --------------------------------------------
def test_a_usage_limit_ends_the_loop_blocked_with_reason_quota_and_its_reset_time(repo, fake, maestro, home):
    fake.set(turn_seconds=0, turn_status="error", error_message=USAGE_LIMIT)
    result = maestro(*loop_args(repo, "--max-iters", "3"), cwd=str(repo))
    out = lines(result)
    assert result.rc == 11 and out[-1] == "MAESTRO_FINAL: LOOP BLOCKED rc=11", result.out + result.err
    state = next(line for line in out if line.startswith("LOOP_STATE:"))
    assert state.startswith('LOOP_STATE: BLOCKED reason=quota reset="at 3:45 PM"')
    assert len(fake.calls("task")) == 1 and "COMPANION_FAILURE" not in result.out + result.err
    assert not any("OUTCOME" in line for line in out)  # no failed outcome recorded in project memory
    assert not (repo / ".git" / "maestro-write.lock").exists()  # nothing poisoned: the job ended
    status = maestro("status", cwd=str(repo))
    assert status.rc == 0 and "BLOCKED reason=quota (Codex usage limit, resets at 3:45 PM)" in status.out
    assert f"companion data dir: {data_dir(repo)}" in status.out


@pytest.mark.parametrize("plan_text, knobs", [
    ("Make the API client retry on rate limit errors (HTTP 429 Too Many Requests).\n",
     {"turn_status": "failed", "final_message": "The rate limit tests still fail.\nRESULT: FAILED"}),
    ("Set VALUE to 2 in app.py.\n",
     {"final_message": "I added the rate-limit middleware; it answers 429 Too Many Requests when the usage limit "
                       "is hit, try again in 5 minutes."}),
], ids=["failed-job-whose-plan-says-rate-limit", "reply-without-result-about-rate-limit-middleware"])
def test_a_plan_or_a_reply_that_talks_about_rate_limits_is_not_a_usage_limit(repo, fake, maestro, plan_text, knobs):
    fake.set(turn_seconds=0, **knobs)
    plan(repo).write_text(plan_text)
    result = maestro("loop", "--plan", str(repo.parent / "plan.md"), "--verify", VERIFY_OK, "--poll", "0.1",
                     cwd=str(repo))
    text = result.out + result.err
    assert result.rc == 11 and "COMPANION_FAILURE" in text, text
    assert "reason=quota" not in text and ledger(repo)[0]["state"] == "failed"


def test_a_scout_also_stops_maestros_broker_and_runs_in_its_data_dir(repo, fake, maestro, home):
    (home / ".codex" / "maestro-scout").write_text("model=fake-small\neffort=low\n")
    fake.set(broker=True, turn_seconds=0, final_message="SCOUT_SUMMARY: app.py:1 holds VALUE")
    query = repo.parent / "query.md"
    query.write_text("where is VALUE set?\n")
    result = maestro("scout", "--query", str(query), cwd=str(repo))
    assert result.rc == 0, result.out + result.err
    assert {c["plugin_data"] for c in fake.calls("task")} == {data_dir(repo)}
    brokers = fake.brokers()
    assert brokers and all(gone(b["pid"]) for b in brokers)
    (entry,) = ledger(repo)
    assert entry["kind"] == "read" and entry["state"] == "completed" and entry["lease_generation"] == ""


def test_a_watchdog_on_a_usage_limit_is_blocked_with_reason_quota_and_records_no_outcome(repo, fake, maestro):
    fake.set(broker=True, turn_seconds=0, turn_status="error", error_message=USAGE_LIMIT)
    result = maestro("watchdog", "--file", str(plan(repo)), "300", "0.1", cwd=str(repo))
    assert result.rc == 11 and lines(result)[-1] == "MAESTRO_FINAL: WATCHDOG BLOCKED rc=11", result.out + result.err
    assert "WATCHDOG_BLOCKED: reason=quota" in result.err and "resets at 3:45 PM" in result.err
    assert "COMPANION_FAILURE" not in result.err and not any("OUTCOME" in line for line in lines(result))
    brokers = fake.brokers()
    assert brokers and all(gone(b["pid"]) for b in brokers)  # a watchdog leaves no broker of maestro's running


def test_a_discussion_turn_also_stops_maestros_broker(repo, fake, maestro):
    started = maestro("discuss", "--new", "cache design", "main", cwd=str(repo))
    assert started.rc == 0, started.out + started.err
    fake.set(broker=True, turn_seconds=0, final_message="STANCE: AGREE\nThe plan holds.\n")
    turn = repo.parent / "turn.md"
    turn.write_text("My opening position: cache per tenant.\n")
    result = maestro("discuss", "--turn", str(turn), "main", "30", "0.05", cwd=str(repo))
    assert result.rc == 0, result.out + result.err
    assert {c["plugin_data"] for c in fake.calls("task")} == {data_dir(repo)}
    brokers = fake.brokers()
    assert brokers and all(gone(b["pid"]) for b in brokers)


@pytest.mark.source_only
def test_doctor_names_the_workspaces_companion_data_dir(repo, monkeypatch):
    from maestro.commands.doctor import check_companion_data

    monkeypatch.chdir(repo)
    before = check_companion_data()
    assert before.status == "ok" and data_dir(repo) in before.detail and "created 0700" in before.detail
    plugin_data.ensure_data_dir(os.path.realpath(repo))
    assert check_companion_data().detail == f"{data_dir(repo)} (mode 0700)"
    for folder in (data_dir(repo), os.path.dirname(data_dir(repo))):  # the same private check as ~/.maestro's
        os.chmod(folder, 0o755)
        opened = check_companion_data()
        assert opened.status == "fail" and opened.fix == f"chmod 700 {folder}" and "0755" in opened.detail
        os.chmod(folder, 0o700)
