"""Brace expansion (`{a,b}`, `{1..3}`) and globbing (`*.py`), for bash_expand: the expansions that
make several words of one. Imported only when a word has a brace or a glob to expand; `fnmatch`
(which imports `re`) only when a word really globs.
"""

import os
import posixpath

from maestro.hooks.bash_syntax import LIT, MAX_FIELDS, has_glob, is_int

MAX_LISTED = 20000  # directory entries a glob may read


# ---------------------------------------------------------------------------------------- braces


def expand_braces(parts):
    """Brace expansion on a word's parts: a list of part lists, or None past the bound."""
    atoms = []
    for part in parts:
        if part[0] == LIT:
            atoms.extend(part[1])
        else:
            atoms.append(part)
    results, work = [], [atoms]
    while work:
        current = work.pop()
        found = _first_brace(current)
        if found is None:
            results.append(current)
        else:
            start, end, alternatives = found
            for alt in reversed(alternatives):
                work.append(current[:start] + alt + current[end + 1:])
        if len(results) + len(work) > MAX_FIELDS:
            return None
    out = []
    for atoms in results:
        parts, text = [], []
        for atom in atoms:
            if type(atom) is str:
                text.append(atom)
                continue
            if text:
                parts.append((LIT, "".join(text)))
                text = []
            parts.append(atom)
        if text:
            parts.append((LIT, "".join(text)))
        out.append(parts)
    return out


def _first_brace(atoms):
    n = len(atoms)
    for start in range(n):
        if atoms[start] != "{" or (start and atoms[start - 1] == "$"):
            continue
        depth, commas = 0, []
        for end in range(start, n):
            atom = atoms[end]
            if atom == "{":
                depth += 1
            elif atom == "}":
                depth -= 1
                if depth == 0:
                    break
            elif atom == "," and depth == 1:
                commas.append(end)
        else:
            continue
        if commas:
            bounds = [start] + commas + [end]
            return start, end, [atoms[bounds[k] + 1:bounds[k + 1]] for k in range(len(bounds) - 1)]
        inner = atoms[start + 1:end]
        if all(type(a) is str for a in inner):
            sequence = _sequence("".join(inner))
            if sequence is not None:
                return start, end, [list(item) for item in sequence]
    return None


def _sequence(text):
    pieces = text.split("..")
    if len(pieces) not in (2, 3):
        return None
    step = 1
    if len(pieces) == 3:
        if not is_int(pieces[2]):
            return None
        step = abs(int(pieces[2])) or 1
    first, last = pieces[0], pieces[1]
    if is_int(first) and is_int(last):
        a, b = int(first), int(last)
        if abs(b - a) // step + 1 > MAX_FIELDS:
            return ["{" + text + "}"] * (MAX_FIELDS + 1)
        width = max(len(first), len(last)) if (first.lstrip("-").startswith("0") and len(first.lstrip("-")) > 1) or (
            last.lstrip("-").startswith("0") and len(last.lstrip("-")) > 1) else 0
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [str(v).zfill(width) if width else str(v) for v in values]
    if len(first) == 1 and len(last) == 1 and first.isascii() and last.isascii() and first.isalpha() and last.isalpha():
        a, b = ord(first), ord(last)
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [chr(v) for v in values]
    return None


# ---------------------------------------------------------------------------------------- globs


def expand_glob(segments, cwd):
    """Matches of a field whose unquoted parts hold glob characters: sorted paths, [] for no
    match (bash then keeps the word), None when it cannot be known (unknown cwd, too many)."""
    pattern = []
    for text, globbable in segments:
        if globbable:
            pattern.append(text)
        else:
            pattern.append("".join("[" + ch + "]" if ch in "*?[]" else ch for ch in text))
    pattern = "".join(pattern)
    absolute = pattern.startswith("/")
    if not absolute and cwd is None:
        return None
    try:  # a lone surrogate or a NUL names no file: unknown, not an exception out of the gate
        (pattern + (cwd or "")).encode("utf-8", "surrogateescape")
    except UnicodeError:
        return None
    if "\0" in pattern:
        return None
    from fnmatch import fnmatchcase  # only for words that really glob

    components = pattern.split("/")
    only_dirs = pattern.endswith("/")
    candidates = [("/" if absolute else "", "/" if absolute else cwd)]
    listed = 0
    for k, comp in enumerate(components):
        if comp == "":
            continue
        last = all(c == "" for c in components[k + 1:])
        if not has_glob(comp):
            plain = comp.replace("[*]", "*").replace("[?]", "?").replace("[[]", "[").replace("[]]", "]")
            candidates = [(shown + plain + ("" if last and not only_dirs else "/"),
                           posixpath.join(real, plain)) for shown, real in candidates]
            continue
        matched = []
        for shown, real in candidates:
            try:
                names = os.listdir(real)
            except (OSError, ValueError):
                continue
            listed += len(names)
            if listed > MAX_LISTED:
                return None
            for name in names:
                if name.startswith(".") and not comp.startswith("."):
                    continue
                if fnmatchcase(name, comp):
                    path = posixpath.join(real, name)
                    if (not last or only_dirs) and not os.path.isdir(path):
                        continue
                    matched.append((shown + name + ("" if last and not only_dirs else "/"), path))
            if len(matched) > MAX_FIELDS:
                return None
        candidates = matched
        if not candidates:
            return []
    return sorted(shown for shown, real in candidates if os.path.lexists(real))
