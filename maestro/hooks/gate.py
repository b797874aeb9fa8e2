"""`gate`: the PreToolUse hook for Edit|Write|MultiEdit|NotebookEdit, Bash and MCP tools.

In maestro, Claude plans and reviews while Codex holds the pen, so a direct source write by the
orchestrator is blocked (exit 2, guidance on stderr) unless the user explicitly granted it for
this session ("edit it yourself"). Scratch paths (/tmp, $TMPDIR, ~/Desktop), .claude/.codex
directories and non-executable non-code files (docs, config, data) stay free; the files that
control the gate itself (Claude Code settings, ~/.claude/hooks, the grants, the install records)
are protected.
- Edit/Write/MultiEdit/NotebookEdit: the one `file_path`/`notebook_path`.
- Bash: every file the command would write, as bash would run it; a target that cannot be
  resolved before it runs, or a command that cannot be analysed, blocks.
- mcp__*: the path-like arguments of a tool whose name says it writes.
Anything unreadable fails closed: an allow without a trustworthy target path is a bypass, and
the exit code never depends on stderr being writable.
"""

# Where each part is judged: path classes in hooks/classify.py, Bash in hooks/bash_writes.py, MCP
# tools in hooks/mcp_gate.py. Hot path: imports only os/stat/posixpath (preloaded) plus maestro's
# small policy modules; the Bash parser and the MCP rules are imported only for their payloads.

import os
import sys

from maestro.errors import Exit
from maestro.hooks import policy
from maestro.util.fastjson import PayloadError, read_object
from maestro.util.session import is_valid_session_id

FAIL_CLOSED = (
    "ORCHESTRATOR GATE: could not read the hook payload; failing closed for edits — "
    "likely a harness change or a malformed path, report it to the user.\n"
)

BLOCK_GUIDANCE = (
    "ORCHESTRATOR GATE (source code): you plan and review here; Codex implements.\n"
    "Put the change in a plan file and hand it to the verified loop:\n"
    '  maestro loop --plan <plan-file> --verify "<verify command>"\n'
    "One turn without local verification: maestro watchdog --file <plan-file>\n"
    "Both add the implementer contract themselves. They are the only ways code gets written;\n"
    "a subagent may not write it either. Rules: ~/.claude/rules/orchestrator-implementer.md\n"
    "If Codex is unavailable or the change is truly trivial, stop and ask the user whether you\n"
    'may edit directly — "edit it yourself" opens this gate for the current task.\n'
)

SUBAGENT_NOTE = 'A subagent never inherits "edit it yourself"; only the main session can hold that grant.\n'

EDIT_PATH_KEYS = ("file_path", "notebook_path")
MESSAGE_TARGETS = 5  # a block names at most this many targets, then counts the rest
WORD_LIMIT = 120


class _Malformed(Exception):
    pass


def _tool_input(payload: dict) -> dict:
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        raise _Malformed("tool_input is not an object")
    return tool_input


def _target_path(payload: dict) -> str:
    tool_input = _tool_input(payload)
    for key in EDIT_PATH_KEYS:
        value = tool_input.get(key)
        if value is not None:
            if not isinstance(value, str) or not value.strip() or "\0" in value:
                raise _Malformed(f"tool_input.{key} is not a usable path")
            return value
    raise _Malformed("no file path in tool_input")


def _shown(text: str) -> str:
    """A word as the block message shows it: one printable line, bounded. A long one keeps its
    end (the file name) and its start, and loses the middle."""
    if len(text) > 4 * WORD_LIMIT:  # bound the work on a hostile word
        text = text[:WORD_LIMIT] + text[-WORD_LIMIT:]
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    if len(text) <= WORD_LIMIT:
        return text
    head = WORD_LIMIT // 3
    return text[:head] + "…" + text[-(WORD_LIMIT - head - 1):]


def _offending(targets, cwd: str, home: str):
    """(target, verdict) for every target the gate would block; verdict None = unresolved."""
    from maestro.hooks import classify

    found = []
    for target in targets:
        if target.path is None or (target.cwd is None and not target.path.startswith("/")):
            found.append((target, None))
            continue
        if classify.never_a_target(target.path):
            continue
        if not target.path or "\0" in target.path:
            found.append((target, None))
            continue
        base = target.cwd if target.cwd is not None else cwd
        try:
            verdict = (classify.judge_tree if target.tree else classify.judge)(target.path, base, home)
        except NotADirectoryError:  # `echo > src/app.py/x`: named in the message, failing closed
            found.append((target, None))
            continue
        if verdict != classify.FREE:
            found.append((target, verdict))
    return found


def _describe(tool: str, offending) -> str:
    from maestro.hooks import classify

    lines = []
    for target, verdict in offending[:MESSAGE_TARGETS]:
        word = _shown(target.word or target.path or "?")
        action = f"{target.channel} would {target.action} {word}"
        if verdict is None:
            lines.append(f"ORCHESTRATOR GATE ({tool}): {action}, which cannot be resolved before it runs; failing closed.\n")
        elif verdict == classify.PROTECTED:
            lines.append(f"ORCHESTRATOR GATE ({tool}): {action}, which controls Claude Code's hooks or maestro's gate.\n")
        else:
            lines.append(f"ORCHESTRATOR GATE ({tool}): {action}.\n")
    if len(offending) > MESSAGE_TARGETS:
        lines.append(f"ORCHESTRATOR GATE ({tool}): … and {len(offending) - MESSAGE_TARGETS} more.\n")
    return "".join(lines)


