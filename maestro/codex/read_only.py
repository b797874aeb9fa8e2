"""Read jobs stay read-only (issue 12 §1.5): what the companion's `--help` says about a flagless task.

The companion 1.0.5/1.0.6 runs a task without `--write` in the `read-only` sandbox. Its open PR #646
makes a flagless task inherit the user's `sandbox_mode` (possibly `danger-full-access`) and adds
`task --read-only`. So before every read dispatch (workflow/read_turn.ReadTurn.run, whichever verb —
`discuss`, `scout` — runs it) the task synopsis in the companion's usage (its stdout) decides:

- it offers `--read-only`                       → pass it on every read task (`flag`);
- it names a sandbox but offers no `--read-only` → a flagless task may not be read-only: refuse
  the read dispatch (`inherits`);
- otherwise (the 1.0.5/1.0.6 synopsis)           → a flagless task is read-only (`fixed`).

A `--help` that does not answer or shows no task line decides nothing: the dispatch goes ahead as
it always did (the write path's probe does the same), and nothing is cached. The verdict is cached
per companion file (path, inode, size, mtime) in `~/.maestro/companion-help.json`, because each
probe starts a node process: the file is private (0600 in the 0700 ~/.maestro, written atomically)
and anything else there — a symlink, another owner, a half-written or foreign record — is ignored
and the companion probed again. The probe is the companion's `help` subcommand, which prints the
same usage as `--help` (spec: no subcommand, `help` or `--help` → usage, exit 0).
"""

import os
import re
import stat

from maestro import paths

FLAG = "flag"
FIXED = "fixed"
INHERITS = "inherits"
VERDICTS = (FLAG, FIXED, INHERITS)
READ_ONLY_OPTION = "--read-only"
_TASK = re.compile(r"\btask\b(?!-)")  # the `task` subcommand itself, not `task-worker` / `task-resume-…`
_CACHE_LIMIT = 16384


def cache_path() -> str:
    return os.path.join(paths.maestro_dir(), "companion-help.json")


def task_line(text: str) -> str:
    """The synopsis line of the `task` subcommand in a companion's usage text ('' when none): the one
    both the read-only verdict and the write probe (codex/companion.Transport.write_probe) judge."""
    return next((line.strip() for line in text.splitlines() if _TASK.search(line)), "")


def judge_help(text: str):
    """(verdict or '', the task synopsis line) for a companion's `--help` output (its stdout)."""
    line = task_line(text)
    if not line:
        return "", ""
    if READ_ONLY_OPTION in line:
        return FLAG, line
    if "sandbox" in text.lower():
        return INHERITS, line
    return FIXED, line


def _identity(companion_path: str):
    try:
        st = os.stat(companion_path)
    except OSError:
        return None
    return {"path": os.path.abspath(companion_path), "ino": st.st_ino, "size": st.st_size,
            "mtime_ns": st.st_mtime_ns}


def read_cached(companion_path: str):
    """(verdict, line) recorded for this very companion file, or None."""
    import json

    from maestro.util.atomic import NotRegular, read_regular

    identity = _identity(companion_path)
    if identity is None:
        return None
    try:
        st = os.lstat(cache_path())
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o077:
            return None
        data = read_regular(cache_path(), _CACHE_LIMIT)
        record = json.loads(data.decode("utf-8")) if data else None
    except (OSError, NotRegular, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(record, dict) or record.get("verdict") not in VERDICTS or not isinstance(record.get("line"), str):
        return None
    if any(record.get(key) != value for key, value in identity.items()):
        return None
    return record["verdict"], record["line"]


def write_cache(companion_path: str, verdict: str, line: str) -> None:
    """Best effort: a cache that cannot be written only costs the next read dispatch a probe."""
    import json

    from maestro.util import atomic

    identity = _identity(companion_path)
    if identity is None:
        return
    try:
        atomic.ensure_private_dir(paths.maestro_dir())
        atomic.write_atomic(cache_path(), json.dumps({**identity, "verdict": verdict, "line": line}).encode(), 0o600)
    except (OSError, atomic.NotPrivate):
        pass


def probe(transport):
    """(verdict or '', line): from the cache when the companion file is unchanged, else from `--help`."""
    companion_path = transport.prefix[-1] if transport.prefix else ""
    cached = read_cached(companion_path) if companion_path else None
    if cached is not None:
        return cached
    result = transport.call(["help"])  # the companion's usage, as `--help` prints it (not the write probe)
    # stdout only: the usage is printed there, and stderr carries whatever node or a hook happened to log
    verdict, line = judge_help(result.text) if result.rc == 0 else ("", "")
    if verdict and companion_path:
        write_cache(companion_path, verdict, line)
    return verdict, line


def enforce(transport) -> str:
    """Make the read tasks of `transport` read-only: '' when they will be (it then passes
    `--read-only` if the companion offers it), else the one line that refuses the dispatch."""
    verdict, line = probe(transport)
    transport.read_only_flag = verdict == FLAG
    if verdict == INHERITS:
        return ("the companion's task runs without --write in the user's configured sandbox (its --help offers "
                f"no --read-only), so a read job might be able to write; refusing — update maestro or pin a "
                f"companion whose read tasks are read-only ({line})")
    return ""
