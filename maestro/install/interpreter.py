"""Which interpreter path the hook commands record: one that survives a routine Python upgrade.

Claude Code runs a hook command with `sh -c`, so the recorded path must be absolute (no PATH
lookup, no shell profile at run time) — and it must keep existing. The real binary of a
versioned install (Homebrew `Cellar/…/3.12.1/`, `/nix/store/<hash>-python3-…/`, pyenv
`versions/3.11.7/`, asdf, mise, uv's managed Pythons) disappears at the next patch upgrade,
while the alias in front of it (`/opt/homebrew/bin/python3`, `/usr/bin/python3`) is relinked.

The rule (`stable_interpreter`): among these candidates, in order,
  1. `sys.executable` as invoked (not resolved through symlinks),
  2. every PATH entry's `python3.X` (this minor version), then every PATH entry's `python3`,
the first that is absolute, runs, is the very same file as the running interpreter (same
device and inode: a shim or wrapper script never is), lies in no versioned tree and not inside
a virtual environment (a project venv is deleted more often than a Python). When none
qualifies, the resolved real binary is recorded and reported as unstable (install warns: re-run
install after upgrading that Python; `doctor` tells too).
"""

import os
import sys

# Path fragments of installs whose directory names carry a version or a hash.
VERSIONED_TREES = (
    "/Cellar/",
    "/nix/store/",
    "/.pyenv/versions/",
    "/.asdf/installs/",
    "/mise/installs/",
    "/uv/python/",
    "/.rye/py/",
)


def is_versioned(path: str) -> bool:
    return any(fragment in path + "/" for fragment in VERSIONED_TREES)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def in_virtualenv(path: str) -> bool:
    """True when `path` is a virtual environment's interpreter: a `pyvenv.cfg` sits in its
    directory or the one above (how CPython itself finds a venv; `-S` hides it from sys.prefix)."""
    directory = os.path.dirname(path)
    return any(os.path.isfile(os.path.join(d, "pyvenv.cfg")) for d in (directory, os.path.dirname(directory)))


def candidates(executable: str, search_path: str, minor_name: str):
    yield executable
    directories = [d for d in (search_path or "").split(os.pathsep) if d]
    for name in (minor_name, "python3"):
        for directory in directories:
            yield os.path.join(directory, name)


def choose(executable: str, search_path: str, minor_name: str = None):
    """(path to record, stable?) for the interpreter at `executable`; pure apart from stat calls."""
    if not executable or not os.path.isabs(executable):
        return "", False
    minor_name = minor_name or f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for candidate in candidates(executable, search_path, minor_name):
        if not candidate or not os.path.isabs(candidate):
            continue
        candidate = os.path.normpath(candidate)
        if is_versioned(candidate) or in_virtualenv(candidate):
            continue
        if os.access(candidate, os.X_OK) and _same_file(candidate, executable):
            return candidate, True
    real = os.path.realpath(executable)
    return real, not is_versioned(real) and not in_virtualenv(real)


def stable_interpreter():
    """(path, stable?) for the running interpreter: see the module docstring."""
    return choose(sys.executable, os.environ.get("PATH", ""))
