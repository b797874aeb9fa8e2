"""doctor's checks of the installation itself: does the gate really hold?

Registration alone proves little — a hook that exits 127, runs async, times out, misses a tool or
sits in a settings tree Claude Code ignores lets every call through. So doctor checks what Claude
Code would do: the settings files it reads (strict JSON; `disableAllHooks` in user, project, local
and managed settings), the gate's event, matcher (evaluated as Claude Code evaluates it), timeout
and async flags, and then runs the registered gate command itself — `sh -c`, exactly as
registered — on a synthetic source Edit and a synthetic `sed -i`, expecting exit 2 for both. It
also checks the installed archive against the manifest's sha256, the manifest itself, and the
private grant directory.
"""

import os
import shlex
import stat
import subprocess
import uuid
from dataclasses import dataclass

from maestro import paths
from maestro.errors import Exit
from maestro.util.git import GitError, git

PROBE_TIMEOUT_SEC = 10
PROBE_CWD = "/nonexistent-maestro-doctor"
PROBE_TARGET = PROBE_CWD + "/src/app.py"
BASH_PROBE_COMMAND = "sed -i 's/a/b/' src/app.py"
# Tools the gate must see (one MCP writer stands for every mcp__ tool) and read-only tools it need not.
MUST_GATE = ("Edit", "Write", "MultiEdit", "NotebookEdit", "Bash", "mcp__filesystem__write_file")
NEED_NOT_GATE = ("Read", "Grep", "Glob", "TodoWrite", "BashOutput", "KillBash")
# Test knob: where managed (policy) settings live, os.pathsep-separated, replacing the defaults.
MANAGED_SETTINGS_ENV = "MAESTRO_MANAGED_SETTINGS"
MANAGED_SETTINGS = ("/etc/claude-code/managed-settings.json",
                    "/Library/Application Support/ClaudeCode/managed-settings.json")
REINSTALL = "python3 dist/maestro.pyz install"


@dataclass
class Check:
    name: str
    status: str  # ok | warn | fail
    detail: str
    fix: str = ""


def matcher_matches(matcher, tool: str) -> bool:
    """Claude Code's rule: empty/`*` = every tool; only letters, digits, `_ - , |` and spaces = an
    exact name list; anything else = an unanchored (JavaScript) regular expression."""
    if matcher is None or matcher in ("", "*"):
        return True
    if not isinstance(matcher, str):
        return False
    if all(ch.isascii() and (ch.isalnum() or ch in "_-,| ") for ch in matcher):
        return tool in {name.strip() for name in matcher.replace(",", "|").split("|")}
    import re

    try:
        return re.search(matcher, tool) is not None
    except re.error:
        return False


def managed_settings_paths():
    override = os.environ.get(MANAGED_SETTINGS_ENV)
    if override is not None:
        return [p for p in override.split(os.pathsep) if p]
    return list(MANAGED_SETTINGS)


def project_root(cwd: str) -> str:
    """The git toplevel of `cwd`, else `cwd` (where Claude Code reads `.claude/settings*.json`)."""
    try:
        return git(["rev-parse", "--show-toplevel"], cwd, timeout=PROBE_TIMEOUT_SEC).strip() or cwd
    except GitError:
        return cwd


def check_claude_dir() -> Check:
    directory = paths.claude_dir()
    try:
        st = os.stat(directory)
    except FileNotFoundError:
        return Check("~/.claude", "ok", f"{directory} absent (install creates it)")
    except OSError as exc:
        return Check("~/.claude", "fail", f"{directory}: {exc.strerror or exc}", f"chmod u+rwx {shlex.quote(directory)}")
    if not stat.S_ISDIR(st.st_mode):
        q = shlex.quote(directory)
        return Check("~/.claude", "fail", f"{directory} is not a directory", f"mv {q} {q}.old, then re-run install")
    own_bits_missing = st.st_uid == os.geteuid() and (st.st_mode & 0o700) != 0o700
    if own_bits_missing or not os.access(directory, os.W_OK | os.X_OK):
        return Check("~/.claude", "fail",
                     f"{directory} is not writable (mode {stat.S_IMODE(st.st_mode):04o}): install cannot update "
                     "the hooks there", f"chmod u+rwx {shlex.quote(directory)}")
    return Check("~/.claude", "ok", f"{directory} (writable)")


