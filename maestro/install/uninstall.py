"""What `maestro uninstall` does (the verb itself: maestro/commands/uninstall.py).

Delete the files the install manifest owns whose bytes are still the recorded ones (others are kept
and named), strip maestro's and the original Maestro's hook commands from settings.json — restoring
its exact pre-install bytes when nothing else changed it — and remove maestro's private state
(~/.maestro/ask-on-start, the settings snapshot, the direct-edit markers, the manifest lock file).
"""

import os
import stat

from maestro import paths
from maestro.errors import Exit
from maestro.install import manifest, settings
from maestro.install.install import SETTINGS_BEFORE
from maestro.install.ui import fail, log


def _prune_empty_parents(path: str) -> None:
    claude = paths.claude_dir()
    parent = os.path.dirname(path)
    while parent.startswith(claude + os.sep):
        try:
            os.rmdir(parent)
        except OSError:
            return
        parent = os.path.dirname(parent)


def _remove_owned_files(owned: dict) -> dict:
    remaining = {}
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
        os.unlink(path)
        log(f"removed {key}")
        _prune_empty_parents(path)
    return remaining


def _ours(hook) -> bool:
    return bool(settings.managed_verb(hook) or settings.original_command_script(hook))


KEEP = object()  # leave settings.json as it is


class RestoredBytes(bytes):
    """The exact pre-install bytes of settings.json (as opposed to a stripped re-serialisation)."""


DELETE = object()  # settings.json did not exist before install


def _restored_settings(current: dict, owned, snapshot: str):
    """What settings.json should become: bytes, KEEP or DELETE."""
    import copy
    import json

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
                if json.loads(original.decode("utf-8-sig")) in (comparable, stripped):
                    return RestoredBytes(original)  # nothing else changed it: the exact pre-install bytes
            except (OSError, ValueError):
                pass
    return settings.dumps(stripped) if removed else KEEP


def _manifest_lock():
    """The install-manifest lock (shared with install and `memory skill promote`) while the manifest
    is read and rewritten; nothing to lock when ~/.maestro is not a directory (then no manifest)."""
    import contextlib

    try:
        is_dir = stat.S_ISDIR(os.lstat(paths.maestro_dir()).st_mode)
    except FileNotFoundError:
        is_dir = False
    return manifest.locked() if is_dir else contextlib.nullcontext()


def _remove_manifest_files():
    owned = manifest.read(strict=False)
    if owned is None:
        log("ownership manifest invalid — kept all installed files; deleting by name alone is not safe")
    elif owned["files"] or "settings_before" in owned:
        remaining = _remove_owned_files(owned)
        if remaining:
            from maestro.util.atomic import write_atomic

            write_atomic(paths.install_manifest(), manifest.dumps({"version": 1, "files": remaining}), 0o600)
        else:
            os.unlink(paths.install_manifest())
    else:
        log("no ownership manifest — kept all installed files")
    return owned


def run() -> int:
    try:
        current, raw, mode = settings.read()
    except settings.SettingsError as exc:
        fail(f"{exc}; refusing a partial uninstall.")
    try:
        with _manifest_lock():
            owned = _remove_manifest_files()
    except manifest.ManifestBusy as exc:
        fail(f"{exc}; nothing was removed")

    snapshot = os.path.join(paths.maestro_dir(), SETTINGS_BEFORE)
    restored = KEEP if raw is None else _restored_settings(current, owned, snapshot)
    if restored is not KEEP and restored != raw:
        from maestro.util.atomic import write_atomic

        write_atomic(settings.path() + ".maestro-uninstall.bak", raw, mode)
        if restored is DELETE:
            os.unlink(settings.path())
            log("removed settings.json: it did not exist before maestro was installed")
        else:
            write_atomic(settings.path(), restored, mode)
            log("restored settings.json to its exact pre-install bytes" if isinstance(restored, RestoredBytes)
                else "removed maestro's hook entries from settings.json (other hooks kept)")
    _remove_private_state(snapshot)
    log('done. web_search = "disabled" and the Codex pins in ~/.codex were left as they are.')
    return Exit.OK


def _remove_private_state(snapshot: str) -> None:
    from maestro import direct_edit as flags

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
        flags.clear_all_flags()
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

