"""`maestro gate` on Bash payloads: the labelled corpus (issue 14, part 1), 0 misses and 0 false blocks.

Every entry of tests/hooks/bash_corpus.py goes through `maestro("gate", stdin=payload)`, so the same
file runs against the source tree and, with MAESTRO_TEST_TARGET=pyz, the built archive. Expectations
come from the policy, not from the implementation. HOME is a real directory outside every scratch
root, so `~/src/x.py` is source and `~/Desktop/x.py` is scratch.
"""

import os
import re

import pytest

from testing import grants
from testing.bash_corpus import (
    ALLOW, BLOCK, CHANNELS, CORPUS, GROUPS, REAL_FS_CORPUS, SID, UNKNOWN_VARIABLES, bash_payload, describe,
    is_allowed, is_policy_block, make_real_repo,
)
from testing.paths import TARGET

SUBAGENT_NOTE = 'A subagent never inherits "edit it yourself"; only the main session can hold that grant.\n'


@pytest.fixture
def corpus_home(outside_tmp, monkeypatch):
    """HOME outside /tmp (so only the policy's own rules make ~ paths free) and the corpus's unknown variables unset."""
    home = outside_tmp / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in UNKNOWN_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return home


def make_flag(home, sid=SID):
    """The user's "edit it yourself" grant for `sid`."""
    return grants.make_flag(home, sid)


def check(result, command, expect, must):
    if expect == ALLOW:
        assert is_allowed(result), f"false block: {command!r} → {describe(result)}"
    else:
        assert is_policy_block(result, must), f"miss: {command!r} (must name {must!r}) → {describe(result)}"


def _id(entry_id, command):
    text = re.sub(r"\s+", " ", command).strip()
    return f"{entry_id}: {text[:48]}"


# ---------------------------------------------------------------------------------------- the corpus


def _judged_by_the_archive(tmp_path_factory, payloads, grant=False):
    """Against the archive: the payloads judged by the archive's gate in one process
    (tests/testing/archive_batch.py), under one HOME of the kind `corpus_home` makes (with the main
    session's grant when `grant`)."""
    import shutil
    import tempfile
    from pathlib import Path

    from testing import archive_batch

    outside = tempfile.mkdtemp(prefix="maestro-test-", dir=os.environ.get("MAESTRO_TEST_OUTSIDE_BASE", "/var/tmp"))
    try:
        home = Path(outside) / "home"
        home.mkdir()
        if grant:
            make_flag(home)
        scratch = tmp_path_factory.mktemp("corpus-tmp")
        cleared = {name: os.environ.pop(name) for name in UNKNOWN_VARIABLES if name in os.environ}
        try:
            return archive_batch.judge_all("gate", payloads, env={"HOME": str(home), "TMPDIR": str(scratch)},
                                           cwd=str(scratch))
        finally:
            os.environ.update(cleared)
    finally:
        shutil.rmtree(outside, ignore_errors=True)


@pytest.fixture(scope="session")
def archive_judgements(tmp_path_factory):
    results = _judged_by_the_archive(tmp_path_factory, [bash_payload(entry[1], cwd=entry[4]) for entry in CORPUS])
    return dict(zip((entry[0] for entry in CORPUS), results))


@pytest.mark.parametrize(("entry_id", "command", "expect", "must", "cwd"), CORPUS,
                         ids=[_id(entry[0], entry[1]) for entry in CORPUS])
def test_corpus_command_is_judged_by_the_policy(request, corpus_home, entry_id, command, expect, must, cwd):
    if TARGET == "pyz":
        result = request.getfixturevalue("archive_judgements")[entry_id]
    else:
        result = request.getfixturevalue("maestro")("gate", stdin=bash_payload(command, cwd=cwd))
    check(result, command, expect, must)


@pytest.fixture
def real_repo(corpus_home, outside_tmp):
    from pathlib import Path

    return make_real_repo(outside_tmp, Path(os.environ["TMPDIR"]))


def _snapshot(root):
    state = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(directory, name)
            st = os.lstat(path)
            state[path] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return state


@pytest.mark.parametrize(("command", "expect", "must", "_cwd"), REAL_FS_CORPUS,
                         ids=[_id(f"real-fs-{i:02d}", e[0]) for i, e in enumerate(REAL_FS_CORPUS)])
def test_real_files_command_is_judged_by_the_policy(maestro, real_repo, command, expect, must, _cwd):
    command = command.replace("{tmpdir}", os.environ["TMPDIR"])
    before = _snapshot(real_repo)
    check(maestro("gate", stdin=bash_payload(command, cwd=str(real_repo))), command, expect, must)
    assert _snapshot(real_repo) == before, "the gate must judge the command, never run it"


# ------------------------------------------------------------------------------------------- grants

BLOCKED = [entry for entry in CORPUS if entry[2] == BLOCK]


@pytest.fixture(scope="session")
def archive_grant_judgements(tmp_path_factory):
    payloads = []
    for _id_, command, _expect, _must, cwd in BLOCKED:
        payloads += [bash_payload(command, cwd=cwd), bash_payload(command, cwd=cwd, agent_id="agent-7")]
    results = _judged_by_the_archive(tmp_path_factory, payloads, grant=True)
    return {entry[0]: (results[2 * i], results[2 * i + 1]) for i, entry in enumerate(BLOCKED)}


@pytest.mark.parametrize(("entry_id", "command", "expect", "must", "cwd"), BLOCKED,
                         ids=[_id(entry[0], entry[1]) for entry in BLOCKED])
def test_grant_opens_a_blocked_command_for_the_main_session_only(request, corpus_home, entry_id, command, expect,
                                                                  must, cwd):
    if TARGET == "pyz":
        main, sub = request.getfixturevalue("archive_grant_judgements")[entry_id]
    else:
        maestro = request.getfixturevalue("maestro")
        make_flag(corpus_home)
        main = maestro("gate", stdin=bash_payload(command, cwd=cwd))
        sub = maestro("gate", stdin=bash_payload(command, cwd=cwd, agent_id="agent-7"))
    assert is_allowed(main), f"granted main session still blocked: {command!r} → {describe(main)}"
    assert is_policy_block(sub, must), f"subagent inherited the grant: {command!r} → {describe(sub)}"
    assert SUBAGENT_NOTE in sub.err, describe(sub)


def test_grant_of_another_session_does_not_open_a_bash_write(maestro, corpus_home):
    make_flag(corpus_home, sid="another-session")
    result = maestro("gate", stdin=bash_payload("sed -i 's/a/b/' src/app.py"))
    assert is_policy_block(result, "src/app.py"), describe(result)


# ------------------------------------------------------------------------------------------ summary


def test_corpus_is_large_balanced_and_covers_every_channel_of_the_issue():
    entries = CORPUS + [(f"real-fs-{i}", e[0], e[1], e[2], "real") for i, e in enumerate(REAL_FS_CORPUS)]
    blocks = [e for e in entries if e[2] == BLOCK]
    allows = [e for e in entries if e[2] == ALLOW]
    assert len(entries) >= 300 and len(blocks) >= 100 and len(allows) >= 100, (len(entries), len(blocks), len(allows))
    assert all(e[2] in (ALLOW, BLOCK) for e in entries)
    assert all(entries_of_group for entries_of_group in GROUPS.values())
    keys = [(e[1], e[4]) for e in entries]
    assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)
    blocked_commands = [e[1] for e in blocks]
    missing = [name for name, pattern in CHANNELS.items()
               if not any(re.search(pattern, command, re.M) for command in blocked_commands)]
    assert missing == [], f"channels with no blocked command in the corpus: {missing}"
