"""The fake Codex companion (tests/fixtures/fake_companion.py) against the real companion's contract.

Every case runs the fake as a real process. Time is a knob: turns last 0 s, a few tens of
milliseconds, or never (turn_seconds null), so no test sleeps for long.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

# The fake companion itself, never maestro: the archive run would repeat it (tests/testing/in_process.py)
pytestmark = pytest.mark.in_process

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FAKE = FIXTURES / "fake_companion.py"
TASK_LINE = ("  node scripts/codex-companion.mjs task [--background] [--write] [--resume-last|--resume|--fresh] "
             "[--model <model|spark>] [--effort <none|minimal|low|medium|high|xhigh>] [prompt]")
LAUNCH_RE = re.compile(r"^Codex Task started in the background as (task-[0-9a-z]+-[0-9a-z]{6})\. "
                       r"Check /codex:status \1 for progress\.\n$")
ELAPSED_RE = re.compile(r"^(\d+h \d+m|\d+m \d+s|\d+s)$")  # the real formatElapsedDuration


@dataclass
class Result:
    rc: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


class Fake:
    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.state = tmp_path / "state"
        self.knobs_file = tmp_path / "knobs.json"
        self.calls = tmp_path / "calls.jsonl"
        self.env = dict(os.environ, FAKE_COMPANION_STATE=str(self.state), FAKE_COMPANION_KNOBS=str(self.knobs_file),
                        FAKE_COMPANION_CALL_LOG=str(self.calls))

    def knobs(self, **knobs):
        tmp = self.knobs_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(knobs))
        os.replace(tmp, self.knobs_file)

    def run(self, *args, stdin=b"", env=None, cwd=None, timeout=10, argv0=(sys.executable, str(FAKE))):
        proc = subprocess.run([*argv0, *args], input=stdin, capture_output=True, timeout=timeout,
                              env=dict(self.env, **(env or {})), cwd=cwd or self.tmp)
        return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())

    def launch(self, *args, **kwargs):
        result = self.run("task", "--background", *(args or ("do the thing", "now")), **kwargs)
        assert result.rc == 0, result
        match = LAUNCH_RE.match(result.out)
        assert match, result.out
        return match.group(1)

    def job(self, job_id, **kwargs):
        result = self.run("status", job_id, "--json", **kwargs)
        assert result.rc == 0, result
        return result.json()["job"]

    def wait(self, job_id, statuses=("completed", "failed", "cancelled"), limit=30.0):
        deadline = time.time() + limit
        while True:
            job = self.job(job_id)
            if job["status"] in statuses or time.time() > deadline:
                return job
            time.sleep(0.02)

    def call_log(self):
        return [json.loads(line) for line in self.calls.read_text().splitlines()]


@pytest.fixture
def fake(tmp_path):
    return Fake(tmp_path)


# --- help -------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [("--help",), ("help",), ()])
def test_help_prints_the_real_usage(fake, args):
    result = fake.run(*args)
    assert result.rc == 0 and result.err == ""
    lines = result.out.splitlines()
    assert lines[0] == "Usage:" and TASK_LINE in lines
    first_task_line = next(line for line in lines if re.search(r"\btask\b", line))
    assert first_task_line == TASK_LINE
    for sub in ("status [job-id] [--all] [--json]", "result [job-id] [--json]", "cancel [job-id] [--json]"):
        assert f"  node scripts/codex-companion.mjs {sub}" in lines


def test_help_knobs_drift_fail_and_hang(fake):
    fake.knobs(help_write=False)
    drifted = fake.run("--help")
    assert drifted.rc == 0 and TASK_LINE.replace("[--write] ", "") in drifted.out and "--write" not in drifted.out
    fake.knobs(help_mode="error")
    failed = fake.run("--help")
    assert failed.rc == 1 and failed.out == "" and failed.err
    fake.knobs(help_mode="empty")
    assert fake.run("--help") == Result(0, "", "")
    fake.knobs(help_mode="hang")
    with pytest.raises(subprocess.TimeoutExpired):
        fake.run("--help", timeout=0.5)


# --- task: launch and parsing -----------------------------------------------------------
def test_background_launch_text_id_and_request(fake):
    before = int(time.time() * 1000)
    job_id = fake.launch("--write", "--model", "gpt-5.4", "--effort", "high", "do X")
    assert before - 1000 <= int(job_id.split("-")[1], 36) <= int(time.time() * 1000)
    job = fake.job(job_id)
    assert job["id"] == job_id and job["kind"] == "task" and job["title"] == "Codex Task" and job["write"] is True
    assert job["request"] == {"cwd": str(fake.tmp), "model": "gpt-5.4", "effort": "high", "prompt": "do X",
                              "write": True, "resumeLast": False, "jobId": job_id}
    assert job["logFile"] == str(fake.state / "jobs" / f"{job_id}.log")
    assert (fake.state / "jobs" / f"{job_id}.json").is_file()
    assert list(job)[:4] == ["createdAt", "updatedAt", "id", "kind"]  # the real key order


def test_absent_flags_give_null_model_effort_and_spark_alias(fake):
    job = fake.job(fake.launch("plain", "prompt"))
    assert job["request"]["model"] is None and job["request"]["effort"] is None and job["write"] is False
    spark = fake.job(fake.launch("-m", "spark", "--effort=LOW", "--write=false", "x", "y"))["request"]
    assert (spark["model"], spark["effort"], spark["write"]) == ("gpt-5.3-codex-spark", "low", False)


def test_launch_json_payload(fake):
    result = fake.run("task", "--background", "--json", "write", "the   docs")
    payload = result.json()
    assert result.rc == 0 and list(payload) == ["jobId", "status", "title", "summary", "logFile"]
    assert payload["status"] == "queued" and payload["title"] == "Codex Task" and payload["summary"] == "write the docs"
    assert result.out.startswith('{\n  "jobId": ')  # pretty-printed like JSON.stringify(value, null, 2)


def test_single_argument_is_resplit_shell_style(fake):
    raw = 'say "hello   world"\nline2 \\x'
    result = fake.run("task", "--background " + raw)
    job_id = LAUNCH_RE.match(result.out).group(1)
    assert fake.job(job_id)["request"]["prompt"] == "say hello   world line2 x"
    verbatim = fake.launch('say "hi"', "a  b")  # two or more arguments: verbatim
    assert fake.job(verbatim)["request"]["prompt"] == 'say "hi" a  b'


def test_double_dash_and_unknown_flags_become_prompt_words(fake):
    dashed = fake.run("task", "--background", "--", "--json")
    job_id = LAUNCH_RE.match(dashed.out).group(1)  # text output: --json was a prompt word
    assert fake.job(job_id)["request"]["prompt"] == "--json"
    unknown = fake.launch("--help", "--foo=bar", "-x", "words")
    assert fake.job(unknown)["request"]["prompt"] == "--help --foo=bar -x words"


def test_prompt_from_stdin_and_prompt_file(fake):
    job_id = fake.launch("--model", "m", stdin=b"line one\nline two\n")
    assert fake.job(job_id)["request"]["prompt"] == "line one\nline two\n"
    (fake.tmp / "p.txt").write_text("from file")
    from_file = fake.launch("--prompt-file", "p.txt", "ignored", stdin=b"ignored too")
    assert fake.job(from_file)["request"]["prompt"] == "from file"
    logged = [e for e in fake.call_log() if e["argv"][0] == "task"]
    assert logged[0]["stdin_bytes"] == len(b"line one\nline two\n") and logged[1]["stdin_bytes"] == 0
    assert [e["prompt"] for e in logged] == ["line one\nline two\n", "from file"]


def test_task_errors(fake):
    assert fake.run("task", "--background") == Result(
        1, "", "Provide a prompt, a prompt file, piped stdin, or use --resume-last.\n")
    assert fake.run("task", "  ").rc == 1  # one blank argument: no words, empty stdin
    assert fake.run("task", "--background  ").rc == 1  # one argument, re-split: only the flag
    bad = fake.run("task", "--background", "--effort", "max", "x", "y")
    assert bad.rc == 1 and bad.err.startswith('Unsupported reasoning effort "max". Use one of: none, minimal')
    assert fake.run("task", "--background", "--model").err == "Missing value for --model\n"
    assert fake.run("task", "--resume-last", "--fresh", "x", "y").err.startswith("Choose either")
    assert fake.run("frobnicate") == Result(1, "", "Unknown subcommand: frobnicate\n")
    assert not list(fake.state.glob("jobs/*.json"))


def test_blank_prompt_launches_but_the_turn_fails(fake):
    job_id = fake.launch("  ", " ")  # two arguments, joined: truthy but blank (as the real one)
    job = fake.wait(job_id)
    assert (job["status"], job["errorMessage"]) == ("failed", "A prompt is required for this Codex run.")


def test_foreground_task_runs_to_completion(fake):
    fake.knobs(turn_seconds=0.05, final_message="All good.\nRESULT: DONE")
    ok = fake.run("task", "fix", "it")
    assert ok.rc == 0 and ok.out == "All good.\nRESULT: DONE\n" and "[codex] Turn started (turn_1)." in ok.err
    fake.knobs(turn_seconds=0, turn_status="failed", final_message="Could not.")
    failed = fake.run("task", "--json", "fix", "it")
    assert failed.rc == 1 and failed.json()["status"] == 1 and failed.json()["rawOutput"] == "Could not."


# --- status / result / cancel ---------------------------------------------------------------
def test_lifecycle_running_then_completed_and_result_text(fake):
    flag = fake.tmp / "finish"
    fake.knobs(finish_flag=str(flag), final_message="Edited README.md.\nRESULT: DONE")
    job_id = fake.launch("--write", "edit", "readme")
    running = fake.job(job_id)
    assert (running["status"], running["phase"], running["pid"]) == ("running", "starting", running["pid"])
    # Durations are wall clock (a busy machine makes 0 s into 1 s): assert their format, never their value.
    assert isinstance(running["pid"], int) and ELAPSED_RE.match(running["elapsed"]) and running["duration"] is None
    assert running["progressPreview"] == ["Queued for background execution.", "Starting Codex task thread.",
                                          "Thread ready (thr_1).", "Turn started (turn_1)."]
    assert fake.run("result", job_id) == Result(1, "", f'No job found for "{job_id}". Run /codex:status to list known jobs.\n')
    flag.touch()
    done = fake.job(job_id)
    assert (done["status"], done["phase"], done["pid"], done["progressPreview"]) == ("completed", "done", None, [])
    assert done["summary"] == "Edited README.md." and ELAPSED_RE.match(done["duration"]) and done["completedAt"]
    assert fake.run("result", job_id) == Result(
        0, "Edited README.md.\nRESULT: DONE\n\nCodex session ID: thr_1\nResume in Codex: codex resume thr_1\n", "")
    stored = fake.run("result", job_id, "--json").json()
    assert stored["job"]["id"] == job_id and "result" not in stored["job"]
    assert stored["storedJob"]["result"]["rawOutput"] == "Edited README.md.\nRESULT: DONE"
    assert stored["storedJob"]["rendered"] == "Edited README.md.\nRESULT: DONE\n"
    assert "# Codex Job Status" in fake.run("status", job_id).out


def test_elapsed_format_is_the_real_ones():
    """The values behind ELAPSED_RE, on injected times (the lifecycle above can only assert the format)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("fake_companion_module", FAKE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cases = {(100.0, 100.0): "0s", (100.0, 100.4): "0s", (100.0, 100.5): "1s", (0.0, 61.0): "1m 1s",
             (0.0, 3661.0): "1h 1m", (5.0, 4.0): None, (None, 1.0): None}
    assert {times: module.fmt_elapsed(*times) for times in cases} == cases


def test_failed_turn_and_thrown_run(fake):
    fake.knobs(turn_seconds=0, turn_status="failed", final_message="Tests still red.")
    failed = fake.job(fake.launch())
    assert (failed["status"], failed["phase"]) == ("failed", "failed") and "errorMessage" not in failed
    assert fake.run("result", failed["id"]).out.startswith("Tests still red.\n\nCodex session ID: thr_1")
    fake.knobs(turn_seconds=0, turn_status="error")
    thrown = fake.job(fake.launch())
    assert thrown["errorMessage"] == "authentication expired; run codex login" and thrown["status"] == "failed"
    text = fake.run("result", thrown["id"])
    assert text.rc == 0 and f"Job: {thrown['id']}" in text.out and "Status: failed" in text.out
    assert text.out.endswith("authentication expired; run codex login\n")


def test_result_modes(fake):
    fake.knobs(turn_seconds=0)
    job_id = fake.launch()
    fake.knobs(turn_seconds=0, result_mode="error")
    assert fake.run("result", job_id).rc == 1
    fake.knobs(turn_seconds=0, result_mode="empty")
    assert fake.run("result", job_id) == Result(0, "", "")
    fake.knobs(turn_seconds=0, result_mode="fail_once")
    other = fake.launch()
    first, second = fake.run("result", other), fake.run("result", other)
    assert first.rc == 1 and first.out == "" and second.rc == 0 and "RESULT: DONE" in second.out
    assert fake.run("result").out.startswith("Done.")  # no id: newest finished job


def test_cancel_running_then_no_job_found(fake):
    fake.knobs(turn_seconds=None)
    job_id = fake.launch()
    result = fake.run("cancel", job_id, "--json")
    assert result.rc == 0 and result.json() == {"jobId": job_id, "status": "cancelled", "title": "Codex Task",
                                                "turnInterruptAttempted": True, "turnInterrupted": True}
    job = fake.job(job_id)
    assert (job["status"], job["phase"], job["pid"], job["errorMessage"]) == ("cancelled", "cancelled", None,
                                                                             "Cancelled by user.")
    assert fake.run("cancel", job_id).err == f'No job found for "{job_id}". Run /codex:status to list known jobs.\n'
    assert fake.run("cancel", "task-nope-000000").rc == 1
    fake.knobs(turn_seconds=0)
    finished = fake.launch()
    assert fake.job(finished)["status"] == "completed" and fake.run("cancel", finished).rc == 1
    cancelled = fake.run("result", job_id)
    assert cancelled.rc == 0 and "Status: cancelled" in cancelled.out and "Cancelled by user." in cancelled.out


def test_cancel_unacknowledged_keeps_running_until_knob_flips(fake):
    fake.knobs(turn_seconds=None, cancel_ack=False)
    job_id = fake.launch()
    refused = fake.run("cancel", job_id)
    assert refused.rc == 1 and refused.out == "" and fake.job(job_id)["status"] == "running"
    fake.knobs(turn_seconds=None)  # live knob: flipping it affects the running job
    text = fake.run("cancel")  # no id: the only active job
    assert text.rc == 0 and f"Cancelled {job_id}." in text.out and fake.job(job_id)["status"] == "cancelled"


def test_queued_job_cancel_attempts_no_interrupt(fake):
    fake.knobs(turn_seconds=None, queued_seconds=60)
    job_id = fake.launch()
    job = fake.job(job_id)
    assert (job["status"], job["phase"], job["progressPreview"][-1]) == ("queued", "queued", "Queued for background execution.")
    assert "startedAt" not in job and "threadId" not in job
    payload = fake.run("cancel", job_id, "--json").json()
    assert payload["turnInterruptAttempted"] is False and payload["turnInterrupted"] is False
    fake.knobs(turn_seconds=None, queued_seconds=60, external_cancel_after=0)
    assert fake.job(fake.launch())["status"] == "cancelled"  # cancelled while still queued


@pytest.mark.parametrize("mode,expect", [("malformed", (0, "{malformed\n")), ("empty", (0, "")), ("error", (1, ""))])
def test_status_modes(fake, mode, expect):
    fake.knobs(turn_seconds=None)
    job_id = fake.launch()
    fake.knobs(turn_seconds=None, status_mode=mode)
    result = fake.run("status", job_id, "--json")
    assert (result.rc, result.out) == expect
    fake.knobs(turn_seconds=None)
    assert fake.job(job_id)["status"] == "running"


def test_status_hang_and_non_object_and_status_all_mode(fake):
    fake.knobs(turn_seconds=None, script=[{"status_mode": "non_object"}, {"status_mode": "hang"}])
    odd, hung = fake.launch(), fake.launch()
    payload = fake.run("status", odd, "--json").json()
    assert isinstance(payload, list) and payload[0]["job"]["id"] == odd
    with pytest.raises(subprocess.TimeoutExpired):
        fake.run("status", hung, "--json", timeout=0.4)
    assert fake.run("status", "--all", "--json").json()["running"]  # status_all_mode defaults to ok
    fake.knobs(status_all_mode="malformed")
    assert fake.run("status", "--all", "--json").out == "{malformed\n"


def test_unknown_ambiguous_and_prefix_references(fake):
    assert fake.run("status", "task-zzz", "--json") == Result(
        1, "", 'No job found for "task-zzz". Run /codex:status to list known jobs.\n')
    fake.knobs(turn_seconds=None, script=[{"job_id": "task-abc-111111"}, {"job_id": "task-abc-222222"}])
    fake.launch(), fake.launch()
    assert fake.job("task-abc-1")["id"] == "task-abc-111111"
    assert "ambiguous" in fake.run("status", "task-abc", "--json").err


def test_external_cancel(fake):
    fake.knobs(turn_seconds=None, external_cancel_after=0.05)
    job_id = fake.launch()
    job = fake.wait(job_id)
    assert (job["status"], job["phase"], job["errorMessage"]) == ("cancelled", "cancelled", "Cancelled by user.")


def test_log_growth_and_static_log(fake):
    fake.knobs(turn_seconds=None, log_growth_bytes=300)
    growing = fake.launch()
    log = Path(fake.job(growing)["logFile"])
    sizes = [log.stat().st_size]
    for _ in range(2):
        job = fake.job(growing)
        sizes.append(log.stat().st_size)
    assert sizes[1] - sizes[0] == 300 and sizes[2] - sizes[1] == 300
    assert job["phase"] == "running" and job["progressPreview"][-1] == "Command completed: fake-step 3 (exit 0)"
    fake.knobs(turn_seconds=None, log_growth_bytes=7)  # too small for a line: filler, preview unchanged
    assert fake.job(growing)["progressPreview"] == job["progressPreview"]
    fake.knobs(turn_seconds=None)
    static = fake.launch()
    log = Path(fake.job(static)["logFile"])
    size = log.stat().st_size
    fake.job(static), fake.job(static)
    assert log.stat().st_size == size and fake.job(static)["phase"] == "starting"


def test_finish_flag_and_no_log_file(fake):
    flag = fake.tmp / "go"
    fake.knobs(finish_flag=str(flag), no_log_file=True)
    job_id = fake.launch()
    job = fake.job(job_id)
    assert job["status"] == "running" and "logFile" not in job and job["progressPreview"] == []
    flag.touch()
    assert fake.job(job_id)["status"] == "completed"


def test_edits_applied_once_and_only_for_write(fake):
    (fake.tmp / "old.txt").write_text("x")
    flag = fake.tmp / "finish"
    fake.knobs(finish_flag=str(flag), edits={"src/new.py": "print(1)\n", "old.txt": None})
    read_only, job_id = fake.launch("look"), fake.launch("--write", "edit")
    assert fake.job(job_id)["status"] == "running" and not (fake.tmp / "src" / "new.py").exists()
    flag.touch()
    assert fake.job(job_id)["status"] == "completed" and fake.job(read_only)["status"] == "completed"
    assert fake.run("result", read_only, "--json").json()["storedJob"]["result"]["touchedFiles"] == []
    assert (fake.tmp / "src" / "new.py").read_text() == "print(1)\n" and not (fake.tmp / "old.txt").exists()
    (fake.tmp / "src" / "new.py").write_text("changed by someone else")
    fake.job(job_id), fake.run("result", job_id)
    assert (fake.tmp / "src" / "new.py").read_text() == "changed by someone else"
    assert fake.run("result", job_id, "--json").json()["storedJob"]["result"]["touchedFiles"] == ["src/new.py", "old.txt"]


def test_launch_exit_and_launch_output(fake):
    fake.knobs(launch_exit=3)
    failed = fake.run("task", "--background", "x", "y")
    assert failed.rc == 3 and failed.out == "" and failed.err.startswith("Codex CLI is not installed")
    assert not list((fake.state / "jobs").glob("*.json"))
    fake.knobs(launch_output="Started.")
    silent = fake.run("task", "--background", "x", "y")
    assert silent == Result(0, "Started.\n", "") and len(list((fake.state / "jobs").glob("*.json"))) == 1
    fake.knobs(launch_output="Started {id}", job_id="task-fake0000-aaaaaa")
    assert fake.run("task", "--background", "x", "y").out == "Started task-fake0000-aaaaaa\n"


def test_script_entries_are_per_launch_and_snapshotted(fake):
    fake.knobs(turn_seconds=0, final_message="top", script=[{"final_message": "first"}, {"turn_status": "failed"}])
    first, second, third = fake.launch(), fake.launch(), fake.launch()
    assert [fake.job(j)["summary"] for j in (first, second, third)] == ["first", "top", "top"]
    assert fake.job(second)["status"] == "failed"
    fake.knobs(turn_seconds=None, final_message="later")
    hanging = fake.launch()
    fake.knobs(turn_seconds=0, final_message="changed after launch")  # snapshot: no effect on `hanging`
    assert fake.job(hanging)["status"] == "running"


def test_eight_concurrent_launches_keep_eight_jobs(fake):
    fake.knobs(turn_seconds=None)
    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(lambda n: fake.launch(f"job {n}", "go"), range(8)))
    assert len(set(ids)) == 8 and len(list((fake.state / "jobs").glob("*.json"))) == 8
    running = fake.run("status", "--all", "--json").json()["running"]
    assert sorted(j["id"] for j in running) == sorted(ids)
    assert (fake.state / "launches").read_text() == "8\n"


