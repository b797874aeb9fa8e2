"""`~/.claude/settings.json`: validation, maestro's marked hook commands, merge and strip.

A command is maestro's only when it is exactly what `managed_command` builds for one of the hook
verbs (any absolute interpreter, the installed pyz path) — or exactly what an older maestro built
(`LEGACY_SHAPES`), so a re-install upgrades it and uninstall still finds it. Foreign entries,
however similar, are never touched. The original Maestro's commands (`node "<hooks>/X.mjs"
# maestro-managed:X.mjs` and the legacy unmarked form) are recognised only to migrate away from them.

Command shape (shell form; Claude Code runs it with `sh -c` and shows the gate's command line to
the model in a block message, so it stays short and readable):

    [ -x PY ] && [ -f PYZ ] && PY -I -S -c LAUNCHER PYZ <verb> || <fallback> # maestro-managed:<verb>

Exit 127 (interpreter gone), 1 (traceback), 120 (failed flush) — anything but 0 or 2 — would
otherwise reach Claude Code as a non-blocking error, i.e. "allow". The fallback decides instead:
  gate           exit 2 (block) and, unless the gate itself answered 2, ONE stderr line naming
                 `doctor`; written from a subshell so a closed, full or broken stderr cannot
                 stop the `exit 2` (a SIGPIPE kills only the subshell)
  session-start  one line of context on stdout saying maestro is broken and naming `doctor`
  inject         exit 0: the prompt goes through (inject's own deliberate exit 2 is kept)
  stop           exit 0: Claude stops normally; that turn's write-guard count and handoff are skipped
"""

import json
import os
import shlex
import stat

from maestro import paths

MARKER = " # maestro-managed:"
# Anchored on purpose. A matcher of only letters, digits, `_ - , |` and spaces is an exact name list;
# anything else (here: `mcp__.*`) is an UNANCHORED JavaScript regex, under which `Write` would also
# match `TodoWrite` and `Bash` would match `BashOutput`/`KillBash`. `^(…)$` anchors every alternative.
GATED_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit", "Bash")
PRETOOL_MATCHER = "^(" + "|".join(GATED_TOOLS) + "|mcp__.*)$"
MIN_GATE_TIMEOUT_SEC = 5

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
    """`kind`: symlink | not-regular | unreadable | not-json | schema — doctor picks its fix text by it."""

    def __init__(self, message: str, kind: str = "schema"):
        super().__init__(message)
        self.kind = kind


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


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")


class Number:
    """A JSON number with a fraction or exponent, kept as its source text so that a rewrite gives
    it back unchanged: as a float, `1e400` would come back as `Infinity`, which no JSON parser
    (Claude Code's included) accepts. Equal to the number it denotes (so a hook entry's
    `"timeout": 10.0` still equals 10), and to another Number of the same finite value."""

    __slots__ = ("text", "value")

    def __init__(self, text: str):
        self.text, self.value = text, float(text)

    def __eq__(self, other):
        if isinstance(other, Number):
            return self.text == other.text or (self.value == other.value and abs(self.value) != float("inf"))
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return self.value == other
        return NotImplemented

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        return self.text


def loads_strict(raw: bytes, exact_numbers: bool = False):
    """JSON as Claude Code's parser accepts it: `NaN`/`Infinity` (which Python's json takes) fail,
    and a file Claude Code cannot parse loads no hook at all. `exact_numbers`: non-integer numbers
    are `Number`s (for a round trip through `dumps`)."""
    return json.loads(raw.decode("utf-8-sig"), parse_constant=_reject_constant,
                      parse_float=Number if exact_numbers else None)


