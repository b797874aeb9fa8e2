"""Shared helpers for the install/uninstall/migration/doctor tests: what install publishes and registers,
settings.json and tree snapshots, result checks."""

import hashlib
import json
import os
import shlex
import stat
from pathlib import Path

from testing.paths import ROOT

from maestro.install.interpreter import stable_interpreter  # its own tests: tests/install/test_interpreter.py

PYTHON = stable_interpreter()[0]  # what install records for the interpreter running the tests
PRETOOL_MATCHER = "^(Edit|Write|MultiEdit|NotebookEdit|Bash|mcp__.*)$"
OLD_PRETOOL_MATCHER = "Edit|Write|MultiEdit"
VERBS = (("PreToolUse", "gate", 10), ("UserPromptSubmit", "inject", 10), ("SessionStart", "session-start", 15),
         ("Stop", "stop", 10))
BASE_KEYS = (
    "hooks/maestro.pyz",
    "rules/coding-discipline.md",
    "rules/orchestrator-implementer.md",
    "skills/plan-authoring/SKILL.md",
)
WORKFLOW_KEYS = ("rules/workflow.md", "skills/ralph-protocol/SKILL.md")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def settings_path(home: Path) -> Path:
    return home / ".claude" / "settings.json"


def manifest_path(home: Path) -> Path:
    return home / ".maestro" / "install-manifest.json"


def installed_pyz(home: Path) -> Path:
    return home / ".claude" / "hooks" / "maestro.pyz"


def key_path(home: Path, key: str) -> Path:
    return home.joinpath(".claude", *key.split("/"))


def source_bytes(key: str, built_pyz: Path) -> bytes:
    """What install must publish for a manifest key."""
    if key == "hooks/maestro.pyz":
        return Path(built_pyz).read_bytes()
    return ROOT.joinpath(*key.split("/")).read_bytes()


FALLBACKS = {
    "gate": "{ [ $? = 2 ] || (echo 'maestro gate cannot run, call blocked: "
            "run python3 ~/.claude/hooks/maestro.pyz doctor' >&2); exit 2; }",
    "session-start": "echo 'maestro is broken: its hooks cannot run, so the gate blocks every edit, Bash and MCP "
                     "call. Ask the user to run python3 ~/.claude/hooks/maestro.pyz doctor (or re-install maestro).'",
    "inject": "{ [ $? = 2 ] && exit 2; exit 0; }",
    "stop": "exit 0",
}


def managed_command(home: Path, verb: str, python: str = PYTHON) -> str:
    """The fail-closed shape install registers (issue 14)."""
    py, pyz = shlex.quote(python), shlex.quote(str(installed_pyz(home)))
    launcher = "'import sys;sys.path[:0]=sys.argv[1:2];import maestro_hook'"
    return (f"[ -x {py} ] && [ -f {pyz} ] && {py} -I -S -c {launcher} {pyz} {verb} || {FALLBACKS[verb]}"
            f" # maestro-managed:{verb}")


def legacy_command(home: Path, verb: str, python: str = PYTHON) -> str:
    """The shape maestro registered before issue 14 (fails open when the interpreter is gone)."""
    return f"{shlex.quote(python)} -I -S {shlex.quote(str(installed_pyz(home)))} {verb} # maestro-managed:{verb}"


def write_settings(home: Path, value, raw: bytes = None) -> bytes:
    path = settings_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = raw if raw is not None else (json.dumps(value, indent=2) + "\n").encode()
    path.write_bytes(data)
    return data


def read_json(path: Path):
    return json.loads(Path(path).read_bytes().decode("utf-8-sig"))


def all_commands(settings: dict):
    """Every hook command string, as (event, block index, hook index, command)."""
    found = []
    for event, blocks in (settings.get("hooks") or {}).items():
        for b, block in enumerate(blocks):
            for h, hook in enumerate(block.get("hooks", [])):
                found.append((event, b, h, hook.get("command")))
    return found


def maestro_entries(home: Path, settings: dict):
    """Exactly-maestro command entries: list of (event, hook dict)."""
    wanted = {managed_command(home, verb): (event, verb) for event, verb, _ in VERBS}
    entries = []
    for event, blocks in (settings.get("hooks") or {}).items():
        for block in blocks:
            for hook in block.get("hooks", []):
                if hook.get("command") in wanted:
                    entries.append((event, block.get("matcher"), hook))
    return entries


def marked_commands(settings: dict):
    return [cmd for _, _, _, cmd in all_commands(settings) if isinstance(cmd, str) and "# maestro-managed:" in cmd]


def snapshot(root: Path, dirs: bool = True) -> dict:
    """Every entry under root: files with bytes and mode, symlinks with targets, dirs with mode."""
    result = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                result[rel] = ("link", os.readlink(full))
            elif stat.S_ISDIR(st.st_mode):
                if dirs:
                    result[rel] = ("dir", stat.S_IMODE(st.st_mode))
            else:
                with open(full, "rb") as handle:
                    result[rel] = ("file", handle.read(), stat.S_IMODE(st.st_mode))
    return result


def identities(root: Path) -> dict:
    """(inode, mtime_ns) of every regular file under root."""
    result = {}
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            if stat.S_ISREG(st.st_mode):
                result[os.path.relpath(full, root)] = (st.st_ino, st.st_mtime_ns)
    return result


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def assert_ok(result):
    assert result.rc == 0, f"rc={result.rc}\nstdout:\n{result.out}\nstderr:\n{result.err}"
    return result


def out_lines(result):
    return result.out.splitlines()


def err_lines(result):
    return result.err.splitlines()

