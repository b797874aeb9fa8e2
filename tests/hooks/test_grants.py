"""Direct-edit grants that mean what the user said and no more (issue 14 §4–§5).

- A grant expires MAESTRO_GRANT_TTL_SEC seconds (default 7200) after it was set, judged by the
  flag's mtime; a future mtime is no grant. Setting refreshes the mtime; an acknowledgement keeps
  the flag untouched, so its clock keeps running.
- Without a usable HOME (unset, empty, relative, `/`, missing, not a directory) there are no grants:
  the gate honours none and inject refuses to set one (exit 2, fail closed).
- inject revokes first, then decides: a hook killed while deciding leaves no grant behind.
- Parsing is linear in the prompt's size.
"""

import json
import os
import time

from testing import grants
import pytest

SID = "grantsession-1"
OTHER = "grantsession-2"
REPO = "/nonexistent-maestro/repo"
DEFAULT_TTL = 7200
NOT_SAFE = (
    "ORCHESTRATOR INJECT: could not create a safe authorization marker; direct-edit authorization revoked.\n"
)


def flag_path(home, sid=SID):
    return grants.flag_path(home, sid)


def make_flag(home, sid=SID, age=0.0):
    """A valid-looking flag whose mtime is `age` seconds ago (negative: in the future)."""
    return grants.make_flag(home, sid, age=age)


def inject(maestro, prompt, sid=SID, env=None):
    return maestro("inject", stdin=json.dumps({"session_id": sid, "prompt": prompt}), env=env)


def gate_allows(maestro, sid=SID, env=None):
    body = {
        "session_id": sid, "cwd": REPO, "hook_event_name": "PreToolUse", "tool_name": "Edit",
        "tool_input": {"file_path": f"{REPO}/src/app.py", "old_string": "a", "new_string": "b"},
    }
    result = maestro("gate", stdin=json.dumps(body), env=env)
    assert result.rc in (0, 2), result
    return result.rc == 0


# ------------------------------------------------------------------------------------------ expiry


@pytest.mark.parametrize("age, honoured", [
    (0, True), (60, True), (DEFAULT_TTL - 120, True), (DEFAULT_TTL + 120, False), (10 * DEFAULT_TTL, False),
    (-60, False), (-3600, False), (-10 * 365 * 86400, False),
])
def test_a_grant_is_honoured_only_within_its_ttl_and_never_from_the_future(maestro, home, age, honoured):
    make_flag(home, age=age)
    assert gate_allows(maestro) is honoured


@pytest.mark.parametrize("ttl, age, honoured", [
    ("60", 30, True), ("60", 120, False), ("3600", 3000, True), ("3600", 4000, False),
    (" 60 ", 120, False), ("86400", DEFAULT_TTL + 120, True),
])
def test_the_ttl_comes_from_the_environment(maestro, home, ttl, age, honoured):
    make_flag(home, age=age)
    assert gate_allows(maestro, env={"MAESTRO_GRANT_TTL_SEC": ttl}) is honoured


@pytest.mark.parametrize("ttl", ["", "0", "-5", "-0", "1.5", "1e3", "abc", "60s", "٣٠", "9" * 13, "0x10", "+60"])
def test_an_invalid_ttl_means_the_default(maestro, home, ttl):
    make_flag(home, age=DEFAULT_TTL - 300)
    assert gate_allows(maestro, env={"MAESTRO_GRANT_TTL_SEC": ttl})
    make_flag(home, age=DEFAULT_TTL + 300)
    assert not gate_allows(maestro, env={"MAESTRO_GRANT_TTL_SEC": ttl})


@pytest.mark.parametrize("raw, expected", [
    (None, 7200), ("", 7200), ("1", 1), ("60", 60), (" 60\n", 60), ("0", 7200), ("-1", 7200), ("1.0", 7200),
    ("abc", 7200), ("٣", 7200), ("999999999999", 999999999999), ("9999999999999", 7200),
])
def test_grant_ttl_parsing(monkeypatch, raw, expected):
    from maestro import direct_edit as flags

    if raw is None:
        monkeypatch.delenv("MAESTRO_GRANT_TTL_SEC", raising=False)
    else:
        monkeypatch.setenv("MAESTRO_GRANT_TTL_SEC", raw)
    assert flags.grant_ttl_sec() == expected


def test_setting_a_grant_refreshes_an_expired_flag(maestro, home):
    flag = make_flag(home, age=DEFAULT_TTL + 600)
    assert not gate_allows(maestro)
    before = time.time()
    assert inject(maestro, "edit it yourself").rc == 0
    assert os.stat(flag).st_mtime >= before - 2
    assert gate_allows(maestro)


def test_setting_a_grant_replaces_a_future_dated_flag(maestro, home):
    flag = make_flag(home, age=-86400)
    inject(maestro, "edit it yourself")
    assert abs(os.stat(flag).st_mtime - time.time()) < 60
    assert gate_allows(maestro)


def test_an_acknowledgement_keeps_a_grant_without_extending_it(maestro, home):
    flag = make_flag(home, age=600)
    mtime = os.stat(flag).st_mtime
    assert inject(maestro, "ok").rc == 0
    assert os.stat(flag).st_mtime == mtime
    assert gate_allows(maestro)


