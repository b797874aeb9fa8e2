"""`install [--with-workflow]`: publish maestro into Claude Code, safely.

Copies the running maestro.pyz to ~/.claude/hooks/, the rules and skills beside it, and
registers the SessionStart, UserPromptSubmit, PreToolUse and Stop hooks as commands that run the
installed archive with an absolute interpreter path that survives a Python upgrade
(maestro/install/interpreter.py) and that fail closed when they cannot run
(maestro/install/settings.py: the gate then blocks and names `doctor`). Everything is validated before
anything changes; then every file is published atomically, and a late failure rolls back every
path already published. An original (Bash/Node) Maestro install is migrated in the same step.
"""

import contextlib
import os
import shlex
import stat
import sys

from maestro import paths, runtime
from maestro.errors import Exit, MaestroError
from maestro.install import codexconfig, manifest, settings, targets
from maestro.install.transaction import Transaction
from maestro.install.ui import fail, log, warn

SETTINGS_BEFORE = "settings-before-install.json"


def _parse(argv):
    unknown = [arg for arg in argv if arg != "--with-workflow"]
    if argv in (["--help"], ["-h"]):
        return None
    if unknown:
        raise MaestroError(
            f"[maestro] WARN: unknown option: {', '.join(unknown)}\nusage: maestro install [--with-workflow]",
            Exit.ERROR,
        )
    return "--with-workflow" in argv


def _reject_symlink(path: str, label: str) -> None:
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            fail(f"{label} is a symlink; refusing to replace it: {path}")
    except FileNotFoundError:
        pass


def _read_file(path: str):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _check_destination(key: str, source_hash: str, recorded: str) -> bytes:
    """Refuse symlinked or unowned destinations; return the current bytes (None if absent)."""
    claude = paths.claude_dir()
    destination = manifest.key_path(key)
    parent = os.path.dirname(destination)
    while parent.startswith(claude + os.sep):
        _reject_symlink(parent, "managed directory")
        parent = os.path.dirname(parent)
    _reject_symlink(destination, "managed destination")
    try:
        st = os.lstat(destination)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        fail(f"managed destination is not a regular file: {destination}")
    current = _read_file(destination)
    current_hash = manifest.sha256(current)
    if current_hash != source_hash and current_hash != recorded:
        fail(f"refusing to overwrite modified or unowned file: {destination}")
    return current


def _plan_migration(owned: dict):
    """Original Maestro hook files: (byte-identical ones to remove, modified ones to keep,
    entries whose file is already gone — dropped from the manifest)."""
    remove, keep, gone = [], [], []
    for key in manifest.original_maestro_keys(owned):
        path = manifest.key_path(key)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            gone.append(key)
            continue
        if stat.S_ISREG(st.st_mode) and manifest.sha256(_read_file(path)) == owned["files"][key]:
            remove.append(key)
        else:
            keep.append(key)
    return remove, keep, gone


