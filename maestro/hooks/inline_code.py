"""What inline interpreter code run by a Bash command would write: `code_writes(lang, code)`.

Python is parsed with `ast` (hooks/inline_python.py); Node, Perl and Ruby are scanned (strings
masked, comments dropped: hooks/inline_scan.py) and their write APIs matched (hooks/inline_languages.py).
Judged by the literal path: a variable, an interpolated string or any computed path is unresolved
(path None, word = the argument as written) and the gate fails closed on it.
This module is the only one the Bash engine imports up front: the analysers, `re` and `ast` load
on first use, so only a command that runs inline code pays for them.
"""

from maestro.hooks.targets import Target


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
    from maestro.hooks.inline_languages import script_writes

    try:
        return script_writes(lang, code)
    except RecursionError:
        return [Target(f"inline {lang}", "run", None, "(code too deeply nested to analyse)")]
    except Exception:  # a gap in this analysis must block, never crash the gate or allow
        return [Target(f"inline {lang}", "run", None, "(code the gate could not analyse)")]
