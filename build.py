#!/usr/bin/env python3
"""Build dist/maestro.pyz with shiv.

    python3 build.py [--output dist/maestro.pyz]

1. Refuse to build if any module under maestro/ imports a package outside the standard library.
2. Stage maestro/ plus rules/ and skills/ (as maestro/payload/…) and let shiv build the archive
   (reproducible timestamps, uncompressed, shebang `/usr/bin/env python3`).
3. Finish the archive (maestro/install/archive_code.py): every module's source and code object in one
   bundle between the shebang line and the zip (maestro/bundle.py: one positioned read per import
   instead of zipimport's lookup, and a zip of 17 entries instead of ~480 to list at every start),
   the package, the bundle's reader and the hook launcher as sources with unchecked-hash .pyc files,
   and a launcher `__main__.py` that imports maestro straight from the archive instead of extracting
   it to a cache first (shiv's bootstrap stays inside; `MAESTRO_SHIV_EXTRACT=1` selects it). maestro
   is pure stdlib, so extraction buys nothing and costs ~25 ms per hook; docs/performance.md has
   the measurements.
Same sources + same interpreter ⇒ byte-identical archive.
"""

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from maestro.install import archive_code

ROOT = Path(__file__).resolve().parent
PACKAGE = ROOT / "maestro"
PAYLOAD_DIRS = ("rules", "skills")
EPOCH = "315532800"  # 1980-01-01, the earliest zip timestamp

# Both launchers check the interpreter before anything else: an older Python (the stock macOS
# python3 is 3.9) would otherwise die in a traceback at the first 3.11-only import (tomllib).
# maestro cannot be imported there, so its exit code is mirrored by number (test_build.py checks
# it against maestro.errors.Exit.PYTHON_TOO_OLD), and the texts parse on Python 3.6+ (no walrus,
# no match, no f-strings).
LAUNCHER = '''\
# maestro launcher, written by build.py. Imports maestro from inside this archive (pure
# stdlib: nothing to extract); MAESTRO_SHIV_EXTRACT=1 runs shiv's extracting bootstrap instead.
import sys

if sys.version_info < (3, 11):
    import os
    import shlex

    sys.stderr.write("maestro needs Python 3.11 or newer, found Python %s (%s): run it with another "
                     "interpreter, e.g. python3.11 %s %s\\n" % (
                         ".".join(str(part) for part in sys.version_info[:3]), sys.executable or "?",
                         shlex.quote(os.path.abspath(sys.argv[0])),
                         shlex.quote(sys.argv[1]) if len(sys.argv) > 1 else "--help"))
    raise SystemExit(6)  # maestro.errors.Exit.PYTHON_TOO_OLD

import os

if os.environ.get("MAESTRO_SHIV_EXTRACT") == "1":
    import _bootstrap

    _bootstrap.bootstrap()
else:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "site-packages"))
    from maestro.cli import main

    raise SystemExit(main(sys.argv[1:]))
'''

# The hooks' and the `maestro` launcher's entry (maestro/install/settings.py LAUNCHER, launcher.py):
# `python3 -I -S -c 'import sys;sys.path[:0]=sys.argv[1:2];import maestro_hook' PYZ verb ...`.
# Running the archive as a script goes through runpy (importlib.util, contextlib, collections:
# ~8 ms of a hook's budget); importing this module from the archive's root does not. One module for
# both, not a second one: the gate treats `import maestro_hook` as running maestro (a new root
# module would be a name it does not know).
# On an older Python a hook answers as for any broken state (maestro/install/settings.py): the gate
# blocks (exit 2, its one line says why), the other hooks exit non-zero and the installed command's
# fallback lets the session go on. The fix is a re-install run by a newer interpreter: install
# records the interpreter that runs it in the hook commands. Any other verb is a command line call
# (the `maestro` launcher): it gets the archive's own line (LAUNCHER above) and exit 6.
HOOK_LAUNCHER = '''\
# maestro hook launcher, written by build.py: sys.path[0] is this archive, argv is [-c, archive, verb, ...].
import sys

if sys.version_info < (3, 11):
    import shlex

    verb = sys.argv[2] if len(sys.argv) > 2 else "--help"
    found = ".".join(str(part) for part in sys.version_info[:3]), sys.executable or "?"
    if verb not in ("gate", "inject", "session-start", "stop"):
        sys.stderr.write("maestro needs Python 3.11 or newer, found Python %s (%s): run it with another "
                         "interpreter, e.g. python3.11 %s %s\\n" % (
                             found + (shlex.quote(sys.path[0]), shlex.quote(verb))))
        raise SystemExit(6)  # maestro.errors.Exit.PYTHON_TOO_OLD
    sys.stderr.write("maestro needs Python 3.11 or newer, found Python %s (%s) running its %s hook%s: "
                     "re-install maestro with another interpreter, e.g. python3.11 %s install\\n" % (
                         found + (verb, " (call blocked)" if verb == "gate" else "", shlex.quote(sys.path[0]))))
    raise SystemExit(2 if verb == "gate" else 6)  # maestro.errors.Exit.HOOK_BLOCK / PYTHON_TOO_OLD

hook = sys.argv[2:3] in (["gate"], ["inject"], ["session-start"], ["stop"], ["statusline"])
if hook:
    import gc

    # A hook lives some tens of milliseconds and allocates a few thousand objects, nearly all of them
    # module contents that live to its end: at the default young-generation threshold (700) the collector
    # runs 5-10 times per hook and frees nothing (~1.5 ms of a recalling prompt, ~0.6 ms of a gate call).
    # A higher threshold rather than gc.disable(): a pathological input still gets collected.
    gc.set_threshold(25000)
sys.path.insert(0, sys.path[0] + "/site-packages")
from maestro.cli import main

code = main(sys.argv[2:])
if hook and type(code) is int and 0 <= code <= 255:
    # A hook (and the status line, registered the same way) ends without the interpreter's teardown
    # (clearing every module, ~3-5 ms of a hook): what it wrote is in closed files and atomic renames, it
    # starts no thread, and its output is flushed here first (a flush that fails takes the ordinary
    # exit, and its exit code, instead). A command keeps the ordinary exit (atexit, threads, finalizers).
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        raise SystemExit(code)
    import os

    os._exit(code)
raise SystemExit(code)
'''


