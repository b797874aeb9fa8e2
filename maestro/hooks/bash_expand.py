"""Word expansion for the Bash analysis, as bash does it: brace → tilde → parameters and
substitutions → field splitting → globbing → quote removal, against a `State` (the effective cwd
and the variables known at that point of the command).

A value that cannot be known statically is None (an unknown variable, `$(…)` output, `$1`…); a
word with such a part expands to one Word whose value is None. A variable neither in the hook's
environment nor assigned in the command is unknown (the Bash tool's shell may set it), except the
few in DEFAULT_UNSET; `unset X` makes X empty; bash's own dynamic variables are unknown.
Substitutions are handed to the analyser (`an.substitution`) because the commands in them run.
The builtins that change the State are in bash_run; brace expansion and globbing in
bash_patterns, imported only when a word has a brace or a glob to expand.
Hot path: no `re`.
"""

from maestro.hooks.bash_syntax import (  # noqa: F401 (MAX_FIELDS, UNSET: re-exported for the analysis)
    ARITH, ARRAY, CMDSUB, LIT, MAX_FIELDS, PARAM, PROCSUB, QLIT, UNSET, has_glob)
from maestro.hooks.targets import Target, Word

ABSENT = object()  # not in the state at all: the Bash tool's shell may set it (rc files): unknown
# Absent from the hook's environment, these are taken as unset: bash's own defaults apply and the
# common idioms depend on it (`${TMPDIR:-/tmp}`, `mktemp`, word splitting, `cd relative`).
DEFAULT_UNSET = frozenset(("TMPDIR", "IFS", "CDPATH", "GLOBIGNORE", "BASH_ENV", "ENV", "POSIXLY_CORRECT"))
DYNAMIC = frozenset((
    "RANDOM", "SRANDOM", "SECONDS", "LINENO", "BASHPID", "PPID", "UID", "EUID", "GROUPS", "HOSTNAME", "HOSTTYPE",
    "OSTYPE", "MACHTYPE", "EPOCHSECONDS", "EPOCHREALTIME", "PIPESTATUS", "REPLY", "OPTARG", "OPTIND", "FUNCNAME",
    "SHELLOPTS", "BASHOPTS", "DIRSTACK", "COLUMNS", "LINES", "BASH", "BASH_VERSION", "BASH_SOURCE", "BASH_REMATCH",
    "BASH_COMMAND", "BASH_ARGV", "BASH_ARGC", "BASH_LINENO", "SHLVL", "COPROC", "MAPFILE", "HISTCMD",
))
# Bash's own variables that can only hold ASCII digits: `/tmp/x.$$` stays in /tmp whatever the
# value, so they expand to a representative number (never literal, never a `/`, `..` or glob)
# and the path is judged by its real directory and extension. Not when the command assigned or
# unset one (`unset RANDOM` strips its magic; then it is an ordinary variable, looked up as such).
DIGITS_ONLY = frozenset(("$", "BASHPID", "RANDOM", "SRANDOM", "PPID", "UID", "EUID"))
READONLY_DIGITS = frozenset(("$", "PPID", "UID", "EUID"))  # cannot be unset or reassigned


class _Number(str):
    """The made-up value of a digits-only variable, told apart from the same text written out:
    a word holding one is checked against the files that exist under any number."""

    __slots__ = ()


REPRESENTATIVE_NUMBER = _Number("12345")
_GLOB = frozenset("*?[")
_POSITIONAL = frozenset("@*#?-$!")


