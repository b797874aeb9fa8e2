"""Shell state that makes later text run or parse differently, for the Bash analysis: the rules
that fail closed instead of modelling it (imported the first time one applies).

- variables whose value the shell or a program runs as code (PS4, PROMPT_COMMAND, BASH_ENV,
  BASH_FUNC_*, GIT_EXTERNAL_DIFF, EDITOR…): assigning one is an unresolved write;
- text that bash evaluates arithmetically (a subscript `a[$(cmd)]`) runs the substitution;
- builtins that change parsing (`shopt -s`, `set -o posix`), run commands (`compgen -C`,
  `bind -x`, `enable -f`), map names to other programs (`hash -p`) or write files (`history -w`);
- programs that read their code from a descriptor (`bash /dev/stdin`, `bash <(…)`).
"""

from maestro.hooks.targets import Script, Target

CODE_VARIABLES = frozenset((
    "PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "BASH_ENV", "ENV", "HISTFILE", "SHELLOPTS", "BASHOPTS",
    "GLOBIGNORE", "PERL5OPT", "PERL5DB", "NODE_OPTIONS", "PYTHONSTARTUP", "RUBYOPT", "GIT_EXTERNAL_DIFF",
    "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_ASKPASS", "SSH_ASKPASS",
    "GIT_PROXY_COMMAND", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_DIR", "GIT_WORK_TREE", "EDITOR", "VISUAL",
    "PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "INPUTRC", "EXECIGNORE", "PROMPT_DIRTRIM",
    # BASH_CMDS/BASH_ALIASES fill bash's command table (`BASH_CMDS[cat]=/bin/rm`); CDPATH sends a
    # relative `cd` elsewhere, also as a prefix (`CDPATH=/repo cd src`) the cd sees but the analysis would not
    "BASH_CMDS", "BASH_ALIASES", "CDPATH",
))
CODE_PREFIXES = ("BASH_FUNC_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")
# values that run nothing of the command's choosing (`GIT_PAGER=cat git log`, `GIT_EDITOR=true git commit`)
INERT_VALUES = frozenset(("", "cat", "less", "less -R", "less -FRX", "more", "true", ":", "false"))

