"""What `maestro uninstall` does (the verb itself: maestro/commands/uninstall.py).

Delete the files the install manifest owns whose bytes are still the recorded ones (others are kept
and named), strip maestro's and the original Maestro's hook commands from settings.json — restoring
its exact pre-install bytes when nothing else changed it — and remove maestro's private state
(~/.maestro/ask-on-start, the settings snapshot, the direct-edit markers, the manifest lock file).

It usually runs from the very archive it removes (`python3 ~/.claude/hooks/maestro.pyz uninstall`),
and a module imported from a deleted archive cannot be read: so every module it (or the error
path, `crash`) needs is imported here, before anything is removed, and hooks/maestro.pyz goes last.
"""

import contextlib
import copy
import os
import stat

from maestro import crash, direct_edit, paths  # noqa: F401 - crash: cli's error path, loaded while the archive exists
from maestro.errors import Exit
from maestro.install import manifest, settings, targets
from maestro.install.install import SETTINGS_BEFORE, UNINSTALL_BACKUP, destinations
from maestro.install.transaction import sweep_interrupted
from maestro.install.ui import fail, log
from maestro.util import atomic


def _prune_empty_parents(path: str) -> None:
    claude = paths.claude_dir()
    parent = os.path.dirname(path)
    while parent.startswith(claude + os.sep):
        try:
            os.rmdir(parent)
        except OSError:
            return
        parent = os.path.dirname(parent)


def _remove_owned_files(owned: dict):
    """Delete the owned files whose bytes are the recorded ones, except the archive: (manifest
    entries kept, whether hooks/maestro.pyz is to be removed last)."""
    remaining, archive_last = {}, False
    for key, recorded in owned["files"].items():
        if not manifest.is_managed_key(key) or not manifest.is_sha256(recorded):
            log(f"kept untrusted manifest entry {key}")
            remaining[key] = recorded
            continue
        path = manifest.key_path(key)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(st.st_mode):
            log(f"kept {key} — it is not a regular owned file")
            remaining[key] = recorded
            continue
        with open(path, "rb") as handle:
            if manifest.sha256(handle.read()) != recorded:
                log(f"kept {key} — its bytes changed after installation")
                remaining[key] = recorded
                continue
        if key == targets.PYZ_KEY:
            archive_last = True  # most likely the archive this code runs from
            continue
        os.unlink(path)
        log(f"removed {key}")
        _prune_empty_parents(path)
    return remaining, archive_last


def _remove_archive_last() -> None:
    path = manifest.key_path(targets.PYZ_KEY)
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    log(f"removed {targets.PYZ_KEY}")
    _prune_empty_parents(path)


def _ours(hook) -> bool:
    return bool(settings.managed_verb(hook) or settings.original_command_script(hook))


KEEP = object()  # leave settings.json as it is


class RestoredBytes(bytes):
    """The exact pre-install bytes of settings.json (as opposed to a stripped re-serialisation)."""


DELETE = object()  # settings.json did not exist before install


def _restored_settings(current: dict, owned, snapshot: str):
    """What settings.json should become: bytes, KEEP or DELETE."""
    stripped = copy.deepcopy(current)
    removed = settings.strip(stripped, _ours)
    record = owned.get("settings_before") if isinstance(owned, dict) else None
    if isinstance(record, dict):
        comparable = settings.without_empty_hooks(stripped)
        if record.get("existed") is False:
            if comparable == {}:
                return DELETE
        else:
            try:
                with open(snapshot, "rb") as handle:
                    original = handle.read()
                before = settings.without_empty_hooks(settings.loads_strict(original, exact_numbers=True))
                if before == comparable:
                    return RestoredBytes(original)  # nothing else changed it: the exact pre-install bytes
            except (OSError, ValueError):
                pass
    return settings.dumps(stripped) if removed else KEEP


def _manifest_lock():
    """The install-manifest lock (shared with install and `memory skill promote`) while the manifest
    is read and rewritten; nothing to lock when ~/.maestro is not a directory (then no manifest)."""
    try:
        is_dir = stat.S_ISDIR(os.lstat(paths.maestro_dir()).st_mode)
    except FileNotFoundError:
        is_dir = False
    return manifest.locked() if is_dir else contextlib.nullcontext()


def _remove_manifest_files():
    """(the manifest as read — None when invalid —, whether hooks/maestro.pyz is to go last)."""
    owned, archive_last = manifest.read(strict=False), False
    if owned is None:
        log("ownership manifest invalid — kept all installed files; deleting by name alone is not safe")
    elif owned["files"] or "settings_before" in owned:
        remaining, archive_last = _remove_owned_files(owned)
        if remaining:
            atomic.write_atomic(paths.install_manifest(), manifest.dumps({"version": 1, "files": remaining}), 0o600)
        else:
            os.unlink(paths.install_manifest())
    else:
        log("no ownership manifest — kept all installed files")
    return owned, archive_last


def _sweep_interrupted_install(owned) -> None:
    """Temp files an install killed mid-write left beside what it publishes."""
    keys = set(targets.payload_keys(True)) | {targets.PYZ_KEY}
    if isinstance(owned, dict):
        keys |= {key for key in owned.get("files", {}) if manifest.is_managed_key(key)}
    sweep_interrupted(destinations(sorted(keys)))


def run() -> int:
    try:
        current, raw, mode = settings.read(exact_numbers=True)
    except settings.SettingsError as exc:
        fail(f"{exc}; refusing a partial uninstall.")
    _sweep_interrupted_install(manifest.read(strict=False))
    try:
        with _manifest_lock():
            owned, archive_last = _remove_manifest_files()
    except manifest.ManifestBusy as exc:
        fail(f"{exc}; nothing was removed")

    snapshot = os.path.join(paths.maestro_dir(), SETTINGS_BEFORE)
    restored = KEEP if raw is None else _restored_settings(current, owned, snapshot)
    if restored is not KEEP and restored != raw:
        atomic.write_atomic(settings.path() + UNINSTALL_BACKUP, raw, mode)
        if restored is DELETE:
            os.unlink(settings.path())
            log("removed settings.json: it did not exist before maestro was installed")
        else:
            atomic.write_atomic(settings.path(), restored, mode)
            log("restored settings.json to its exact pre-install bytes" if isinstance(restored, RestoredBytes)
                else "removed maestro's hook entries from settings.json (other hooks kept)")
    _remove_private_state(snapshot)
    if archive_last:
        _remove_archive_last()
    log('done. web_search = "disabled" and the Codex pins in ~/.codex were left as they are.')
    return Exit.OK


def _remove_private_state(snapshot: str) -> None:
    for path in (paths.ask_on_start_flag(), snapshot):
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                os.unlink(path)
                if path == paths.ask_on_start_flag():
                    log("removed ~/.maestro/ask-on-start")
        except FileNotFoundError:
            pass
    directory = paths.direct_edit_dir()
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        direct_edit.clear_all_flags()
        try:
            os.rmdir(directory)
        except OSError:
            pass
        log("removed the private direct-edit authorization markers")
    manifest.drop_lock_file()  # the shared manifest lock file must not keep ~/.maestro alive
    try:
        os.rmdir(paths.maestro_dir())
    except OSError:
        pass

