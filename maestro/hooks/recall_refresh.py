"""The detached index refresher that recall starts (issue 11 §4): the index of a big store is filled
outside the prompt, never inside it.

A prompt cannot build or bring up to date the index of a store too big to parse (recall.py: its
budget is a quarter of a second; a first index of 10 MB takes seconds), and parsing that store on
every prompt is out of the question. So when recall finds no usable index for such a store, or runs
out of time refreshing one, `start` launches ONE detached process

    python -I -S -c <run> <our archive or source tree> <memory dir> <project key> <lock fd>

that brings the index fully up to date (index.warm) and exits; the prompts after it find the block.

Only one runs: the launcher takes `<memory>/.maestro-memory/index-warm.lock` (flock, non-blocking; a
regular file of ours, never followed through a link) and hands the locked descriptor to the child,
which holds it until it exits (a killed refresher releases it). A refresher that cannot help (a
read-only store, a full disk) would otherwise be started again on every prompt: a new one is started
at most once per COOLDOWN_SEC (the lock file's mtime is the last start). The child's standard streams
are /dev/null (Claude Code waits for the hook's output to close) and it runs in its own session, at
a lower priority.
"""

import os
import sys

LOCK_NAME = "index-warm.lock"
COOLDOWN_SEC = 60.0
_RUN = ("import sys; sys.path.insert(0, sys.argv[1]); from maestro.hooks import recall_refresh; "
        "recall_refresh.run(sys.argv[2], sys.argv[3], int(sys.argv[4]))")


def lock_path(root: str) -> str:
    from maestro.memory.store.layout import META_DIR

    return os.path.join(root, META_DIR, LOCK_NAME)


def _take_lock(root: str, now: float):
    """The lock file's descriptor, locked, or None: a refresher runs, one started less than
    COOLDOWN_SEC ago, or the lock file is not a regular file of ours."""
    import fcntl
    import stat

    from maestro.util import atomic

    path = lock_path(root)
    atomic.ensure_private_dir(os.path.dirname(path))
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            raise OSError(f"{path} is not a regular file of ours")
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if st.st_size and 0 <= now - st.st_mtime < COOLDOWN_SEC:
            raise BlockingIOError("a refresher started recently")
    except OSError:
        os.close(fd)
        return None
    return fd


def start(root: str, project_key: str) -> int:
    """Launch the refresher unless one runs or started recently; its pid, or 0. Never raises."""
    try:
        from maestro.memory.store import index

        if not index.available():
            return 0
        import time

        fd = _take_lock(root, time.time())
        if fd is None:
            return 0
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())  # size > 0 and a new mtime: the cooldown's start
            os.set_inheritable(fd, True)
            from maestro import runtime

            archive = runtime.archive_path()  # (shiv's extracting bootstrap: the archive, not its extracted copy)
            if archive:
                entry = os.path.join(archive, "site-packages")
            else:
                import maestro

                entry = os.path.dirname(os.path.dirname(os.path.abspath(maestro.__file__)))  # the tree
            quiet = [(os.POSIX_SPAWN_OPEN, stream, os.devnull, os.O_RDWR, 0) for stream in (0, 1, 2)]
            return os.posix_spawn(sys.executable, [sys.executable, "-I", "-S", "-c", _RUN, entry, root,
                                                   project_key, str(fd)],
                                  os.environ, file_actions=quiet, setsid=True)
        finally:
            os.close(fd)
    except OSError:  # a read-only or planted `.maestro-memory`, no interpreter to start: not this time
        return 0
    except Exception as exc:  # noqa: BLE001 - the refresher is an optimisation: the prompt goes on
        from maestro import crash

        crash.record("inject:recall-refresh", exc)
        return 0


def run(root: str, project_key: str, lock_fd: int) -> None:
    """The refresher's body: every track file recall reads, indexed; the lock held until it ends."""
    try:
        try:
            os.nice(10)
        except OSError:
            pass
        from maestro.memory.store import index, index_files

        index.warm(root, index_files.wanted(root, project_key), project=project_key)
    except Exception as exc:  # noqa: BLE001 - leave a note; the next start tries again after the cooldown
        from maestro import crash

        crash.record("recall-refresh", exc)
    finally:
        os.close(lock_fd)
