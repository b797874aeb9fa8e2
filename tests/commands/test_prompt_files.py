"""Issue 17 item 1: a prompt too large for argv (or blank) reaches the companion through a private,
exclusive file — never a predictable name in the shared temp directory — and is gone afterwards.

`loop`/`watchdog` run as real processes against a thin wrapper around the fake companion that records,
at the moment `task` is called, what the companion was handed: the path, the file's and its directory's
modes and the umask it inherited. A symlink and a pre-created file are planted where the old code wrote
(`$TMPDIR/maestro-prompt.<pid>.md`, the pid known as soon as the process starts)."""

import json
import os
import stat

import pytest
from testing.paths import FAKE_COMPANION
from testing.processes import finish, start

pytestmark = pytest.mark.timeout(90)

BIG_PLAN = "Set VALUE to 2 in app.py.\n" + ("# filler line to push the prompt past the argv limit\n" * 2500)
VERIFY_OK = "grep -q 'VALUE = 2' app.py"
DONE_EDIT = {"final_message": "Edited app.py.\nRESULT: DONE", "turn_seconds": 0, "edits": {"app.py": "VALUE = 2\n"}}

WRAPPER = """\
import json, os, runpy, stat, sys
argv = sys.argv[1:]
if argv[:1] == ["task"] and "--prompt-file" in argv:
    path = argv[argv.index("--prompt-file") + 1]
    st, parent = os.lstat(path), os.lstat(os.path.dirname(path))
    mask = os.umask(0)
    os.umask(mask)
    record = {"path": path, "link": stat.S_ISLNK(st.st_mode), "mode": stat.S_IMODE(st.st_mode),
              "nlink": st.st_nlink, "uid": st.st_uid, "dir_mode": stat.S_IMODE(parent.st_mode),
              "dir_uid": parent.st_uid, "umask": mask}
    with open(os.environ["PROMPT_RECORD"], "a") as fh:
        fh.write(json.dumps(record) + "\\n")
sys.argv = [%r] + argv
runpy.run_path(%r, run_name="__main__")
""" % (str(FAKE_COMPANION), str(FAKE_COMPANION))