class State:
    """What the shell knows at one point: cwd (None = unknown), variables (str, None = unknown,
    tuple = array), exported names, the pushd stack, defined functions/aliases and their effects."""

    __slots__ = ("cwd", "vars", "exported", "dirstack", "poisoned", "funcs", "pwd_assigned")

    def __init__(self, cwd, vars, exported, dirstack=(), poisoned=False, funcs=None, pwd_assigned=False):
        self.cwd, self.vars, self.exported = cwd, vars, exported
        self.dirstack, self.poisoned, self.funcs = dirstack, poisoned, funcs or {}
        self.pwd_assigned = pwd_assigned

    def copy(self):
        # Every `cd` starts from a copy: bash's cd copies the PWD *variable* into OLDPWD, so once
        # the command assigned PWD (it no longer names the cwd), OLDPWD (~-, `cd -`) is unknown.
        assigned = self.pwd_assigned or self.vars.get("PWD", self.cwd) != self.cwd
        return State(self.cwd, dict(self.vars), set(self.exported), self.dirstack, self.poisoned, dict(self.funcs),
                     assigned)

    def same(self, other):
        return (self.cwd == other.cwd and self.vars == other.vars and self.dirstack == other.dirstack
                and self.poisoned == other.poisoned and self.pwd_assigned == other.pwd_assigned)

    def lookup(self, name):
        if self.poisoned:
            return None
        if name == "OLDPWD" and self.pwd_assigned:
            return None
        value = self.vars.get(name, ABSENT)
        if value is ABSENT:
            return UNSET if name in DEFAULT_UNSET else None
        return value

    def child(self, extra=None):
        """The state a child shell (`bash -c`) starts with: exported variables; the others are
        unknown to it (whether they were exported — `set -a`, `declare -x "$v"` — is not tracked)."""
        known = {k: (v if k in self.exported else None) for k, v in self.vars.items()}
        if extra:
            known.update(extra)
        known["PWD"] = self.cwd
        known["IFS"] = " \t\n"  # a new bash sets IFS on startup
        return State(self.cwd, known, set(k for k, v in known.items() if v is not None), (), self.poisoned,
                     None, self.pwd_assigned)

    def exported_env(self, extra=None):
        env = {k: v for k, v in self.vars.items() if k in self.exported and type(v) is str}
        if extra:
            env.update((k, v) for k, v in extra.items() if type(v) is str)
        return env


def join(a, b):
    """The state when either `a` or `b` may hold: what differs becomes unknown."""
    if a is b or a.same(b):
        return b
    merged = {}
    for key in a.vars.keys() | b.vars.keys():
        left, right = a.vars.get(key, ABSENT), b.vars.get(key, ABSENT)
        merged[key] = left if left is right or (left == right and left is not ABSENT) else None
    funcs = dict(a.funcs)
    funcs.update(b.funcs)
    return State(a.cwd if a.cwd == b.cwd else None, merged, a.exported | b.exported,
                 a.dirstack if a.dirstack == b.dirstack else None, a.poisoned or b.poisoned, funcs,
                 a.pwd_assigned or b.pwd_assigned)


def join_all(states):
    result = states[0]
    for other in states[1:]:
        result = join(result, other)
    return result


# ---------------------------------------------------------------------------------------- expansion


def expand(word, st, an):
    """A parsed word → list of targets.Word (several after braces, splitting, globbing)."""
    parts = word.parts
    if all(p[0] <= QLIT for p in parts) and not any(p[0] == LIT and (_GLOB.intersection(p[1]) or "{" in p[1]
                                                                      or p[1].startswith("~")) for p in parts):
        text = "".join(p[1] for p in parts)
        if "\x00" in text:  # bash ends a string at a NUL ($'a\x00b'): not followed
            return [Word(None, word.raw, False)]
        return [Word(text, word.raw, True)]
    alternatives = [parts]
    if any(p[0] == LIT and "{" in p[1] for p in parts):
        from maestro.hooks.bash_patterns import expand_braces  # only a word with a brace

        alternatives = expand_braces(parts)
        if alternatives is not None and alternatives != [parts] and any(
                p[0] == PARAM and not p[5] and not p[6].startswith("${") and k + 1 < len(parts)
                and parts[k + 1][0] == LIT and parts[k + 1][1].startswith("{") for k, p in enumerate(parts)):
            return [Word(None, word.raw, False)]  # `$A{1,2}` braces first: `$A1 $A2`, other names
    if alternatives is None:
        return [Word(None, word.raw, False)]
    literal = len(alternatives) == 1 and all(p[0] <= QLIT for p in parts)
    out = []
    for alt in alternatives:
        out.extend(_expand_fields(alt, word.raw, literal, st, an))
        if len(out) > MAX_FIELDS:
            return [Word(None, word.raw, False)]
    return out


