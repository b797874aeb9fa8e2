"""`~/.claude/settings.json`: validation, maestro's marked hook commands, merge and strip.

A command is maestro's only when it is exactly what `managed_command` builds for one of the hook
verbs (any absolute interpreter, the installed pyz path) — foreign entries, however similar,
are never touched. The original Maestro's commands (`node "<hooks>/X.mjs" # maestro-managed:X.mjs`
and the legacy unmarked form) are recognised only to migrate away from them.
"""

import json
import os
import shlex
import stat

from maestro import paths

MARKER = " # maestro-managed:"
PRETOOL_MATCHER = "Edit|Write|MultiEdit"

# event -> (matcher or None, verb, timeout seconds)
HOOKS = (
    ("PreToolUse", PRETOOL_MATCHER, "gate", 10),
    ("UserPromptSubmit", None, "inject", 10),
    ("SessionStart", None, "session-start", 15),
    ("Stop", None, "stop", 10),  # always: the write guard (when enabled) and the handoff share it
)
OUR_VERBS = frozenset(("gate", "inject", "session-start", "stop"))
ORIGINAL_HOOK_SCRIPTS = ("orchestrator-gate.mjs", "orchestrator-inject.mjs", "session-start.mjs")


class SettingsError(ValueError):
    pass


def path() -> str:
    return os.path.join(paths.claude_dir(), "settings.json")


def _is_obj(value) -> bool:
    return isinstance(value, dict)


def validate(value) -> None:
    if not _is_obj(value):
        raise SettingsError("settings.json root must be an object")
    hooks = value.get("hooks")
    if hooks is None and "hooks" not in value:
        return
    if not _is_obj(hooks):
        raise SettingsError("settings.json hooks must be an object")
    for event, blocks in hooks.items():
        if not isinstance(blocks, list):
            raise SettingsError(f"settings.json hooks.{event} must be an array")
        for block in blocks:
            if not _is_obj(block):
                raise SettingsError(f"settings.json hooks.{event} contains a non-object block")
            inner = block.get("hooks", [])
            if not isinstance(inner, list) or not all(_is_obj(h) for h in inner):
                raise SettingsError(f"settings.json hooks.{event} block hooks must be an array of objects")


def read():
    """(parsed settings, raw bytes or None if absent, file mode). Raises SettingsError."""
    target = path()
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return {}, None, 0o600
    if stat.S_ISLNK(st.st_mode):
        raise SettingsError(f"settings.json is a symlink; refusing to replace it: {target}")
    if not stat.S_ISREG(st.st_mode):
        raise SettingsError(f"settings.json is not a regular file: {target}")
    with open(target, "rb") as handle:
        raw = handle.read()
    try:
        value = json.loads(raw.decode("utf-8-sig"))
    except (ValueError, UnicodeDecodeError):
        raise SettingsError("settings.json is not valid JSON") from None
    validate(value)
    return value, raw, stat.S_IMODE(st.st_mode)


def dumps(value) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def managed_command(python: str, pyz: str, verb: str) -> str:
    return f"{shlex.quote(python)} -I -S {shlex.quote(pyz)} {verb}{MARKER}{verb}"


def managed_verb(hook) -> str:
    """The verb if `hook` is exactly one of maestro's commands, else ''."""
    if not _is_obj(hook) or hook.get("type") != "command" or not isinstance(hook.get("command"), str):
        return ""
    command = hook["command"]
    head, sep, verb = command.rpartition(MARKER)
    if not sep or verb not in OUR_VERBS:
        return ""
    try:
        words = shlex.split(head)
    except ValueError:
        return ""
    if len(words) == 5 and os.path.isabs(words[0]) and words[1:3] == ["-I", "-S"]:
        if words[3] == paths.installed_pyz() and words[4] == verb:
            return verb
    return ""


def original_command_script(hook) -> str:
    """The original Maestro's hook script name if `hook` is one of its commands, else ''."""
    if not _is_obj(hook) or hook.get("type") != "command" or not isinstance(hook.get("command"), str):
        return ""
    hooks_dir = os.path.join(paths.claude_dir(), "hooks")
    for script in ORIGINAL_HOOK_SCRIPTS:
        legacy = f'node "{os.path.join(hooks_dir, script)}"'
        if hook["command"] in (legacy, f"{legacy}{MARKER}{script}"):
            return script
    return ""


def _matches_block(block, matcher) -> bool:
    return block.get("matcher") == matcher if matcher else not block.get("matcher")


def ensure_hooks(settings: dict, python: str, pyz: str) -> int:
    """Register maestro's hook commands; update a stale one in place. Returns entries changed."""
    changed = 0
    hooks = settings.setdefault("hooks", {})
    for event, matcher, verb, timeout in HOOKS:
        desired = {"type": "command", "command": managed_command(python, pyz, verb), "timeout": timeout}
        blocks = hooks.setdefault(event, [])
        existing = [
            (block, i) for block in blocks for i, hook in enumerate(block.get("hooks", [])) if managed_verb(hook) == verb
        ]
        if existing:
            block, index = existing[0]
            if block["hooks"][index] != desired:
                block["hooks"][index] = desired
                changed += 1
            for extra_block, extra_index in reversed(existing[1:]):  # duplicates from a hand edit
                del extra_block["hooks"][extra_index]
                changed += 1
            continue
        target = next((b for b in blocks if _matches_block(b, matcher) and isinstance(b.get("hooks", []), list)), None)
        if target is None:
            target = {"matcher": matcher, "hooks": []} if matcher else {"hooks": []}
            blocks.append(target)
        target.setdefault("hooks", []).append(desired)
        changed += 1
    return changed


def strip(settings: dict, predicate) -> int:
    """Remove hook entries for which predicate(hook) is true; drop emptied blocks/events."""
    removed = 0
    hooks = settings.get("hooks")
    if not _is_obj(hooks):
        return 0
    for event in list(hooks):
        blocks = []
        for block in hooks[event]:
            inner = block.get("hooks")
            if not isinstance(inner, list):
                blocks.append(block)
                continue
            kept = [hook for hook in inner if not predicate(hook)]
            removed += len(inner) - len(kept)
            if kept or not inner:
                blocks.append(dict(block, hooks=kept))
        if blocks or not hooks[event]:
            hooks[event] = blocks
        else:
            del hooks[event]
    return removed


def without_empty_hooks(settings: dict) -> dict:
    """Comparison form: an empty `hooks` object means the same as none."""
    if settings.get("hooks") == {}:
        return {k: v for k, v in settings.items() if k != "hooks"}
    return settings
