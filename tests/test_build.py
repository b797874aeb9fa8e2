"""build.py: reproducible archive, payload inside, stdlib-only refusal."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from testing import ROOT

import build

pytestmark = pytest.mark.timeout(120)


@pytest.mark.source_only  # two builds from the sources, nothing of the archive under test: the pyz run would repeat it
def test_same_sources_build_byte_identical_archives(tmp_path):
    first = build.build(tmp_path / "a.pyz").read_bytes()
    second = build.build(tmp_path / "b.pyz").read_bytes()
    assert first == second


def test_archive_carries_rules_skills_and_compiled_modules(built_pyz):
    names = set(zipfile.ZipFile(built_pyz).namelist())
    for relative in ("rules/orchestrator-implementer.md", "rules/coding-discipline.md", "rules/workflow.md",
                     "skills/plan-authoring/SKILL.md", "skills/ralph-protocol/SKILL.md"):
        assert f"site-packages/maestro/payload/{relative}" in names
        assert (ROOT / relative).read_bytes() == zipfile.ZipFile(built_pyz).read(f"site-packages/maestro/payload/{relative}")
    assert not [name for name in names if name.endswith(".py") and name.startswith("site-packages/maestro/")
                and name not in ("site-packages/maestro/__init__.py", "site-packages/maestro/bundle.py")]
    assert sorted(name for name in names if name.endswith(".pyc")) == [
        "maestro_hook.pyc", "site-packages/maestro/__init__.pyc", "site-packages/maestro/bundle.pyc"]
    assert "_bootstrap/__init__.py" in names and "environment.json" in names  # shiv's own parts stay


def bundle_of(archive_path):
    """(magic, index, offset of code and sources, the archive's bytes) of its bundle (maestro/bundle.py)."""
    from maestro import bundle

    data = Path(archive_path).read_bytes()
    return (*bundle.read_index(lambda length, offset: data[offset:offset + length]), data)


def test_the_bundle_holds_every_module_its_source_and_that_source_compiled(built_pyz):
    import importlib.util
    import marshal

    magic, index, base, data = bundle_of(built_pyz)
    assert magic == importlib.util.MAGIC_NUMBER
    tree = {str(path.relative_to(ROOT)) for path in (ROOT / "maestro").rglob("*.py")} - {
        "maestro/__init__.py", "maestro/bundle.py"}
    assert {entry[3] for entry in index.values()} == tree
    for module, (offset, length, package, path, source_offset, source_length) in index.items():
        assert module == path[:-3].replace("/", ".").removesuffix(".__init__") and package == path.endswith("__init__.py")
        source = data[base + source_offset:base + source_offset + source_length]
        assert source == (ROOT / path).read_bytes()
        code = marshal.loads(data[base + offset:base + offset + length])
        assert code.co_filename == path and code == compile(source, path, "exec", dont_inherit=True)


def test_a_traceback_reads_the_bundles_source_not_a_same_named_file_under_the_cwd(built_pyz, tmp_path):
    """A hook's cwd is the user's repository: a `maestro/util/days.py` there (another checkout, or planted)
    must not supply the lines of a crash note's traceback."""
    planted = tmp_path / "maestro" / "util" / "days.py"
    planted.parent.mkdir(parents=True)
    planted.write_text("# planted\n" * 100)
    code = ("import sys, traceback; sys.path.insert(0, %r + '/site-packages')\n"
            "from maestro.util import days\ntry:\n    days.day(0)\nexcept ValueError:\n"
            "    traceback.print_exc(file=sys.stdout)\n") % str(built_pyz)
    result = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert "# planted" not in result.stdout and 'raise ValueError(f"day number out of range' in result.stdout
    assert f'File "{built_pyz}/site-packages/maestro/util/days.py"' in result.stdout


def test_modules_come_from_the_bundle_and_a_traceback_still_shows_their_source(built_pyz):
    code = (
        "import sys, traceback; sys.path.insert(0, %r + '/site-packages')\n"
        "import maestro, maestro.cli\nfrom maestro.util import days\n"
        "print(type(maestro.cli.__loader__).__name__, maestro.cli.__file__, type(maestro.__loader__).__name__)\n"
        "try:\n    days.day(0)\nexcept ValueError:\n    traceback.print_exc(file=sys.stdout)\n"
    ) % str(built_pyz)
    result = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    first, *trace = result.stdout.splitlines()
    assert first == f"Bundle {built_pyz}/site-packages/maestro/cli.py zipimporter"
    assert 'raise ValueError(f"day number out of range: {number}")' in "\n".join(trace)


def with_bundle_bytes(built_pyz, tmp_path, at_magic: int, value: bytes) -> Path:
    """A copy of the archive with `value` written over its bundle, `at_magic` bytes after the magic."""
    from maestro import bundle

    data = bytearray(Path(built_pyz).read_bytes())
    at = data.index(bundle.TAG) + len(bundle.TAG) + at_magic
    data[at:at + len(value)] = value
    other = tmp_path / "other.pyz"
    other.write_bytes(bytes(data))
    return other


def test_a_python_of_another_bytecode_version_compiles_the_bundles_sources(built_pyz, tmp_path):
    """The bundle's code objects are the builder's bytecode version; on another (install publishes the
    archive compiled for the hooks' Python, but the dist archive may be run by any) each module is compiled
    from the source the bundle holds, as zipimport would from a zip."""
    other = with_bundle_bytes(built_pyz, tmp_path, 0, b"\x00\x00\r\n")
    code = ("import sys; sys.path.insert(0, %r + '/site-packages'); import maestro.cli, maestro.hooks.gate;"
            "print(type(maestro.cli.__loader__).__name__, maestro.cli.__loader__.compiled)") % str(other)
    result = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.split() == ["Bundle", "False"], result.stderr
    version = subprocess.run([sys.executable, "-I", "-S", str(other), "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("maestro "), version.stderr


def test_a_damaged_bundle_is_a_broken_archive_that_says_so(built_pyz, tmp_path):
    """Its modules live only there: an unreadable index fails the first import, loudly (the registered hook
    commands answer a broken archive as they do any: the gate blocks, docs/hooks.md)."""
    other = with_bundle_bytes(built_pyz, tmp_path, 8, b"\xff" * 4)  # the index's first bytes
    result = subprocess.run([sys.executable, "-I", "-S", str(other), "--version"], capture_output=True, text=True)
    assert result.returncode != 0 and "No module named 'maestro.cli'" in result.stderr


def test_payload_is_read_through_importlib_resources_inside_the_archive(built_pyz):
    code = (
        "import sys; sys.path.insert(0, %r + '/site-packages');"
        "from maestro import runtime; print(runtime.payload_bytes('skills/plan-authoring/SKILL.md')[:3])"
    ) % str(built_pyz)
    result = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == repr((ROOT / "skills/plan-authoring/SKILL.md").read_bytes()[:3])


def test_shiv_extracting_bootstrap_still_works(built_pyz, home):
    result = subprocess.run(
        [sys.executable, "-I", "-S", str(built_pyz), "--version"], capture_output=True, text=True,
        env={"HOME": str(home), "MAESTRO_SHIV_EXTRACT": "1", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("maestro ")
    assert any((home / ".maestro" / "shiv").iterdir())
    # what it extracted is the package, the bundle's reader and the payload: the modules, and the archive a
    # detached child (the recall refresher) must import from, are the archive's
    site = next((home / ".maestro" / "shiv").glob("*/site-packages"))
    probe = ("import sys; sys.argv = [%r]; sys.path.insert(0, sys.argv[0]); import _bootstrap;"
             "sys.path.insert(0, %r); from maestro import runtime; from maestro.hooks import recall_refresh;"
             "print(runtime.archive_path())") % (str(built_pyz), str(site))
    extracted = subprocess.run([sys.executable, "-I", "-S", "-c", probe], capture_output=True, text=True,
                               env={"HOME": str(home), "MAESTRO_SHIV_EXTRACT": "1", "PATH": "/usr/bin:/bin"})
    assert extracted.returncode == 0 and extracted.stdout.strip() == str(built_pyz), extracted.stderr


def test_build_refuses_a_non_stdlib_import(tmp_path, monkeypatch):
    package = tmp_path / "maestro"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "bad.py").write_text("import os\nimport requests\nfrom yaml import safe_load\n")
    monkeypatch.setattr(build, "ROOT", tmp_path)
    hits = build.non_stdlib_imports(package)
    assert hits == ["maestro/bad.py:2: imports requests", "maestro/bad.py:3: imports yaml"]
    monkeypatch.setattr(build, "PACKAGE", package)
    with pytest.raises(SystemExit, match="refusing to build"):
        build.build(tmp_path / "out.pyz")
    assert not (tmp_path / "out.pyz").exists()


@pytest.mark.source_only  # reads the source tree only: the pyz run would repeat it
def test_the_real_package_is_stdlib_only():
    assert build.non_stdlib_imports(Path(build.PACKAGE)) == []


def test_the_launchers_parse_on_python_3_6_and_mirror_the_exit_code():
    """They run before maestro can be imported, on whatever Python the user has (test_python_version.py
    runs them there)."""
    import ast

    from maestro.errors import Exit

    main_py = (ROOT / "maestro" / "__main__.py").read_text(encoding="utf-8")
    for source in (build.LAUNCHER, build.HOOK_LAUNCHER, main_py):
        ast.parse(source, feature_version=(3, 6))
        assert "sys.version_info < (3, 11)" in source
        assert f"SystemExit({Exit.PYTHON_TOO_OLD})" in source or f"else {Exit.PYTHON_TOO_OLD})" in source


def test_the_hook_launcher_ships_as_source_too(built_pyz):
    """An older Python refuses the .pyc (another magic number); zipimport then falls back to the .py."""
    archive = zipfile.ZipFile(built_pyz)
    assert archive.read("maestro_hook.py") == build.HOOK_LAUNCHER.encode()
    assert "maestro_hook.pyc" in archive.namelist()


def test_a_hook_ends_without_the_interpreters_teardown_and_a_command_with_it(built_pyz, tmp_path):
    """maestro_hook ends a hook verb with os._exit after flushing its output (the teardown costs a hook
    ~3-5 ms); any other verb — a command run through the `maestro` launcher, which may rely on atexit,
    threads or finalizers — exits the ordinary way. An atexit handler tells the two apart."""
    from maestro.install import settings

    probe = "import atexit,sys;atexit.register(lambda: sys.stderr.write('teardown\\n'));"
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    gate = subprocess.run([sys.executable, "-I", "-S", "-c", probe + settings.LAUNCHER, str(built_pyz), "gate"],
                          input="{}", capture_output=True, text=True, env=env, timeout=60)
    assert gate.returncode == 2 and "teardown" not in gate.stderr  # no session id: fail closed, said in full
    assert gate.stderr.endswith("\n") and len(gate.stderr.splitlines()) == 1, gate.stderr
    inject = subprocess.run([sys.executable, "-I", "-S", "-c", probe + settings.LAUNCHER, str(built_pyz), "inject"],
                            input='{"session_id": "s-1", "prompt": "please fix the failing test in src/app.py"}',
                            capture_output=True, text=True, env=env, timeout=60)
    assert inject.returncode == 0 and "teardown" not in inject.stderr
    from maestro.hooks import guidance

    assert inject.stdout == guidance.LOOP_DIRECTIVE  # flushed whole before the exit
    status = subprocess.run([sys.executable, "-I", "-S", "-c", probe + settings.LAUNCHER, str(built_pyz), "statusline"],
                            input="{}", capture_output=True, text=True, env=env, timeout=60)
    assert status.returncode == 0 and "teardown" not in status.stderr
    command = subprocess.run([sys.executable, "-I", "-S", "-c", probe + settings.LAUNCHER, str(built_pyz), "--version"],
                             capture_output=True, text=True, env=env, timeout=60)
    assert command.returncode == 0 and command.stdout.startswith("maestro ") and command.stderr == "teardown\n"


def test_a_hook_runs_without_young_collections_and_a_command_with_the_default_threshold(built_pyz, tmp_path):
    """maestro_hook raises the young generation's threshold for a hook verb (the collector would run 5-10
    times in a recalling prompt and free nothing), not for a command. The probe counts collections and
    reports the threshold at the exit (os._exit for a hook, the ordinary exit for a command). The default
    threshold runs ~9 collections in that session-start."""
    from maestro.install import settings

    probe = ("import gc,os,sys,atexit;n=[0];gc.callbacks.append(lambda p,i:p=='start' and n.__setitem__(0,n[0]+1));"
             "r=lambda: sys.stderr.write('gc %d %d\\n' % (gc.get_threshold()[0], n[0]));e=os._exit;"
             "os._exit=lambda c:(r(),sys.stderr.flush(),e(c));atexit.register(r);")
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    start = subprocess.run([sys.executable, "-I", "-S", "-c", probe + settings.LAUNCHER, str(built_pyz), "session-start"],
                           input='{"session_id": "s-1", "source": "startup", "cwd": "%s"}' % tmp_path,
                           capture_output=True, text=True, env=env, timeout=60)
    threshold, collections = start.stderr.splitlines()[-1].split()[1:]
    # (one may run while zipimport reads the archive's directory, before maestro_hook's first line)
    assert start.returncode == 0 and threshold == "25000" and int(collections) <= 1, start.stderr
    command = subprocess.run([sys.executable, "-I", "-S", "-c", probe + settings.LAUNCHER, str(built_pyz), "doctor"],
                             capture_output=True, text=True, env=env, timeout=60)
    threshold, collections = command.stderr.splitlines()[-1].split()[1:]
    assert threshold == "700" and int(collections) > 0, command.stderr


def test_the_open_archive_leaves_the_low_descriptors_to_the_caller(built_pyz):
    """The bundle keeps the archive open from the first import on; fd 3 free at the start must stay free
    (an open fd 3 is how a caller asks the loop for progress records: util/progress.py), and so must 0-2."""
    code = ("import os, sys; sys.path.insert(0, %r + '/site-packages'); import maestro.cli\n"
            "from maestro.util import progress\n"
            "print(type(maestro.cli.__loader__).__name__, [n for n in range(10) if os.path.exists(f'/proc/self/fd/{n}')],"
            " progress._channel())") % str(built_pyz)
    result = subprocess.run([sys.executable, "-I", "-S", "-c", code], stdin=subprocess.DEVNULL, capture_output=True,
                            text=True)
    assert result.returncode == 0 and result.stdout == "Bundle [0, 1, 2] stdout\n", result.stderr
    import os

    closed = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True,
                            preexec_fn=lambda: os.close(0))  # started without stdin: the archive would be fd 0
    assert closed.returncode == 0 and closed.stdout == "Bundle [1, 2] stdout\n", closed.stderr
