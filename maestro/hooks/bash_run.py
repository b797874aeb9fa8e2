"""Running one expanded command, for the Bash analysis (Runner is a base class of
bash_writes.Analyzer): a builtin that changes the shell's state, a defined function or alias, or
a program.

The builtins: the common ones are here (cd, declare/export/typeset/local/readonly, unset,
printf -v); the others (pushd/popd, read/mapfile/getopts/let, source, alias, trap,
break/continue) are in bash_builtins_rare, imported the first time one runs. Each takes
(analyzer, argv, state, stdin) and returns (state if it succeeded, state if it failed), or None
to let the channel table judge it too.
A program's writes, the commands it wraps (Run: `sudo cmd`, `env X=1 cmd`) and the programs it
runs (Script: `bash -c`, `eval`, inline python/node/perl/ruby) are what the channel table
(bash_channels.command_writes) and inline_code.code_writes report; both are looked up through
their modules at each call.
"""

import os
import posixpath

from maestro.hooks.bash_expand import UNSET, expand, expand_text, join
from maestro.hooks.bash_parse import LIT, MAX_NESTING, parse
from maestro.hooks.bash_syntax import NAME_START
from maestro.hooks.targets import BashSyntaxError, Run, Script, Target

DECLARATIONS = frozenset(("declare", "typeset", "local", "export", "readonly"))
CODE_INITIALS = frozenset("PBGEVHSNLIMRC")  # the first letters of bash_hazards.CODE_VARIABLES
MAX_STEPS = 20000  # commands analysed (loops are analysed more than once): bash_writes, bash_writes_compound


def is_name(text):
    return bool(text) and text[0] in NAME_START and all(c in NAME_START or c.isdigit() for c in text)


def word_values(argv):
    return [w.value for w in argv[1:]]


def under_link(an, path):
    """`path` is (or is under) a link an earlier `ln` of this command made: it may lead anywhere."""
    return any(path == link or path.startswith(link.rstrip("/") + "/") for link in an.links)


def change_dir(st, target, physical=False, an=None):
    """(success, failure) states of a `cd` to `target` (None: unknown). A directory that exists
    now may be gone when the `cd` runs (an earlier command removes it): the failure state keeps
    the old cwd, and only `&&` after the `cd` is sure to run in the new one. `cd -P` resolves
    symbolic links before `..` (physical)."""
    new = None
    if target is not None:
        if not target.startswith("/"):
            new = None if st.cwd is None else posixpath.join(st.cwd, target)
        else:
            new = target
        if new is not None:
            new = os.path.realpath(new) if physical else posixpath.normpath(new)
    if new is not None and an is not None and an.links:
        new = None if under_link(an, new) else new
    succ = st.copy()
    succ.cwd = new
    succ.vars["OLDPWD"] = st.cwd
    succ.vars["PWD"] = new
    if new is not None and (new == st.cwd or (an is not None and not an.programs_ran and os.path.isdir(new))):
        return succ, succ  # no command of this line ran yet that could have removed it
    return succ, st


def _cd(an, argv, st, stdin):
    args = word_values(argv)
    physical = False
    while args and args[0] is not None and len(args[0]) > 1 and args[0][0] == "-" and (
            args[0] == "--" or all(c in "LPe@" for c in args[0][1:])):
        flag = args.pop(0)
        if flag == "--":
            break
        physical = flag.rstrip("e@")[-1:] == "P" if flag.rstrip("e@") != "-" else physical
    if not args:
        home = st.lookup("HOME")
        if home is UNSET:
            return st, st
        return change_dir(st, home if type(home) is str else None, False, an)
    target = args[0]
    if target == "-":
        old = st.lookup("OLDPWD")
        return change_dir(st, old if type(old) is str else None, False, an)
    if target is not None and not target.startswith("/") and target not in (".", "..") and not target.startswith(
            ("./", "../")):
        cdpath = st.lookup("CDPATH")
        if cdpath is None or (type(cdpath) is str and cdpath):
            target = None  # CDPATH may send it elsewhere
    return change_dir(st, target, physical, an)


