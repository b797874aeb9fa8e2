"""Bringing a worktree back to a checkpoint (`maestro rollback`; maestro.provenance.checkpoint takes them).

The difference is computed by git between the checkpoint's tree and a snapshot of the tree as it is
now (the same private index, so ignored files are out of scope on both sides): paths the job added
are removed, changed and deleted ones restored with their bytes, exec bit or symlink target. HEAD,
the user's index and ignored files are never touched; submodules and nested repositories (gitlinks)
are left alone and named.

Every path is checked and every blob read before the first file is touched, so a bad checkpoint
fails before it changes anything. A file restored over an existing one keeps that file's permission
bits; only its exec bits follow the checkpoint. Writing is atomic per file (a temp name in the same
directory, then rename: a reader sees the old file or the new one) and never follows a symlink: every
parent directory is checked with lstat to be a real directory inside the worktree
(checkpoint.real_parent), so a link planted where a directory was is not written through.
Removals run first, deepest first, so a directory that is now a file where the checkpoint had a file
(or the reverse) is handled; a directory that still holds ignored files is never emptied to make
room, its path is reported as skipped instead.
"""

import collections
import os
import stat

from maestro.util import atomic
from maestro.provenance.checkpoint import CheckpointError, git, real_parent

Change = collections.namedtuple("Change", "action path old_mode old_oid new_mode new_oid")
GITLINK, SYMLINK, EXECUTABLE = "160000", "120000", "100755"
_ACTIONS = {"A": "remove", "D": "restore", "M": "restore", "T": "restore"}


def plan(root: str, checkpoint_tree: str, current_tree: str) -> list:
    """The changes that bring `current_tree` back to `checkpoint_tree`, as Change records."""
    out = git(root, ["diff-tree", "-r", "-z", "--no-renames", checkpoint_tree, current_tree])
    fields = out.split(b"\0")
    changes = []
    for meta, path in zip(fields[0::2], fields[1::2]):
        if not meta.startswith(b":"):
            continue
        old_mode, new_mode, old_oid, new_oid, status = meta[1:].decode().split(" ")
        action = _ACTIONS.get(status[:1])
        if action is None:
            continue
        if GITLINK in (old_mode, new_mode):
            action = "skip-gitlink"
        changes.append(Change(action, os.fsdecode(path), old_mode, old_oid, new_mode, new_oid))
    return changes


def describe(change: Change) -> str:
    """One line of `rollback --dry-run`: what happens to one path."""
    if change.action == "remove":
        return f"remove   {change.path} (added by the job)"
    if change.action == "skip-gitlink":
        return f"skip     {change.path} (a submodule or nested repository: left alone)"
    if change.new_mode == "000000":
        return f"restore  {change.path} (deleted by the job)"
    if change.old_oid == change.new_oid and {change.old_mode, change.new_mode} == {"100644", EXECUTABLE}:
        return f"mode     {change.path} ({change.new_mode} -> {change.old_mode})"
    if change.old_mode != change.new_mode:
        return f"retype   {change.path} ({change.new_mode} -> {change.old_mode})"
    return f"revert   {change.path}"


