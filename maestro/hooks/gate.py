"""`gate`: the PreToolUse hook for Edit|Write|MultiEdit (and NotebookEdit).

In maestro, Claude plans and reviews while Codex holds the pen, so a direct source edit by the
orchestrator is blocked (exit 2, guidance on stderr) unless the user explicitly granted it for
this session ("edit it yourself"). Scratch and harness paths and non-code files stay free.
Anything unreadable fails closed: an allow without a trustworthy target path is a bypass.

Hot path: imports only os/stat/posixpath (preloaded) plus maestro's small policy modules.
"""

import os
import stat
import sys

from maestro.hooks import policy
from maestro.hooks.payload import PayloadError, read_object

FAIL_CLOSED = (
    "ORCHESTRATOR GATE: could not read the hook payload; failing closed for edits — "
    "likely a harness change or a malformed path, report it to the user.\n"
)

BLOCK_GUIDANCE = (
    "ORCHESTRATOR GATE (source code): you plan and review here; Codex implements.\n"
    "Put the change in a plan file and hand it to the verified loop:\n"
    '  python3 ~/.claude/hooks/maestro.pyz loop --plan <plan-file> --verify "<verify command>"\n'
    "One turn without local verification: python3 ~/.claude/hooks/maestro.pyz watchdog --file <plan-file>\n"
    "Both add the implementer contract themselves. They are the only ways code gets written;\n"
    "a subagent may not write it either. Rules: ~/.claude/rules/orchestrator-implementer.md\n"
    "If Codex is unavailable or the change is truly trivial, stop and ask the user whether you\n"
    'may edit directly — "edit it yourself" opens this gate for the current task.\n'
)

SUBAGENT_NOTE = 'A subagent never inherits "edit it yourself"; only the main session can hold that grant.\n'

EDIT_PATH_KEYS = ("file_path", "notebook_path")


class _Malformed(Exception):
    pass


def _target_path(payload: dict) -> str:
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        raise _Malformed("tool_input is not an object")
    for key in EDIT_PATH_KEYS:
        value = tool_input.get(key)
        if value is not None:
            if not isinstance(value, str) or not value.strip() or "\0" in value:
                raise _Malformed(f"tool_input.{key} is not a usable path")
            return value
    raise _Malformed("no file path in tool_input")


def _windows_style(path: str) -> bool:
    """A drive-letter or UNC path, as Claude Code on Windows sends them."""
    return (len(path) >= 3 and path[0].isalpha() and path[1] == ":" and path[2] in "\\/") or (
        path.startswith("\\\\")
    )


def canonical_path(absolute: str) -> str:
    """realpath of the deepest existing ancestor + the missing tail (spec §4).

    A symlink anywhere on the existing part is resolved, so a scratch-named link into the
    repository is classified by where it points; the missing tail cannot contain links.
    """
    cursor = absolute
    missing = []
    while True:
        try:
            st = os.lstat(cursor)
        except FileNotFoundError:
            parent = os.path.dirname(cursor)
            if parent == cursor:
                raise
            missing.append(os.path.basename(cursor))
            cursor = parent
            continue
        if stat.S_ISLNK(st.st_mode) or stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
            base = os.path.realpath(cursor, strict=True)
        else:
            base = cursor
        return os.path.join(base, *reversed(missing)) if missing else base


def _scratch_roots(home: str):
    roots = ["/tmp", "/private/tmp"]
    tmpdir = os.environ.get("TMPDIR", "").rstrip("/")
    if tmpdir.startswith("/") and tmpdir:
        roots.append(tmpdir)
        roots.append(os.path.realpath(tmpdir))
    roots.append(canonical_path(os.path.join(home, "Desktop")))
    return roots


def _is_executable_file(path: str) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    return stat.S_ISREG(st.st_mode) and bool(st.st_mode & 0o111)


def _windows_decision(raw: str, cwd: str):
    """Lexical classification of a Windows path received on a POSIX host (nothing to stat)."""
    import ntpath

    joined = ntpath.normpath(raw if _windows_style(raw) else ntpath.join(cwd, raw))
    segments = [s for s in joined.replace("/", "\\").split("\\") if s]
    if policy.has_harness_segment(segments):
        return True
    return policy.is_noncode(segments[-1] if segments else "")


def is_free_path(raw: str, cwd: str, home: str) -> bool:
    """True when the path itself is exempt: scratch, harness, or non-code and not executable."""
    if os.sep == "/" and (_windows_style(raw) or (_windows_style(cwd) and not raw.startswith("/"))):
        return _windows_decision(raw, cwd)
    absolute = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(cwd, raw))
    canonical = canonical_path(absolute)
    if any(policy.is_under(canonical, root, os.sep) for root in _scratch_roots(home)):
        return True
    if policy.has_harness_segment(canonical.split(os.sep)):
        return True
    return not _is_executable_file(canonical) and policy.is_noncode(os.path.basename(canonical))


def decide(payload) -> tuple:
    """(exit code, stderr text) for one payload. Pure except for reading the file system."""
    from maestro import paths
    from maestro.hooks import flags

    if not isinstance(payload, dict) or not policy.is_valid_session_id(payload.get("session_id")):
        raise _Malformed("payload or session_id")
    raw = _target_path(payload)
    cwd = payload.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise _Malformed("cwd is not a string")
    cwd = cwd or os.getcwd()
    if is_free_path(raw, cwd, paths.home()):
        return 0, ""
    subagent = any(
        isinstance(payload.get(key), str) and payload.get(key).strip() for key in ("agent_id", "agent_type")
    )
    if subagent:
        return 2, BLOCK_GUIDANCE + SUBAGENT_NOTE
    if flags.flag_is_valid(payload["session_id"]):
        return 0, ""
    return 2, BLOCK_GUIDANCE


def main(argv) -> int:
    if argv:
        from maestro.cli_support import hook_help

        return hook_help("gate", __doc__, argv)
    try:
        rc, message = decide(read_object())
    except (PayloadError, _Malformed, OSError, ValueError, UnicodeError):
        rc, message = 2, FAIL_CLOSED
    except Exception as exc:  # noqa: BLE001 - unexpected: fail closed, leave a crash note
        from maestro import crash

        crash.record("gate", exc)
        rc, message = 2, FAIL_CLOSED
    if message:
        sys.stderr.write(message)
        sys.stderr.flush()
    return rc
