"""What a running `loop` / `watchdog` tells the user outside its own output (issue 12 §2).

Two small files, both best effort (a note that cannot be written never fails the run):

- `<git-dir>/maestro-run.status`: the run holding this worktree's write lease — kind, plan name,
  iteration i/n, phase (`codex` while a job runs, `verify` while the local check runs), pid,
  when it was written. Written (atomically, 0600) at each step and removed at the end; `statusline` and
  `status --watch` show it beside the lease. It is only shown while the lease is held, so one left
  by a killed run says nothing.
- `~/.maestro/notices/<session>.notice`: one line saying how the run ended, for that Claude
  session's next prompt (the `inject` hook). It is taken exactly once: whoever unlinks it shows
  it. Only a regular file of ours, closed to others, is believed — anything else planted there is
  removed unread. Keyed by the session id the run knows (MAESTRO_SESSION_ID); a run without one
  leaves no notice.

Cheap to import (os and stat only): `statusline` and `inject` read these on hot paths.
"""

import os
import stat

from maestro import paths

RUN_STATUS_NAME = "maestro-run.status"
FIELDS = ("kind", "plan", "iteration", "max", "phase", "pid", "updated")
NOTICE_LIMIT = 1024
STATUS_LIMIT = 4096
NOTICE_MAX_AGE = 7 * 24 * 3600  # a notice no prompt took within a week is pruned by the next finish()
_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def status_path(git_dir: str) -> str:
    return os.path.join(git_dir, RUN_STATUS_NAME)


def notice_path(session_id: str) -> str:
    return os.path.join(paths.maestro_dir(), "notices", f"{session_id}.notice")


def _clean(value) -> str:
    """One printable line without `=`: a plan name comes from the user's file system."""
    return "".join(ch if ch.isprintable() and ch != "=" else "?" for ch in str(value))[:120]


def _read_private(path: str, limit: int):
    """The bytes of a regular file of ours closed to group and others (at most `limit`), else None.
    Opened without following links and without blocking (a FIFO planted there never hangs a hook)."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            return None
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


# -- the live run status -------------------------------------------------------------------------------
def note_run(git_dir: str, kind: str, plan: str, iteration: int, max_iterations: int, phase: str) -> None:
    import time

    from maestro.util import atomic

    fields = {"kind": kind, "plan": os.path.basename(plan or "") or "(inline plan)", "iteration": iteration,
              "max": max_iterations, "phase": phase, "pid": os.getpid(), "updated": int(time.time())}
    try:
        atomic.write_atomic(status_path(git_dir), "".join(f"{k}={_clean(v)}\n" for k, v in fields.items()).encode(),
                            0o600, durable=False)
    except OSError:
        pass


def read_run(git_dir: str):
    """The run status as a dict of FIELDS (strings), or None (absent, foreign, malformed)."""
    raw = _read_private(status_path(git_dir), STATUS_LIMIT)
    if not raw:
        return None
    record = {}
    for line in raw.decode("utf-8", "replace").splitlines():
        key, sep, value = line.partition("=")
        if not sep or key not in FIELDS or key in record:
            return None
        record[key] = value
    return record if set(record) == set(FIELDS) else None


def clear_run(git_dir: str) -> None:
    """Remove the run status, but only this process's own: a run clears it before it releases the lease,
    and a run that took the lease after us has written its own, which must stay."""
    record = read_run(git_dir)
    if record is None or record["pid"] != str(os.getpid()):
        return
    try:
        os.unlink(status_path(git_dir))
    except OSError:
        pass


# -- the end notice ------------------------------------------------------------------------------------
def end_line(kind: str, plan: str, state: str, iterations: int) -> str:
    name = _clean(os.path.basename(plan or "")) or "(inline plan)"
    steps = f" after {iterations} iteration{'s' if iterations != 1 else ''}" if kind == "loop" else ""
    where = " — history in the plan" if kind == "loop" and plan else ""
    from maestro.messages import STATUS

    check = f" — check: {STATUS}" if state == "BLOCKED" else ""
    return f"maestro: {kind} on plan {name} ended {_clean(state)}{steps}{where}{check}"


def finish(git_dir: str, session_id: str, kind: str, plan: str, state: str, iterations: int) -> None:
    """The run is over: drop its live status (a no-op when the caller cleared it before releasing the
    lease, as it should) and leave the session its one-line notice, pruning notices nobody took."""
    from maestro.util import atomic
    from maestro.util.session import is_valid_session_id

    clear_run(git_dir)
    if not is_valid_session_id(session_id) or session_id == "unknown":
        return
    path = notice_path(session_id)
    try:
        atomic.ensure_private_dir(paths.maestro_dir())
        atomic.ensure_private_dir(os.path.dirname(path))
        prune_notices(os.path.dirname(path))
        atomic.write_atomic(path, (end_line(kind, plan, state, iterations) + "\n").encode(), 0o600)
    except (OSError, atomic.NotPrivate):
        pass


def prune_notices(directory: str, now=None) -> None:
    """Remove every entry older than NOTICE_MAX_AGE (a notice for a session that never prompted again, the
    taken-name of an `inject` killed mid-take), unread and whoever owns it: the directory is ours and private."""
    import time

    cutoff = (time.time() if now is None else now) - NOTICE_MAX_AGE
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.stat(follow_symlinks=False).st_mtime >= cutoff:
                continue
            if entry.is_dir(follow_symlinks=False):
                os.rmdir(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            continue


def take_notice(session_id: str) -> str:
    """The session's end notice, once ('' when there is none). The caller that renames it to a private
    taken-name first reads and removes it: reading in place and then unlinking would delete a new notice
    that a finishing run put there in between, unread."""
    path = notice_path(session_id)
    taken = f"{path}.taken-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        os.rename(path, taken)
    except OSError:
        return ""  # gone already (taken by another prompt), or not ours to move
    raw = _read_private(taken, NOTICE_LIMIT)
    try:
        os.unlink(taken)
    except IsADirectoryError:
        _remove_tree_quietly(taken)
    except OSError:
        pass
    if not raw:
        return ""
    line = raw.decode("utf-8", "replace").split("\n", 1)[0]
    line = "".join(ch for ch in line if ch.isprintable())
    return line + "\n" if line.startswith("maestro: ") else ""


def _remove_tree_quietly(path: str) -> None:
    """A directory planted at a notice's name, already moved to its taken-name: gone, contents and all."""
    import shutil

    shutil.rmtree(path, ignore_errors=True)
