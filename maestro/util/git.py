"""Which repository a run belongs to (spec §2.1).

The scope root is the repository's toplevel, climbed through superprojects, so a submodule and
its superproject share one write domain. Unlike the original (which climbed to the outermost
enclosing repository of any kind), an independent repository that merely sits inside another
one — a dotfiles repo at ~, a worktree nested in a checkout — is not merged into it.
The git dir is per worktree (`--absolute-git-dir`): linked worktrees get their own lease.
"""

import os
import subprocess

GIT_TIMEOUT_SEC = 30


class GitError(RuntimeError):
    pass


def git(args, cwd: str, timeout: float = GIT_TIMEOUT_SEC, check: bool = True) -> str:
    env = dict(os.environ, LC_ALL="C", GIT_OPTIONAL_LOCKS="0")
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    try:
        result = subprocess.run(
            ["git", *args], cwd=cwd, env=env, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {' '.join(args[:2])}: {exc}") from None
    if check and result.returncode != 0:
        raise GitError(f"git {' '.join(args[:2])} failed: {result.stderr.decode(errors='replace').strip()}")
    return result.stdout.decode("utf-8", "surrogateescape")


def toplevel(path: str):
    try:
        out = git(["rev-parse", "--show-toplevel"], cwd=path).strip()
    except GitError:
        return None
    return os.path.realpath(out) if out else None


def scope_root(cwd: str = None):
    """The write domain's root: toplevel, climbed through superprojects; None outside git."""
    root = toplevel(os.path.realpath(cwd or os.getcwd()))
    while root:
        try:
            parent = git(["rev-parse", "--show-superproject-working-tree"], cwd=root).strip()
        except GitError:
            break
        if not parent:
            break
        root = os.path.realpath(parent)
    return root


def git_dir(root: str) -> str:
    return os.path.realpath(git(["rev-parse", "--absolute-git-dir"], cwd=root).strip())
