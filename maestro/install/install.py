"""What `maestro install` does, in three phases (the verb itself: maestro/commands/install.py).

1. Validate every trust boundary — settings.json, the install manifest, every managed destination
   (maestro/install/upgrade.py: replace it, keep the user's edit with the new version beside it
   as `<name>.maestro-new`, or refuse), the Codex config, the private state files — before
   anything changes.
2. Compute the new settings.json and Codex config in memory.
3. Back up what `--force` replaces (maestro/install/backup.py), then publish every file atomically
   through one Transaction; a late failure rolls back every path already published, removes that
   backup and leaves no manifest lock file behind that this run created. The manifest
   (with its record of settings.json before the first install) is written before settings.json
   changes, so an install killed at any point still lets uninstall restore settings.json byte for
   byte; temp files a killed install left are swept by the next install or uninstall.
"""

import contextlib
import os
import shlex
import stat

from maestro import messages, paths, runtime
from maestro.errors import Exit, MaestroError
from maestro.install import (backup, codexconfig, launcher, manifest, plugins, publish, settings, statusline, targets,
                             upgrade)
from maestro.install.publish import read_file as _read_file
from maestro.install.transaction import Transaction, sweep_interrupted
from maestro.install.ui import fail, log, warn

SETTINGS_BEFORE = "settings-before-install.json"
UNINSTALL_BACKUP = ".maestro-uninstall.bak"  # settings.json's bytes before uninstall rewrote it


def destinations(keys) -> list:
    """Every path install (for manifest `keys`) or uninstall may write: where a killed one may have
    left a temp file."""
    config, settings_json = paths.codex_config(), settings.path()
    return [manifest.key_path(key) for key in keys] + [
        settings_json, settings_json + ".maestro.bak", settings_json + UNINSTALL_BACKUP,
        os.path.join(paths.maestro_dir(), SETTINGS_BEFORE), paths.install_manifest(), paths.ask_on_start_flag(),
        config, config + ".maestro.bak",
    ]

def _reject_symlink(path: str, label: str) -> None:
    if publish.is_symlink(path):
        fail(f"{label} is a symlink; refusing to replace it: {path}")


def _plan_migration(owned: dict):
    """Original Maestro hook files: (byte-identical ones to remove, modified ones to keep,
    entries whose file is already gone — dropped from the manifest)."""
    remove, keep, gone = [], [], []
    for key in manifest.original_maestro_keys(owned):
        ours = publish.holds_recorded(manifest.key_path(key), owned["files"][key])
        (gone if ours is None else remove if ours else keep).append(key)
    return remove, keep, gone


class _Plan:
    """Everything phase 3 writes, found (phase 1) and computed (phase 2) before any write."""

    # phase 1 (_validate): what is there now
    current: dict  # settings.json, parsed
    settings_raw: bytes  # its bytes (None when absent)
    settings_mode: int
    had_manifest: bool
    owned: dict  # the install manifest
    kept_workflow: list  # workflow keys an earlier --with-workflow installed: kept and upgraded
    sources: dict  # manifest key -> bytes to publish
    hashes: dict  # manifest key -> their sha256
    fates: list  # upgrade.Fate per source key: same, write (after a backup?) or keep
    stale_remove: list  # `.maestro-new` keys no longer needed: delete; drop from the manifest
    forget: list
    config_raw: bytes  # ~/.codex/config.toml (None when absent)
    migrate_remove: list  # original-Maestro keys to delete, to keep, already gone
    migrate_keep: list
    migrate_gone: list
    # phase 2 (_compute): what it becomes
    migrated_commands: int
    merged: int
    settings_bytes: bytes
    config_bytes: bytes  # None: leave the Codex config alone
    config_message: str

    def __init__(self, archive: str, with_workflow: bool, python: str, force: bool = False):
        self.archive, self.with_workflow, self.python, self.force = archive, with_workflow, python, force
        self.backup_dir = None  # made only when --force has something to back up
        self.pyz = paths.installed_pyz()
        self.config_path = paths.codex_config()


class _ManifestLock:
    """The manifest lock, held from the manifest rewrite until any rollback is done; remembers
    whether this run created its file, so that a rollback leaves none behind."""

    def __init__(self):
        self._stack = contextlib.ExitStack()
        self.created = self.held = False

    def acquire(self) -> None:
        self.created = not os.path.lexists(manifest.lock_path())
        self._stack.enter_context(manifest.locked())
        self.held = True

    def remove_file_if_created(self) -> None:
        if self.created and self.held:
            try:
                os.unlink(manifest.lock_path())
            except OSError:
                pass

    def close(self) -> None:
        self._stack.close()