def non_stdlib_imports(package: Path):
    allowed = set(sys.stdlib_module_names) | {"maestro", "__future__"}
    hits = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            hits += [
                f"{path.relative_to(ROOT)}:{node.lineno}: imports {name}"
                for name in names
                if name.split(".")[0] not in allowed
            ]
    return hits


def stage(target: Path) -> None:
    def ignore(_dir, names):
        return [n for n in names if n == "__pycache__" or n.endswith((".pyc", ".pyo"))]

    shutil.copytree(PACKAGE, target / "maestro", ignore=ignore)
    for name in PAYLOAD_DIRS:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / "maestro" / "payload" / name, ignore=ignore)
    for path in target.rglob("*"):  # modes must not depend on the builder's umask
        os.chmod(path, 0o755 if path.is_dir() else 0o644)


def run_shiv(site_packages: Path, output: Path) -> None:
    env = dict(os.environ, SOURCE_DATE_EPOCH=EPOCH)
    command = [
        sys.executable, "-m", "shiv",
        "--site-packages", str(site_packages),
        "--entry-point", "maestro.cli:main",
        "--output-file", str(output),
        "--python", "/usr/bin/env python3",
        "--reproducible",
        "--uncompressed",
        "--root", "~/.maestro/shiv",
    ]
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"build: shiv failed (exit {result.returncode}):\n{result.stderr.strip()}")


def finish(shiv_output: Path, output: Path) -> None:
    raw = shiv_output.read_bytes()
    shebang = raw[: raw.index(b"\n") + 1]
    with zipfile.ZipFile(shiv_output) as archive:
        entries = [(info, archive.read(info)) for info in archive.infolist() if info.filename != "__main__.py"]
    stamp = entries[0][0].date_time
    main = zipfile.ZipInfo("__main__.py", date_time=stamp)
    main.external_attr = 0o100644 << 16
    # The hook launcher's source (archive_code compiles it too): an older Python refuses the .pyc (another
    # magic number) and zipimport falls back to the .py, so the version check above runs there instead of
    # an ImportError.
    hook_source = zipfile.ZipInfo("maestro_hook.py", date_time=stamp)
    hook_source.external_attr = 0o100644 << 16
    data = archive_code.assemble(shebang, entries + [(main, LAUNCHER.encode()), (hook_source, HOOK_LAUNCHER.encode())],
                                 stamp)
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(output.name + ".tmp")
    tmp.write_bytes(data)
    os.chmod(tmp, 0o755)
    os.replace(tmp, output)


def build(output: Path) -> Path:
    hits = non_stdlib_imports(PACKAGE)
    if hits:
        raise SystemExit("build: refusing to build; the runtime must be stdlib-only:\n  " + "\n  ".join(hits))
    with tempfile.TemporaryDirectory(prefix="maestro-build-") as tmp:
        site = Path(tmp) / "site-packages"
        site.mkdir()
        stage(site)
        shiv_output = Path(tmp) / "shiv.pyz"
        run_shiv(site, shiv_output)
        finish(shiv_output, output)
    return output


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Build maestro.pyz with shiv.")
    parser.add_argument("--output", default=str(ROOT / "dist" / "maestro.pyz"))
    args = parser.parse_args(argv)
    path = build(Path(args.output).resolve())
    print(f"built {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
