"""The path and word helpers the inline-code analysers share (inline_python, inline_python_values,
inline_scripts and its languages): shlex-style quoting, pathlib-style joining, the second reading of
relative paths after a chdir, and the bounds of the words they report. Below the dispatch
(inline_code.code_writes), so that the analysers it loads on first use never import it back.
No `re`: the analysers load that themselves.
"""

import posixpath

from maestro.hooks.targets import Script, Target

UNKNOWN_SHELL_WORD = '"$UNKNOWN_INLINE_VALUE"'  # an argument value the analysis cannot know, for the engine
MAX_WORD = 80  # characters of source text in a message


def quote(text: str) -> str:
    """shlex.quote without importing shlex (and re) on the hook's path."""
    if text and all(c.isascii() and (c.isalnum() or c in "@%+=:,./-_") for c in text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


def join_path(parts) -> str:
    """pathlib's join and normalisation: an absolute part restarts, empty and '.' parts vanish."""
    joined = ""
    for part in parts:
        joined = posixpath.join(joined, part) if joined else part
    kept = [seg for seg in joined.split("/") if seg not in ("", ".")]
    text = "/".join(kept)
    return ("/" + text) if joined.startswith("/") else (text or ".")


def after_chdir(out: list, chdirs: list, label: str) -> list:
    """After a chdir a relative path names another file. The analysis does not know which writes
    come after it, so both readings are judged: with one literal directory, the joined path (and
    each shell-out again behind `cd DIR &&`); otherwise the relative path is unresolved."""
    if not chdirs:
        return out
    known = chdirs[0] if len(chdirs) == 1 else None
    for item in list(out):
        if type(item) is Target and item.path is not None and not item.path.startswith("/"):
            moved = join_path((known, item.path)) if known is not None else None
            out.append(Target(item.channel, item.action, moved, moved or f"{item.path} (after {label})", None,
                              item.tree))
        elif type(item) is Script:
            prefix = quote(known) if known is not None else UNKNOWN_SHELL_WORD
            out.append(Script("sh", f"cd {prefix} && {item.code}", item.word))
    return out


def looks_like_directory(path: str) -> bool:
    """shutil.copy/move into a directory writes dst/<name>; without the filesystem, a destination
    ending in '/' or with no extension in its last part is taken as possibly a directory."""
    return path.endswith("/") or "." not in posixpath.basename(path) or path in (".", "..")