_INLINE_FLAGS = {"python": "python3 -c", "node": "node -e", "perl": "perl -e", "ruby": "ruby -e"}


def _shell_quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _shell_environment() -> dict:
    """The variables the command may be assumed to see: the hook's environment less the ones
    Claude Code sets for hooks only (`CLAUDE_PROJECT_DIR`, `CLAUDE_ENV_FILE`, `CLAUDE_PLUGIN_*`…).
    The Bash tool's shell need not have them, so a command naming one is judged as if its value
    were unknown — `cd "$CLAUDE_PROJECT_DIR/.claude"; echo x > app.py` must not pass as a harness write."""
    return {name: value for name, value in os.environ.items() if not name.startswith("CLAUDE_")}


def _tool_targets(tool: str, payload: dict, cwd: str, home: str):
    """(targets, problem) for a Bash or MCP call; problem is a one-line reason to fail closed."""
    from maestro.hooks.targets import BashSyntaxError

    tool_input = _tool_input(payload)
    label = "Bash"
    if tool == "Bash":
        command = tool_input.get("command")
        if not isinstance(command, str) or "\0" in command:
            raise _Malformed("tool_input.command is not a string")
        targets = []
    else:
        from maestro.hooks import mcp_gate

        label = "MCP"
        # A shell or code-running MCP tool is judged like the Bash command it amounts to.
        script = mcp_gate.mcp_script(tool, tool_input)
        targets = mcp_gate.mcp_writes(tool, tool_input, scripts_judged=script is not None)
        for target in targets:
            if target.cwd is None:
                target.cwd = cwd
        if script is None:
            return targets, ""
        command = script.code if script.lang == "sh" else f"{_INLINE_FLAGS[script.lang]} {_shell_quoted(script.code)}"
    from maestro.hooks import bash_writes

    try:
        return targets + bash_writes.find_writes(command, cwd, _shell_environment(), home), ""
    except BashSyntaxError as exc:
        return [], f"ORCHESTRATOR GATE ({label}): could not analyse the command ({_shown(str(exc))}); failing closed.\n"


def decide(payload) -> tuple:
    """(exit code, stderr text) for one payload. Pure except for reading the file system."""
    from maestro import paths
    from maestro import direct_edit as flags

    if not isinstance(payload, dict) or not is_valid_session_id(payload.get("session_id")):
        raise _Malformed("payload or session_id")
    cwd = payload.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise _Malformed("cwd is not a string")
    cwd = cwd or os.getcwd()
    home = paths.home()
    from maestro.hooks import classify

    classify.begin_decision()
    tool = payload.get("tool_name")
    if not isinstance(tool, str):
        tool = None  # older payloads carry no tool name: judged by their file path, as before
    if tool == "Bash" or (tool or "").startswith("mcp__"):
        targets, problem = _tool_targets(tool, payload, cwd, home)
        if not problem:
            offending = _offending(targets, cwd, home)
            if not offending:
                return Exit.OK, ""
            problem = _describe("Bash" if tool == "Bash" else "MCP", offending)
        guidance = problem + BLOCK_GUIDANCE
    else:
        raw = _target_path(payload)
        verdict = classify.judge(raw, cwd, home)
        if verdict == classify.FREE:
            return Exit.OK, ""
        guidance = BLOCK_GUIDANCE
        if verdict == classify.PROTECTED:
            from maestro.hooks.targets import Target  # only on this rare path: the Edit path stays lean

            edit = Target(tool or "Edit", "write", raw, raw)
            guidance = _describe(tool or "Edit", [(edit, verdict)]) + BLOCK_GUIDANCE
    subagent = any(
        isinstance(payload.get(key), str) and payload.get(key).strip() for key in ("agent_id", "agent_type")
    )
    if subagent:
        return Exit.HOOK_BLOCK, guidance + SUBAGENT_NOTE
    if flags.flag_is_valid(payload["session_id"]):
        return Exit.OK, ""
    return Exit.HOOK_BLOCK, guidance


def _write_message(message: str) -> None:
    """Best effort: the decision never depends on the message being written (closed, full or
    broken stderr). The text is written through the fd when sys.stderr is unusable, and a failed
    write leaves nothing buffered for the interpreter's exit-time flush to fail on (exit 120)."""
    stream = sys.stderr
    try:
        stream.write(message)
        stream.flush()
        return
    except Exception:  # noqa: BLE001 - None (fd 2 closed at start), ENOSPC, EPIPE, EBADF
        pass
    sys.stderr = None
    try:
        os.write(2, message.encode("utf-8", "replace"))
    except OSError:
        pass


def main(argv) -> int:
    if argv:
        from maestro.hooks.hook_help import hook_help

        return hook_help("gate", __doc__, argv)
    try:
        rc, message = decide(read_object())
    except (PayloadError, _Malformed, OSError, ValueError, UnicodeError):
        rc, message = Exit.HOOK_BLOCK, FAIL_CLOSED
    except Exception as exc:  # noqa: BLE001 - unexpected: fail closed, leave a crash note
        from maestro import crash

        crash.record("gate", exc)
        rc, message = Exit.HOOK_BLOCK, FAIL_CLOSED
    if message:
        _write_message(message)
    return rc
