"""What `install` does with each file it publishes when something is already at the destination:
the upgrade path (installing a newer maestro over an older one).

- Absent, already the new bytes, or bytes the install manifest records as maestro's: replaced.
- A rule or skill the user changed after install (the manifest records other bytes): KEPT, and
  the new version is written beside it as `<name>.maestro-new` — recorded in the manifest, so
  uninstall removes it and the next install replaces it (or removes it once the user's file is
  maestro's again). The suffix keeps it out of Claude Code's sight: it loads `*.md` rules and
  `SKILL.md` skills only. The install still succeeds: everything else is upgraded and the kept
  file is the user's deliberate edit, named with what to do about it.
- A file maestro never installed (no manifest record), a changed `.maestro-new`, or a changed
  archive (the hooks run hooks/maestro.pyz with the entries this install registers: an old one
  kept beside new entries would be a mismatched pair) is refused: install changes nothing.
- `--force` replaces both kinds after backing each up (maestro/install/backup.py).

A symlink, a symlinked directory or a non-file at a destination or at its `.maestro-new` is refused
even with `--force`: never followed, never replaced.
"""

import os
import shlex
import stat

from maestro import messages
from maestro.errors import MaestroError
from maestro.install import backup, manifest, publish, targets
from maestro.install.ui import fail, log, warn

NEW_SUFFIX = ".maestro-new"

SAME = "same"  # the destination already holds the new bytes
WRITE = "write"  # (re)place the destination
KEEP = "keep"  # the user's changed file stays; the new version goes to its `.maestro-new`

CHANGED_ARCHIVE = "changed archive"  # publish.Refused problems of our own
CHANGED_NEW = "changed new copy"
FORCIBLE = (publish.UNOWNED, CHANGED_ARCHIVE, CHANGED_NEW)  # refusals `--force` resolves

REFUSALS = {  # publish.Refused.problem -> install's wording
    publish.SYMLINKED_DIRECTORY: "managed directory is a symlink; refusing to replace it: {path}",
    publish.SYMLINK: "managed destination is a symlink; refusing to replace it: {path}",
    publish.NOT_A_FILE: "managed destination is not a regular file: {path}",
    publish.UNOWNED: "refusing to overwrite a file maestro did not install: {path}",
    CHANGED_ARCHIVE: "refusing to replace the installed archive: it changed after install: {path}",
    CHANGED_NEW: "refusing to overwrite {path}: it is not the copy install wrote there",
}


def new_key(key: str) -> str:
    """The manifest key of `key`'s `.maestro-new` (`rules/coding-discipline.md.maestro-new`)."""
    return key + NEW_SUFFIX


class Fate:
    """What happens to one published key. `current` is the destination's bytes (None when absent);
    `backup` says they are to be backed up before WRITE replaces them (`--force`); for KEEP,
    `new_current` is what its `.maestro-new` holds now (None when absent)."""

    def __init__(self, key: str, data: bytes, action: str, current=None, backup=False, new_current=None):
        self.key, self.data, self.action = key, data, action
        self.current, self.backup, self.new_current = current, backup, new_current

    @property
    def path(self) -> str:
        return manifest.key_path(self.key)

    @property
    def new_path(self) -> str:
        return manifest.key_path(new_key(self.key))


def judge(sources: dict, hashes: dict, recorded: dict, force: bool):
    """(one Fate per source key, the publish.Refused of every destination that may not be written)."""
    fates, refusals = [], []
    for key, data in sources.items():
        try:
            fates.append(_judge_one(key, data, hashes[key], recorded, force))
        except publish.Refused as exc:
            refusals.append(exc)
    return fates, refusals


def _judge_one(key: str, data: bytes, digest: str, recorded: dict, force: bool) -> Fate:
    path = manifest.key_path(key)
    current = publish.current_bytes(path, None, force=True)  # symlinks and non-files refused here
    if current == data:
        return Fate(key, data, SAME, current)
    if current is None or manifest.sha256(current) == recorded.get(key):
        return Fate(key, data, WRITE, current)
    if force:
        return Fate(key, data, WRITE, current, backup=True)
    if recorded.get(key) is None:
        raise publish.Refused(publish.UNOWNED, path)
    if key == targets.PYZ_KEY:
        raise publish.Refused(CHANGED_ARCHIVE, path)
    try:
        new_current = publish.current_bytes(path + NEW_SUFFIX, recorded.get(new_key(key)), also_owned=digest)
    except publish.Refused as exc:
        if exc.problem == publish.UNOWNED:
            raise publish.Refused(CHANGED_NEW, exc.path) from None
        raise
    return Fate(key, data, KEEP, current, new_current=new_current)