def expand_text(word, st, an, tilde=True):
    """A word → one string without splitting or globbing (assignments, here-strings, `case`),
    or None when unknown."""
    parts = word.parts
    if tilde:
        parts = _tilde(parts, st)
        if parts is None:
            return None
    out, unknown, number = [], False, False
    for part in parts:
        kind = part[0]
        if kind <= QLIT:
            if "\x00" in part[1]:
                return None  # bash ends a string at a NUL
            out.append(part[1])
            continue
        value = _part_value(part, st, an)
        if value is None:
            unknown = True
        elif type(value) is tuple:
            out.append(" ".join(value))
        else:
            number = number or type(value) is _Number
            out.append(value)
    if unknown:
        return None
    if number and not _number_safe([(text, type(text) is _Number) for text in out], st.cwd):
        return None  # judged where it is expanded: a relative name used after a `cd` is not re-checked
    return "".join(out)


def _expand_fields(parts, raw, literal, st, an):
    expanded = _tilde(parts, st)
    if expanded is None:
        return [Word(None, raw, False)]
    literal = literal and expanded is parts
    fields = [[[], False]]  # [segments [(text, globbable)], kept even when empty]
    ifs = st.lookup("IFS")
    ifs = " \t\n" if ifs is UNSET else (ifs if type(ifs) is str else None)
    for part in expanded:
        kind = part[0]
        if "\x00" in part[1] if kind <= QLIT else False:
            return [Word(None, raw, False)]  # bash ends a string at a NUL
        if kind == LIT:
            fields[-1][0].append((part[1], True))
            continue
        if kind == QLIT:
            fields[-1][0].append((part[1], False))
            fields[-1][1] = True
            continue
        value = _part_value(part, st, an)
        quoted = part[5] if kind == PARAM else (part[2] if kind in (CMDSUB, ARITH) else False)
        if value is None or (ifs is None and not quoted):
            return [Word(None, raw, False)]
        if type(value) is _Number:
            if not quoted and any(ch in "0123456789" for ch in ifs):
                return [Word(None, raw, False)]  # the real digits would be split where unknown
            fields[-1][0].append((value, None))  # None: a number, neither globbed nor split
            fields[-1][1] = fields[-1][1] or quoted
            continue
        if type(value) is tuple:
            if quoted and part[2] is not None and part[2].raw == "@":
                for k, item in enumerate(value):
                    if k:
                        fields.append([[], True])
                    fields[-1][0].append((item, False))
                    fields[-1][1] = True
                continue
            value = (ifs[:1] if quoted else " ").join(value)
        if quoted:
            fields[-1][0].append((value, False))
            fields[-1][1] = True
        else:
            _split_into(fields, value, ifs)
    out = []
    for segments, keep in fields:
        if not keep and not any(text for text, _ in segments):
            continue
        if any(globbable is None for _, globbable in segments):
            if any(globbable and has_glob(text) for text, globbable in segments):
                return [Word(None, raw, False)]  # what `/tmp/*.$$` matches depends on the number
            if not _number_safe([(text, globbable is None) for text, globbable in segments], st.cwd):
                return [Word(None, raw, False)]
        if any(globbable and has_glob(text) for text, globbable in segments):
            from maestro.hooks.bash_patterns import expand_glob  # only a word that really globs

            matches = expand_glob(segments, st.cwd)
            if matches is None:
                return [Word(None, raw, False)]
            if matches:
                out.extend(Word(m, raw, False) for m in matches)
                continue
        out.append(Word("".join(text for text, _ in segments), raw, literal))
    return out