def read(exact_numbers: bool = False):
    """(parsed settings, raw bytes or None if absent, file mode). Raises SettingsError.
    `exact_numbers`: see loads_strict (install and uninstall, which write it back)."""
    target = path()
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return {}, None, 0o600
    if stat.S_ISLNK(st.st_mode):
        raise SettingsError(f"settings.json is a symlink; refusing to replace it: {target}", "symlink")
    if not stat.S_ISREG(st.st_mode):
        raise SettingsError(f"settings.json is not a regular file: {target}", "not-regular")
    try:
        with open(target, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise SettingsError(f"settings.json cannot be read ({exc.strerror or exc}): {target}", "unreadable") from None
    try:
        value = loads_strict(raw, exact_numbers)
    except (ValueError, UnicodeDecodeError):
        raise SettingsError("settings.json is not valid JSON", "not-json") from None
    validate(value)
    return value, raw, stat.S_IMODE(st.st_mode)


def dumps(value) -> bytes:
    """settings.json's bytes for `value`: each `Number` as its source text, and a lone surrogate
    (valid in JSON as `"\\ud800"`, not encodable as UTF-8) escaped back to `\\ud800`."""
    literals = []
    nonce = os.urandom(8).hex()

    def placeholder(obj):
        if isinstance(obj, Number):
            literals.append(obj.text)
            return f"maestro-number-{nonce}-{len(literals) - 1}"
        raise TypeError(f"{type(obj).__name__} is not JSON")

    text = json.dumps(value, indent=2, ensure_ascii=False, default=placeholder)
    for index, literal in enumerate(literals):
        text = text.replace(f'"maestro-number-{nonce}-{index}"', literal, 1)
    # Outside strings JSON text is ASCII, so a surrogate can only sit in a string, where Python's
    # `\udXXX` escape is also JSON's.
    return (text + "\n").encode("utf-8", "backslashreplace")


# `python3 x.pyz` starts through runpy, which imports importlib.util, contextlib and collections
# (~8 ms, a third of the gate's budget); `-c` importing the archive's root module `maestro_hook`
# (build.py) runs the same code from the same archive without it. `-I` keeps the hook's cwd off
# sys.path, so a repository's own `maestro_hook.py` or `sys.py` cannot shadow anything.
LAUNCHER = "import sys;sys.path[:0]=sys.argv[1:2];import maestro_hook"


def run_argv(python: str, pyz: str, verb: str):
    return [python, "-I", "-S", "-c", LAUNCHER, pyz, verb]


def broken_gate_message(pyz: str) -> str:
    return f"maestro gate cannot run, call blocked: run python3 {paths.home_relative(pyz)} doctor"


def broken_session_message(pyz: str) -> str:
    return (f"maestro is broken: its hooks cannot run, so the gate blocks every edit, Bash and MCP call. "
            f"Ask the user to run python3 {paths.home_relative(pyz)} doctor (or re-install maestro).")


def _fallback(pyz: str, verb: str) -> str:
    if verb == "gate":
        return f"{{ [ $? = 2 ] || (echo {shlex.quote(broken_gate_message(pyz))} >&2); exit 2; }}"
    if verb == "session-start":
        return f"echo {shlex.quote(broken_session_message(pyz))}"
    if verb == "inject":
        return "{ [ $? = 2 ] && exit 2; exit 0; }"
    return "exit 0"


def managed_command(python: str, pyz: str, verb: str) -> str:
    """The command install registers for `verb` (see the module docstring)."""
    py, archive = shlex.quote(python), shlex.quote(pyz)
    run = " ".join(shlex.quote(word) for word in run_argv(python, pyz, verb))
    return f"[ -x {py} ] && [ -f {archive} ] && {run} || {_fallback(pyz, verb)}{MARKER}{verb}"


def legacy_command(python: str, pyz: str, verb: str) -> str:
    """What maestro registered before the fail-closed shape (issue 14): fails open on exit 127."""
    return f"{shlex.quote(python)} -I -S {shlex.quote(pyz)} {verb}{MARKER}{verb}"


LEGACY_SHAPES = (legacy_command,)


def parse_managed(hook):
    """(verb, interpreter, current shape?) if `hook` is exactly one of maestro's commands, else None."""
    if not _is_obj(hook) or hook.get("type") != "command" or not isinstance(hook.get("command"), str):
        return None
    command = hook["command"]
    head, sep, verb = command.rpartition(MARKER)
    if not sep or verb not in OUR_VERBS:
        return None
    try:
        words = shlex.split(head)
    except ValueError:
        return None
    pyz = paths.installed_pyz()
    # The interpreter is words[2] in the current shape (`[ -x PY ]`), words[0] in the legacy one.
    for index in (2, 0):
        python = words[index] if len(words) > index else ""
        if not os.path.isabs(python):
            continue
        if command == managed_command(python, pyz, verb):
            return verb, python, True
        if any(command == shape(python, pyz, verb) for shape in LEGACY_SHAPES):
            return verb, python, False
    return None


def managed_verb(hook) -> str:
    """The verb if `hook` is exactly one of maestro's commands (current or older shape), else ''."""
    parsed = parse_managed(hook)
    return parsed[0] if parsed else ""


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


def _move_to_matcher(blocks: list, block: dict, index: int, matcher) -> None:
    """Put maestro's entry block["hooks"][index] under `matcher`. A block holding only maestro's
    entry is retargeted in place; one shared with foreign hooks keeps its matcher (never change a
    foreign hook's matcher) and maestro's entry moves to a block with the right matcher."""
    if len(block["hooks"]) == 1:
        if matcher:
            block["matcher"] = matcher
        else:
            block.pop("matcher", None)
        return
    entry = block["hooks"].pop(index)
    target = next((b for b in blocks if b is not block and _matches_block(b, matcher)
                   and isinstance(b.get("hooks", []), list)), None)
    if target is None:
        target = {"matcher": matcher, "hooks": []} if matcher else {"hooks": []}
        blocks.append(target)
    target.setdefault("hooks", []).append(entry)


def _entries(blocks: list, verb: str):
    """(block, index) of every maestro entry for `verb` in an event's blocks, in order."""
    return [(block, i) for block in blocks for i, hook in enumerate(block.get("hooks", [])) if managed_verb(hook) == verb]


def _drop(hooks: dict, event: str, block: dict, index: int) -> None:
    """Remove one maestro entry; a block (and an event) it leaves empty goes too, so that
    uninstall's strip can still reproduce the pre-install bytes."""
    del block["hooks"][index]
    if not block["hooks"]:
        hooks[event] = [b for b in hooks[event] if b is not block]
        if not hooks[event]:
            del hooks[event]


def ensure_hooks(settings: dict, python: str, pyz: str) -> int:
    """Register maestro's hook commands; upgrade a stale one (older command shape, interpreter,
    timeout or matcher) in place. Returns the number of entries changed."""
    changed = 0
    hooks = settings.setdefault("hooks", {})
    for event, matcher, verb, timeout in HOOKS:
        desired = {"type": "command", "command": managed_command(python, pyz, verb), "timeout": timeout}
        for other in [e for e in hooks if e != event]:  # moved to another event by hand: one entry, its own event
            for block, index in reversed(_entries(hooks[other], verb)):
                _drop(hooks, other, block, index)
                changed += 1
        blocks = hooks.setdefault(event, [])
        existing = _entries(blocks, verb)
        if existing:
            block, index = existing[0]
            touched = False
            for extra_block, extra_index in reversed(existing[1:]):  # duplicates from a hand edit
                _drop(hooks, event, extra_block, extra_index)
                changed += 1
            blocks = hooks[event]
            if block["hooks"][index] != desired:
                block["hooks"][index] = desired
                touched = True
            if not _matches_block(block, matcher):
                _move_to_matcher(blocks, block, index, matcher)
                touched = True
            changed += touched
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
    """Comparison form: what holds no hook means the same as nothing — a block with `"hooks": []`,
    an event left without blocks, an empty `hooks` object. (Install may add maestro's entry to such
    a block or event, and strip then drops it with maestro's entry.)"""
    hooks = settings.get("hooks")
    if not _is_obj(hooks):
        return settings
    kept = {}
    for event, blocks in hooks.items():
        if isinstance(blocks, list):
            blocks = [b for b in blocks if not (_is_obj(b) and b.get("hooks") == [])]
            if not blocks:
                continue
        kept[event] = blocks
    result = {k: v for k, v in settings.items() if k != "hooks"}
    if kept:
        result["hooks"] = kept
    return result