def _safe_parts(path: str) -> list:
    parts = path.split("/")
    if path.startswith("/") or any(part in ("", ".", "..") or part.lower() == ".git" for part in parts):
        raise CheckpointError(f"refusing an unsafe path in the checkpoint: {path!r}")
    return parts


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class Restorer:
    """Applies a plan: removals first, then restores; `skipped` lists what it left and why."""

    def __init__(self, root: str):
        self.root = root
        self.skipped = []
        self.done = 0
        self.mask = _umask()

    def apply(self, changes: list) -> None:
        for change in changes:  # every check and every read before the first unlink: no half-done rollback
            _safe_parts(change.path)
        removals = sorted((c for c in changes if c.action == "remove"), key=lambda c: c.path.count("/"), reverse=True)
        restores = [c for c in changes if c.action == "restore"]
        blobs = self._blobs(restores)
        self.skipped += [(c.path, "a submodule or nested repository") for c in changes if c.action == "skip-gitlink"]
        for change in removals:
            self._remove(change.path)
        for change in restores:
            self._restore(change, blobs[change.old_oid, change.path])

    def _remove(self, path: str) -> None:
        parts = _safe_parts(path)
        parent = real_parent(self.root, parts, create=False)
        if parent is None:
            return  # a parent is gone, or is a link or file: nothing of the job's to remove under it
        target = os.path.join(parent, parts[-1])
        try:
            st = os.lstat(target)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode):
            self.skipped.append((path, "is a directory now"))
            return
        os.unlink(target)
        self.done += 1
        for depth in range(len(parts) - 1, 0, -1):  # directories only the job's files were in
            try:
                os.rmdir(os.path.join(self.root, *parts[:depth]))
            except OSError:
                break

    def _restore(self, change: Change, data: bytes) -> None:
        parts = _safe_parts(change.path)
        parent = real_parent(self.root, parts, create=True)
        if parent is None:
            self.skipped.append((change.path, "a parent is a symlink or a file that is not the job's"))
            return
        target = os.path.join(parent, parts[-1])
        try:
            st = os.lstat(target)
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode):
            try:
                os.rmdir(target)
            except OSError:
                self.skipped.append((change.path, "a directory holding other (ignored) files is in the way"))
                return
        if change.old_mode == SYMLINK:
            temp = os.path.join(parent, f".{parts[-1]}.maestro-rollback.{os.getpid()}")
            try:
                os.unlink(temp)
            except FileNotFoundError:
                pass
            os.symlink(data, os.fsencode(temp))
            os.replace(temp, target)
        else:
            atomic.write_atomic(target, data, self._mode(st, change.old_mode == EXECUTABLE), durable=False)
        self.done += 1

    def _mode(self, st, executable: bool) -> int:
        """The permission bits of a restored file: those of the file it replaces (a 0600 `.env.local` stays
        0600), with only the exec bits set (where it is readable) or cleared per the checkpoint; a new file
        gets the umask's, as checkout would make it."""
        if st is None or not stat.S_ISREG(st.st_mode):
            return (0o777 if executable else 0o666) & ~self.mask
        mode = st.st_mode & 0o666  # never carry a setuid/setgid bit over to new content
        return mode | ((mode & 0o444) >> 2) if executable else mode

    def _blobs(self, restores: list) -> dict:
        """{(oid, path): bytes}: file contents through the path's filters (as checkout would write
        them), symlink targets raw. One `cat-file --batch` per kind; a path with a newline alone."""
        wanted = {}
        filtered = [(c.old_oid, c.path) for c in restores if c.old_mode != SYMLINK and "\n" not in c.path]
        raw = [(c.old_oid, c.path) for c in restores if c.old_mode == SYMLINK]
        if filtered:
            wanted.update(_batch(self.root, ["cat-file", "--batch", "--filters"], filtered, with_path=True))
        if raw:
            wanted.update(_batch(self.root, ["cat-file", "--batch"], raw, with_path=False))
        for change in restores:
            if (change.old_oid, change.path) not in wanted:
                wanted[change.old_oid, change.path] = git(
                    self.root, ["cat-file", "--filters", f"--path={change.path}", change.old_oid])
        return wanted


def _batch(root: str, args: list, items: list, *, with_path: bool) -> dict:
    lines = "".join(f"{oid} {path}\n" if with_path else f"{oid}\n" for oid, path in items)
    out = git(root, args, stdin=os.fsencode(lines))
    result, offset = {}, 0
    for oid, path in items:
        end = out.index(b"\n", offset)
        header = out[offset:end].split(b" ")
        if len(header) != 3 or header[1] != b"blob":
            raise CheckpointError(f"checkpoint object {oid} for {path} is missing or not a file")
        size = int(header[2])
        result[oid, path] = out[end + 1:end + 1 + size]
        offset = end + 1 + size + 1
    return result