def mark_unknown(st, names):
    for name in names:
        if name is None:
            st.poisoned = True
        else:
            st.vars[name.partition("[")[0]] = None


def _printf(an, argv, st, stdin):
    args = word_values(argv)
    for k, arg in enumerate(args):
        if arg == "-v" and k + 1 < len(args):
            mark_unknown(st, [args[k + 1]])
        elif arg is not None and arg.startswith("-v") and len(arg) > 2:
            mark_unknown(st, [arg[2:]])
        if arg is None or arg[:1] != "-":
            break
    return None


def _unset(an, argv, st, stdin):
    functions = False
    for arg in word_values(argv):
        if arg in ("-f", "-v", "-n", "--"):
            functions = arg == "-f"
        elif arg is None:
            st.poisoned = True
        elif functions:
            st.funcs.pop(arg, None)
        elif "[" in arg:
            mark_unknown(st, [arg])
        elif arg in st.funcs and st.vars.get(arg) is UNSET:
            del st.funcs[arg]  # no variable of that name: bash unsets the function
        else:
            st.vars[arg] = UNSET
    return st, st


def _declare_values(an, argv, st, stdin):
    """`command export X=1` and the like, reached through a wrapper: plain values only."""
    flags = set()
    for arg in word_values(argv):
        _declare_one(argv[0].value, arg, None, flags, st)
    return st, st


def declare(an, builtin, words, st):
    """export/declare/typeset/local/readonly with their parsed arguments (assignment values are
    expanded without splitting, arrays `x=(…)` are taken as arrays)."""
    from maestro.hooks.bash_parse import ARRAY

    flags = set()
    for word in words:
        head = word.parts[0] if word.parts else None
        if head is not None and head[0] == LIT and "=" in head[1] and is_name(
                head[1].partition("=")[0].rstrip("+").partition("[")[0]):
            name, _, rest = head[1].partition("=")
            tail = ([(LIT, rest)] if rest else []) + list(word.parts[1:])
            if any(p[0] == ARRAY for p in tail):
                values = []
                for element in tail[-1][1]:
                    values.extend(w.value for w in expand(element, st, an))
                value = None if None in values or len(tail) > 1 else tuple(values)
            else:
                from maestro.hooks.bash_parse import Word as ParsedWord

                value = expand_text(ParsedWord(tail, word.raw), st, an)
            if name[:1] in CODE_INITIALS or "[" in name or (type(value) is str and "[" in value):
                from maestro.hooks.bash_hazards import declare_hazards

                declare_hazards(an, name, value, word.raw)
            _declare_one(builtin, name, value, flags, st)
            continue
        for expanded in expand(word, st, an):
            if expanded.value is not None and (expanded.value[:1] in CODE_INITIALS or "[" in expanded.value):
                from maestro.hooks.bash_hazards import declare_hazards

                name, _, value = expanded.value.partition("=")
                declare_hazards(an, name, value, word.raw)
            _declare_one(builtin, expanded.value, None, flags, st, parsed=False)


def _declare_one(builtin, arg, value, flags, st, parsed=True):
    if arg is None:
        st.poisoned = True
        return
    if not parsed or value is None and "=" not in arg:
        if arg[:1] in "-+" and len(arg) > 1 and value is None and "=" not in arg:
            (flags.update if arg[0] == "-" else flags.difference_update)(arg[1:])
            if "n" in flags and builtin != "export":
                st.poisoned = True  # namerefs redirect later assignments to other names
            return
        if "=" in arg:
            arg, _, value = arg.partition("=")
        else:
            name = arg.partition("[")[0]
            if is_name(name) and "f" not in flags:
                if builtin == "export" or "x" in flags:
                    (st.exported.discard if "n" in flags else st.exported.add)(name)
            return
    name = arg.rstrip("+").partition("[")[0]
    if not is_name(name) or "f" in flags:
        return
    if "i" in flags and type(value) is str and not value.strip().isdigit():
        value = None
    if arg.endswith("+") or "[" in arg:
        old = st.lookup(name)
        value = None if "[" in arg or old is None or value is None else (
            value if old is UNSET else (old + value if type(old) is str and type(value) is str else None))
    st.vars[name] = value
    if builtin == "export" or "x" in flags:
        st.exported.add(name)