def test_an_acknowledgement_cannot_revive_an_expired_grant(maestro, home):
    flag = make_flag(home, age=DEFAULT_TTL + 600)
    mtime = os.stat(flag).st_mtime
    for prompt in ("ok", "yes", "proceed", "devam"):
        assert inject(maestro, prompt).rc == 0
    assert os.stat(flag).st_mtime == mtime
    assert not gate_allows(maestro)


def test_is_fresh_boundaries():
    from maestro import direct_edit as flags

    now = 1_000_000.0
    assert flags.is_fresh(now, now, 60)
    assert flags.is_fresh(now - 60, now, 60)
    assert not flags.is_fresh(now - 60.5, now, 60)
    assert flags.is_fresh(now + 0.5, now, 60)  # timestamp granularity
    assert not flags.is_fresh(now + 2, now, 60)


# ------------------------------------------------------------------------------------------- HOME


@pytest.mark.parametrize("value", ["", "/", "//", "/..", "relative/home", ".", "/nonexistent-maestro-home"])
def test_an_unusable_home_allows_no_grants(maestro, home, value):
    make_flag(home)  # a grant in the real (test) home must not be reachable through a bad HOME
    env = {"HOME": value}
    assert not gate_allows(maestro, env=env)
    result = inject(maestro, "edit it yourself", env=env)
    assert (result.rc, result.out, result.err) == (2, "", NOT_SAFE)
    assert not gate_allows(maestro, env=env)


def test_a_relative_home_never_creates_or_honours_a_grant_under_the_working_directory(maestro, tmp_path):
    relative_home = tmp_path / "relhome"
    relative_home.mkdir()
    make_flag(relative_home)
    env = {"HOME": "relhome"}
    assert not gate_allows(maestro, env=env)
    os.unlink(flag_path(relative_home))
    assert inject(maestro, "edit it yourself", env=env).rc == 2
    assert not os.path.lexists(flag_path(relative_home))


def test_a_home_that_resolves_to_root_allows_no_grants(maestro, tmp_path):
    link = tmp_path / "root-link"
    link.symlink_to("/")
    env = {"HOME": str(link)}
    assert not gate_allows(maestro, env=env)
    assert inject(maestro, "edit it yourself", env=env).rc == 2


def test_a_home_that_is_a_file_allows_no_grants(maestro, tmp_path):
    not_a_dir = tmp_path / "home-file"
    not_a_dir.write_text("x\n")
    env = {"HOME": str(not_a_dir)}
    assert not gate_allows(maestro, env=env)
    assert inject(maestro, "edit it yourself", env=env).rc == 2


def test_an_unset_home_allows_no_grants(maestro, monkeypatch):
    monkeypatch.delenv("HOME")
    assert not gate_allows(maestro)
    result = inject(maestro, "edit it yourself")
    assert (result.rc, result.err) == (2, NOT_SAFE)
    assert not gate_allows(maestro)


@pytest.mark.parametrize("value", [None, "", "/", "rel", "/nonexistent-maestro-home", "/a\0b"])
def test_grant_home_refuses_unusable_values(monkeypatch, value):
    from maestro import paths
    from maestro import direct_edit as flags

    if value is None:
        monkeypatch.delenv("HOME")
    else:
        monkeypatch.setattr(os, "environ", {**os.environ, "HOME": value})
    assert paths.grant_home() is None
    assert flags.flag_is_valid(SID) is False
    with pytest.raises(OSError):
        flags.set_flag(SID)
    assert flags.clear_flag(SID) is False  # nothing to revoke, nothing touched
    assert flags.clear_all_flags() is True
    assert flags.prune_expired() is True


def test_grant_home_accepts_a_real_home_with_or_without_a_trailing_slash(monkeypatch, home):
    from maestro import paths

    assert paths.grant_home() == str(home)
    monkeypatch.setenv("HOME", str(home) + "/")
    assert paths.grant_home() == str(home)


# ----------------------------------------------------------------------------- revoke, then decide


class _Killed(BaseException):
    """Stands in for the hook being killed mid-decision: no handler in inject can run."""


@pytest.mark.source_only
def test_a_decision_that_never_finishes_leaves_no_old_grant(source_maestro, home, monkeypatch):
    from maestro.hooks import directive

    def killed(prompt):
        raise _Killed()

    make_flag(home)
    make_flag(home, OTHER)
    monkeypatch.setattr(directive, "opens_gate", killed)
    with pytest.raises(_Killed):
        inject(source_maestro, "edit it yourself, and also the rest of this long prompt")
    assert not os.path.lexists(flag_path(home))  # revoked before the decision started
    assert flag_path(home, OTHER).read_bytes() == b"1\n"  # not by the fail-closed sweep
    assert not gate_allows(source_maestro)


