"""The one git runner and committed-repository builder the tests share (system git config ignored)."""

import os
import subprocess
from pathlib import Path


def git(cwd, *args, input=None) -> bytes:
    """Run `git <args>` in cwd; raise on failure; return its stdout."""
    return subprocess.run(["git", *args], cwd=cwd, input=input, check=True, capture_output=True,
                          env=dict(os.environ, GIT_CONFIG_NOSYSTEM="1")).stdout


def git_repo(path: Path, files=("app.py",), content="VALUE = 1\n") -> Path:
    """A committed git repository at `path` (branch main) holding `files` (parents created).

    `files` is a sequence of names that all get `content`, or a {name: text} mapping."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "t@example.com")
    git(path, "config", "user.name", "t")
    contents = files if isinstance(files, dict) else dict.fromkeys(files, content)
    for name, text in contents.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", ".")
    git(path, "commit", "-qm", "init")
    return path.resolve()


_TEMPLATE_BASE = os.environ.get("TMPDIR") or "/tmp"  # read at import: a test later points TMPDIR into its tmp_path
_TEMPLATE = []


def default_repo(path: Path) -> Path:
    """`git_repo(path)` with its defaults, copied from one built per test process: the `repo` fixture makes
    hundreds of them, five git processes each. The copy's index is refreshed (one git process), so git sees
    the worktree exactly as in a repository built in place: clean, app.py committed on main."""
    import atexit
    import shutil
    import tempfile

    if not _TEMPLATE:
        base = tempfile.mkdtemp(prefix="maestro-test-repo-template-", dir=_TEMPLATE_BASE)
        atexit.register(shutil.rmtree, base, True)
        _TEMPLATE.append(git_repo(Path(base) / "repo"))
    shutil.copytree(_TEMPLATE[0], path, symlinks=True)
    git(path, "update-index", "-q", "--refresh")
    return path.resolve()
