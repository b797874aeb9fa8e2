"""Is a codemap still true? The staleness probe of spec memory.md §1.4, and git for codemaps.

Checks run in the spec's order; the first that applies decides `reason`:
file_not_found, invalid_frontmatter, missing_source_paths, not_a_git_repository (rc 1, nothing
written) · no_verified_commit (rc 0) · invalid_verified_commit (rc 1) · ok (rc 0) ·
sources_changed_or_missing (rc 1). The diff is commit to commit (`git diff <vc> HEAD -- p`), so an
uncommitted edit is invisible unless `worktree` is set: then staged, unstaged and untracked changes
to a source path count as changes too (`uncommitted_paths`). Every git call has a timeout and
treats pathspecs literally. A codemap that is not a regular file of at most MAX_BYTES (a FIFO, a
device, a symlink) is invalid_frontmatter with an `error` saying why; it is never read.
"""

import os
import subprocess

from maestro.util import atomic
from maestro.errors import Exit, MaestroError
from maestro.memory.project import frontmatter
from maestro.util import git as gitlib
from maestro.util.clock import utc_stamp

GIT_TIMEOUT_SEC = 30
MAX_BYTES = 1024 * 1024  # a codemap is a page of Markdown; anything bigger is refused, not read
INVALID = ("file_not_found", "invalid_frontmatter", "missing_source_paths", "not_a_git_repository",
           "invalid_verified_commit")
SUGGESTED = {"missing_source_paths": "low", "no_verified_commit": "low", "ok": "medium",
             "sources_changed_or_missing": "low"}


class CodemapError(MaestroError):
    """A codemap command failed: one line on stderr, exit 1 (the spec's code for every failure)."""

    def __init__(self, message: str, reason: str = "codemap"):
        super().__init__(message, Exit.ERROR)
        self.reason = reason


def git(root: str, *args: str) -> subprocess.CompletedProcess:
    try:
        return gitlib.run(["-C", root, *args], timeout=GIT_TIMEOUT_SEC, GIT_LITERAL_PATHSPECS="1")
    except subprocess.TimeoutExpired:
        raise CodemapError(f"git {args[0]} timed out after {GIT_TIMEOUT_SEC}s in {root}", "git") from None
    except OSError as exc:
        raise CodemapError(f"cannot run git: {exc.strerror or exc}", "git") from None


def first_line(data: bytes) -> str:
    lines = data.decode("utf-8", "replace").strip().splitlines()
    return lines[0] if lines else ""


def is_git_repo(root: str):
    """None when `root` is in a git work tree, else git's one-line complaint."""
    proc = git(root, "rev-parse", "--git-dir")
    return None if proc.returncode == 0 else (first_line(proc.stderr) or "not a git repository")


def resolve_commit(root: str, commit: str):
    """The full sha of `commit` (any rev git accepts), None when it names no commit."""
    if not commit or commit.startswith("-"):
        return None
    proc = git(root, "rev-parse", "-q", "--verify", "--end-of-options", f"{commit}^{{commit}}")
    sha = proc.stdout.decode("ascii", "replace").strip()
    return sha if proc.returncode == 0 and sha else None


def source_list(value) -> list:
    """`source_paths` as a list of non-empty strings (a bare string is one item)."""
    items = value if isinstance(value, list) else [value]
    return [str(item) for item in items if item is not None and str(item) != "" and not isinstance(item, (list, dict))]


def inside(base: str, path: str) -> bool:
    base, path = os.path.realpath(base), os.path.realpath(path)
    return path == base or os.path.commonpath([base, path]) == base


def _check_sources(root, sha, sources, result, worktree) -> None:
    for source in sources:
        full = os.path.normpath(os.path.join(root, source))
        if not inside(root, full) or not os.path.exists(full):
            result["missing_paths"].append(source)
            continue
        rel = os.path.relpath(full, root)
        proc = git(root, "diff", "--quiet", sha, "HEAD", "--", rel)
        if proc.returncode != 0:
            result["changed_paths"].append(source)
            if proc.returncode != 1:
                result["git_error"] = first_line(proc.stderr) or f"git diff exited {proc.returncode}"
        if worktree:
            status = git(root, "status", "--porcelain", "-z", "--untracked-files=all", "--", rel)
            if status.returncode != 0:
                result["git_error"] = first_line(status.stderr) or f"git status exited {status.returncode}"
            if status.stdout.strip(b"\0") or status.returncode != 0:
                result["uncommitted_paths"].append(source)


