"""`statusline`: one short line for Claude Code's status bar — what maestro is doing in this worktree.

Claude Code runs the `statusLine` command after every assistant message and pipes it the session
JSON (`session_id`, `workspace.current_dir`, `cwd`, …). This prints ONE line for that worktree:

    maestro: lease free
    maestro: loop plan.md 2/4 codex 3m12s job task-ab12 · Codex read job task-cd34 running
    maestro: lease POISONED (job task-ab12) fix: maestro loop --clear-lease · memory backlog · direct edits ON

— the write lease (free / held by a job: phase, elapsed, iteration i/n / POISONED or ORPHANED with
the command that fixes it), a Codex job running under the job lock, the memory write guard's
backlog alert and an active direct-edit grant for this session. It reads local files only (never
the companion, never git, no subprocess, no json/argparse import) because it runs that often; on
garbage stdin it still prints one line and exits 0: a status bar must never show an error.
Register it with `maestro install --statusline` (only when you have no statusLine of your own).
"""

import os
import stat
import sys

from maestro.errors import Exit

MAX_DEPTH = 64
RECORD_LIMIT = 4096
FIELD_WIDTH = 48
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def shown(value, width: int = FIELD_WIDTH) -> str:
    """A value from a file, fit for a terminal: printable characters only (no escape sequences), bounded."""
    text = "".join(ch for ch in str(value) if ch.isprintable())
    return text if len(text) <= width else text[:width - 1] + "…"


def read_text(path: str):
    """The start of a regular file (not followed if a link, never blocking on a FIFO); '' when unreadable,
    None when absent."""
    try:
        fd = os.open(path, _READ)
    except FileNotFoundError:
        return None
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, RECORD_LIMIT).decode("utf-8", "replace")
    except OSError:
        return ""
    finally:
        os.close(fd)


def read_record(path: str):
    """A `key=value` record (lock metadata) as a dict, {} when unreadable, empty or malformed, None when absent."""
    text = read_text(path)
    if text is None:
        return None
    fields = {}
    for line in text.split("\n"):
        key, sep, value = line.partition("=")
        if line and (not sep or key in fields):
            return {}
        if line:
            fields[key] = value
    return fields


def find_git_dir(start: str):
    """The git directory of the worktree holding `start`, found by walking up (a `.git` directory, or a
    `.git` file saying `gitdir: …` in a linked worktree); None outside a repository."""
    path = os.path.abspath(start)
    for _ in range(MAX_DEPTH):
        dot = os.path.join(path, ".git")
        try:
            st = os.stat(dot)
        except OSError:
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode):
            return dot
        if st is not None and stat.S_ISREG(st.st_mode):
            try:
                with open(dot, "rb") as handle:
                    first = handle.read(RECORD_LIMIT).decode("utf-8", "replace").split("\n", 1)[0]
            except OSError:
                return None
            if first.startswith("gitdir: "):
                target = os.path.join(path, first[len("gitdir: "):].strip())
                return target if os.path.isdir(target) else None
            return None
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent
    return None


def elapsed(seconds: int) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def owner_alive(record: dict) -> bool:
    """The lock record's owner still runs, by the one judgement `status` and the locks use
    (locks/identity.owner_gone: a zombie or a reused pid is gone). identity is cheap to import;
    `ask_ps=False` keeps this hot path from spawning `ps` where /proc cannot answer."""
    from maestro.locks import identity

    return not identity.owner_gone(record.get("pid", ""), record.get("process_start", ""), ask_ps=False)


def unidentifiable(lock: str, metadata, staged) -> str:
    """Why `status` calls this lease UNIDENTIFIABLE ('' when it does not): no generation, a malformed or
    unreadable record, no record at all (a lease is created with its first metadata in one rename, so
    none is never "starting"), or a record of another generation. The same judging as `status`
    (commands/status.lease_report over locks/lease_state.LeaseState), re-stated here because
    locks/lockdir imports shutil, which this hot path must not."""
    try:
        if not stat.S_ISDIR(os.lstat(lock).st_mode):
            return "no generation"
    except OSError:
        return "no generation"
    generation = (read_text(os.path.join(lock, "generation")) or "").strip("\n")
    if not is_token(generation):
        return "no generation"
    if metadata == {} or staged == {}:
        return "malformed"
    if metadata is None and staged is None:
        return "no metadata (initializing or orphaned)"
    for record in (metadata, staged):
        if record is not None and (record.get("generation") != generation or not is_token(record.get("token"))
                                   or not record.get("pid", "").isdigit()):
            return "malformed or belongs to another generation"
    return ""