def test_status_list_shapes_and_session_filter(fake):
    fake.knobs(turn_seconds=0)
    a = fake.launch(env={"CODEX_COMPANION_SESSION_ID": "sess-a"})
    b = fake.launch(env={"CODEX_COMPANION_SESSION_ID": "sess-b"})
    fake.knobs(turn_seconds=None)
    c = fake.launch(env={"CODEX_COMPANION_SESSION_ID": "sess-a"})
    report = fake.run("status", "--all", "--json", env={"CODEX_COMPANION_SESSION_ID": ""}).json()
    assert list(report) == ["workspaceRoot", "config", "sessionRuntime", "running", "latestFinished", "recent",
                            "needsReview"]
    assert [j["id"] for j in report["running"]] == [c] and report["latestFinished"]["id"] == b
    assert [j["id"] for j in report["recent"]] == [a] and report["running"][0]["sessionId"] == "sess-a"
    only_a = fake.run("status", "--json", env={"CODEX_COMPANION_SESSION_ID": "sess-a"}).json()
    assert [j["id"] for j in only_a["running"]] == [c] and only_a["latestFinished"]["id"] == a
    assert only_a["recent"] == []
    assert "Active jobs:" in fake.run("status").out
    assert "sessionId" not in fake.job(fake.launch())


