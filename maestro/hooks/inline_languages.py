"""Inline Node, Perl and Ruby code (`code_writes` for "node", "perl", "ruby"): which Finder reads
it (hooks/inline_node.py, hooks/inline_perl_ruby.py, each loaded on first use), the commands of its
backquotes, and the code interpolated into its strings, analysed again up to MAX_DEPTH levels.
Split from hooks/inline_scripts.py (the Finder the languages extend), so that the language modules
import the shared Finder without importing this dispatch back.
"""

from maestro.hooks.inline_paths import after_chdir
from maestro.hooks.inline_scan import Source
from maestro.hooks.inline_scripts import TooLong
from maestro.hooks.targets import Target

MAX_DEPTH = 4  # code interpolated into strings, analysed recursively
MAX_INNER = 100  # interpolations worth analysing per string level; past it the code fails closed


def script_writes(lang: str, code: str) -> list:
    """code_writes for "node", "perl" and "ruby" (may raise RecursionError: the caller fails closed)."""
    return _writes(lang, code, 0)


def _language(lang):
    """(Finder subclass, hint words) of one language; its module loads on first use."""
    if lang == "node":
        from maestro.hooks.inline_node import HINTS, NodeFinder as finder_class
    else:
        from maestro.hooks.inline_perl_ruby import HINTS, PerlRubyFinder as finder_class
    return finder_class, HINTS[lang]


def _writes(lang, code, depth):
    finder_class, hints = _language(lang)
    source = Source(code, lang)
    finder = finder_class(source, lang)
    try:
        getattr(finder, lang)()
    except TooLong:
        finder.out.append(Target(f"inline {lang}", "run", None, "(code too long to analyse)"))
    for kind, value, raw in zip(source.kinds, source.values, source.raws):
        if kind == "cmd":  # `…`, qx{…}, %x{…}, <<`EOF`: a shell command
            finder.shell(f"{lang} `…`", value, raw)
    if source.broken and any(hint in code for hint in hints):
        finder.out.append(Target(f"inline {lang}", "run", None, "(code the gate could not tokenise)"))
    inner = [code for code in source.inner if any(hint in code for hint in hints)]
    if inner and (depth >= MAX_DEPTH or len(inner) > MAX_INNER):
        finder.out.append(Target(f"inline {lang}", "run", None, "(interpolated code the gate could not analyse)"))
    else:
        for code in inner:  # code interpolated into a string runs too
            finder.out.extend(_writes(lang, code, depth + 1))
    return after_chdir(finder.out, finder.chdirs, "chdir")
