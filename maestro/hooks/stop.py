"""`stop`: the Stop hook.

Runs at the end of every turn, as a sequence of failure-isolated steps:
  payload  read the hook payload (session_id, transcript_path, cwd, stop_hook_active,
           hook_event_name; a subagent's carries agent_id); a malformed one is an empty payload
  guard    the memory write guard: off by default
           (`~/.maestro/config.toml` [memory] write_guard = true, threshold = 2); when on, counts
           the turn's tool calls from its transcript and updates this session's gap, so `inject`
           adds the fixed backlog alert after `threshold` tool-using turns with no daily or project
           memory entry. Subagents are exempt.
  handoff  record the handoff for unfinished work (the "Open work" the next session starts with)
It never blocks and never fails the session: it always exits 0 and prints exactly
{"continue": true}. A failing step leaves a crash note (~/.maestro/logs/crashes.log) and the
other steps still run.
"""

# The guard is memory/store/write_guard.py, the handoff memory/project/handoffs.py.

import sys

from maestro.errors import Exit

OUTPUT = '{"continue": true}'


def _payload() -> dict:
    from maestro.util.fastjson import PayloadError, read_object

    try:
        return read_object()
    except PayloadError:
        return {}


def guard_step(payload: dict) -> None:
    """Account this turn in the write guard (no-op when the guard is off or for a subagent)."""
    from maestro.memory.store import write_guard as guard

    guard.on_stop(payload)


def handoff_step(payload: dict) -> None:
    """Note unfinished work for the next session (maestro/memory/project/handoffs.py `from_stop`): when
    the project has open tasks or a held write lease, what this turn was doing (its prompt), the
    state and the next step; otherwise clear this session's note."""
    if not isinstance(payload, dict) or not payload.get("cwd"):
        return
    from maestro.memory.project import handoffs
    from maestro.memory.store import transcript

    handoffs.from_stop(payload, last_prompt=transcript.last_prompt)


def main(argv) -> int:
    if argv:
        from maestro.hooks.hook_help import hook_help

        return hook_help("stop", __doc__, argv, failure_code=Exit.OK)
    payload = {}
    for step in ("payload", "guard", "handoff"):
        try:
            if step == "payload":
                payload = _payload()
            elif step == "guard":
                guard_step(payload)
            else:
                handoff_step(payload)
        except Exception as exc:  # noqa: BLE001 - never block the session; leave a crash note
            from maestro import crash

            crash.record(f"stop:{step}", exc)
    sys.stdout.write(OUTPUT + "\n")
    sys.stdout.flush()
    return Exit.OK
