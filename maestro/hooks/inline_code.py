"""What inline interpreter code run by a Bash command would write: `code_writes(lang, code)`.

Python is parsed with `ast` (hooks/inline_python.py); Node, Perl and Ruby are scanned (strings
masked, comments dropped: hooks/inline_scan.py) and their write APIs matched (hooks/inline_scripts.py).
Judged by the literal path: a variable, an interpolated string or any computed path is unresolved
(path None, word = the argument as written) and the gate fails closed on it.
This module is the only one the Bash engine imports up front: the analysers, `re` and `ast` load
on first use, so only a command that runs inline code pays for them.
"""

import posixpath

from maestro.hooks.targets import Script, Target

UNKNOWN_SHELL_WORD = '"$UNKNOWN_INLINE_VALUE"'  # an argument value the analysis cannot know, for the engine
MAX_WORD = 80  # characters of source text in a message


def code_writes(lang: str, code: str) -> list:
    """Every write `code` (program text in `lang`) would make, judged by its literal paths:
    Target (cwd None: the engine supplies it; path None when not literal, word = the argument as
    written) or Script("sh", command, word) for a shell-out with a literal command.
    Raises ValueError for a language it does not know (the engine never passes one)."""
    if lang == "python":
        from maestro.hooks.inline_python import python_writes

        return python_writes(code)
    if lang in ("make", "tcl", "gdb", "sqlite"):
        from maestro.hooks.inline_tools import tool_writes

        return tool_writes(lang, code)
    if lang not in ("node", "perl", "ruby"):
        raise ValueError(f"no inline-code analysis for {lang!r}")
    from maestro.hooks.inline_scripts import script_writes

    try:
        return script_writes(lang, code)
    except RecursionError:
        return [Target(f"inline {lang}", "run", None, "(code too deeply nested to analyse)")]
    except Exception:  # a gap in this analysis must block, never crash the gate or allow
        return [Target(f"inline {lang}", "run", None, "(code the gate could not analyse)")]


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
