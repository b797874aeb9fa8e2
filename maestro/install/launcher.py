"""The `maestro` command on PATH: a small sh script that `install` writes and `uninstall` removes.

    #!/bin/sh
    # maestro launcher, written by `maestro install` …
    exec /usr/bin/python3 -I -S -c 'import sys;sys.path[:0]=sys.argv[1:2];import maestro_hook' /home/me/.claude/hooks/maestro.pyz "$@"

It starts the archive the way the hooks do (settings.LAUNCHER: the archive's root module
`maestro_hook`, no runpy, ~9 ms less a call than `python3 -I -S PYZ`; build.py's HOOK_LAUNCHER gives a
command-line verb on a too-old Python the archive's own one line). An older install wrote that
runpy shape (`legacy_script`): it is still recognised as ours (replaced by install, removed by
uninstall, named by doctor as one to upgrade).

Both paths are absolute: the interpreter install recorded for the hooks (one that survives a
routine Python upgrade, maestro/install/interpreter.py) and the installed archive (under
CLAUDE_CONFIG_DIR when set), so `maestro <verb>` runs the installed maestro with a Python that can
run it even where `python3` on PATH is too old. The default place is ~/.local/bin/maestro
(`install --bin-dir DIR` picks another, `--no-launcher` skips the step).

Ownership: `~/.maestro/launcher.json` records the path, the sha256 of the bytes written and the
directories install created for it. Install replaces a file at the path only when its bytes are
the recorded ones (or already the new ones); anything else there — a user's own `maestro`, a
symlink, a directory — is left alone and that one step is refused with one line while the rest
installs. Uninstall deletes the launcher only when its bytes are still the recorded ones and
they are a launcher script of this shape (a tampered record cannot make it delete another file);
an edited one is kept and named. The hooks never use the launcher: settings.json keeps their
absolute command.
"""

import json
import os
import shlex
import shutil
import stat

from maestro import paths
from maestro.install import manifest
from maestro.install.settings import LAUNCHER as ENTRY
from maestro.util import atomic

NAME = "maestro"
RECORD_NAME = "launcher.json"
RECORD_LIMIT = 64 * 1024
HEADER = b"#!/bin/sh\n# maestro launcher, written by `maestro install` (`maestro uninstall` removes it unless edited)\n"
MODE = 0o755


def default_bin_dir() -> str:
    return os.path.join(paths.home(), ".local", "bin")


def record_path() -> str:
    return os.path.join(paths.maestro_dir(), RECORD_NAME)


def argv(python: str, pyz: str) -> list:
    """What the launcher execs, before the user's arguments: the archive's entry module, as the hooks run it."""
    return [python, "-I", "-S", "-c", ENTRY, pyz]


def script(python: str, pyz: str) -> bytes:
    """The launcher's bytes: exec the installed archive with the recorded interpreter."""
    return HEADER + f'exec {shlex.join(argv(python, pyz))} "$@"\n'.encode()


def legacy_script(python: str, pyz: str) -> bytes:
    """The bytes an older install wrote: the archive run as a script (through runpy)."""
    return HEADER + f'exec {shlex.quote(python)} -I -S {shlex.quote(pyz)} "$@"\n'.encode()


def is_launcher_script(data: bytes) -> bool:
    """Bytes of the shape `script` writes (whatever interpreter and archive they name)."""
    if not data or not data.startswith(HEADER):
        return False
    rest = data[len(HEADER):]
    return rest.startswith(b"exec ") and rest.endswith(b' "$@"\n') and rest.count(b"\n") == 1