# set -o NAME / set -X that keep the analysis exact (the others change parsing, globbing or cd)
SAFE_SET_FLAGS = frozenset("euxvahCETbnmHpt")
SAFE_SET_OPTIONS = frozenset((
    "errexit", "nounset", "pipefail", "xtrace", "verbose", "allexport", "errtrace", "functrace", "hashall",
    "noclobber", "monitor", "notify", "noexec", "onecmd", "privileged", "emacs", "vi", "ignoreeof", "histexpand",
))
# builtins whose NAME arguments bash evaluates as subscripts (arithmetic: `a[$(cmd)]` runs cmd)
SUBSCRIPT_BUILTINS = frozenset((
    "printf", "read", "declare", "typeset", "local", "export", "readonly", "let", "test", "[", "unset", "mapfile",
    "readarray", "getopts", "wait",
))
SHELLS = frozenset(("bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh"))
STDIN_PATHS = frozenset(("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "/proc/thread-self/fd/0"))


def is_code_variable(name):
    return name in CODE_VARIABLES or name.startswith(CODE_PREFIXES)


def runs_in_subscript(text):
    """Text that bash may evaluate as `name[subscript]`, where a `$(…)` or backtick runs."""
    return type(text) is str and "[" in text and ("$(" in text or "`" in text)


def code_variable(an, name, word, value=None):
    if value not in INERT_VALUES:
        an.add(Target("setting " + name, "run", None, word))


def subscript(an, word, cwd=None):
    an.add(Target("arithmetic evaluation", "run", None, word))


def declare_hazards(an, name, value, raw):
    """export/declare NAME=VALUE: a variable that runs code, or a subscript that is evaluated."""
    bare = name.rstrip("+").partition("[")[0]
    if is_code_variable(bare):
        code_variable(an, bare, raw, value)
    if runs_in_subscript(name) or runs_in_subscript(value):
        subscript(an, raw)


def assignment_hazards(an, assign, name, value, index):
    """PS4=…, BASH_ENV=…, x='a[$(cmd)]', a['$(cmd)']=1: values bash (or a program) runs."""
    if is_code_variable(name):
        code_variable(an, name, assign.raw, value)
    if runs_in_subscript(value) or (type(index) is str and ("$(" in index or "`" in index)):
        subscript(an, name)


def wrapper_hazards(an, argv, inner):
    """`env BASH_FUNC_ls%%=… bash`, `sudo EDITOR=… git`: variables that run code."""
    for word in argv[1:]:
        if inner and word is inner[0]:
            break
        value = word.value
        if value is not None and "=" in value and is_code_variable(value.partition("=")[0]):
            code_variable(an, value.partition("=")[0], word.raw, value.partition("=")[2])


def check_subscript_args(an, name, argv, st):
    """printf -v / read / declare / let / test -v / unset…: a name argument `a[$(cmd)]` runs cmd."""
    for word in argv[1:]:
        if runs_in_subscript(word.value):
            subscript(an, word.raw, st.cwd)


def _flags(argv):
    return [w.value for w in argv[1:] if w.value is not None and w.value[:1] in "-+" and len(w.value) > 1]


def _fail(an, argv, st, what):
    an.add(Target(what, "run", None, " ".join(w.raw for w in argv), st.cwd))
    return st, st


def _shopt(an, argv, st, stdin):
    if any(v is None for v in (w.value for w in argv[1:])) or any(
            "s" in f[1:] or "u" in f[1:] for f in _flags(argv) if f[0] == "-"):
        return _fail(an, argv, st, "shopt (changes how later commands are read)")
    return st, st


def _set(an, argv, st, stdin):
    values = [w.value for w in argv[1:]]
    k = 0
    while k < len(values):
        value = values[k]
        k += 1
        if value is None:
            return _fail(an, argv, st, "set (unknown option)")
        if value in ("--", "-") or value[:1] not in "-+" or len(value) < 2:
            break
        for flag in value[1:]:
            if flag == "o":
                option = values[k] if k < len(values) else ""
                k += 1
                if option and option not in SAFE_SET_OPTIONS:
                    return _fail(an, argv, st, "set -o " + (option or "?") + " (changes how later commands run)")
            elif flag not in SAFE_SET_FLAGS:
                return _fail(an, argv, st, "set -" + flag + " (changes how later commands run)")
    if any("x" in f[1:] for f in _flags(argv) if f[0] == "-") or "xtrace" in values:
        ps4 = st.lookup("PS4")
        if type(ps4) is not str or "$(" in ps4 or "`" in ps4 or "${" in ps4:
            return _fail(an, argv, st, "set -x (expands PS4)")
    return None  # `set -- a b`: positional parameters are never known anyway


def _history(an, argv, st, stdin):
    if any(("a" in f or "w" in f) for f in _flags(argv)) or any(w.value is None for w in argv[1:]):
        return _fail(an, argv, st, "history (writes the history file)")
    return st, st


def _flag_fails(letters, what):
    def builtin(an, argv, st, stdin):
        if any(w.value is None for w in argv[1:]) or any(set(letters) & set(f[1:]) for f in _flags(argv)):
            return _fail(an, argv, st, what)
        return st, st
    return builtin


_hash = _flag_fails("p", "hash -p (runs another program under a name)")
_compgen = _flag_fails("CF", "compgen (runs a command)")
_complete = _flag_fails("CF", "complete (runs a command)")
_enable = _flag_fails("fdn", "enable (changes which builtins run)")
_bind = _flag_fails("x", "bind -x (runs a command)")


def program_from_descriptor(argv):
    """(lang, word, from_stdin) when a shell/interpreter runs its code from a path under /dev or
    /proc (`bash /dev/stdin`, `python3 /dev/fd/0`, `bash <(…)` = /dev/fd/63); else None."""
    name = argv[0].value.rsplit("/", 1)[-1]
    if name in SHELLS:
        lang, with_arg, stop = "sh", ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"), ("-c",)
    elif name.startswith("python"):
        lang, with_arg, stop = "python", ("-W", "-X", "-Q"), ("-c",)
    elif name in ("node", "nodejs"):
        lang, with_arg, stop = "node", ("-r", "--require", "--import"), ("-e", "--eval", "-p", "--print")
    elif name in ("perl", "ruby"):
        lang, with_arg, stop = name, ("-I", "-M", "-r"), ("-e", "-E")
    else:
        return None
    args = argv[1:]
    k = 0
    while k < len(args):
        value = args[k].value
        if value is None:
            return None
        if value == "--":
            k += 1
            break
        if value[:1] not in "-+" or value in ("-", "+"):
            break
        if value in stop or (lang == "sh" and value[0] == "-" and "c" in value[1:] and value[1:2] != "-"):
            return None
        if lang == "python" and value == "-m":
            if k + 1 < len(args) and args[k + 1].value == "code":
                return lang, args[k + 1].raw, True
            return None
        k += 2 if value in with_arg else 1
    if k >= len(args) or args[k].value is None:
        return None
    path = args[k].value
    if path in STDIN_PATHS or (path.startswith("/proc/") and path.endswith("/fd/0")):
        return lang, args[k].raw, True
    if path.startswith(("/dev/", "/proc/")) and path != "/dev/null":
        return lang, args[k].raw, False
    return None


def run_program_from_descriptor(an, argv, st, stdin, extra, found):
    lang, word, from_stdin = found
    program = argv[0].value.rsplit("/", 1)[-1]
    if not from_stdin:
        an.add(Target(program + " reading its program from " + word, "run", None, word, st.cwd))
        return st, st
    if stdin is not None and stdin[0] == "file" and stdin[1] is not None and not stdin[1].startswith(
            ("/dev/", "/proc/")):
        return st, st  # `bash /dev/stdin < script.sh` is `bash script.sh`: a script file
    if stdin is None or stdin[0] == "file":
        an.add(Target(program + " reading its program from stdin", "run", None, word, st.cwd))
        return st, st
    an.run_script(Script(lang, None, word), st, stdin, extra, False, program)
    return st, st
