"""Read jobs stay read-only (issue 12 §1.5): `--read-only` on every read dispatch when the companion's `--help`
offers it, a refused read dispatch when a flagless task would inherit the user's sandbox, and the help probe
cached per companion file (path, inode, size, mtime) — never trusted from a record that is not ours."""

import json
import os
from types import SimpleNamespace

import pytest

from maestro.codex import read_only

pytestmark = pytest.mark.timeout(60)

REPLY = "Found it at app.py:1.\nSCOUT_SUMMARY: app.py:1"


def scout(maestro, repo, home):
    (home / ".codex" / "maestro-scout").write_text("model=fake-small\neffort=low\n")
    query = repo.parent / "query.md"
    query.write_text("where is the entry point? (run it with python -m pytest)\n")
    return maestro("scout", "--query", str(query), cwd=str(repo))


def help_calls(fake):
    return [call for call in fake.calls() if call["argv"][:1] in (["help"], ["--help"])]


# -- end to end (discuss, scout) against the fake companion --------------------------------------------------
def test_a_companion_offering_read_only_gets_it_on_every_scout_and_is_probed_once(maestro, repo, fake, home):
    fake.set(turn_seconds=0, final_message=REPLY, help_sandbox="read_only")
    for _ in range(2):
        result = scout(maestro, repo, home)
        assert result.rc == 0, result.out + result.err
    tasks = fake.calls("task")
    assert len(tasks) == 2 and all("--read-only" in call["argv"] and "--write" not in call["argv"] for call in tasks)
    assert len(help_calls(fake)) == 1  # the second dispatch read the cached verdict


def test_a_flagless_task_that_inherits_the_sandbox_refuses_scout_and_discuss(maestro, repo, fake, home):
    fake.set(turn_seconds=0, final_message=REPLY, help_sandbox="inherit")
    result = scout(maestro, repo, home)
    assert result.rc == 11, result.out + result.err
    assert "SCOUT_BLOCKED: the companion's task runs without --write in the user's configured sandbox" in result.err
    assert result.out.splitlines()[-1] == "MAESTRO_FINAL: SCOUT BLOCKED rc=11"
    assert maestro("discuss", "--new", "topic", cwd=str(repo)).rc == 0
    turn = repo.parent / "turn.md"
    turn.write_text("my position\n")
    result = maestro("discuss", "--turn", str(turn), cwd=str(repo))
    assert result.rc == 11 and "DISCUSSION_BLOCKED:" in result.err and "no --read-only" in result.err
    assert fake.calls("task") == []


def test_the_released_companion_gets_no_unknown_flag_and_an_updated_one_is_probed_again(maestro, repo, fake, home,
                                                                                         tmp_path, monkeypatch):
    companion = tmp_path / "companion.py"
    fixtures = os.path.dirname(os.environ["MAESTRO_COMPANION"])
    companion.write_text(f"import sys\nsys.path.insert(0, {fixtures!r})\nfrom fake_companion_body import main\n"
                         "sys.exit(main(sys.argv[1:]))\n")
    monkeypatch.setenv("MAESTRO_COMPANION", str(companion))
    fake.set(turn_seconds=0, final_message=REPLY)
    assert scout(maestro, repo, home).rc == 0
    argv = fake.calls("task")[0]["argv"]
    assert "--read-only" not in argv and "--write" not in argv  # 1.0.5/1.0.6: flagless tasks are read-only
    fake.set(turn_seconds=0, final_message=REPLY, help_sandbox="inherit")
    with companion.open("a") as handle:  # the plugin was updated in place: new size and mtime
        handle.write("\n# updated\n")
    assert scout(maestro, repo, home).rc == 11
    assert len(help_calls(fake)) == 2


# -- the verdict and its cache --------------------------------------------------------------------------------
@pytest.mark.parametrize("help_text, verdict", [
    ("  node x task [--background] [--write] [--model <m>] [prompt]\n  node x status [job-id]", "fixed"),
    ("  node x task [--background] [--write|--read-only] [--model <m>] [prompt]", "flag"),
    ("  node x task [--background] [--write] [prompt]\nA task without --write uses the sandbox_mode of Codex.",
     "inherits"),
    ("Usage: nothing about tasks", ""),
    ("", ""),
])
def test_judge_help(help_text, verdict):
    assert read_only.judge_help(help_text)[0] == verdict