def function_effects(st, effects):
    changed, cwd_changed, poisoned, _ = effects
    for name in changed:
        st.vars[name] = None
    if cwd_changed:
        st.cwd = None
        st.dirstack = None
    if poisoned:
        st.poisoned = True


def _rare(name, module="bash_builtins_rare"):
    """The builtin `name` of `module` (bash_builtins_rare, bash_hazards), imported on first use."""

    def builtin(an, argv, st, stdin):
        return getattr(__import__("maestro.hooks." + module, fromlist=[name]), name)(an, argv, st, stdin)

    return builtin


_pushd, _popd, _read, _mapfile = _rare("_pushd"), _rare("_popd"), _rare("_read"), _rare("_mapfile")
_getopts, _let, _trap, _alias = _rare("_getopts"), _rare("_let"), _rare("_trap"), _rare("_alias")
_source, _loop_control = _rare("_source"), _rare("_loop_control")
BUILTINS = {
    "cd": _cd, "pushd": _pushd, "popd": _popd, "read": _read, "mapfile": _mapfile, "readarray": _mapfile,
    "printf": _printf, "getopts": _getopts, "let": _let, "unset": _unset, "trap": _trap, "alias": _alias,
    "source": _source, ".": _source, "break": _loop_control, "continue": _loop_control,
}
for _name in DECLARATIONS:
    BUILTINS[_name] = _declare_values


for _name in ("shopt", "set", "history", "hash", "compgen", "complete", "enable", "bind"):
    BUILTINS[_name] = _rare("_" + _name, "bash_hazards")
HAZARD_NAMES = frozenset(("printf", "read", "declare", "typeset", "local", "export", "readonly", "let", "test", "[",
                          "unset", "mapfile", "readarray", "getopts", "wait"))


def value_basename(value):
    return value.rsplit("/", 1)[-1] if value else value


