"""The private per-session direct-edit flag: `~/.maestro/direct-edit/maestro-direct-<sid>.flag`.

The flag is an authorization grant, so it is honoured only when it cannot have been planted by
someone else: exactly `1\n`, a regular file (never followed through a symlink), owned by us, with
no group/other bits, inside private (0700, owned, non-symlink) directories.
"""

import os
import stat

from maestro import paths

FLAG_CONTENT = b"1\n"
_PREFIX = "maestro-direct-"
_SUFFIX = ".flag"


def _private(st) -> bool:
    return (stat.S_IMODE(st.st_mode) & 0o077) == 0 and st.st_uid == os.getuid()


def flag_is_valid(session_id: str) -> bool:
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
        if not stat.S_ISREG(st.st_mode) or not _private(st):
            return False
        return os.read(fd, 4) == FLAG_CONTENT
    finally:
        os.close(fd)


def set_flag(session_id: str) -> None:
    """Create the flag; raise OSError if any path component is unsafe (a symlink, say)."""
    from maestro.atomic import ensure_private_dir

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
    finally:
        os.close(fd)


def clear_flag(session_id: str) -> None:
    try:
        os.unlink(paths.direct_edit_flag(session_id))
    except FileNotFoundError:
        pass


def is_flag_name(name: str) -> bool:
    from maestro.hooks.policy import is_valid_session_id

    return (
        name.startswith(_PREFIX)
        and name.endswith(_SUFFIX)
        and is_valid_session_id(name[len(_PREFIX) : -len(_SUFFIX)])
    )


def clear_all_flags() -> bool:
    """Revoke every session's grant; True when nothing was left behind."""
    ok = True
    try:
        names = os.listdir(paths.direct_edit_dir())
    except FileNotFoundError:
        return True
    except OSError:
        return False
    for name in names:
        if is_flag_name(name):
            try:
                os.unlink(os.path.join(paths.direct_edit_dir(), name))
            except FileNotFoundError:
                pass
            except OSError:
                ok = False
    return ok