def run(with_workflow: bool, bin_dir: str = None, with_launcher: bool = True, force: bool = False,
        with_statusline: bool = False) -> int:
    archive = runtime.archive_path()
    if not archive:
        raise MaestroError(
            "[maestro] install runs from the built archive: make build && python3 dist/maestro.pyz install",
            Exit.ERROR,
        )
    from maestro.install import interpreter

    python, stable_python = interpreter.stable_interpreter()
    if not python:
        fail("cannot tell which Python runs this install (sys.executable is empty); run it as python3 maestro.pyz install")
    plan = _Plan(archive, with_workflow, python, force)
    plan.with_statusline = with_statusline
    _validate(plan)  # phase 1: nothing is changed yet
    plan.launcher = launcher.plan(bin_dir, with_launcher, python, plan.pyz)  # refused alone, never the install
    _compute(plan)  # phase 2: in memory
    if _publish(plan) != Exit.OK:  # phase 3
        return Exit.ERROR
    _closing_notes(plan, stable_python)
    return Exit.OK


def _validate(plan: _Plan) -> None:
    """Phase 1: validate every trust boundary; nothing is changed yet."""
    try:
        plan.current, plan.settings_raw, plan.settings_mode = settings.read(exact_numbers=True)
    except settings.SettingsError as exc:
        fail(f"{exc}; no files were changed. Fix it and re-run.")
    plan.had_manifest = os.path.lexists(paths.install_manifest())
    try:
        plan.owned = manifest.read(strict=True)
    except manifest.ManifestError as exc:
        fail(f"{exc}; refusing to overwrite managed files")
    recorded = plan.owned["files"]
    plan.kept_workflow = [] if plan.with_workflow else upgrade.kept_workflow_keys(recorded)
    plan.sources = targets.sources(plan.archive, targets.payload_keys(plan.with_workflow) + plan.kept_workflow)
    plan.hashes = {key: manifest.sha256(data) for key, data in plan.sources.items()}
    plan.fates, refusals = upgrade.judge(plan.sources, plan.hashes, recorded, plan.force)
    if refusals:
        upgrade.refuse(refusals)
    plan.stale_remove, plan.forget = upgrade.stale_new_copies(plan.fates, recorded)
    plan.forget += upgrade.gone_workflow_keys(recorded, plan.sources)
    for path, label in (
        (plan.config_path, "Codex config"),
        (plan.config_path + ".maestro.bak", "Codex config backup"),
        (settings.path() + ".maestro.bak", "settings backup"),
        (paths.ask_on_start_flag(), "ask-on-start preference"),
        (os.path.join(paths.maestro_dir(), SETTINGS_BEFORE), "settings snapshot"),
    ) + (((backup.root(), "backup directory"),) if any(fate.backup for fate in plan.fates) else ()):
        _reject_symlink(path, label)
    try:
        plan.config_raw = _read_file(plan.config_path)
    except OSError as exc:
        fail(f"cannot read the Codex config ({exc.strerror or exc}): {plan.config_path}; no files were changed")
    plan.migrate_remove, plan.migrate_keep, plan.migrate_gone = _plan_migration(plan.owned)
    from maestro.codex.discovery import find_companion

    if not find_companion():
        warn("the Codex plugin (openai/codex-plugin-cc) was not found; maestro needs it to run Codex.")
        warn(f"Install it in Claude Code:  {messages.CODEX_PLUGIN}; then sign in with `codex login`.")
        warn("Continuing: the hooks work now, the loop will once the plugin is there.")
    if (plan.with_workflow or plan.kept_workflow) and not plugins.has_ralph_loop():
        warn("the ralph-loop plugin was not found; the workflow rule's outer loop (/ralph-loop, /cancel-ralph) "
             f"needs it. Install it in Claude Code:  {messages.RALPH_LOOP_PLUGIN}")
        warn("Continuing: until then, drive each plan by hand with `maestro loop`.")