def run(with_workflow: bool) -> int:
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
    pyz = paths.installed_pyz()

    # Phase 1: validate every trust boundary; nothing is changed yet.
    try:
        current, settings_raw, settings_mode = settings.read()
    except settings.SettingsError as exc:
        fail(f"{exc}; no files were changed. Fix it and re-run.")
    had_manifest = os.path.lexists(paths.install_manifest())
    try:
        owned = manifest.read(strict=True)
    except manifest.ManifestError as exc:
        fail(f"{exc}; refusing to overwrite managed files")
    sources = targets.sources(archive, with_workflow)
    hashes = {key: manifest.sha256(data) for key, data in sources.items()}
    existing = {key: _check_destination(key, hashes[key], owned["files"].get(key)) for key in sources}
    config_path = paths.codex_config()
    for path, label in (
        (config_path, "Codex config"),
        (config_path + ".maestro.bak", "Codex config backup"),
        (settings.path() + ".maestro.bak", "settings backup"),
        (paths.ask_on_start_flag(), "ask-on-start preference"),
        (os.path.join(paths.maestro_dir(), SETTINGS_BEFORE), "settings snapshot"),
    ):
        _reject_symlink(path, label)
    try:
        config_raw = _read_file(config_path)
    except OSError as exc:
        fail(f"cannot read the Codex config ({exc.strerror or exc}): {config_path}; no files were changed")
    migrate_remove, migrate_keep, migrate_gone = _plan_migration(owned)
    from maestro.codex.discovery import find_companion

    if not find_companion():
        warn("the Codex plugin (openai/codex-plugin-cc) was not found; maestro needs it to run Codex.")
        warn("Install it in Claude Code:  /plugin install codex@openai-codex   then sign in with `codex login`.")
        warn("Continuing: the hooks work now, the loop will once the plugin is there.")

    # Phase 2: compute the new settings and config in memory.
    import copy

    new_settings = copy.deepcopy(current)
    # The original's commands go whether or not its files are still there: left behind they would
    # run a missing script on every edit and prompt.
    migrated_commands = settings.strip(new_settings, settings.original_command_script)
    merged = settings.ensure_hooks(new_settings, python, pyz)
    # Rewrite settings.json only when its content changes: a file that already holds every entry
    # keeps its bytes (formatting included), so an identical re-install touches nothing.
    settings_bytes = settings.dumps(new_settings) if (merged or migrated_commands or settings_raw is None) else settings_raw
    config_bytes, config_message = (None, "") if config_raw is None else codexconfig.with_web_search_disabled(config_raw)

    # Phase 3: publish; on any failure restore every path already changed.
    tx = Transaction()
    lock = contextlib.ExitStack()  # the manifest lock, held from the manifest rewrite until any rollback is done
    lock_created = lock_held = False
    try:
        changed = 0
        for key, data in sources.items():
            if existing[key] != data:
                tx.write(manifest.key_path(key), data, 0o755 if key == targets.PYZ_KEY else 0o644)
                changed += 1
        log(
            "hooks/maestro.pyz, rules and skills already matched the installed bytes"
            if changed == 0
            else f"published {changed} changed file{'s' if changed != 1 else ''} into {paths.claude_dir()}"
        )
        for key in migrate_remove:
            tx.remove(manifest.key_path(key))
        if migrate_remove or migrate_keep or migrated_commands:
            log(f"migrated from the original Maestro: removed {len(migrate_remove)} unmodified hook file(s) "
                f"and {migrated_commands} of its hook command(s)")
        for key in migrate_keep:
            warn(f"kept {manifest.key_path(key)}: it changed after the original Maestro installed it")

        before_record = owned.get("settings_before")
        snapshot_path = os.path.join(paths.maestro_dir(), SETTINGS_BEFORE)
        if settings_bytes != settings_raw:
            if not isinstance(before_record, dict):
                from maestro.util.atomic import ensure_private_dir

                ensure_private_dir(paths.maestro_dir())
                before_record = {"existed": settings_raw is not None}
                if settings_raw is not None:
                    tx.write(snapshot_path, settings_raw, 0o600)
            if settings_raw is not None:
                tx.write(settings.path() + ".maestro.bak", settings_raw, settings_mode)
                log("backed up settings.json → settings.json.maestro.bak")
            tx.write(settings.path(), settings_bytes, settings_mode)
            log(f"registered {merged} maestro hook entr{'y' if merged == 1 else 'ies'} in settings.json")
        else:
            log("settings.json already had every maestro hook entry")

        if config_bytes is not None:
            tx.write(config_path + ".maestro.bak", config_raw, stat.S_IMODE(os.stat(config_path).st_mode))
            tx.write(config_path, config_bytes, stat.S_IMODE(os.stat(config_path).st_mode))
            log(config_message + " (prevents hung jobs; MCP servers unaffected)")
        elif config_raw is None:
            warn('~/.codex/config.toml not found; after `codex login`, add:  web_search = "disabled"')
        else:
            log(config_message)

        migrated = set(migrate_remove) | set(migrate_keep) | set(migrate_gone)
        from maestro.util.atomic import ensure_private_dir

        ensure_private_dir(paths.maestro_dir())
        lock_created = not os.path.lexists(manifest.lock_path())
        lock.enter_context(manifest.locked())
        lock_held = True
        try:  # re-read under the lock: keep an entry a concurrent `memory skill promote` added
            fresh = manifest.read(strict=True)
        except manifest.ManifestError as exc:
            raise MaestroError(f"{exc}; refusing to overwrite managed files", Exit.ERROR) from None
        files = {k: v for k, v in fresh["files"].items() if k not in migrated}
        files.update(hashes)
        record = {"version": 1, "files": dict(sorted(files.items()))}
        if isinstance(before_record, dict):
            record["settings_before"] = before_record
        new_manifest = manifest.dumps(record)
        if _read_file(paths.install_manifest()) != new_manifest:
            tx.write(paths.install_manifest(), new_manifest, 0o600)
        if not had_manifest and not os.path.lexists(paths.ask_on_start_flag()):
            tx.write(paths.ask_on_start_flag(), b"", 0o600)
            log("armed the session-start Codex model/effort question (~/.maestro/ask-on-start)")
            log("  turn it off with:  python3 ~/.claude/hooks/maestro.pyz model-select --ask-on-start off")
        elif not os.path.lexists(paths.ask_on_start_flag()):
            log("kept ask-on-start=off from the previous installation")
    except (OSError, MaestroError) as exc:
        failures = tx.rollback()
        if lock_created and lock_held:  # leave no lock file behind that this run created
            try:
                os.unlink(manifest.lock_path())
            except OSError:
                pass
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
    if not with_workflow:
        log("skipped rules/workflow.md and the ralph-protocol skill; add them with: install --with-workflow")
    log(f"hooks run: {' '.join(shlex.quote(word) for word in settings.run_argv(python, pyz, 'gate'))}"
        " (when that cannot run, the gate blocks and names doctor)")
    if not stable_python:
        warn(f"{python} lives in a versioned Python install and no stable alias (such as /usr/bin/python3) "
             "points at it: after upgrading that Python, re-run install (doctor reports it)")
    log("done. Restart Claude Code so the rules and hooks load.")
    return Exit.OK


def main(argv) -> int:
    with_workflow = _parse(list(argv))
    if with_workflow is None:
        sys.stdout.write(__doc__.strip() + "\n\nusage: maestro install [--with-workflow]\n")
        return Exit.OK
    return run(with_workflow)