class _Unreadable(str):
    """Why a codemap path is not a readable regular file (reported as invalid_frontmatter)."""


def _read(path: str):
    """The bytes of the regular file at `path`; None when absent (or a directory); _Unreadable for a
    symlink, a FIFO, a device or a file over MAX_BYTES (maestro.util.atomic.read_regular: never hangs)."""
    try:
        return atomic.read_regular(path, MAX_BYTES)
    except atomic.NotRegular as exc:
        return None if exc.reason == "a directory" else _Unreadable(exc.reason)
    except OSError as exc:
        raise CodemapError(f"cannot read {path}: {exc.strerror or exc}", "io") from None


def _parse(data: bytes):
    """(meta, tail) or None: the frontmatter mapping and the text from the closing `---` on."""
    try:
        parts = frontmatter.split(data.decode("utf-8"))
        meta = frontmatter.parse(parts[0]) if parts else None
    except (UnicodeDecodeError, frontmatter.FrontmatterError):
        return None
    return (meta, parts[1]) if meta else None


def probe(path: str, root: str, write: bool = False, worktree: bool = False, now=None):
    """(result, rc) for the codemap at `path`, its sources relative to the project `root`."""
    result = {"codemap_path": path, "source_paths": [], "verified_commit": "", "stale": None, "reason": None,
              "changed_paths": [], "missing_paths": [], "git_error": None, "suggested_confidence": None,
              "wrote": False}
    if worktree:
        result["uncommitted_paths"] = []
    data = _read(path)
    if isinstance(data, _Unreadable):
        return dict(result, reason="invalid_frontmatter", error=str(data)), Exit.ERROR
    parsed = _parse(data) if data is not None else None
    if data is None or parsed is None:
        result["reason"] = "file_not_found" if data is None else "invalid_frontmatter"
        return result, Exit.ERROR
    meta, tail = parsed
    sources = source_list(meta.get("source_paths"))
    commit = meta.get("verified_commit")
    commit = "" if commit is None else str(commit).strip()
    result.update(source_paths=sources, verified_commit=commit)
    if not sources:
        return dict(result, reason="missing_source_paths", suggested_confidence="low"), Exit.ERROR
    problem = is_git_repo(root)
    if problem:
        return dict(result, reason="not_a_git_repository", git_error=problem), Exit.ERROR
    if not commit:
        result.update(reason="no_verified_commit", suggested_confidence="low")
    else:
        sha = resolve_commit(root, commit)
        if sha is None:
            return dict(result, reason="invalid_verified_commit"), Exit.ERROR
        _check_sources(root, sha, sources, result, worktree)
        stale = bool(result["changed_paths"] or result["missing_paths"] or result.get("uncommitted_paths"))
        result.update(stale=stale, reason="sources_changed_or_missing" if stale else "ok")
        result["suggested_confidence"] = SUGGESTED[result["reason"]]
    if write:
        result["wrote"] = _write_back(path, data, meta, tail, bool(result["stale"]), now)
    return result, (Exit.ERROR if result["stale"] else Exit.OK)


def _write_back(path, data, meta, tail, stale, now) -> bool:
    """Record the probe in the frontmatter (body byte-identical); False when the bytes would not change."""
    updated = dict(meta, codemap_probe_at=utc_stamp(now), codemap_stale=stale)
    if stale:
        updated["confidence"] = "low"
    try:
        new = ("---\n" + frontmatter.render(updated) + tail).encode("utf-8")
    except frontmatter.FrontmatterError as exc:
        raise CodemapError(f"cannot rewrite the frontmatter of {path}: {exc}", "malformed") from None
    if new == data:
        return False
    try:
        mode = os.stat(path).st_mode & 0o777
        atomic.write_atomic(path, new, mode=mode)
    except OSError as exc:
        raise CodemapError(f"cannot write {path}: {exc.strerror or exc}", "io") from None
    return True