def test_status_wait_times_out(fake):
    fake.knobs(turn_seconds=None)
    job_id = fake.launch()
    waited = fake.run("status", job_id, "--wait", "--timeout-ms", "150", "--poll-interval-ms", "100", "--json").json()
    assert waited["waitTimedOut"] is True and waited["timeoutMs"] == 150 and waited["job"]["status"] == "running"
    assert fake.run("status", "--wait").rc == 1


def test_workspace_scoping_and_cwd_option(fake):
    repo, other = fake.tmp / "repo", fake.tmp / "other"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    other.mkdir()
    fake.knobs(turn_seconds=None)
    job_id = fake.launch(cwd=repo / "sub")
    job = fake.job(job_id, cwd=repo)
    assert job["workspaceRoot"] == str(repo) and job["request"]["cwd"] == str(repo / "sub")
    assert fake.run("status", job_id, "--json", cwd=other).rc == 1
    assert fake.run("status", job_id, "--json", "--cwd", str(repo), cwd=other).rc == 0


def test_call_log_records_each_invocation(fake):
    fake.knobs(turn_seconds=None)
    job_id = fake.launch("x", "y", env={"CODEX_COMPANION_SESSION_ID": "s1"})
    fake.run("status", job_id, "--json")
    fake.run("--help")
    entries = fake.call_log()
    assert [e["argv"] for e in entries] == [["task", "--background", "x", "y"], ["status", job_id, "--json"], ["--help"]]
    assert entries[0]["session"] == "s1" and entries[1]["session"] is None and entries[0]["cwd"] == str(fake.tmp)
    assert all(isinstance(e["time"], float) and e["stdin_bytes"] == 0 for e in entries)
    assert entries[0]["prompt"] == "x y" and "prompt" not in entries[1]