class Runner:
    """The Analyzer's methods for one expanded command."""

    __slots__ = ()

    def run_argv(self, argv, st, stdin, extra, via):
        """One expanded command (argv of targets.Word); `via` is the wrapper that ran it, if any."""
        name = argv[0].value
        if name is None:
            self.add(Target("unresolved command", "run", None, argv[0].raw))
            return st, st
        if name in HAZARD_NAMES and any("[" in w.value for w in argv[1:] if w.value is not None):
            from maestro.hooks import bash_hazards

            bash_hazards.check_subscript_args(self, name, argv, st)
        if via is None and name in st.funcs:
            effects = st.funcs[name]
            function_effects(st, effects)
            if effects[3] == "function":
                if name in BUILTINS:
                    return st, st
            elif name in BUILTINS:  # an alias may or may not be expanded: either may run
                pair = BUILTINS[name](self, argv, st.copy(), stdin)
                if pair is not None:
                    joined = join(join(*pair), st)
                    return joined, joined
        elif via in (None, "command", "builtin") and name in BUILTINS:
            pair = BUILTINS[name](self, argv, st, stdin)
            if pair is not None:
                return pair
        return self.channels(argv, st, stdin, extra)

    def channels(self, argv, st, stdin, extra):
        if value_basename(argv[0].value) in _INTERPRETERS or argv[0].value.rsplit("/", 1)[-1].startswith("python"):
            from maestro.hooks import bash_hazards

            found = bash_hazards.program_from_descriptor(argv)
            if found is not None:
                return bash_hazards.run_program_from_descriptor(self, argv, st, stdin, extra, found)
        try:
            from maestro.hooks import bash_channels

            results = bash_channels.command_writes(argv, st.cwd, st.exported_env(extra), self.home)
        except BashSyntaxError:
            raise
        except Exception as exc:  # the table failing must not open the gate
            self.add(Target(value_basename(argv[0].value), "write", None, f"files it names (analysis failed: "
                                                                      f"{type(exc).__name__})", st.cwd))
            return st, st
        program = value_basename(argv[0].value)
        if program not in _INERT and not all(type(r) is Run or (type(r) is Script and r.lang == "sh")
                                             for r in results):
            self.programs_ran = True  # from here on a directory that exists now may be gone (a `cd` may fail)
        pair = (st, st)
        for result in results:
            if type(result) is Target:
                self.add(result)
            elif type(result) is Run:
                if not result.argv or not self.nested(" ".join(w.raw for w in argv)):
                    continue
                if any(w.value is not None and "=" in w.value for w in argv[1:]):
                    from maestro.hooks.bash_hazards import wrapper_hazards

                    wrapper_hazards(self, argv, result.argv)
                try:
                    pair = self.run_argv(result.argv, st, None if result.stdin_targets_unknown else stdin,
                                         _wrapper_env(program, argv, result.argv, extra), program)
                finally:
                    self.depth -= 1
            elif type(result) is Script:
                outcome = self.run_script(result, st, stdin, extra, program == "eval", program)
                if outcome is not None:
                    pair = outcome
            else:
                self.add(Target(program, "write", None, "files it names (unrecognised analysis result)", st.cwd))
        return pair

    def run_script(self, script, st, stdin, extra, same_shell, program=None):
        """Analyse program text; for `eval` (same_shell) return the shell's states after it."""
        word = script.word or script.lang
        if not self.nested(word):
            return None
        try:
            code, child_stdin = script.code, stdin
            if code is None:
                if stdin is None or stdin[0] == "file":  # `sh < ~/.local/bin/maestro`: its verbs, unjudged
                    if stdin and value_basename(stdin[1] or "") in ("maestro", "maestro.pyz"):
                        self.add(Target(f"{program or script.lang} reading maestro", "run", None, stdin[1]))
                    return None
                if stdin[0] == "unknown":
                    self.add(Target(f"{program or script.lang} reading its program from stdin", "run", None,
                                    stdin[1]))
                    return None
                code, child_stdin = stdin[1], None
            if script.lang == "sh":
                try:
                    tree = parse(code, MAX_NESTING - self.level)
                except BashSyntaxError:
                    self.add(Target("nested shell", "run", None, word))
                    return None
                if same_shell:
                    return self.run_list(tree, st, child_stdin)
                self.run_list(tree, st.child(extra), child_stdin)
                return None
            try:
                from maestro.hooks import inline_code

                results = inline_code.code_writes(script.lang, code)
            except Exception as exc:
                self.add(Target(script.lang, "write", None, f"files its code names (analysis failed: "
                                                            f"{type(exc).__name__})", st.cwd))
                return None
            for result in results:
                if type(result) is Target:
                    if result.cwd is None:
                        result.cwd = st.cwd
                    self.add(result)
                elif type(result) is Script:
                    self.run_script(result, st, None, extra, False)
            return None
        finally:
            self.depth -= 1


_INTERPRETERS = frozenset(("bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "node", "nodejs",
                           "perl", "ruby"))


_INERT = frozenset(("true", "false", ":", "echo", "printf", "test", "[", "pwd", "type", "which", "command"))


def _wrapper_env(program, argv, inner, extra):
    """Variables a wrapper sets for the command it runs (`env X=1 cmd`, `sudo X=1 cmd`); `env -u X`
    and sudo's reset HOME make those unknown."""
    extra = dict(extra) if extra else {}
    words = argv[1:]
    for k, word in enumerate(words):
        if inner and (word is inner[0] or (word.raw == inner[0].raw and word.value == inner[0].value)):
            break
        value = word.value
        if value is None:
            continue
        name, eq, rest = value.partition("=")
        if eq and is_name(name):
            extra[name] = rest if word.value is not None else None
        elif value in ("-u", "--unset") and k + 1 < len(words) and words[k + 1].value:
            extra[words[k + 1].value] = None
        elif value.startswith("--unset="):
            extra[value[8:]] = None
    if program in ("sudo", "doas"):
        extra["HOME"] = None
    return extra