def interpreter_of(data: bytes) -> str:
    """The interpreter a launcher script execs ('' when the bytes are not one)."""
    if not is_launcher_script(data):
        return ""
    try:
        words = shlex.split(data[len(HEADER):].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return ""
    return words[1] if len(words) > 1 else ""


def is_legacy_shape(data: bytes) -> bool:
    """A launcher script of the older, runpy shape (`legacy_script`, whatever interpreter and archive)."""
    if not is_launcher_script(data):
        return False
    try:
        words = shlex.split(data[len(HEADER):].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return False
    return len(words) == 6 and words[2:4] == ["-I", "-S"] and legacy_script(words[1], words[4]) == data


class RecordError(ValueError):
    """The launcher record is not a regular file of the expected shape."""


def read_record():
    """The record as a dict, or None when there is none; RecordError when it cannot be trusted."""
    try:
        raw = atomic.read_regular(record_path(), RECORD_LIMIT)
    except atomic.NotRegular as exc:
        raise RecordError(f"{record_path()} is {exc.reason}") from None
    if raw is None:
        return None
    try:
        record = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise RecordError(f"{record_path()} is not valid JSON") from None
    ok = (isinstance(record, dict) and isinstance(record.get("path"), str) and os.path.isabs(record["path"])
          and manifest.is_sha256(record.get("sha256")) and isinstance(record.get("created_dirs", []), list))
    if not ok:
        raise RecordError(f"{record_path()} is not a launcher record")
    return record


def dumps_record(path: str, data: bytes, created_dirs) -> bytes:
    record = {"version": 1, "path": path, "sha256": manifest.sha256(data), "created_dirs": list(created_dirs)}
    return (json.dumps(record, indent=2, sort_keys=True) + "\n").encode()


def _missing_dirs(directory: str):
    """The directories `make_dirs(directory)` would create, deepest first; NotADirectoryError when
    an existing ancestor is not a directory."""
    missing = []
    while not os.path.isdir(directory):
        if os.path.lexists(directory):
            raise NotADirectoryError(directory)
        missing.append(directory)
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return missing


class Step:
    """What install does about the launcher, decided before anything is written (phase 1)."""

    def __init__(self):
        self.enabled = False  # write `data` to `path`
        self.path = self.data = self.record = None
        self.unchanged = False  # the launcher and its record already hold these bytes
        self.refusal = ""  # one line: why the launcher step is skipped ('' = not refused)
        self.previous = None  # the record of an earlier install (None: none, or not trusted)
        self.move_from = ""  # an earlier launcher elsewhere, unchanged: removed when this one is written
        self.kept_old = ""  # an earlier launcher elsewhere that was edited: kept
        self.created_dirs = []


def plan(bin_dir, enabled: bool, python: str, pyz: str) -> Step:
    """Phase 1 of install for the launcher: never raises for what is at the destination."""
    step = Step()
    try:
        step.previous = read_record()
    except RecordError as exc:
        step.refusal = f"skipped the `maestro` launcher: {exc}; move it away and re-run install"
        return step
    if not enabled:
        return step
    directory = os.path.abspath(os.path.expanduser(bin_dir or default_bin_dir()))
    step.path = os.path.join(directory, NAME)
    step.data = script(python, pyz)
    try:
        step.created_dirs = _missing_dirs(directory)
    except NotADirectoryError as exc:
        step.refusal = f"skipped the `maestro` launcher: {exc} is not a directory"
        return step
    previous = step.previous or {}
    same_place = previous.get("path") == step.path
    if same_place:
        step.created_dirs = [d for d in previous.get("created_dirs", []) if isinstance(d, str)] or step.created_dirs
    try:
        st = os.lstat(step.path)
    except FileNotFoundError:
        st = None
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            step.refusal = (f"skipped the `maestro` launcher: {step.path} is a symlink; refusing to replace it "
                            "(remove it, or choose another place with --bin-dir DIR)")
            return step
        current = _read_small(step.path) if stat.S_ISREG(st.st_mode) else None
        ours = current is not None and (current == step.data or (same_place and _is_recorded(current, previous)))
        if not ours:
            step.refusal = (f"skipped the `maestro` launcher: {step.path} exists and maestro did not write it; "
                            "left it alone (remove it, or choose another place with --bin-dir DIR)")
            return step
        step.unchanged = current == step.data
    step.enabled = True
    step.record = dumps_record(step.path, step.data, step.created_dirs)
    if step.unchanged:
        step.unchanged = _read_small(record_path()) == step.record
    if previous and not same_place:
        if _owned(previous):
            step.move_from = previous["path"]
        elif os.path.lexists(previous["path"]):
            step.kept_old = previous["path"]
    return step


def _read_small(path: str):
    """The bytes of a regular file no bigger than a launcher record may be, else None (a big
    `maestro` binary of another tool is simply not ours)."""
    try:
        return atomic.read_regular(path, RECORD_LIMIT)
    except (atomic.NotRegular, OSError):
        return None


def _is_recorded(data, record) -> bool:
    """`data` are the bytes the record names, and they are a launcher script: ours to replace or remove."""
    return data is not None and manifest.sha256(data) == record.get("sha256") and is_launcher_script(data)


def _owned(record) -> bool:
    """The recorded launcher is there with its recorded bytes, and they are a launcher script."""
    return _is_recorded(_read_small(record["path"]), record)


def publish(tx, step: Step, log, warn) -> None:
    """Phase 3: write the launcher and its record through install's transaction."""
    if step.refusal:
        warn(step.refusal)
        return
    sweep_interrupted(step.path)
    if not step.enabled:
        if step.previous:
            log(f"kept the `maestro` launcher of an earlier install at {paths.home_relative(step.previous['path'])} "
                "(--no-launcher; uninstall removes it)")
        return
    if step.move_from:
        tx.remove(step.move_from)
        log(f"removed the launcher an earlier install wrote at {paths.home_relative(step.move_from)}")
    elif step.kept_old:
        warn(f"kept {step.kept_old}: it changed after an earlier install wrote it there (remove it by hand)")
    if step.unchanged:
        log(f"the `maestro` launcher {paths.home_relative(step.path)} was already up to date")
    else:
        tx.write(step.path, step.data, MODE)
        atomic.ensure_private_dir(paths.maestro_dir())
        tx.write(record_path(), step.record, 0o600)
        log(f"installed the `maestro` launcher: {paths.home_relative(step.path)}")
    for line in path_advice(os.path.dirname(step.path)):
        log(line)


def on_path(directory: str, search_path: str = None) -> bool:
    entries = [e for e in (os.environ.get("PATH", "") if search_path is None else search_path).split(os.pathsep) if e]
    real = os.path.realpath(directory)
    return any(os.path.isabs(entry) and os.path.realpath(entry) == real for entry in entries)


def profile_file() -> str:
    """The shell profile a PATH line goes into, by the login shell's name."""
    shell = os.path.basename(os.environ.get("SHELL", ""))
    return {"zsh": "~/.zshrc", "bash": "~/.bashrc"}.get(shell, "~/.profile")


def path_line(directory: str) -> str:
    """The line that puts `directory` first on PATH, spelled with $HOME when it lies under HOME."""
    shown = paths.home_relative(directory)
    spelled = '"$HOME' + shown[1:] + ':$PATH"' if shown.startswith("~") else shlex.quote(directory) + ':"$PATH"'
    return f"export PATH={spelled}"


def path_advice(directory: str):
    """Install's lines about whether `maestro` will be found."""
    launcher = os.path.join(directory, NAME)
    if not on_path(directory):
        return [f"{paths.home_relative(directory)} is not on PATH: add this line to {profile_file()} and open a new shell "
                f"(then restart Claude Code):  {path_line(directory)}",
                f"until then run maestro as {launcher} <verb>"]
    found = shutil.which(NAME)
    if found and os.path.realpath(found) != os.path.realpath(launcher):
        return [f"another `maestro` comes first on PATH: {found}; put {paths.home_relative(directory)} before it, "
                f"or run {launcher} <verb>"]
    return [f"{paths.home_relative(directory)} is on PATH: run `maestro <verb>` (`maestro doctor` checks the install)"]


def sweep_interrupted(path) -> None:
    """Remove the temp files a killed install left beside the launcher (`path`, when known) and its record."""
    for candidate in (path, record_path()):
        if candidate:
            atomic.sweep_stale_temps(candidate)


def remove(log) -> list:
    """Uninstall: delete the recorded launcher if unchanged, the directories install created for
    it if empty, and the record. Returns what is left behind, as (what, how to remove it) pairs."""
    sweep_interrupted(os.path.join(default_bin_dir(), NAME))
    try:
        record = read_record()
    except RecordError as exc:
        log(f"kept the launcher record: {exc}")
        return [(record_path(), f"rm {shlex.quote(record_path())}")]
    if record is None:
        return []
    path, leftovers = record["path"], []
    atomic.sweep_stale_temps(path)
    if _owned(record):
        os.unlink(path)
        log(f"removed the `maestro` launcher {paths.home_relative(path)}")
        for directory in record.get("created_dirs", []):
            if isinstance(directory, str) and path.startswith(directory.rstrip(os.sep) + os.sep):
                try:
                    os.rmdir(directory)
                except OSError:
                    break
    elif os.path.lexists(path):
        log(f"kept {paths.home_relative(path)} — it changed after install wrote it")
        leftovers.append((f"the edited launcher {path}", f"rm {shlex.quote(path)}"))
    os.unlink(record_path())
    return leftovers


def diagnose():
    """doctor's launcher check: (status, detail, fix)."""
    try:
        record = read_record()
    except RecordError as exc:
        quoted = shlex.quote(record_path())
        return "warn", str(exc), f"move it away: mv {quoted} {quoted}.bad, then re-run install"
    if record is None:
        return "warn", "no `maestro` launcher installed (install --no-launcher, or an older install)", \
            "re-run install to add ~/.local/bin/maestro (or --bin-dir DIR)"
    path = record["path"]
    if not os.path.lexists(path):
        return "warn", f"{path} is missing", "re-run install"
    if not _owned(record):
        return "warn", f"{path} changed after install wrote it", f"move it away: mv {shlex.quote(path)} " \
            f"{shlex.quote(path + '.old')}, then re-run install"
    data = _read_small(path)
    python = interpreter_of(data)
    if not os.access(python, os.X_OK):
        return "fail", f"{path} runs {python}, which is gone (a Python upgrade?)", \
            "re-run install with a current Python 3.11+: python3 dist/maestro.pyz install"
    if is_legacy_shape(data):
        return "warn", f"{path} is an older launcher (it starts the archive through runpy: ~9 ms a call)", \
            "re-run install to upgrade it"
    directory = os.path.dirname(path)
    if not on_path(directory):
        return "warn", f"{path} is not on PATH", f"add to {profile_file()}:  {path_line(directory)}"
    found = shutil.which(NAME)
    if found and os.path.realpath(found) != os.path.realpath(path):
        return "warn", f"{found} comes before {path} on PATH", f"put {directory} earlier on PATH"
    return "ok", f"{path} (on PATH)", ""
