"""Which repository a run belongs to (spec §2.1).

The scope root is the repository's toplevel, climbed through superprojects, so a submodule and
its superproject share one write domain. Unlike the original (which climbed to the outermost
enclosing repository of any kind), an independent repository that merely sits inside another
one — a dotfiles repo at ~, a worktree nested in a checkout — is not merged into it.
The git dir is per worktree (`--absolute-git-dir`): linked worktrees get their own lease.

It is also maestro's one way to run git: `git_env` is the environment every git child gets (C
locale, no optional locks, never pointed at another repository by GIT_DIR/GIT_WORK_TREE),
`run` the CompletedProcess for callers that read the exit status themselves, `git` the checked
stdout. The tree digest (its own process layer: threads, a budget, a stop flag), the memory
sync (the same layer, with its prompts switched off) and the SessionStart snapshot (posix_spawn:
importing subprocess costs the hook) run git their own way; the first two with this environment.
"""

import os
import subprocess

GIT_TIMEOUT_SEC = 30


class GitError(RuntimeError):
    pass


def git_env(*, drop=(), **extra) -> dict:
    """The environment of a git child: os.environ without GIT_DIR, GIT_WORK_TREE and `drop`, with
    LC_ALL=C and GIT_OPTIONAL_LOCKS=0, then `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_DIR", "GIT_WORK_TREE") and k not in drop}
    env.update(LC_ALL="C", GIT_OPTIONAL_LOCKS="0")
    env.update(extra)
    return env


def run(args, cwd=None, timeout: float = GIT_TIMEOUT_SEC, **extra_env) -> subprocess.CompletedProcess:
    """`git <args>` with bytes output and stdin closed; raises OSError (no git) and
    subprocess.TimeoutExpired, whose messages each caller words its own way."""
    return subprocess.run(["git", *args], cwd=cwd, env=git_env(**extra_env), capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def git(args, cwd: str, timeout: float = GIT_TIMEOUT_SEC, check: bool = True) -> str:
    try:
        result = run(args, cwd, timeout)
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
