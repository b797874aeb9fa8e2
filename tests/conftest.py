"""Shared fixtures. No test touches the real home: HOME and every maestro path point into tmp_path.

The same tests run against two targets (MAESTRO_TEST_TARGET, see tests/testing/paths.py):
  source (default) — `maestro.cli.main(argv)` in-process, so coverage sees it;
  pyz              — the built archive as a real process: python3 -I -S dist/maestro.pyz …

Helpers that are not fixtures live in the `tests/testing/` package. The fixtures are here, at the top, because
several directories use them: `repo`/`fake` (the workflow verbs: tests/commands, tests/workflow) and the memory
fixtures (tests/memory/*, tests/commands/memory).
"""

import io
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from testing import in_process
from testing.paths import FAKE_COMPANION, PYZ, ROOT, TARGET, launch_count, note_launch
from testing.companion import FakeCompanion
from testing.git import default_repo
from testing.memory import Clock
from testing.processes import reap_started_processes

CLEARED_ENV = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "CLAUDE_ENV_FILE", "CLAUDE_PROJECT_DIR", "MAESTRO_COMPANION",
               "MAESTRO_SESSION_ID", "MAESTRO_SHIV_EXTRACT", "CODEX_COMPANION_SESSION_ID", "CLAUDE_PLUGIN_DATA",
               "MAESTRO_MEMORY_INDEX", "MAESTRO_RECALL_BUDGET_SEC", "MAESTRO_QUEUED_STALL_SEC")


@dataclass
class Result:
    rc: int
    out: str
    err: str


def pytest_collection_modifyitems(config, items):
    """Against the archive, skip the tests that never run it (tests/testing/in_process.py): the source run has them."""
    if TARGET != "pyz":
        return
    kept = [item for item in items if not item.get_closest_marker(in_process.MARKER)]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if item.get_closest_marker(in_process.MARKER)])
        items[:] = kept


_MODULE_TEXT = {}


@pytest.fixture(autouse=True)
def in_process_tests_stay_in_process(request):
    """A test marked `in_process` that reaches the archive would be lost from the pyz run: fail it here."""
    marked = request.node.get_closest_marker(in_process.MARKER)
    before = launch_count()
    yield
    if marked and TARGET != "pyz":
        path = request.node.path
        text = _MODULE_TEXT.setdefault(path, path.read_text(encoding="utf-8"))
        why = in_process.violation(text, launch_count() - before, request.node.fixturenames)
        if why:
            pytest.fail(f"marked in_process, but {why}: remove the marker from {path.name}", pytrace=False)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    for name in CLEARED_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return home


@pytest.fixture
def home(isolated_home):
    return isolated_home


@pytest.fixture(scope="session")
def built_pyz(tmp_path_factory):
    """An archive to install: the one under test for the pyz target, a fresh build otherwise — or the archive
    MAESTRO_TEST_BUILT_PYZ names, which `make test` sets to the dist/maestro.pyz it has just built from this very
    tree (builds are byte-identical, tests/test_build.py): each source run then skips a ~3 s build."""
    if TARGET == "pyz":
        assert PYZ.is_file(), f"build the archive first: {PYZ}"
        return PYZ
    prebuilt = os.environ.get("MAESTRO_TEST_BUILT_PYZ")
    if prebuilt:
        assert Path(prebuilt).is_file(), f"MAESTRO_TEST_BUILT_PYZ names no archive: {prebuilt}"
        return Path(prebuilt).resolve()
    sys.path.insert(0, str(ROOT))
    import build

    return build.build(tmp_path_factory.mktemp("build") / "maestro.pyz")


