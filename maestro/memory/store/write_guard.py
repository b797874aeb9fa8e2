"""The memory write guard (spec memory.md §2.7 write watchdog, §5 hook mapping).

Off by default. `~/.maestro/config.toml`:

    [memory]
    write_guard = true   # anything but the boolean true leaves it off
    threshold = 2        # < 1 becomes 1; a non-integer or non-numeric value becomes 2

At every turn-stop (the `stop` hook, maestro/hooks/stop.py) the guard reads the turn from the
session's transcript (Claude Code has no PostToolUse hook here: the transcript is the record of
tool calls) and updates the session's gap:
- a counted turn is a main-session turn (no `agent_id` in the payload) that made >= 1 tool call;
- a counted turn with a `daily` or `project` write resets the gap to 0, one without increments it;
  a turn with no tool call leaves the gap alone;
- `note_write` (called by the Store after it commits a non-duplicate `daily`/`project` add, a batch
  that really added included) only sets the `wrote` flag; every stop clears it again;
- while gap >= threshold the state says `alert` and `inject` (and the snapshot) add the fixed
  backlog text (maestro/hooks/guidance.py BACKLOG_ALERT), never showing the count.
Claude Code has no goal or plugin turn origin, so every user prompt starts a counted turn (§5).

State: one JSON file per session id, `<memory root>/.maestro-memory/guard/<session_id>.json`
(0600, directories 0700, replaced atomically under the flock `guard/.lock`):
    {"version":1,"gap":N,"wrote":bool,"alert":bool,"turn":uuid|null,"base":N,"turn_wrote":bool,"updated_at":"…"}
`turn` is the transcript uuid of the prompt that opened the last counted turn and `base` the gap
before it: when the same turn stops again (another Stop hook blocked and Claude carried on), it is
re-decided from `base`, so one turn never counts twice. The file is advisory telemetry, not memory:
a missing, oversized or malformed file reads as a fresh state (gap 0) and is overwritten on the
next stop; it is written without fsync. When the guard is disabled, `stop` deletes the session's
file, so a stale alert never outlives the setting. Files untouched for 30 days are pruned when a
session's first stop creates its file. The state lives under the store root that the writes go
to (`Store.root`; `paths.memory_dir()` for the hooks), so MAESTRO_MEMORY_DIR moves it too.

Transcript (maestro/memory/store/transcript.py): the current turn's distinct tool calls, and whether it
shows a `mcp__*__memory_add` to daily/project answered "added …". A write is noted two ways: the
store marks an add made with MAESTRO_SESSION_ID set (a Bash `maestro memory add`), and the
transcript shows the MCP one (the MCP server runs without the session id). A write resets the gap
even in a turn whose tool lines have not reached the transcript yet. A missing or unreadable
transcript changes nothing.

Hot path: `alert_due` (called by `inject`) imports nothing beyond `os`, maestro.memory.store.transcript
(itself only `os`) and maestro.util.fastjson's `_json` reader, and costs one open of a small file.
"""

import os
import sys

from maestro import paths
from maestro.memory.store.transcript import MAX_TURN_ID_CHARS, WRITE_TRACKS, read_turn

META_DIR = ".maestro-memory"  # = maestro.memory.store.layout.META_DIR (not imported: it costs inject `re`)
GUARD_DIR = "guard"
LOCK_NAME = ".lock"
STATE_VERSION = 1
DEFAULT_THRESHOLD = 2
MAX_STATE_BYTES = 8192
LOCK_WAIT_SEC = 0.5
PRUNE_AGE_SEC = 30 * 24 * 3600


class Config:
    __slots__ = ("enabled", "threshold")

    def __init__(self, enabled=False, threshold=DEFAULT_THRESHOLD):
        self.enabled, self.threshold = enabled, threshold

    def __repr__(self):
        return f"Config(enabled={self.enabled}, threshold={self.threshold})"


# --- config -------------------------------------------------------------------------------------


def config_path() -> str:
    return os.path.join(paths.maestro_dir(), "config.toml")