def is_token(value) -> bool:
    return isinstance(value, str) and len(value) == 32 and all(ch in "0123456789abcdef" for ch in value)


def lease_part(git_dir: str, now: float):
    """(text, lease job id or '')."""
    from maestro.messages import CLEAR_LEASE

    lock = os.path.join(git_dir, "maestro-write.lock")
    if not os.path.lexists(lock):
        return "lease free", ""
    metadata = read_record(os.path.join(lock, "metadata"))
    staged = read_record(os.path.join(lock, "metadata.new"))
    why = unidentifiable(lock, metadata, staged)
    if why:
        return f"lease UNIDENTIFIABLE ({why}) fix: {CLEAR_LEASE}", ""
    record = metadata or staged
    job = record.get("job_id") or "unknown"
    if staged is not None or record.get("quiescence") == "unconfirmed":
        poisoned = (staged or record).get("unconfirmed_job") or job
        return f"lease POISONED (job {shown(poisoned)}) fix: {CLEAR_LEASE}", job
    if not owner_alive(record):
        return f"lease ORPHANED (owner gone) fix: {CLEAR_LEASE}", job
    started = record.get("started_epoch", "")
    since = f" {elapsed(now - int(started))}" if started.isdigit() else ""
    from maestro.locks import run_notes

    run = run_notes.read_run(git_dir)
    if run is not None and run["pid"] == record.get("pid"):
        steps = f" {run['iteration']}/{run['max']}" if run["kind"] == "loop" else ""
        label = f"{shown(run['kind'])} {shown(run['plan'], 32)}{shown(steps)} {shown(run['phase'])}"
    else:
        label = "lease held"
    return f"{label}{since} job {shown(job)}" if job != "unknown" else f"{label}{since}", job


def job_part(git_dir: str, lease_job: str) -> str:
    record = read_record(os.path.join(git_dir, "maestro-job-lock", "metadata"))
    if not record or not owner_alive(record):
        return ""
    job = record.get("job") or ""
    if job and job == lease_job:
        return ""  # the lease already names it
    return f"Codex {shown(record.get('class') or '', 8)} job {shown(job or 'starting')} running".replace("  ", " ")


def session_parts(session_id) -> list:
    from maestro.util.session import is_valid_session_id

    if not is_valid_session_id(session_id):
        return []
    parts = []
    try:
        from maestro import paths
        from maestro.memory.store import write_guard

        if write_guard.alert_due(paths.memory_dir(), session_id):
            parts.append("memory backlog")
    except Exception:  # noqa: BLE001 - a status bar shows what it can
        pass
    from maestro import direct_edit

    if direct_edit.flag_is_valid(session_id):
        parts.append("direct edits ON")
    return parts


def workspace_dir(payload: dict) -> str:
    workspace = payload.get("workspace")
    for value in ((workspace or {}).get("current_dir") if isinstance(workspace, dict) else None, payload.get("cwd")):
        if isinstance(value, str) and value.startswith("/") and "\0" not in value:
            return value
    return os.getcwd()


def line_for(payload, now: float) -> str:
    payload = payload if isinstance(payload, dict) else {}
    git_dir = find_git_dir(workspace_dir(payload))
    if git_dir is None:
        parts = ["no git repository"]
    else:
        lease, lease_job = lease_part(git_dir, now)
        parts = [lease, job_part(git_dir, lease_job)]
    parts += session_parts(payload.get("session_id"))
    return "maestro: " + " · ".join(part for part in parts if part)


def main(argv) -> int:
    if argv:
        if argv[0] in ("--help", "-h"):
            sys.stdout.write(f"usage: maestro statusline < session.json\n\n{__doc__}")
            return Exit.OK
        sys.stderr.write("maestro statusline: takes no arguments (Claude Code pipes it the session JSON)\n")
        return Exit.USAGE
    import time

    try:
        from maestro.util.fastjson import parse, read_stdin

        try:
            payload = parse(read_stdin())
        except (ValueError, OSError):
            payload = {}
        line = line_for(payload, time.time())
    except Exception:  # noqa: BLE001 - one line, exit 0, whatever happens
        line = "maestro: status unavailable"
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
    return Exit.OK
