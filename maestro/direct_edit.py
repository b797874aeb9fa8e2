"""The private per-session direct-edit flag: `~/.maestro/direct-edit/maestro-direct-<sid>.flag`.

The flag is an authorization grant, so it is honoured only when it cannot have been planted by
someone else: exactly `1\n`, a regular file (never followed through a symlink), owned by us, with
no group/other bits, inside private (0700, owned, non-symlink) directories.

A grant also expires: it is honoured for `MAESTRO_GRANT_TTL_SEC` seconds (default 7200; a value
that is not a positive whole number means the default) after it was set, judged by the flag's
mtime. An mtime more than FUTURE_SLACK_SEC in the future (clock skew, a planted file) is not a
grant either. Setting a grant refreshes its mtime; a short acknowledgement keeps the flag as it
is, so its clock keeps running. With no usable HOME (unset, empty, relative, `/`, missing) there
are no grants at all: nothing is honoured, nothing can be set, and revocation has nothing to do
(it never touches a directory guessed for such a HOME) — see paths.grant_home.
"""

import os
import stat
import time

from maestro import paths

FLAG_CONTENT = b"1\n"
_PREFIX = "maestro-direct-"
_SUFFIX = ".flag"
TTL_ENV = "MAESTRO_GRANT_TTL_SEC"
DEFAULT_TTL_SEC = 7200
FUTURE_SLACK_SEC = 1.0  # file-system timestamp granularity; anything later is a future mtime


def _private(st) -> bool:
    return (stat.S_IMODE(st.st_mode) & 0o077) == 0 and st.st_uid == os.getuid()


def grant_ttl_sec() -> int:
    """MAESTRO_GRANT_TTL_SEC as a positive whole number of seconds; anything else is the default."""
    raw = os.environ.get(TTL_ENV, "").strip()
    if not raw or len(raw) > 12 or not (raw.isascii() and raw.isdigit()):
        return DEFAULT_TTL_SEC
    value = int(raw)
    return value if value > 0 else DEFAULT_TTL_SEC


def is_fresh(mtime: float, now: float = None, ttl: int = None) -> bool:
    """Was a grant with this mtime set within the TTL, and not in the future?"""
    now = time.time() if now is None else now
    ttl = grant_ttl_sec() if ttl is None else ttl
    age = now - mtime
    return -FUTURE_SLACK_SEC <= age <= ttl


def flag_is_valid(session_id: str) -> bool:
    if paths.grant_home() is None:
        return False
    try:
        for directory in (paths.maestro_dir(), paths.direct_edit_dir()):
            st = os.lstat(directory)
            if not stat.S_ISDIR(st.st_mode) or not _private(st):
                return False
        fd = os.open(paths.direct_edit_flag(session_id), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not _private(st) or not is_fresh(st.st_mtime):
            return False
        return os.read(fd, 4) == FLAG_CONTENT
    finally:
        os.close(fd)


def set_flag(session_id: str) -> None:
    """Create the flag (mtime now); raise OSError if HOME cannot hold grants or any path
    component is unsafe (a symlink, say)."""
    from maestro.util.atomic import ensure_private_dir

    if paths.grant_home() is None:
        raise OSError("HOME is unset, relative, missing or /: no direct-edit grants")
    ensure_private_dir(paths.maestro_dir())
    ensure_private_dir(paths.direct_edit_dir())
    path = paths.direct_edit_flag(session_id)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    except OSError:
        # A symlink (ELOOP) or other planted entry: remove it so it cannot linger as a trap,
        # then report failure; the caller fails closed.
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                os.unlink(path)
        except OSError:
            pass
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"flag is not a regular file: {path}")
        os.fchmod(fd, 0o600)
        os.write(fd, FLAG_CONTENT)
        if os.utime in os.supports_fd:
            os.utime(fd)  # the TTL counts from now, whatever the write did to the mtime
    finally:
        os.close(fd)


def clear_flag(session_id: str) -> bool:
    """Revoke this session's grant. True when what was removed was not a plain regular file (a
    symlink or other planted entry): a grant must not be set over it in the same breath.
    Raises OSError when the entry cannot be removed (a directory, say)."""
    if paths.grant_home() is None:
        return False
    path = paths.direct_edit_flag(session_id)
    try:
        planted = not stat.S_ISREG(os.lstat(path).st_mode)
        os.unlink(path)
    except (FileNotFoundError, NotADirectoryError):  # no flag can exist there
        return False
    return planted


def is_flag_name(name: str) -> bool:
    from maestro.util.session import is_valid_session_id

    return (
        name.startswith(_PREFIX)
        and name.endswith(_SUFFIX)
        and is_valid_session_id(name[len(_PREFIX) : -len(_SUFFIX)])
    )


def clear_all_flags() -> bool:
    """Revoke every session's grant; True when nothing was left behind."""
    return _remove_flags(lambda st: True)


def prune_expired() -> bool:
    """Remove every grant past its TTL or dated in the future (session-start); True when nothing
    that should go was left behind."""
    now, ttl = time.time(), grant_ttl_sec()
    return _remove_flags(lambda st: not stat.S_ISREG(st.st_mode) or not is_fresh(st.st_mtime, now, ttl))


def _remove_flags(should_remove) -> bool:
    if paths.grant_home() is None:
        return True
    ok = True
    directory = paths.direct_edit_dir()
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    for name in names:
        if not is_flag_name(name):
            continue
        path = os.path.join(directory, name)
        try:
            if should_remove(os.lstat(path)):
                os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError:
            ok = False
    return ok
