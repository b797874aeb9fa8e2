"""Issue 17 item 2: `loop` and `watchdog` send only a plan nobody else can write. A plan that group or
others can write, that another user owns, or a symlink reaching such a file is refused with exit 3 and
one line saying why and how to fix it — before the lease is taken and before anything is launched.
The check is made on the open file, at every read (the loop re-reads the plan before each dispatch)."""

import os

import pytest
from testing.processes import run

pytestmark = pytest.mark.timeout(90)

VERIFY_OK = "grep -q 'VALUE = 2' app.py"
DONE_EDIT = {"final_message": "Edited app.py.\nRESULT: DONE", "turn_seconds": 0, "edits": {"app.py": "VALUE = 2\n"}}
HINT = "keep plans in ~/.maestro/plans/ (mkdir -p -m 700 ~/.maestro/plans; chmod 600 the plan)"


def write_plan(path, mode, text="Set VALUE to 2 in app.py.\n"):
    path.write_text(text)
    os.chmod(path, mode)
    return path


def loop(repo, plan, verify=VERIFY_OK, *extra):
    return run("loop", "--plan", str(plan), "--verify", verify, "--poll", "1", *extra, cwd=repo)


def watchdog(repo, plan):
    return run("watchdog", "--file", str(plan), "30", "1", cwd=repo)


VERBS = {"loop": ("LOOP", loop), "watchdog": ("WATCHDOG", watchdog)}


def assert_refused(result, scope, reason, repo, fake):
    assert result.rc == 3, result.out + result.err
    assert result.out.splitlines()[-1] == f"MAESTRO_FINAL: {scope} FAILED rc=3"
    errors = [line for line in (result.out + result.err).splitlines() if line.startswith(f"{scope}_ERROR:")]
    assert len(errors) == 1 and reason in errors[0] and errors[0].endswith(HINT), errors
    assert fake.calls("task") == []
    assert not (repo / ".git" / "maestro-write.lock").exists()


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("mode", [0o620, 0o602, 0o666, 0o622], ids=lambda mode: f"{mode:04o}")
def test_a_plan_writable_by_group_or_others_is_refused(repo, fake, verb, mode):
    fake.set(**DONE_EDIT)
    plan = write_plan(repo.parent / "x-plan.md", mode)
    scope, call = VERBS[verb]
    assert_refused(call(repo, plan), scope, f"plan {plan} is writable by others (mode {mode:04o})", repo, fake)
    assert (repo / "app.py").read_text() == "VALUE = 1\n"


@pytest.mark.parametrize("verb", VERBS)
def test_a_symlink_to_a_plan_writable_by_others_is_refused(repo, fake, verb):
    fake.set(**DONE_EDIT)
    target = write_plan(repo.parent / "shared-plan.md", 0o666)
    link = repo.parent / "x-plan.md"
    link.symlink_to(target)
    scope, call = VERBS[verb]
    assert_refused(call(repo, link), scope, f"plan {link} is writable by others (mode 0666)", repo, fake)


@pytest.mark.skipif(os.geteuid() != 0, reason="handing a file to another user needs root")
@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("via_symlink", [False, True])
def test_a_plan_owned_by_another_user_is_refused(repo, fake, verb, via_symlink):
    fake.set(**DONE_EDIT)
    plan = write_plan(repo.parent / "their-plan.md", 0o644)
    os.chown(plan, 12345, 12345)
    if via_symlink:
        link = repo.parent / "x-plan.md"
        link.symlink_to(plan)
        plan = link
    scope, call = VERBS[verb]
    assert_refused(call(repo, plan), scope, f"plan {plan} is owned by another user (uid 12345)", repo, fake)


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("mode", [0o600, 0o644], ids=lambda mode: f"{mode:04o}")
def test_a_plan_of_ours_that_only_we_can_write_is_sent(repo, fake, verb, mode):
    fake.set(**DONE_EDIT)
    plan = write_plan(repo.parent / "x-plan.md", mode)
    result = VERBS[verb][1](repo, plan)
    assert result.rc == 0, result.out + result.err
    assert fake.prompts()[0].startswith("Set VALUE to 2 in app.py.\n")


def test_the_private_plan_directory_of_the_rules_works(repo, fake, home):
    fake.set(**DONE_EDIT)
    plans = home / ".maestro" / "plans"
    plans.mkdir(parents=True, mode=0o700)
    result = loop(repo, write_plan(plans / "value-plan.md", 0o600))
    assert result.rc == 0, result.out + result.err


def test_a_plan_opened_to_others_during_the_run_is_not_sent_again(repo, fake):
    """The loop re-reads the plan before each dispatch: a plan that became writable by others since the
    first dispatch ends the run (FAILED, rc 3) instead of being sent."""
    fake.set(final_message="Did it.\nRESULT: DONE", turn_seconds=0)
    plan = write_plan(repo.parent / "x-plan.md", 0o600)
    result = loop(repo, plan, f"chmod 666 {plan}; exit 1", "--max-iters", "3")
    assert result.rc == 3, result.out + result.err
    assert result.out.splitlines()[-1] == "MAESTRO_FINAL: LOOP FAILED rc=3"
    assert f"LOOP_ERROR: plan {plan} is writable by others (mode 0666)" in result.err
    assert len(fake.calls("task")) == 1
    assert not (repo / ".git" / "maestro-write.lock").exists()


def test_a_fifo_is_refused_without_hanging(repo, fake, tmp_path):
    fifo = tmp_path / "plan.fifo"
    os.mkfifo(fifo, 0o600)
    result = run("watchdog", "--file", str(fifo), cwd=repo, timeout=30)
    assert result.rc == 3 and f"plan {fifo} is not a regular file" in result.out + result.err