TASK_WORKER_FIRST = ("  node x task-worker [--cwd <dir>] [--job-id <id>]\n"
                     "  node x task [--background] [--write|--read-only] [--model <m>] [prompt]\n")


def test_only_the_task_subcommand_itself_is_judged():
    assert read_only.judge_help(TASK_WORKER_FIRST) == (
        "flag", "node x task [--background] [--write|--read-only] [--model <m>] [prompt]")


def test_the_write_probe_shares_the_task_line(monkeypatch):
    from maestro.codex import companion

    transport = companion.Transport(["companion"], cwd="/", emit=lambda line: None)
    monkeypatch.setattr(transport, "call", lambda args: SimpleNamespace(rc=0, text=TASK_WORKER_FIRST, err_text=""))
    assert transport.write_probe() == ""  # `task-worker` offers no --write, and is not the task subcommand


class FakeTransport:
    def __init__(self, path, text, rc=0, err_text=""):
        self.prefix = ["node", str(path)]
        self.text, self.rc, self.calls, self.err_text = text, rc, 0, err_text

    def call(self, args):
        assert args == ["help"]
        self.calls += 1
        return SimpleNamespace(rc=self.rc, text=self.text, err_text=self.err_text)


def test_only_stdout_is_judged(companion, home):
    noise = "(node:123) Warning: sandbox_mode is experimental\n  node x task [--read-only] from a hook's log\n"
    transport = FakeTransport(companion, FIXED, err_text=noise)
    assert read_only.enforce(transport) == "" and transport.read_only_flag is False


INHERIT = "  node x task [--background] [--write] [prompt]\nsandbox_mode inherited\n"
FIXED = "  node x task [--background] [--write] [prompt]\n"


@pytest.fixture
def companion(tmp_path):
    path = tmp_path / "codex-companion.mjs"
    path.write_text("// companion\n")
    return path


def test_a_planted_cache_never_lets_an_inheriting_companion_through(companion, home):
    transport = FakeTransport(companion, INHERIT)
    assert read_only.enforce(transport)  # refused, and the verdict cached
    cache = home / ".maestro" / "companion-help.json"
    record = json.loads(cache.read_text())
    assert record["verdict"] == "inherits" and oct(cache.stat().st_mode & 0o777) == "0o600"
    forged = dict(record, verdict="fixed")
    for plant in ("symlink", "open mode", "garbage", "other file"):
        cache.unlink()
        if plant == "symlink":
            target = home / "elsewhere.json"
            target.write_text(json.dumps(forged))
            cache.symlink_to(target)
        elif plant == "open mode":
            cache.write_text(json.dumps(forged))
            cache.chmod(0o644)
        elif plant == "garbage":
            cache.write_text('{"verdict": "fixed", "li')
            cache.chmod(0o600)
        else:
            cache.write_text(json.dumps(dict(forged, ino=record["ino"] + 1)))
            cache.chmod(0o600)
        before = transport.calls
        assert read_only.enforce(transport), plant
        assert transport.calls == before + 1, plant


def test_an_unanswered_probe_decides_nothing_and_is_not_cached(companion, home):
    transport = FakeTransport(companion, "", rc=1)
    assert read_only.enforce(transport) == "" and transport.read_only_flag is False
    assert not (home / ".maestro" / "companion-help.json").exists()
    transport = FakeTransport(companion, FIXED)
    assert read_only.enforce(transport) == "" and transport.read_only_flag is False
    assert read_only.enforce(transport) == "" and transport.calls == 1


@pytest.mark.source_only
def test_every_read_turn_is_checked_whatever_verb_dispatches_it(repo, fake, home, monkeypatch):
    """The check lives in the read dispatch path (workflow/read_turn), not in each verb: a read turn run
    directly, as a future read verb would, is refused all the same, and launches nothing."""
    from maestro.workflow.read_context import ReadContext
    from maestro.workflow.read_turn import ReadRouting

    fake.set(turn_seconds=0, final_message=REPLY, help_sandbox="inherit")
    monkeypatch.chdir(repo)
    ctx = ReadContext("TEST")
    outcome = ctx.read_turn(ReadRouting("fake-small", "low", "low"), 5, 0.05).run("where is main?")
    assert outcome.rc == 11 and "no --read-only" in outcome.refused and outcome.job == ""
    assert fake.calls("task") == []
