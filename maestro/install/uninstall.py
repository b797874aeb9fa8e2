"""What `maestro uninstall [--purge]` does (the verb itself: maestro/commands/uninstall.py).

Delete the files the install manifest owns whose bytes are still the recorded ones (others are kept
and named), strip maestro's and the original Maestro's hook commands from settings.json — restoring
its exact pre-install bytes when nothing else changed it — remove the `maestro` launcher when it is
unchanged (maestro/install/launcher.py) and maestro's install state (~/.maestro/ask-on-start, the
settings snapshot, the direct-edit markers, the manifest lock file). Then say what is left behind
and the command that removes each: the memory store and the rest of ~/.maestro, the settings.json
backups, the lines and pin files in ~/.codex, the per-repository `.git/maestro-*` files.

`--purge` (confirmed by the command first) also deletes maestro's own state: ~/.maestro whole (the
memory store with it) and the settings.json backups install and uninstall made. Never anything in
~/.codex — config.toml is the user's Codex config, and the lines to delete are printed instead —
never a symlinked or foreign-owned ~/.maestro, and never a MAESTRO_MEMORY_DIR outside ~/.maestro
(another tool may share that store).

It usually runs from the very archive it removes (`maestro uninstall` runs ~/.claude/hooks/maestro.pyz),
and a module imported from a deleted archive cannot be read: so every module it (or the error
path, `crash`) needs is imported here, before anything is removed, and hooks/maestro.pyz goes last.
"""

import contextlib
import copy
import os
import shlex
import shutil
import stat

from maestro import crash, direct_edit, paths  # noqa: F401 - crash: cli's error path, loaded while the archive exists
from maestro.codex import pins
from maestro.errors import Exit
from maestro.install import codexconfig, launcher, manifest, settings, statusline, targets
from maestro.install.install import SETTINGS_BEFORE, UNINSTALL_BACKUP, destinations
from maestro.install.transaction import sweep_interrupted
from maestro.install.ui import fail, log, warn
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
    removed = settings.strip(stripped, _ours) + statusline.strip(stripped)
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


def run(purge: bool = False) -> int:
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
    left = launcher.remove(log) + codex_leftovers()
    _remove_private_state(snapshot)
    if archive_last:
        _remove_archive_last()
    problems = purge_state(purge_targets()) if purge else []
    _report(state_leftovers() + left)
    if problems:
        warn("--purge could not remove everything: " + "; ".join(problems))
        return Exit.ERROR
    log(f"done. {paths.home_relative(paths.codex_dir())} was left as it is: it holds your Codex config.")
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



# --- what uninstall leaves behind, and --purge -----------------------------------------------------

PIN_FILES = ("maestro-impl-effort", "maestro-impl-model", "maestro-scout", "maestro-pin.lock.flock")
REPOSITORY_FILES = ".git/maestro-*"  # provenance log, digest cache, write lease and job lock directories


def _shown(path: str) -> str:
    return paths.home_relative(path)


def _rm(path: str, recursive: bool = False) -> str:
    return ("rm -rf " if recursive else "rm ") + shlex.quote(path)


def _own_directory(path: str) -> bool:
    """A real directory (not a symlink) that belongs to this user: the only kind --purge deletes."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()


def _own_file(path: str) -> bool:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid()


def _settings_backups():
    return [settings.path() + ".maestro.bak", settings.path() + UNINSTALL_BACKUP]


def _memory_outside() -> str:
    """MAESTRO_MEMORY_DIR when it names a store outside ~/.maestro (--purge keeps it), else ''."""
    memory, home = os.path.realpath(paths.memory_dir()), os.path.realpath(paths.maestro_dir())
    return "" if memory == home or memory.startswith(home + os.sep) else paths.memory_dir()


def purge_targets():
    """(path, what it is) for each piece of maestro's own state that --purge deletes, as it is now."""
    found = []
    if _own_directory(paths.maestro_dir()):
        found.append((paths.maestro_dir(), "maestro's state: the memory store, discussions, plans, logs, Codex job data"))
    found += [(path, "a settings.json backup maestro made") for path in _settings_backups() if _own_file(path)]
    return found


def purge_state(found) -> list:
    """Delete what purge_targets found (a directory without following any symlink in it); the
    problems met, one line each."""
    problems = []
    for path, _ in found:
        try:
            if _own_directory(path):
                shutil.rmtree(path)
            elif _own_file(path):
                os.unlink(path)
            else:
                continue
            log(f"purged {_shown(path)}")
        except OSError as exc:
            problems.append(f"{path}: {exc.strerror or exc}")
    return problems


def state_leftovers():
    """(what, how to remove it) for maestro's own state still on disk."""
    left = []
    directory = paths.maestro_dir()
    if os.path.lexists(directory):
        what = f"{_shown(directory)}: maestro's state"
        if os.path.isdir(paths.memory_dir()) and not _memory_outside():
            what += f" — the memory store {_shown(paths.memory_dir())} (your notes), discussions, plans, logs"
        if not _own_directory(directory):
            what += " (a symlink or not yours: --purge leaves it)"
        left.append((what, _rm(directory, recursive=True)))
    if _memory_outside() and os.path.isdir(paths.memory_dir()):
        left.append((f"the memory store {_shown(paths.memory_dir())} (MAESTRO_MEMORY_DIR; another tool may share it, "
                     "so --purge leaves it)", _rm(paths.memory_dir(), recursive=True)))
    install_backup, uninstall_backup = _settings_backups()
    left += [(f"{_shown(path)}: {what}", _rm(path)) for path, what in (
        (install_backup, "settings.json as it was before install changed it"),
        (uninstall_backup, "settings.json as it was before uninstall changed it"),
    ) if os.path.lexists(path)]
    return left


def codex_leftovers():
    """(what, how to remove it) for what maestro put in ~/.codex: never removed by uninstall."""
    config, left = paths.codex_config(), []
    shown = _shown(config)
    raw = _read_bytes(config)
    if raw is not None and codexconfig.NOTE.splitlines()[0].encode() in raw:
        left.append((f"{shown}: the `web_search = \"disabled\"` line install added, with the two `# maestro:` "
                     "comment lines above it", "delete those three lines to turn Codex's web search back on"))
    top, _problem = pins.read_config_top_level(config)
    pinned = [key for key in ("model", "model_reasoning_effort") if key in top]
    if pinned:
        left.append((f"{shown}: the Codex pins {' and '.join(pinned)} (set by model-select, or by you)",
                     "delete those lines unless Codex should keep using them"))
    files = [os.path.join(paths.codex_dir(), name) for name in PIN_FILES] + [config + ".maestro.bak"]
    files = [path for path in files if os.path.lexists(path)]
    if files:
        left.append((f"maestro's pin files and config backup in {_shown(paths.codex_dir())}",
                     "rm " + " ".join(shlex.quote(path) for path in files)))
    return left


def _read_bytes(path: str):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _report(left) -> None:
    left = left + [(f"in each repository maestro ran in: {REPOSITORY_FILES} (provenance log, digest cache, locks)",
                    f"rm -rf {REPOSITORY_FILES} there, once no maestro loop runs in it")]
    log("left behind (remove what you no longer want):")
    for what, how in left:
        log(f"  {what}: {how}")