def _settings_fix(exc, target: str) -> str:
    q = shlex.quote(target)
    if exc.kind == "symlink":
        real = shlex.quote(os.path.realpath(target))
        return f"make it a regular file (install never writes through a link): cp {real} {q}.tmp && mv {q}.tmp {q}"
    if exc.kind == "not-regular":
        return f"move it away: mv {q} {q}.old, then re-run install"
    if exc.kind == "unreadable":
        return f"chmod u+rw {q}"
    if exc.kind == "not-json":
        return (f"make {target} valid JSON (NaN and Infinity are not JSON): Claude Code loads no hook at all "
                "from a settings file it cannot parse")
    return f"fix {target} (it must be a JSON object; hooks.<event> arrays of {{matcher, hooks}} objects)"


def _registered(value):
    """verb -> (event, block, hook, interpreter, current shape?) of maestro's entries."""
    from maestro.install import settings

    expected = {verb: event for event, _matcher, verb, _timeout in settings.HOOKS}
    found = {}
    for event, blocks in (value.get("hooks") or {}).items():
        for block in blocks:
            for hook in block.get("hooks", []):
                parsed = settings.parse_managed(hook)
                if not parsed:
                    continue
                verb = parsed[0]
                # the first entry under the verb's own event wins; one under another event only if none is
                if verb not in found or (found[verb][0] != expected[verb] and event == expected[verb]):
                    found[verb] = (event, block, hook, parsed[1], parsed[2])
    return found


def _hook_check(verb: str, entry) -> Check:
    name = f"hook {verb}"
    if entry is None:
        return Check(name, "fail", "not registered", REINSTALL)
    _event, _block, _hook, python, current = entry
    pyz = paths.installed_pyz()
    if not os.access(python, os.X_OK):
        return Check(name, "fail", f"interpreter {python} is missing", "re-run install with a working python3")
    if not os.path.isfile(pyz):
        return Check(name, "fail", f"{pyz} is missing", "re-run install")
    try:
        works = subprocess.run([python, "-I", "-S", pyz, "--version"], capture_output=True,
                               timeout=PROBE_TIMEOUT_SEC, stdin=subprocess.DEVNULL).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        works = False
    if not works:
        return Check(name, "fail", f"{python} cannot run {pyz}", "re-run install")
    if not current:
        return Check(name, "fail" if verb == "gate" else "warn",
                     "registered in the old command shape, which Claude Code reads as allow when the interpreter "
                     "or the archive is gone (exit 127)", "re-run install (it upgrades the entry in place)")
    return Check(name, "ok", f"{python} -I -S {pyz}")


def _interpreter_check(entry) -> Check:
    from maestro.install import interpreter

    python = entry[3]
    if interpreter.is_versioned(python):
        return Check("interpreter", "warn", f"{python} lives in a versioned Python tree and vanishes at its next "
                     "upgrade (the gate then blocks every call until you re-install)",
                     "after upgrading that Python, re-run install (it records a stable alias when one exists)")
    return Check("interpreter", "ok", f"{python} (not inside a versioned Python tree)")


def _archive_code_check(entry) -> Check:
    """Whether the installed archive's code is the hooks' interpreter's bytecode version (after that Python
    was upgraded to another minor version, every hook compiles its modules from source)."""
    from maestro.install import archive_code

    python, pyz = entry[3], paths.installed_pyz()
    built, wanted = archive_code.code_magic(pyz), archive_code.bytecode_of(python)
    if built is None:
        return Check("archive code", "ok", f"{pyz}: no code bundle (zipimport checks its .pyc files)")
    if wanted is None:
        return Check("archive code", "warn", f"{python} did not say which bytecode version it runs", REINSTALL)
    if built != wanted:
        return Check("archive code", "warn", f"compiled for another Python version than the hooks' {python}: each "
                     "hook compiles its modules from source on every call",
                     f"{shlex.quote(python)} {shlex.quote(pyz)} install")
    return Check("archive code", "ok", f"compiled for the bytecode version of {python}")