@pytest.mark.source_only
def test_an_interrupted_decision_leaves_no_old_grant(source_maestro, home, monkeypatch):
    from maestro.hooks import directive

    def interrupted(prompt):
        raise KeyboardInterrupt

    make_flag(home)
    make_flag(home, OTHER)
    monkeypatch.setattr(directive, "opens_gate", interrupted)
    result = inject(source_maestro, "edit it yourself")
    assert result.rc == 4
    assert not os.path.lexists(flag_path(home))
    assert flag_path(home, OTHER).read_bytes() == b"1\n"


@pytest.mark.source_only
def test_a_crashing_decision_fails_closed(source_maestro, home, monkeypatch):
    from maestro.hooks import directive

    def crash(prompt):
        raise RuntimeError("grants-test-sentinel")

    make_flag(home)
    monkeypatch.setattr(directive, "opens_gate", crash)
    result = inject(source_maestro, "edit it yourself")
    assert (result.rc, result.err) == (2, "ORCHESTRATOR INJECT: internal error; direct-edit authorization revoked.\n")
    assert not os.path.lexists(flag_path(home))


@pytest.mark.source_only
def test_an_acknowledgement_is_decided_without_parsing_the_prompt(source_maestro, home, monkeypatch):
    from maestro.hooks import directive

    def never(prompt):
        raise AssertionError("opens_gate must not run for an acknowledgement")

    make_flag(home)
    monkeypatch.setattr(directive, "opens_gate", never)
    assert inject(source_maestro, "ok").rc == 0
    assert gate_allows(source_maestro)


def test_a_planted_symlink_is_revoked_and_no_grant_is_set_over_it(maestro, home):
    victim = home / "victim"
    victim.write_text("keep\n")
    make_flag(home)
    flag = flag_path(home)
    flag.unlink()
    flag.symlink_to(victim)
    result = inject(maestro, "edit it yourself")
    assert (result.rc, result.err) == (2, NOT_SAFE)
    assert victim.read_text() == "keep\n"
    assert not os.path.lexists(flag)
    assert inject(maestro, "edit it yourself").rc == 0  # the trap is gone: the next grant works
    assert gate_allows(maestro)


# ------------------------------------------------------------------------------------- linear time


def _best_of(runs, func, arg):
    """The least CPU time this process spent on `func(arg)`: CPU time, not wall time, so a busy machine
    (another process on every core) does not stretch one measurement more than the other."""
    best = float("inf")
    for _ in range(runs):
        started = time.process_time()
        func(arg)
        best = min(best, time.process_time() - started)
    return best


SHAPES = {
    "prose": "lorem ipsum dolor sit amet, consectetur adipiscing elit. ",
    "guarded directives": "don't edit it yourself. ",
    "one long guarded clause": "don't edit it yourself ",
    "unclosed quotes": ' "a',
    "apostrophes": " 'a",
    "newlines": "\n",
    "dots": ".a",
    "fences": "```\n",
    "block quotes": "> x\n",
    "negations at line ends": "never\n",
    "questions": "why\n",
    "long word": "a",
    "extensions": "x.md ",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.in_process
def test_prompt_parsing_is_linear_in_the_prompt_size(shape):
    """Compares 256 KiB with 2 MiB of the same shape: linear costs about 8x, quadratic 64x. The
    bound (24x) leaves room for a loaded machine; the best of three runs damps noise."""
    from maestro.hooks import directive

    def answer(text):
        directive.opens_gate(text)
        directive.has_work_signal(text)
        directive.asks_model_setup(text)

    unit = SHAPES[shape]
    small = unit * (256 * 1024 // len(unit)) + "\nedit it yourself"
    large = unit * (2 * 1024 * 1024 // len(unit)) + "\nedit it yourself"
    small_time = max(_best_of(3, answer, small), 1e-4)
    large_time = _best_of(3, answer, large)
    assert large_time / small_time < 24, (shape, small_time, large_time)


@pytest.mark.timeout(30)
def test_a_prompt_that_fills_the_payload_cap_is_answered(maestro, home):
    """The payload cap is 8 MiB (maestro/util/fastjson.py); a prompt just under it still gets a
    decision (here: a grant at its very end)."""
    filler = "2024-05-01 12:00:00 INFO worker.py:42 processed batch 17 of 400, ok\n"
    encoded = len(json.dumps(filler)) - 2  # the newline is two characters in JSON
    prompt = filler * ((8 * 1024 * 1024 - 4096) // encoded) + "Codex is down. Edit it yourself."
    assert 8 * 1024 * 1024 - 4096 < len(json.dumps({"session_id": SID, "prompt": prompt})) < 8 * 1024 * 1024
    result = inject(maestro, prompt)
    assert result.rc == 0, result.err
    assert gate_allows(maestro)
    make_flag(home)
    assert inject(maestro, prompt.replace("Edit it yourself", "Don't edit it yourself")).rc == 0
    assert not gate_allows(maestro)


def test_more_directives_than_the_cap_grant_nothing():
    from maestro.hooks import directive

    assert directive.opens_gate("don't edit it yourself. " * 100 + "edit it yourself")
    flood = "don't edit it yourself. " * directive.MAX_DIRECTIVES + "edit it yourself"
    assert directive.opens_gate(flood) is False