def _split_into(fields, value, ifs):
    if not value:
        return
    white = all(ch in " \t\n" for ch in ifs)
    if white:
        pieces = _split_chars(value, ifs, True)  # not str.split(): bash splits on IFS only (no \x1c, NBSP, CR)
    else:
        pieces = _split_chars(value, ifs, False)
    if value[0] in ifs and (fields[-1][0] or fields[-1][1]):
        fields.append([[], False])
    for k, piece in enumerate(pieces):
        if k:
            fields.append([[], not white])
        fields[-1][0].append((piece, True))
    if value[-1] in ifs and pieces:
        fields.append([[], False])


def _split_chars(value, ifs, collapse):
    pieces, current = [], []
    for ch in value:
        if ch in ifs:
            if current or not collapse:
                pieces.append("".join(current))
            current = []
        else:
            current.append(ch)
    if current:
        pieces.append("".join(current))
    return [p for p in pieces if p] if collapse else pieces


def _tilde(parts, st):
    if not parts or parts[0][0] != LIT or not parts[0][1].startswith("~"):
        return parts
    from maestro.hooks.bash_tilde import tilde  # only words that start with ~

    return tilde(parts, st)


def _part_value(part, st, an):
    """str, tuple (array) or None."""
    kind = part[0]
    if kind == PARAM:
        return _param(part, st, an)
    if kind == CMDSUB:
        return an.substitution(part[1], st, part[3])
    if kind == ARITH:
        expand_text(part[1], st, an, tilde=False)  # substitutions inside run
        an.arithmetic(part[1], st)
        text = part[1].literal_text()
        return text.strip() if text is not None and text.strip().isdigit() else None
    if kind == PROCSUB:
        an.process_substitution(part[2], st, part[1])
        return "/dev/fd/63"
    if kind == ARRAY:
        return None
    return part[1]


def _param(part, st, an):
    _, name, index, op, arg, quoted, raw = part
    arg_value = expand_text(arg, st, an) if arg is not None else None  # substitutions in it may run
    if name in DIGITS_ONLY and (name in READONLY_DIGITS or (name not in st.vars and not st.poisoned)):
        value = REPRESENTATIVE_NUMBER
    elif name in _POSITIONAL or name.isdigit():
        return None
    else:
        value = st.cwd if name == "PWD" and "PWD" not in st.vars else st.lookup(name)
    if index is not None:
        subscript = expand_text(index, st, an, tilde=False)
        if value is None or subscript is None:
            return None
        subscript = subscript.strip()
        if value is UNSET:
            pass
        elif type(value) is tuple:
            if subscript.isdigit():
                value = value[int(subscript)] if int(subscript) < len(value) else UNSET
            elif subscript not in ("@", "*"):
                return None
        elif subscript.isdigit():
            value = value if int(subscript) == 0 else UNSET
        elif subscript not in ("@", "*"):
            return None
    elif type(value) is tuple:
        value = value[0] if value else UNSET
    if op is None:
        return "" if value is UNSET else value
    if op == "other" and arg is not None and arg.raw.startswith("@") and "P" in arg.raw:
        an.add(Target("prompt expansion", "run", None, raw))  # ${x@P} runs the $(…) in x's value
    if op == "other" or value is None:
        return None
    empty = value is UNSET or (op[0] == ":" and value in ("", ()))
    bare = op[-1]
    if bare == "-":
        return arg_value if empty else value
    if bare == "=":
        if empty:
            if index is None:
                st.vars[name] = arg_value
            return arg_value
        return value
    if bare == "+":
        return "" if empty else arg_value
    return None if empty else value  # ":?" / "?"


def _number_safe(pieces, cwd):
    from maestro.hooks.bash_expand_number import number_path_is_safe  # only words with `$$` and kin

    return number_path_is_safe(pieces, cwd, REPRESENTATIVE_NUMBER)
