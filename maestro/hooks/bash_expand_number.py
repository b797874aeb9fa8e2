"""Is a path named with one of bash's digits-only variables (`/tmp/x.$$`, `/tmp/r.$RANDOM`) safe
to judge by a representative number?

The engine expands `$$` and the like to a made-up number (bash_expand.REPRESENTATIVE_NUMBER): the
real one is only ASCII digits, so the path stays in its directory and keeps its extension. What the
made-up name cannot show is a file that already exists under the real name: a symbolic link
`/tmp/x.4242 -> <repo>/src/app.py` planted earlier would be written through. So the directory is
looked at: any existing entry whose name matches the word with each number as `[0-9]+` that is not
a plain, single-linked, non-executable file (a link, a directory, a hard link, a device…) makes the
word unknown (fail closed). A number in a directory component (`/tmp/d.$$/f`) is safe only when no
such directory exists yet.

Imported only for words that hold such a variable (rare); `re` is imported lazily for the same reason.
"""

import os
import stat

NUMBER_MARK = "\x00"  # stands for a number while the path is checked (a NUL never survives expansion)
MAX_NAMES = 4096  # entries of one directory beyond which the question is not answered (unknown)


def number_path_is_safe(pieces, cwd, representative):
    """pieces: (text, is_number) in order; cwd: the effective cwd (None = unknown). True when
    every existing file the word could name under some number is judged like the made-up one."""
    marked = "".join(NUMBER_MARK if is_number else text for text, is_number in pieces)
    if NUMBER_MARK not in marked:
        return True
    if "\x00" in "".join(text for text, is_number in pieces if not is_number):
        return False
    absolute = marked.startswith("/")
    if not absolute and cwd is None:
        return False
    components = marked.split("/")
    last = max(k for k, comp in enumerate(components) if comp) if any(components) else -1
    for k, comp in enumerate(components):
        if NUMBER_MARK not in comp:
            continue
        parent = "/".join(components[:k]).replace(NUMBER_MARK, representative)
        directory = (parent or "/") if absolute else os.path.join(cwd, parent) if parent else cwd
        verdict = _component_is_safe(directory, comp, k == last)
        if not verdict:
            return False
    return True


def _component_is_safe(directory, comp, is_last):
    try:
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return True  # no directory, no entry under any number
    except (OSError, ValueError):  # cannot be listed (or named: a lone surrogate): cannot tell
        return False
    if len(names) > MAX_NAMES:
        return False
    import re

    pattern = re.compile("[0-9]+".join(re.escape(chunk) for chunk in comp.split(NUMBER_MARK)))
    for name in names:
        if not pattern.fullmatch(name):
            continue
        if not is_last:
            return False  # an existing directory (or a link to one) the word may walk through
        try:
            info = os.lstat(os.path.join(directory, name))
        except FileNotFoundError:
            continue
        except (OSError, ValueError):
            return False
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1 or info.st_mode & 0o111:
            return False
    return True