def clamp_threshold(value) -> int:
    """§2.7: below 1 becomes 1; non-numeric becomes 2. Integral floats and integer strings are
    numbers; a bool, a fractional float or any other value is not an integer and becomes 2."""
    if isinstance(value, bool):
        return DEFAULT_THRESHOLD
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")) or not value.is_integer():
            return DEFAULT_THRESHOLD
        value = int(value)
    elif isinstance(value, str):
        text = value.strip()
        digits = text[1:] if text[:1] in "+-" else text
        if not (digits.isdigit() and digits.isascii()):
            return DEFAULT_THRESHOLD
        value = int(text)
    elif not isinstance(value, int):
        return DEFAULT_THRESHOLD
    return max(value, 1)


def _warn(message: str) -> None:
    try:
        sys.stderr.write(f"maestro memory write guard: {message}; the guard is off\n")
    except Exception:  # noqa: BLE001 - a closed stderr must not turn a warning into a failure
        pass


def load_config() -> Config:
    """The guard's settings; a missing file is the default (off). An unreadable or malformed file
    (or a `[memory]` that is not a table) turns the guard off with one stderr line — never a crash."""
    path = config_path()
    try:
        with open(path, "rb") as handle:
            raw = handle.read(1 << 20)
    except FileNotFoundError:
        return Config()
    except OSError as exc:
        _warn(f"cannot read {path}: {exc.strerror or exc}")
        return Config()
    import tomllib

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        _warn(f"{path} is not valid TOML ({exc})")
        return Config()
    memory = data.get("memory", {})
    if not isinstance(memory, dict):
        _warn(f"{path}: [memory] is not a table")
        return Config()
    enabled = memory.get("write_guard", False)
    if not isinstance(enabled, bool):
        _warn(f"{path}: memory.write_guard must be true or false")
        return Config()
    return Config(enabled, clamp_threshold(memory.get("threshold", DEFAULT_THRESHOLD)))


# --- state --------------------------------------------------------------------------------------


def _valid_sid(session_id) -> bool:
    from maestro.util.session import is_valid_session_id

    return is_valid_session_id(session_id)


def state_dir(root: str) -> str:
    return os.path.join(root, META_DIR, GUARD_DIR)


def state_path(root: str, session_id: str) -> str:
    if not _valid_sid(session_id):
        raise ValueError(f"invalid session id: {session_id!r}")
    return os.path.join(state_dir(root), f"{session_id}.json")


def fresh_state() -> dict:
    return {"version": STATE_VERSION, "gap": 0, "wrote": False, "alert": False, "turn": None, "base": 0,
            "turn_wrote": False, "updated_at": None}