class Runner:
    """Runs `maestro <args>` against the selected target and returns a Result."""

    def __init__(self, monkeypatch, built_pyz):
        self._monkeypatch = monkeypatch
        self._built_pyz = built_pyz
        self.target = TARGET

    def __call__(self, *args, stdin=b"", env=None, cwd=None) -> Result:
        if isinstance(stdin, str):
            stdin = stdin.encode("utf-8")
        note_launch()
        if TARGET == "pyz":
            full_env = dict(os.environ, **(env or {}))
            proc = subprocess.run(
                [*archive_entry(args[0] if args else ""), *args], input=stdin, capture_output=True,
                env=full_env, cwd=cwd, timeout=60,
            )
            return Result(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))
        return self.in_process(*args, stdin=stdin, env=env, cwd=cwd)

    def in_process(self, *args, stdin=b"", env=None, cwd=None) -> Result:
        from maestro import cli, runtime
        from maestro.util import progress

        import signal

        saved = {sig: signal.getsignal(sig) for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM)}
        with pytest.MonkeyPatch.context() as mp:
            for key, value in (env or {}).items():
                mp.setenv(key, value)
            if cwd:
                mp.chdir(cwd)
            mp.setattr(runtime, "archive_path", lambda: str(self._built_pyz))
            mp.setattr(progress, "_fd", progress.STDOUT)
            mp.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
            out, err = io.StringIO(), io.StringIO()
            mp.setattr(sys, "stdout", out)
            mp.setattr(sys, "stderr", err)
            try:
                rc = cli.main(list(args))
            finally:
                for sig, handler in saved.items():
                    signal.signal(sig, handler)
        return Result(rc, out.getvalue(), err.getvalue())


def archive_entry(verb: str) -> list:
    """How the archive is started for `verb`, as it is in real use: a hook with the argv install writes
    into settings.json (the `maestro_hook` entry, no runpy), every other verb as a user does
    (`python3 maestro.pyz`, the launcher). The caller appends the verb and its arguments."""
    from maestro.install import settings

    if verb in settings.OUR_VERBS:
        return settings.run_argv(sys.executable, str(PYZ), verb)[:-1]
    return [sys.executable, "-I", "-S", str(PYZ)]


@pytest.fixture
def maestro(monkeypatch, built_pyz):
    return Runner(monkeypatch, built_pyz)


@pytest.fixture
def outside_tmp():
    """A real directory outside every scratch root (/tmp, TMPDIR), for gate tests on real files."""
    import shutil
    import tempfile

    base = os.environ.get("MAESTRO_TEST_OUTSIDE_BASE", "/var/tmp")
    path = Path(tempfile.mkdtemp(prefix="maestro-test-", dir=base)).resolve()
    yield path
    shutil.rmtree(path, ignore_errors=True)


# -- the workflow verbs: a committed repository as the working directory, the fake companion, no leftovers --


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A committed git repository (app.py on main) that is the working directory."""
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    path = default_repo(tmp_path / "repo")  # git_repo's defaults, copied from one built per test process
    monkeypatch.chdir(path)
    return path


@pytest.fixture
def fake(tmp_path, monkeypatch, home):
    companion = FakeCompanion(tmp_path)
    monkeypatch.setenv("MAESTRO_COMPANION", str(FAKE_COMPANION))
    monkeypatch.setenv("FAKE_COMPANION_STATE", str(companion.dir / "state"))
    monkeypatch.setenv("FAKE_COMPANION_KNOBS", str(companion.knobs_path))
    monkeypatch.setenv("FAKE_COMPANION_CALL_LOG", str(companion.call_log))
    monkeypatch.setenv("MAESTRO_RESULT_RETRY_SEC", "0.05")
    monkeypatch.setenv("MAESTRO_TERM_GRACE_SEC", "0.2")
    codex = home / ".codex"
    codex.mkdir(exist_ok=True)
    (codex / "config.toml").write_text('model = "gpt-test"\nmodel_reasoning_effort = "high"\n')
    (codex / "maestro-impl-effort").write_text("medium\n")
    return companion


@pytest.fixture(autouse=True)
def reap_started():
    """A test that fails mid-way must not leave a maestro process (or its pipes) behind (testing.processes.start)."""
    yield
    reap_started_processes()


# -- the memory store ------------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def clean_memory_env(monkeypatch):
    """No test may read a developer's MAESTRO_MEMORY_DIR or lock knob."""
    monkeypatch.delenv("MAESTRO_MEMORY_DIR", raising=False)
    monkeypatch.delenv("MAESTRO_MEMORY_LOCK_TIMEOUT_SEC", raising=False)


@pytest.fixture
def mem_root(home) -> Path:
    return home / ".maestro" / "memory"


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "project"
    path.mkdir()
    return path