def _gate_shape_checks(entry):
    from maestro.install import settings

    event, block, hook, _python, _current = entry
    if event != "PreToolUse":
        yield Check("gate event", "fail", f"registered under {event}, not PreToolUse: it never sees a tool call",
                    REINSTALL)
    else:
        yield Check("gate event", "ok", "PreToolUse")
    matcher = block.get("matcher")
    missed = [tool for tool in MUST_GATE if not matcher_matches(matcher, tool)]
    extra = [tool for tool in NEED_NOT_GATE if matcher_matches(matcher, tool)]
    if missed:
        yield Check("gate matcher", "fail", f"matcher {matcher!r} lets {', '.join(missed)} through ungated",
                    f"re-run install (it sets {settings.PRETOOL_MATCHER})")
    elif extra:
        yield Check("gate matcher", "warn", f"matcher {matcher!r} also runs the gate for {', '.join(extra)}",
                    f"re-run install (it sets {settings.PRETOOL_MATCHER})")
    else:
        yield Check("gate matcher", "ok", f"{matcher} (covers {', '.join(MUST_GATE[:5])} and mcp__*)")
    timeout = hook.get("timeout")
    if timeout is None:
        yield Check("gate timeout", "ok", "not set (Claude Code's default applies)")
    elif isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < settings.MIN_GATE_TIMEOUT_SEC:
        yield Check("gate timeout", "fail", f"timeout {timeout!r}: a timed-out PreToolUse hook does not block",
                    f"re-run install (it sets 10 s; at least {settings.MIN_GATE_TIMEOUT_SEC})")
    else:
        yield Check("gate timeout", "ok", f"{timeout} s")
    flags = [key for key in ("async", "asyncRewake") if hook.get(key) not in (None, False)]
    if "if" in hook:
        flags.append("if")
    if flags:
        yield Check("gate async", "fail", f"the entry sets {', '.join(flags)}: an async (or conditional) hook "
                    "cannot block the call", "re-run install (it writes the entry without them)")
    else:
        yield Check("gate async", "ok", "synchronous")


def probe_payload(kind: str, session_id: str) -> dict:
    payload = {"session_id": session_id, "transcript_path": "", "cwd": PROBE_CWD, "hook_event_name": "PreToolUse",
               "tool_use_id": "maestro-doctor-probe"}
    if kind == "edit":
        payload.update(tool_name="Edit", tool_input={"file_path": PROBE_TARGET, "old_string": "a", "new_string": "b"})
    else:
        payload.update(tool_name="Bash", tool_input={"command": BASH_PROBE_COMMAND, "description": "maestro doctor"})
    return payload


def run_gate_probe(command: str, payload: dict):
    """(exit code or None on timeout/OSError, stderr) of the registered command under `sh -c`."""
    import json

    try:
        result = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload).encode(), capture_output=True,
                                timeout=PROBE_TIMEOUT_SEC, cwd="/")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, exc.__class__.__name__
    return result.returncode, result.stderr.decode("utf-8", "replace")


def _probe_checks(entry):
    from maestro.install import settings

    command = entry[2]["command"]
    broken = settings.broken_gate_message(paths.installed_pyz())
    session_id = f"maestro-doctor-{uuid.uuid4().hex[:16]}"  # private: no grant can exist for it
    for kind, what in (("edit", f"Edit of {PROBE_TARGET}"), ("bash", f"Bash `{BASH_PROBE_COMMAND}` in {PROBE_CWD}")):
        name = f"gate probe {kind}"
        rc, err = run_gate_probe(command, probe_payload(kind, session_id))
        if rc == Exit.HOOK_BLOCK and broken not in err:
            yield Check(name, "ok", f"a synthetic {what} is blocked (exit 2)")
        elif rc == Exit.HOOK_BLOCK:
            yield Check(name, "fail", "the gate cannot run: it blocks every call (fails closed)",
                        "see the `hook gate` line; re-run install")
        elif rc is None:
            yield Check(name, "fail", f"no answer within {PROBE_TIMEOUT_SEC} s ({err}): Claude Code lets the call through",
                        "re-run install; check that the interpreter starts quickly")
        else:
            yield Check(name, "fail", f"a synthetic {what} got exit {rc}: Claude Code lets it through",
                        "re-run install (a modified archive?); check that TMPDIR is not / or $HOME")


def _load_settings_file(path: str):
    """(parsed value or None, problem or '') for one settings file; absent = (None, '')."""
    from maestro.install import settings

    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        return None, ""
    except OSError as exc:
        return None, f"{path}: {exc.strerror or exc}"
    try:
        return settings.loads_strict(raw), ""
    except (ValueError, UnicodeDecodeError):
        return None, f"{path} is not valid JSON"