@pytest.fixture
def recorded(tmp_path, fake, monkeypatch):
    """The wrapper as MAESTRO_COMPANION; returns a function that reads its records."""
    wrapper = tmp_path / "wrapped_companion.py"
    wrapper.write_text(WRAPPER)
    record = tmp_path / "prompt-records.jsonl"
    monkeypatch.setenv("MAESTRO_COMPANION", str(wrapper))
    monkeypatch.setenv("PROMPT_RECORD", str(record))
    return lambda: [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []


def private_plan(repo, text=BIG_PLAN):
    path = repo.parent / "plan.md"
    path.write_text(text)
    path.chmod(0o600)
    return path


def prompts_dir(home):
    return home / ".maestro" / "prompts"


def old_path(pid):
    return os.path.join(os.environ["TMPDIR"], f"maestro-prompt.{pid}.md")


def assert_private_and_gone(records, home):
    assert len(records) == 1, records
    seen = records[0]
    assert os.path.dirname(seen["path"]) == str(prompts_dir(home)), seen
    assert not seen["link"] and seen["nlink"] == 1 and seen["uid"] == os.geteuid()
    assert seen["mode"] == 0o600 and seen["dir_mode"] == 0o700 and seen["dir_uid"] == os.geteuid()
    assert seen["umask"] == 0o077  # the adapter runs under umask 077, and so does what it starts
    assert not os.path.lexists(seen["path"])
    assert os.listdir(prompts_dir(home)) == []


def test_loop_sends_a_large_plan_through_a_private_file_and_a_planted_symlink_is_not_followed(
        repo, fake, recorded, home, tmp_path):
    fake.set(**DONE_EDIT)
    victim = tmp_path / "outside" / "victim.txt"
    victim.parent.mkdir()
    victim.write_text("precious\n")
    proc = start("loop", "--plan", str(private_plan(repo)), "--verify", VERIFY_OK, "--poll", "1", cwd=repo)
    os.symlink(victim, old_path(proc.pid))  # what another local user could plant in /tmp
    result = finish(proc, timeout=60)
    assert result.rc == 0, result.out + result.err
    assert victim.read_text() == "precious\n"
    assert os.path.islink(old_path(proc.pid))  # neither written through nor replaced
    assert fake.prompts()[0].startswith(BIG_PLAN)
    assert_private_and_gone(recorded(), home)


def test_watchdog_leaves_a_precreated_file_at_the_old_path_alone(repo, fake, recorded, home):
    fake.set(**DONE_EDIT)
    proc = start("watchdog", "--file", str(private_plan(repo)), "30", "1", cwd=repo)
    planted = old_path(proc.pid)
    with open(planted, "w") as handle:  # pre-created (and readable/writable by all), as another user would
        handle.write("the attacker's plan\n")
    os.chmod(planted, 0o666)
    result = finish(proc, timeout=60)
    assert result.rc == 0, result.out + result.err
    with open(planted) as handle:
        assert handle.read() == "the attacker's plan\n"
    assert fake.prompts()[0].startswith(BIG_PLAN)
    assert_private_and_gone(recorded(), home)


@pytest.mark.parametrize("knobs, env", [
    ({"launch_exit": 1}, {}),                                # the companion refuses to start the job
    ({"launch_delay": 30}, {"MAESTRO_COMPANION_TIMEOUT_SEC": "1"}),  # the launch call times out
])
def test_the_prompt_file_is_removed_when_the_launch_fails(repo, fake, recorded, home, knobs, env):
    fake.set(**dict(DONE_EDIT, **knobs))
    proc = start("watchdog", "--file", str(private_plan(repo)), "30", "1", cwd=repo, env=env)
    result = finish(proc, timeout=60)
    assert result.rc != 0, result.out + result.err
    records = recorded()
    assert len(records) == 1 and records[0]["mode"] == 0o600
    assert not os.path.lexists(records[0]["path"]) and os.listdir(prompts_dir(home)) == []


def test_a_symlinked_prompts_dir_is_refused_and_nothing_is_written_through_it(repo, fake, recorded, home, tmp_path):
    fake.set(**DONE_EDIT)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (home / ".maestro").mkdir(mode=0o700)
    prompts_dir(home).symlink_to(elsewhere)
    proc = start("loop", "--plan", str(private_plan(repo)), "--verify", VERIFY_OK, "--poll", "1", cwd=repo)
    result = finish(proc, timeout=60)
    assert result.rc == 3 and result.out.splitlines()[-1] == "MAESTRO_FINAL: LOOP FAILED rc=3", result.out
    assert f"{prompts_dir(home)} is a symlink" in result.out + result.err
    assert os.listdir(elsewhere) == [] and fake.calls("task") == [] and recorded() == []
    assert not (repo / ".git" / "maestro-write.lock").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="handing a directory to another user needs root")
def test_a_prompts_dir_owned_by_someone_else_is_refused(repo, fake, recorded, home):
    fake.set(**DONE_EDIT)
    prompts_dir(home).mkdir(parents=True, mode=0o700)
    planted = prompts_dir(home) / "planted.md"
    planted.write_text("theirs\n")
    os.chown(prompts_dir(home), 12345, 12345)
    result = finish(start("watchdog", "--file", str(private_plan(repo)), "30", "1", cwd=repo), timeout=60)
    assert result.rc == 3, result.out + result.err
    assert "is owned by another user (uid 12345)" in result.out + result.err
    assert fake.calls("task") == [] and planted.read_text() == "theirs\n"


def test_an_open_prompts_dir_of_ours_is_closed_to_0700_and_foreign_files_in_it_stay_untouched(
        repo, fake, recorded, home):
    fake.set(**DONE_EDIT)
    prompts_dir(home).mkdir(parents=True)
    os.chmod(home / ".maestro", 0o777)
    os.chmod(prompts_dir(home), 0o777)
    leftover = prompts_dir(home) / "maestro-prompt.leftover.md"
    leftover.write_text("someone else's\n")
    if os.geteuid() == 0:
        os.chown(leftover, 12345, 12345)
    result = finish(start("watchdog", "--file", str(private_plan(repo)), "30", "1", cwd=repo), timeout=60)
    assert result.rc == 0, result.out + result.err
    assert stat.S_IMODE(os.stat(prompts_dir(home)).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(home / ".maestro").st_mode) == 0o700
    assert leftover.read_text() == "someone else's\n"
    seen = recorded()[0]
    assert seen["path"] != str(leftover) and seen["mode"] == 0o600 and seen["dir_mode"] == 0o700
    assert os.listdir(prompts_dir(home)) == [leftover.name]