def _compute(plan: _Plan) -> None:
    """Phase 2: compute the new settings and config in memory."""
    import copy

    new_settings = copy.deepcopy(plan.current)
    # The original's commands go whether or not its files are still there: left behind they would
    # run a missing script on every edit and prompt.
    plan.migrated_commands = settings.strip(new_settings, settings.original_command_script)
    plan.merged = settings.ensure_hooks(new_settings, plan.python, plan.pyz)
    # --statusline registers it where there is none; a later plain install keeps ours current
    wanted = plan.with_statusline or statusline.is_ours(new_settings.get(statusline.KEY))
    plan.statusline = statusline.ensure(new_settings, plan.python, plan.pyz) if wanted else ""
    # Rewrite settings.json only when its content changes: a file that already holds every entry
    # keeps its bytes (formatting included), so an identical re-install touches nothing.
    changed = (plan.merged or plan.migrated_commands or plan.settings_raw is None
               or plan.statusline in (statusline.REGISTERED, statusline.UPDATED))
    plan.settings_bytes = settings.dumps(new_settings) if changed else plan.settings_raw
    plan.config_bytes, plan.config_message = (
        (None, "") if plan.config_raw is None else codexconfig.with_web_search_disabled(plan.config_raw))


def _publish(plan: _Plan) -> int:
    """Phase 3: publish; on any failure restore every path already changed."""
    tx = Transaction()
    lock = _ManifestLock()
    owned_keys = [key for key in plan.owned["files"] if manifest.is_managed_key(key)]
    new_copies = [upgrade.new_key(key) for key in plan.sources]
    sweep_interrupted(destinations(sorted(set(plan.sources) | set(new_copies) | set(owned_keys))))
    try:
        plan.backup_dir = upgrade.back_up(plan.fates)  # before anything is replaced
        _publish_files(tx, plan)
        _migrate_original(tx, plan)
        before_record = _snapshot_settings(tx, plan)
        _publish_manifest(tx, plan, before_record, lock)  # before settings.json changes: see the docstring
        _publish_settings(tx, plan)
        _publish_codex_config(tx, plan)
        _publish_ask_on_start(tx, plan)
        launcher.publish(tx, plan.launcher, log, warn)
    except (OSError, MaestroError) as exc:
        failures = tx.rollback()
        lock.remove_file_if_created()
        if plan.backup_dir:
            backup.discard(plan.backup_dir)  # what it held is back where it was
        if isinstance(exc, MaestroError):
            reason = exc.message
        else:
            reason = f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc)
        warn(f"installation failed; rolled back {len(tx.changed) - len(failures)} published path(s): {reason}")
        if failures:
            warn("rollback incomplete — " + "; ".join(failures))
        return Exit.ERROR
    finally:
        lock.close()
    return Exit.OK


def _publish_files(tx: Transaction, plan: _Plan) -> None:
    changed = 0
    for fate in plan.fates:
        if fate.action == upgrade.WRITE:
            tx.write(fate.path, fate.data, 0o755 if fate.key == targets.PYZ_KEY else 0o644)
            changed += 1
        elif fate.action == upgrade.KEEP and fate.new_current != fate.data:
            tx.write(fate.new_path, fate.data, 0o644)
            changed += 1
    for key in plan.stale_remove:
        tx.remove(manifest.key_path(key))
    log(
        "hooks/maestro.pyz, rules and skills already matched the installed bytes"
        if changed == 0
        else f"published {changed} changed file{'s' if changed != 1 else ''} into {paths.claude_dir()}"
    )


def _migrate_original(tx: Transaction, plan: _Plan) -> None:
    for key in plan.migrate_remove:
        tx.remove(manifest.key_path(key))
    if plan.migrate_remove or plan.migrate_keep or plan.migrated_commands:
        log(f"migrated from the original Maestro: removed {len(plan.migrate_remove)} unmodified hook file(s) "
            f"and {plan.migrated_commands} of its hook command(s)")
    for key in plan.migrate_keep:
        warn(f"kept {manifest.key_path(key)}: it changed after the original Maestro installed it")


def _snapshot_settings(tx: Transaction, plan: _Plan):
    """The manifest's `settings_before` record (None when there is none to keep); on the first
    install that changes settings.json, also its pre-install bytes (the snapshot uninstall restores)."""
    before_record = plan.owned.get("settings_before")
    if plan.settings_bytes == plan.settings_raw or isinstance(before_record, dict):
        return before_record
    from maestro.util.atomic import ensure_private_dir

    ensure_private_dir(paths.maestro_dir())
    if plan.settings_raw is not None:
        tx.write(os.path.join(paths.maestro_dir(), SETTINGS_BEFORE), plan.settings_raw, 0o600)
    return {"existed": plan.settings_raw is not None}