def test_bad_knobs_fail_loudly(fake):
    fake.knobs(turn_secs=1)
    result = fake.run("--help")
    assert result.rc == 2 and "unknown knob(s) turn_secs" in result.err
    fake.knobs_file.write_text("{broken")
    assert fake.run("--help").rc == 2


# --- the node shim ---------------------------------------------------------------------------
def test_node_shim_routes_companion_and_py_paths(fake, tmp_path):
    env = {"PATH": f"{FIXTURES}:{os.environ['PATH']}", "FAKE_COMPANION_PYTHON": sys.executable}
    via_mjs = fake.run("/nowhere/scripts/codex-companion.mjs", "--help", argv0=("node",),
                       env=dict(env, FAKE_COMPANION_SCRIPT=str(FAKE)))
    assert via_mjs.rc == 0 and TASK_LINE in via_mjs.out
    via_py = fake.run(str(FAKE), "task", "--background", "x", "y", argv0=("node",), env=env)
    assert LAUNCH_RE.match(via_py.out)
    no_node = tmp_path / "bin"
    no_node.mkdir()
    (no_node / "bash").symlink_to(shutil.which("bash"))
    missing = fake.run("-e", "1", argv0=(str(FIXTURES / "node"),), env={"PATH": f"{FIXTURES}:{no_node}"})
    assert missing.rc == 127 and "no real node" in missing.err


@pytest.mark.skipif(not shutil.which("node"), reason="no real node on PATH")
def test_node_shim_falls_through_to_real_node(fake):
    env = {"PATH": f"{FIXTURES}:{os.environ['PATH']}"}
    result = fake.run("-e", "console.log('real ' + typeof process.version)", argv0=("node",), env=env)
    assert result == Result(0, "real string\n", "")