def check_disable_all_hooks(user_settings: str) -> Check:
    root = project_root(os.getcwd())
    files = [("user", user_settings), ("project", os.path.join(root, ".claude", "settings.json")),
             ("local", os.path.join(root, ".claude", "settings.local.json"))]
    files += [("managed", path) for path in managed_settings_paths()]
    offenders, unreadable, seen = [], [], set()
    for scope, path in files:
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        value, problem = _load_settings_file(path)
        if problem and scope != "user":  # the user file has its own check
            unreadable.append(problem)
        if not isinstance(value, dict):
            continue
        if value.get("disableAllHooks") is True:
            offenders.append((scope, path, "disableAllHooks"))
        if scope == "managed" and value.get("allowManagedHooksOnly") is True:
            offenders.append((scope, path, "allowManagedHooksOnly"))
    if offenders:
        detail = "; ".join(f"{key} is true in the {scope} settings {path}" for scope, path, key in offenders)
        fixes = [f"remove \"{key}\": true from {path}" + (" (ask the administrator)" if scope == "managed" else "")
                 for scope, path, key in offenders]
        return Check("disableAllHooks", "fail", detail + ": no maestro hook runs", "; ".join(fixes))
    if unreadable:
        return Check("disableAllHooks", "warn", "; ".join(unreadable), "make it valid JSON")
    return Check("disableAllHooks", "ok", "not set in user, project, local or managed settings")


def check_settings_and_hooks():
    from maestro.install import settings

    try:
        value, raw, _ = settings.read()
    except settings.SettingsError as exc:
        yield Check("settings.json", "fail", str(exc), _settings_fix(exc, settings.path()))
        value = None
    else:
        yield Check("settings.json", "ok", settings.path() if raw is not None else "absent (nothing installed)")
    found = _registered(value) if value is not None else {}
    if value is not None:
        for _event, _matcher, verb, _timeout in settings.HOOKS:
            yield _hook_check(verb, found.get(verb))
    gate = found.get("gate")
    if gate is not None:
        yield _interpreter_check(gate)
        yield _archive_code_check(gate)
        yield from _gate_shape_checks(gate)
        yield from _probe_checks(gate)
    yield check_disable_all_hooks(settings.path())


def check_manifest_and_archive():
    from maestro.install import manifest, targets

    path, pyz = paths.install_manifest(), paths.installed_pyz()
    q = shlex.quote(path)
    try:
        owned = manifest.read(strict=True)
    except manifest.ManifestError as exc:
        yield Check("manifest", "fail", str(exc), f"move it away: mv {q} {q}.bad, then re-run install")
        yield Check("archive", "warn", f"{pyz} cannot be verified without the manifest", "fix the manifest first")
        return
    present = os.path.lexists(path)
    yield Check("manifest", "ok", path if present else "absent (nothing installed)")
    if not present and not os.path.lexists(pyz):
        return
    recorded = owned["files"].get(targets.PYZ_KEY)
    try:
        st = os.lstat(pyz)
    except FileNotFoundError:
        yield Check("archive", "fail", f"{pyz} is missing", "re-run install")
        return
    if not stat.S_ISREG(st.st_mode):
        yield Check("archive", "fail", f"{pyz} is not a regular file",
                    f"move it away: mv {shlex.quote(pyz)} {shlex.quote(pyz)}.old, then re-run install")
        return
    if recorded is None:
        yield Check("archive", "fail", f"the manifest has no record of {targets.PYZ_KEY}: its bytes cannot be trusted",
                    "re-run install (it records the archive's sha256)")
        return
    with open(pyz, "rb") as handle:
        actual = manifest.sha256(handle.read())
    if actual != recorded:
        yield Check("archive", "fail", f"{pyz} changed after install (sha256 {actual[:12]}…, recorded {recorded[:12]}…)",
                    f"move it away: mv {shlex.quote(pyz)} {shlex.quote(pyz)}.modified, then re-run install")
        return
    yield Check("archive", "ok", f"{pyz} matches the manifest (sha256 {actual[:12]}…)")


def check_grant_dir() -> Check:
    directory = paths.direct_edit_dir()
    q = shlex.quote(directory)
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        return Check("grant dir", "ok", f"{directory} absent (created by the first grant)")
    if stat.S_ISLNK(st.st_mode):
        return Check("grant dir", "fail", f"{directory} is a symlink: grants there are never honoured",
                     f"rm {q} (maestro recreates it privately)")
    if not stat.S_ISDIR(st.st_mode):
        return Check("grant dir", "fail", f"{directory} is not a directory", f"mv {q} {q}.old")
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid != os.getuid():
        return Check("grant dir", "fail", f"{directory} belongs to uid {st.st_uid}", f"rm -r {q} (maestro recreates it)")
    if mode & 0o077:
        return Check("grant dir", "fail", f"{directory} is mode {mode:04o}: grants there are never honoured",
                     f"chmod 700 {q}")
    return Check("grant dir", "ok", f"{directory} (0700)")


def check_launcher() -> Check:
    """The `maestro` launcher install wrote: present, unchanged, first on PATH (maestro/install/launcher.py)."""
    from maestro.install import launcher

    return Check("launcher", *launcher.diagnose())