def _publish_settings(tx: Transaction, plan: _Plan) -> None:
    """Write settings.json (its backup first) when it changes."""
    if plan.settings_bytes == plan.settings_raw:
        log("settings.json already had every maestro hook entry")
        return
    if plan.settings_raw is not None:
        tx.write(settings.path() + ".maestro.bak", plan.settings_raw, plan.settings_mode)
        log("backed up settings.json → settings.json.maestro.bak")
    tx.write(settings.path(), plan.settings_bytes, plan.settings_mode)
    log(f"registered {plan.merged} maestro hook entr{'y' if plan.merged == 1 else 'ies'} in settings.json")
    if plan.statusline in (statusline.REGISTERED, statusline.UPDATED):
        log(f"{plan.statusline} the maestro statusLine in settings.json (maestro statusline)")


def _publish_codex_config(tx: Transaction, plan: _Plan) -> None:
    config_path = plan.config_path
    if plan.config_bytes is not None:
        tx.write(config_path + ".maestro.bak", plan.config_raw, stat.S_IMODE(os.stat(config_path).st_mode))
        tx.write(config_path, plan.config_bytes, stat.S_IMODE(os.stat(config_path).st_mode))
        log(plan.config_message + " (prevents hung jobs; MCP servers unaffected)")
    elif plan.config_raw is None:
        # the real file (CODEX_HOME may move it), `~/…` when under HOME
        warn(f'{paths.home_relative(config_path)} not found; after `codex login`, add:  web_search = "disabled"')
    else:
        log(plan.config_message)


def _publish_manifest(tx: Transaction, plan: _Plan, before_record, lock: _ManifestLock) -> None:
    """Rewrite the install manifest under its lock, re-read there: an entry a concurrent
    `memory skill promote` added is kept."""
    migrated = set(plan.migrate_remove) | set(plan.migrate_keep) | set(plan.migrate_gone)
    from maestro.util.atomic import ensure_private_dir

    ensure_private_dir(paths.maestro_dir())
    lock.acquire()
    try:
        fresh = manifest.read(strict=True)
    except manifest.ManifestError as exc:
        raise MaestroError(f"{exc}; refusing to overwrite managed files", Exit.ERROR) from None
    files = {k: v for k, v in fresh["files"].items() if k not in migrated and k not in plan.forget}
    for fate in plan.fates:  # a kept file keeps its old record: it is still not maestro's bytes
        files[upgrade.new_key(fate.key) if fate.action == upgrade.KEEP else fate.key] = plan.hashes[fate.key]
    record = {"version": 1, "files": dict(sorted(files.items()))}
    if isinstance(before_record, dict):
        record["settings_before"] = before_record
    new_manifest = manifest.dumps(record)
    if _read_file(paths.install_manifest()) != new_manifest:
        tx.write(paths.install_manifest(), new_manifest, 0o600)


def _publish_ask_on_start(tx: Transaction, plan: _Plan) -> None:
    if not plan.had_manifest and not os.path.lexists(paths.ask_on_start_flag()):
        tx.write(paths.ask_on_start_flag(), b"", 0o600)
        log("armed the session-start Codex model/effort question (~/.maestro/ask-on-start)")
        log(f"  turn it off with:  {messages.MAESTRO} model-select --ask-on-start off")
    elif not os.path.lexists(paths.ask_on_start_flag()):
        log("kept ask-on-start=off from the previous installation")


def _closing_notes(plan: _Plan, stable_python: bool) -> None:
    upgrade.report(plan.fates, plan.stale_remove)
    if plan.kept_workflow:
        kept = [manifest.key_path(key) for key in plan.kept_workflow]
        log(f"kept and updated {' and '.join(plan.kept_workflow)} from an earlier --with-workflow install; "
            f"remove with: rm {' '.join(shlex.quote(path) for path in kept)} (the next install forgets them)")
    elif not plan.with_workflow:
        log("skipped rules/workflow.md and the ralph-protocol skill; add them with: install --with-workflow")
    log(f"hooks run: {' '.join(shlex.quote(word) for word in settings.run_argv(plan.python, plan.pyz, 'gate'))}"
        " (when that cannot run, the gate blocks and names doctor)")
    if not stable_python:
        warn(f"{plan.python} lives in a versioned Python install and no stable alias (such as /usr/bin/python3) "
             "points at it: after upgrading that Python, re-run install (doctor reports it)")
    if plan.statusline == statusline.KEPT:
        warn("kept your own statusLine in settings.json; maestro's was not registered (it never replaces yours: "
             "call `maestro statusline` from your own command to add its line)")
    log("done. Restart Claude Code so the rules and hooks load.")
