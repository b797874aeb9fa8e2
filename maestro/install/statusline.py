"""`statusLine` in `~/.claude/settings.json`: maestro's status bar command (`maestro statusline`).

Claude Code has ONE statusLine. `install --statusline` registers maestro's only when there is none:
a statusLine of the user's own is never replaced (install says so and leaves it). It is maestro's
only when it is exactly what `desired` builds (any absolute interpreter, the installed pyz path),
so a re-install upgrades it in place (a new interpreter, say) and uninstall removes exactly it; the
pre-install snapshot then gives settings.json back byte for byte.

Command shape (Claude Code runs it with `sh -c` after each assistant message, session JSON on stdin):

    [ -x PY ] && [ -f PYZ ] && exec PY -I -S -c LAUNCHER PYZ statusline || echo 'maestro: …'
      # maestro-managed:statusline   (on the same line)

`exec`: the shell becomes the interpreter instead of waiting for a child (one fork less, after every
assistant message). The fallback keeps the bar readable when the archive or the interpreter is gone.
"""

import os
import shlex

from maestro import paths
from maestro.install import settings

VERB = "statusline"
KEY = "statusLine"
BROKEN = "maestro: statusline cannot run (run maestro doctor)"

REGISTERED, UPDATED, KEPT, SAME = "registered", "updated", "kept", "same"


def command(python: str, pyz: str) -> str:
    run = " ".join(shlex.quote(word) for word in settings.run_argv(python, pyz, VERB))
    return (f"[ -x {shlex.quote(python)} ] && [ -f {shlex.quote(pyz)} ] && exec {run} || echo {shlex.quote(BROKEN)}"
            f"{settings.MARKER}{VERB}")


def desired(python: str, pyz: str) -> dict:
    return {"type": "command", "command": command(python, pyz), "padding": 0}


def is_ours(value) -> bool:
    """Is `value` exactly a statusLine maestro registers (for some absolute interpreter)?"""
    if not isinstance(value, dict) or not isinstance(value.get("command"), str):
        return False
    head, sep, verb = value["command"].rpartition(settings.MARKER)
    if not sep or verb != VERB:
        return False
    try:
        words = shlex.split(head)
    except ValueError:
        return False
    python = words[2] if len(words) > 2 else ""
    return os.path.isabs(python) and value == desired(python, paths.installed_pyz())


def ensure(current: dict, python: str, pyz: str) -> str:
    """Register (absent), upgrade (ours, stale) or keep (the user's own) the statusLine of `current`."""
    existing = current.get(KEY)
    if KEY not in current or existing is None:
        current[KEY] = desired(python, pyz)
        return REGISTERED
    if not is_ours(existing):
        return KEPT
    if existing == desired(python, pyz):
        return SAME
    current[KEY] = desired(python, pyz)
    return UPDATED


def strip(current: dict) -> int:
    """Remove maestro's statusLine (1) — never the user's (0)."""
    if isinstance(current, dict) and is_ours(current.get(KEY)):
        del current[KEY]
        return 1
    return 0