def stale_new_copies(fates, recorded: dict):
    """`.maestro-new` entries the manifest records whose file is no longer needed (its key is not
    kept this time): (keys to delete — regular files still holding the recorded bytes —, keys to
    drop from the manifest: those and the ones already gone). Anything else there is left as is."""
    kept = {new_key(fate.key) for fate in fates if fate.action == KEEP}
    remove, forget = [], []
    for key in sorted(recorded):
        if not key.endswith(NEW_SUFFIX) or key in kept or not manifest.is_managed_key(key):
            continue
        ours = publish.holds_recorded(manifest.key_path(key), recorded[key])
        if ours is False:
            continue  # changed or replaced since install wrote it: the user's now
        if ours:
            remove.append(key)
        forget.append(key)
    return remove, forget


def kept_workflow_keys(recorded: dict) -> list:
    """Workflow keys (rules/workflow.md, the ralph-protocol skill) an earlier `install
    --with-workflow` published and that are still there as regular files: a plain install keeps
    and upgrades them rather than leave a stale copy behind."""
    kept = []
    for key in targets.payload_keys(True):
        if key in targets.payload_keys(False) or key not in recorded:
            continue
        try:
            if stat.S_ISREG(os.lstat(manifest.key_path(key)).st_mode):
                kept.append(key)
        except FileNotFoundError:
            pass
    return kept


def gone_workflow_keys(recorded: dict, published) -> list:
    """Workflow keys the manifest records whose file the user removed: forgotten, not re-created."""
    return [key for key in targets.payload_keys(True)
            if key in recorded and key not in published and not os.path.lexists(manifest.key_path(key))]


def refuse(refusals) -> None:
    """One line per destination that may not be written, then the way out (raises: nothing has changed)."""
    for exc in refusals:
        warn(REFUSALS[exc.problem].format(path=exc.path))
    them = "it" if len(refusals) == 1 else "them"
    if all(exc.problem in FORCIBLE for exc in refusals):
        fail(f"no files were changed. Move {them} away, or replace {them} with `{messages.MAESTRO} install --force` "
             "(each is backed up first)")
    fail("no files were changed. A symlink or non-file is never replaced, not even with --force: "
         "move it away and re-run install")


def back_up(fates):
    """--force: back up every file about to be replaced although maestro does not own its bytes
    (each Fate gets its `backup_path`); the backup directory, None when nothing needed one. A
    failure removes the directory again and raises."""
    forced = [fate for fate in fates if fate.backup]
    if not forced:
        return None
    from maestro.util.atomic import NotPrivate

    directory = None
    try:
        directory = backup.new_directory()
        for fate in forced:
            fate.backup_path = backup.save(directory, fate.key, fate.current)
    except BaseException as exc:
        if directory:
            backup.discard(directory)
        if isinstance(exc, NotPrivate):
            raise MaestroError(f"cannot back up the files --force would replace: {exc.path} {exc.problem}") from None
        raise
    return directory


def report(fates, stale_removed) -> None:
    """One line per file that did not simply get the new bytes, saying what to do about it."""
    for fate in fates:
        if fate.backup:
            log(f"replaced {fate.path} (--force); the version it replaced is backed up at {fate.backup_path}")
        elif fate.action == KEEP:
            warn(f"kept {fate.path}: it changed after install. The new version is beside it: {fate.new_path} — "
                 f"merge by hand (diff {shlex.quote(fate.path)} {shlex.quote(fate.new_path)}), or replace yours "
                 f"with `{messages.MAESTRO} install --force` (backed up first)")
    for key in stale_removed:
        log(f"removed {manifest.key_path(key)}: the file beside it is maestro's again")