def _load(path: str):
    """The parsed JSON object at `path`, or None (missing, oversized, unreadable, malformed)."""
    from maestro.util.fastjson import PayloadError, parse

    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_STATE_BYTES + 1)
    except OSError:
        return None
    if len(raw) > MAX_STATE_BYTES:
        return None
    try:
        value = parse(raw.decode("utf-8"))
    except (PayloadError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def _count(value) -> int:
    return value if type(value) is int and value >= 0 else 0


def read_state(root: str, session_id: str) -> dict:
    """The session's state; anything unusable reads as fresh (advisory telemetry, see the doc)."""
    value = _load(state_path(root, session_id))
    state = fresh_state()
    if value is None or value.get("version") != STATE_VERSION:
        return state
    state["gap"], state["base"] = _count(value.get("gap")), _count(value.get("base"))
    state["wrote"] = value.get("wrote") is True
    state["alert"] = value.get("alert") is True
    state["turn_wrote"] = value.get("turn_wrote") is True
    turn = value.get("turn")
    state["turn"] = turn if isinstance(turn, str) and 0 < len(turn) <= MAX_TURN_ID_CHARS else None
    updated = value.get("updated_at")
    state["updated_at"] = updated if isinstance(updated, str) else None
    return state


def alert_due(root: str, session_id) -> bool:
    """The hot-path read for `inject` and the snapshot: does this session's state say alert?"""
    if not _valid_sid(session_id):
        return False
    value = _load(os.path.join(state_dir(root), f"{session_id}.json"))
    return value is not None and value.get("version") == STATE_VERSION and value.get("alert") is True


def write_state(root: str, session_id: str, state: dict) -> None:
    import json

    from maestro.util import atomic
    from maestro.util.clock import utc_stamp  # here, not at the top: inject imports this module

    path = state_path(root, session_id)
    atomic.make_private_dirs(os.path.dirname(path))
    atomic.ensure_private_dir(os.path.dirname(path))
    record = dict(fresh_state(), **{key: state[key] for key in fresh_state() if key in state})
    record["updated_at"] = utc_stamp()
    data = (json.dumps(record, separators=(",", ":"), ensure_ascii=True) + "\n").encode()
    atomic.write_atomic(path, data, 0o600, durable=False)  # telemetry: no fsync


def _locked(root: str):
    from maestro.util import atomic

    directory = state_dir(root)
    atomic.make_private_dirs(directory)
    atomic.ensure_private_dir(directory)
    return atomic.flock_file(os.path.join(directory, LOCK_NAME), LOCK_WAIT_SEC)


def prune(root: str, keep: str = None, now: float = None) -> int:
    """Delete state files untouched for PRUNE_AGE_SEC (never `keep`). Returns how many."""
    import time

    directory, removed = state_dir(root), 0
    cutoff = (now if now is not None else time.time()) - PRUNE_AGE_SEC
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    for name in names:
        if not name.endswith(".json") or name == keep or not _valid_sid(name[:-5]):
            continue
        path = os.path.join(directory, name)
        try:
            if os.lstat(path).st_mtime < cutoff:
                os.unlink(path)
                removed += 1
        except OSError:
            pass
    return removed


# --- the write side (Store) ---------------------------------------------------------------------


def note_write(root: str, tracks) -> bool:
    """Mark a real `daily`/`project` write for the session in MAESTRO_SESSION_ID (the Store calls
    this after a commit that added something; `tracks` are the tracks really added to). True when
    marked. Cheap when the guard is off: one stat of the config file when there is none."""
    session_id = os.environ.get("MAESTRO_SESSION_ID")
    if not _valid_sid(session_id) or not any(track in WRITE_TRACKS for track in tracks):
        return False
    if not os.path.exists(config_path()) or not load_config().enabled:
        return False
    from maestro.util import atomic

    try:
        with _locked(root):
            state = read_state(root, session_id)
            state["wrote"] = True
            write_state(root, session_id, state)
    except atomic.LockBusy:
        return False
    return True


# --- the stop side ------------------------------------------------------------------------------


def is_subagent(payload: dict) -> bool:
    return "agent_id" in payload or payload.get("hook_event_name") == "SubagentStop"


def on_stop(payload: dict, root: str = None, config: Config = None):
    """Account one turn-stop; returns the state written, or None when nothing was accounted."""
    if not isinstance(payload, dict) or is_subagent(payload):
        return None
    session_id = payload.get("session_id")
    if not _valid_sid(session_id):
        return None
    root = root or paths.memory_dir()
    config = config or load_config()
    if not config.enabled:
        try:  # a stale alert must not outlive the setting
            os.unlink(os.path.join(state_dir(root), f"{session_id}.json"))
        except OSError:
            pass
        return None
    turn = read_turn(payload.get("transcript_path"))
    if turn is None:
        return None
    turn_id, tools, wrote_by_tool = turn
    from maestro.util import atomic

    path = state_path(root, session_id)
    try:
        with _locked(root):
            existed = os.path.exists(path)
            state = read_state(root, session_id)
            wrote = state["wrote"] or wrote_by_tool
            if turn_id is not None and turn_id == state["turn"]:
                base, wrote = state["base"], wrote or state["turn_wrote"]  # the same turn again
            else:
                base = state["gap"]
            # A write is itself a tool call: it resets the gap even when the transcript lags behind
            # the stop (Claude Code writes it asynchronously) and shows no tool line yet.
            gap = 0 if wrote else (base + 1 if tools >= 1 else base)
            state.update(gap=gap, wrote=False, alert=gap >= config.threshold, turn=turn_id, base=base,
                         turn_wrote=wrote)
            write_state(root, session_id, state)
    except atomic.LockBusy:
        return None
    if not existed:
        prune(root, keep=os.path.basename(path))
    return state
