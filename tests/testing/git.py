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
