"""maestro's own companion data directory (issue 12 §1.1–2): where maestro's Codex jobs live.

The companion keeps its job table, job files and broker record under `$CLAUDE_PLUGIN_DATA/state/
<workspace-slug>-<sha16>/` (else a shared temp directory), and the plugin's SessionEnd hook shuts
down the broker it finds there and kills the ending session's jobs. Run with the user's own
`CLAUDE_PLUGIN_DATA`, a `/clear` in the user's Claude session killed maestro's running write job.
So every companion call of maestro runs with `CLAUDE_PLUGIN_DATA` = a private directory of its own,
one per workspace root: `~/.maestro/companion-data/<slug>-<sha16>/` (0700, ours; a symlink or a
directory of another user is refused). Nothing but maestro's calls see it, so no foreign SessionEnd
reaches maestro's broker or jobs, and maestro's jobs stay out of the user's `/codex:status` table.

When maestro's work in a workspace is done, `shutdown_broker` stops maestro's broker through the
companion's own path: the plugin's `session-lifecycle-hook.mjs SessionEnd`, run in that directory
(no session id: it stops the broker and touches no job record).

`job_record` reads a job's own file (`jobs/<id>.json`) directly: the companion's table is an
unlocked read-modify-write file that can lose a job still running ("No job found").
"""

import hashlib
import os
import re

from maestro import paths

DATA_DIR_NAME = "companion-data"
JOB_FILE_LIMIT = 4 * 1024 * 1024
SHUTDOWN_TIMEOUT_SEC = 15.0
FINISHED = ("completed", "failed", "cancelled")
_SLUG_UNSAFE = re.compile(r"[^a-zA-Z0-9._-]+")


def workspace_key(root: str) -> str:
    """`<slug>-<16 hex>` exactly as the companion names a workspace's state directory
    (lib/state.mjs resolveStateDir): the slug from the root's base name, the hash of its real path."""
    try:
        canonical = os.path.realpath(root)
    except OSError:
        canonical = root
    slug = _SLUG_UNSAFE.sub("-", os.path.basename(root.rstrip(os.sep)) or "workspace").strip("-") or "workspace"
    return f"{slug}-{hashlib.sha256(canonical.encode('utf-8', 'surrogateescape')).hexdigest()[:16]}"


def data_dir(root: str) -> str:
    """maestro's CLAUDE_PLUGIN_DATA for the workspace at `root` (a path; nothing is created)."""
    return os.path.join(paths.maestro_dir(), DATA_DIR_NAME, workspace_key(root))


def ensure_data_dir(root: str) -> str:
    """`data_dir(root)`, created 0700 with its parents; a symlink, a non-directory or one owned by
    another user anywhere on that path under ~/.maestro is refused (MaestroError, exit 3): whoever
    controls that directory controls maestro's job table and its broker's socket record."""
    from maestro.errors import Exit, MaestroError
    from maestro.util.atomic import NotPrivate, ensure_private_dir

    target = data_dir(root)
    for directory in (paths.maestro_dir(), os.path.dirname(target), target):
        try:
            ensure_private_dir(directory)
        except NotPrivate as exc:
            raise MaestroError(f"{directory} {exc.problem}; maestro runs its Codex jobs only in a private data "
                               f"directory of yours — move it away and maestro recreates it (mode 0700)",
                               Exit.USAGE) from None
        except OSError as exc:
            raise MaestroError(f"cannot create maestro's companion data directory {directory}: "
                               f"{exc.strerror or exc}", Exit.USAGE) from None
    return target


def state_dir(data: str, root: str) -> str:
    """The companion's state directory for `root` inside the data directory `data`."""
    return os.path.join(data, "state", workspace_key(root))


def job_file(data: str, root: str, job: str) -> str:
    return os.path.join(state_dir(data, root), "jobs", f"{job}.json")


def job_record(data: str, root: str, job: str):
    """The job's own record (`jobs/<id>.json`) as a dict, or None when it is absent, not a regular
    file (a symlink is not followed), too big or not one JSON object."""
    import json

    from maestro.util.atomic import NotRegular, read_regular

    if not job or "/" in job or job.startswith("."):
        return None
    try:
        raw = read_regular(job_file(data, root, job), JOB_FILE_LIMIT)
        value = json.loads(raw) if raw is not None else None
    except (NotRegular, OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def broker_record(data: str, root: str):
    """The companion's `broker.json` for `root` in `data` (its pid and endpoint), or None."""
    import json

    from maestro.util.atomic import NotRegular, read_regular

    try:
        raw = read_regular(os.path.join(state_dir(data, root), "broker.json"), 65536)
        value = json.loads(raw) if raw is not None else None
    except (NotRegular, OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def lifecycle_hook_argv(companion_argv: list):
    """The argv of the companion's own SessionEnd path next to `companion_argv`'s script, or None:
    `node <scripts>/session-lifecycle-hook.mjs` (a stand-in `.py` companion: its sibling
    `session_lifecycle_hook.py`, run like the companion)."""
    script = companion_argv[-1] if companion_argv else ""
    folder = os.path.dirname(script)
    if script.endswith(".py"):
        hook = os.path.join(folder, "session_lifecycle_hook.py")
        return [*companion_argv[:-1], hook] if os.path.isfile(hook) else None
    hook = os.path.join(folder, "session-lifecycle-hook.mjs")
    return [*companion_argv[:-1], hook] if os.path.isfile(hook) else None


def shutdown_broker(companion_argv: list, *, root: str, env: dict, emit, timeout: float = SHUTDOWN_TIMEOUT_SEC) -> bool:
    """Stop maestro's companion broker for `root` (the data directory is `env`'s CLAUDE_PLUGIN_DATA).
    True when no broker record is left; a failure is one `MAESTRO_COMPANION:` line, never an error
    (the work it followed has already ended)."""
    import json

    from maestro.util import process

    data = (env or {}).get("CLAUDE_PLUGIN_DATA", "")
    if not data or broker_record(data, root) is None:
        return True
    hook = lifecycle_hook_argv(companion_argv)
    if hook is None:
        emit(f"MAESTRO_COMPANION: maestro's Codex broker for {root} is still running and the companion has no "
             f"session-lifecycle hook to stop it (data dir {data})")
        return False
    payload = json.dumps({"hook_event_name": "SessionEnd", "cwd": root, "session_id": ""}).encode("utf-8")
    # No session id anywhere: the hook then stops the broker and leaves every job record alone.
    result = process.run([*hook, "SessionEnd"], timeout=timeout, cwd=root,
                         env=dict(env, CODEX_COMPANION_SESSION_ID=""), stdin_data=payload, tick_interval=0.05)
    if result.rc != 0 or broker_record(data, root) is not None:
        detail = (result.err_text or result.text).strip().splitlines()[-1:] or [f"exit {result.rc}"]
        emit(f"MAESTRO_COMPANION: could not stop maestro's Codex broker for {root} (data dir {data}): "
             f"{detail[0][:300]}")
        return False
    return True


def stored_result(record) -> str:
    """A finished job's final message from its own record (`result.rawOutput`, else `rendered`), or ''."""
    if not isinstance(record, dict) or str(record.get("status", "")).lower() not in FINISHED:
        return ""
    result = record.get("result") if isinstance(record.get("result"), dict) else {}
    for raw in (result.get("rawOutput"), record.get("rendered")):
        if isinstance(raw, str) and raw.strip():
            return raw
    return ""
