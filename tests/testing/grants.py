"""The user's "edit it yourself" grant as the hook tests plant it: one helper for every test file.

A valid grant is exactly `1\n`, mode 0600, in 0700 directories (maestro/direct_edit.py); tests vary
the content, modes and age (mtime `age` seconds ago; negative: in the future) to prove each rule.
"""

import os
import time


def flag_path(home, sid):
    return home / ".maestro" / "direct-edit" / f"maestro-direct-{sid}.flag"


def make_flag(home, sid, content=b"1\n", mode=0o600, dir_mode=0o700, age=0.0):
    directory = home / ".maestro" / "direct-edit"
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(home / ".maestro", dir_mode)
    os.chmod(directory, dir_mode)
    flag = flag_path(home, sid)
    flag.write_bytes(content)
    os.chmod(flag, mode)
    if age:
        stamp = time.time() - age
        os.utime(flag, (stamp, stamp))
    return flag
