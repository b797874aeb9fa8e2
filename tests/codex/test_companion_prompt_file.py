"""Issue 17 item 1, in-process: `Transport.launch` hands a large or blank prompt over in a new 0600 file
inside the private `~/.maestro/prompts` (paths.private_prompts_dir) and removes it after the call,
whatever the call did. (The end-to-end checks through `loop`/`watchdog` are in
tests/commands/test_prompt_files.py.)"""

import os
import stat

import pytest

from maestro import paths
from maestro.codex.companion import ARGV_PROMPT_LIMIT, Transport, write_prompt_file
from maestro.errors import Exit, MaestroError
from maestro.util.process import Completed

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)


def prompts_dir(home):
    return home / ".maestro" / "prompts"


def transport_seeing(answer):
    """A Transport whose `call` records (argv, the prompt file's modes and bytes at call time) and then
    returns `answer(...)` (or raises it)."""
    seen = []

    def call(args, **_):
        args = list(args)
        entry = {"args": args}
        if "--prompt-file" in args:
            path = args[args.index("--prompt-file") + 1]
            with open(path, "rb") as handle:
                entry.update(path=path, data=handle.read(), mode=stat.S_IMODE(os.lstat(path).st_mode),
                             dir_mode=stat.S_IMODE(os.lstat(os.path.dirname(path)).st_mode))
        seen.append(entry)
        return answer()

    transport = Transport(["true"], cwd=os.getcwd(), emit=lambda line: None)
    transport.call = call
    return transport, seen


def ok():
    return Completed(0, b"started task-abc1\n", b"")


@pytest.mark.parametrize("prompt", ["  \n\t", "x" * (ARGV_PROMPT_LIMIT + 1)])
def test_large_or_blank_prompt_travels_in_a_private_file_that_is_gone_afterwards(home, prompt):
    transport, seen = transport_seeing(ok)
    assert transport.launch(prompt, write=True, model="m", effort="") == (0, "task-abc1", "started task-abc1")
    entry = seen[0]
    assert os.path.dirname(entry["path"]) == str(prompts_dir(home))
    assert (entry["mode"], entry["dir_mode"], entry["data"]) == (0o600, 0o700, prompt.encode())
    assert not os.path.lexists(entry["path"]) and os.listdir(prompts_dir(home)) == []


def test_a_small_prompt_stays_in_argv_and_creates_nothing(home):
    transport, seen = transport_seeing(ok)
    transport.launch("do X", write=False, model="m", effort="")
    assert seen[0]["args"][-2:] == ["--", "do X"] and not (home / ".maestro").exists()


@pytest.mark.parametrize("answer", [
    lambda: Completed(1, b"", b"boom"),           # the companion refused
    lambda: Completed(125, b"", b"", timed_out=True),  # the call timed out (Transport.call answers 125)
])
def test_the_file_is_removed_when_the_call_fails(home, answer):
    transport, seen = transport_seeing(answer)
    rc, job, _ = transport.launch(" ", write=True, model="m", effort="")
    assert (rc, job) == (3, "")
    assert not os.path.lexists(seen[0]["path"]) and os.listdir(prompts_dir(home)) == []


def test_the_file_is_removed_when_the_call_raises(home):
    def boom():
        raise KeyboardInterrupt

    transport, seen = transport_seeing(boom)
    with pytest.raises(KeyboardInterrupt):
        transport.launch(" ", write=True, model="m", effort="")
    assert not os.path.lexists(seen[0]["path"]) and os.listdir(prompts_dir(home)) == []


def test_a_prompts_dir_that_cannot_be_trusted_means_no_launch(home, tmp_path):
    (home / ".maestro").mkdir(mode=0o700)
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    prompts_dir(home).symlink_to(tmp_path / "elsewhere")
    transport, seen = transport_seeing(ok)
    rc, job, output = transport.launch(" ", write=True, model="m", effort="")
    assert (rc, job, seen) == (3, "", [])
    assert output.startswith(f"could not write the prompt file: {prompts_dir(home)} is a symlink")
    assert os.listdir(tmp_path / "elsewhere") == []


def test_modes_do_not_depend_on_the_callers_umask(home):
    previous = os.umask(0)
    try:
        path = write_prompt_file(b"x" * 10)
    finally:
        os.umask(previous)
    try:
        assert os.path.dirname(path) == paths.private_prompts_dir() == str(prompts_dir(home))
        assert stat.S_IMODE(os.lstat(path).st_mode) == 0o600
        assert stat.S_IMODE(os.lstat(prompts_dir(home)).st_mode) == 0o700
        assert stat.S_IMODE(os.lstat(home / ".maestro").st_mode) == 0o700
    finally:
        os.unlink(path)


def test_names_are_never_reused(home):
    first, second = write_prompt_file(b"a"), write_prompt_file(b"b")
    try:
        assert first != second
    finally:
        os.unlink(first)
        os.unlink(second)


@pytest.mark.parametrize("make", ["file", "symlink-to-own-dir", "maestro-dir-symlink"])
def test_private_prompts_dir_refuses_what_is_not_a_plain_directory_of_ours(home, tmp_path, make):
    (tmp_path / "mine").mkdir(mode=0o700)
    if make == "maestro-dir-symlink":
        (home / ".maestro").symlink_to(tmp_path / "mine")
        culprit = home / ".maestro"
    else:
        (home / ".maestro").mkdir(mode=0o700)
        culprit = prompts_dir(home)
        if make == "file":
            culprit.write_text("")
        else:
            culprit.symlink_to(tmp_path / "mine")
    with pytest.raises(MaestroError) as caught:
        paths.private_prompts_dir()
    assert caught.value.code == Exit.USAGE
    assert caught.value.message.startswith(f"{culprit} {'is not a directory' if make == 'file' else 'is a symlink'};")
    assert os.listdir(tmp_path / "mine") == []


@pytest.mark.skipif(os.geteuid() != 0, reason="handing a directory to another user needs root")
@pytest.mark.parametrize("which", ["maestro", "prompts"])
def test_private_prompts_dir_refuses_a_directory_owned_by_someone_else(home, which):
    prompts_dir(home).mkdir(parents=True, mode=0o700)
    culprit = home / ".maestro" if which == "maestro" else prompts_dir(home)
    os.chown(culprit, 12345, 12345)
    before = os.lstat(culprit)
    with pytest.raises(MaestroError) as caught:
        paths.private_prompts_dir()
    assert caught.value.message.startswith(f"{culprit} is owned by another user (uid 12345);")
    after = os.lstat(culprit)  # refused, not "repaired": it is not ours to change
    assert (after.st_mode, after.st_uid) == (before.st_mode, 12345)


def test_an_open_directory_of_ours_is_closed(home):
    prompts_dir(home).mkdir(parents=True)
    os.chmod(home / ".maestro", 0o755)
    os.chmod(prompts_dir(home), 0o775)
    assert paths.private_prompts_dir() == str(prompts_dir(home))
    assert stat.S_IMODE(os.lstat(home / ".maestro").st_mode) == 0o700
    assert stat.S_IMODE(os.lstat(prompts_dir(home)).st_mode) == 0o700
