"""The builtins a command line seldom uses, for bash_run (which imports this module the first time
one runs): pushd/popd, read/mapfile/getopts/let (the variables they set become unknown),
break/continue, and those that run shell text: `source`/`.` (the file's commands, followed for
their effects on cwd and variables), `alias` (its text may run on later lines), `trap` (its
handler may run), `mapfile -C` (a callback).
"""

import os
import posixpath
import stat

from maestro.hooks.bash_expand import ABSENT, join
from maestro.hooks.bash_run import change_dir, mark_unknown, word_values

SOURCE_LIMIT = 256 * 1024


def _pushd(an, argv, st, stdin):
    args = [a for a in word_values(argv) if a != "--"]
    stack = st.dirstack
    if args and (args[0] is None or args[0][:1] in "+-"):
        result = st.copy()
        result.cwd, result.dirstack = None, None
        return result, result
    if not args:
        if not stack:
            return st, st
        succ, fail = change_dir(st, stack[0], False, an)
        succ.dirstack = (st.cwd,) + stack[1:]
        return succ, fail
    succ, fail = change_dir(st, args[0], False, an)
    succ.dirstack = None if stack is None else (st.cwd,) + stack
    return succ, fail


def _popd(an, argv, st, stdin):
    args = [a for a in word_values(argv) if a != "--"]
    stack = st.dirstack
    if args or stack is None:
        result = st.copy()
        result.cwd, result.dirstack = None, None
        return result, result
    if not stack:
        return st, st
    succ, fail = change_dir(st, stack[0], False, an)
    succ.dirstack = stack[1:]
    return succ, fail


def _read(an, argv, st, stdin):
    args, names, k = word_values(argv), [], 0
    while k < len(args):
        arg = args[k]
        k += 1
        if arg is None or arg[:1] != "-" or arg == "-":
            names.append(arg)
            continue
        if arg == "--":
            names.extend(args[k:])
            break
        for j, flag in enumerate(arg[1:]):
            if flag in "adinNptu":
                value = arg[j + 2:] or (args[k] if k < len(args) else None)
                if not arg[j + 2:]:
                    k += 1
                if flag == "a":
                    names.append(value)
                break
    mark_unknown(st, names or ["REPLY"])
    return st, st


def _mapfile(an, argv, st, stdin):
    from maestro.hooks.targets import Script

    args, name, k = word_values(argv), "MAPFILE", 0
    while k < len(args):
        arg = args[k]
        k += 1
        if arg is not None and arg[:1] == "-" and len(arg) > 1:
            if arg[1] in "dnOsuCc":
                value = arg[2:] or (args[k] if k < len(args) else "")
                k += 0 if arg[2:] else 1
                if arg[1] == "C":  # the callback is evaluated as a command
                    an.run_script(Script("sh", value, argv[k].raw if k < len(argv) else "mapfile -C"),
                                  st.copy(), None, None, True)
            continue
        name = arg
    mark_unknown(st, [name])
    return st, st


def _getopts(an, argv, st, stdin):
    args = word_values(argv)
    mark_unknown(st, args[1:2] + ["OPTARG", "OPTIND"])
    return st, st


def _let(an, argv, st, stdin):
    from maestro.hooks.bash_arith import arith_assigned

    for arg in word_values(argv):
        mark_unknown(st, [None] if arg is None else arith_assigned(arg))
    return st, st


def _trap(an, argv, st, stdin):
    from maestro.hooks.targets import Script, Target

    args = word_values(argv)
    while args and args[0] in ("-l", "-p", "--"):
        args.pop(0)
    if len(args) >= 2 and args[0] not in ("-", ""):
        if args[0] is None:
            an.add(Target("trap", "run", None, argv[1].raw))
        else:
            an.run_script(Script("sh", args[0], argv[1].raw), st.copy(), None, None, True)
    return st, st


def _alias(an, argv, st, stdin):
    """An alias may be expanded on later lines: analyse its text now, like a function body."""
    from maestro.hooks.targets import Script

    for arg in word_values(argv):
        if arg is None:
            st.poisoned = True
            continue
        name, eq, text = arg.partition("=")
        if not eq:
            continue
        state = st.copy()
        after = an.run_script(Script("sh", text, arg), state, None, None, True)
        after = join(*after) if after else state
        changed = frozenset(k for k in after.vars.keys() | st.vars.keys()
                            if after.vars.get(k, ABSENT) != st.vars.get(k, ABSENT))
        st.funcs[name] = (changed, after.cwd != st.cwd, after.poisoned, "alias")
    return st, st


def _source(an, argv, st, stdin):
    """`source FILE` runs FILE in this shell: follow its effects on cwd and variables (its own
    writes are a project script's, not judged); unknown when it cannot be read now. A program
    sourced from stdin or a descriptor (`. /dev/stdin <<EOF`, `. <(…)`) is judged like `bash <<EOF`."""
    from maestro.hooks.bash_parse import MAX_NESTING, parse
    from maestro.hooks.targets import BashSyntaxError, Script, Target

    args = word_values(argv)
    path = args[0] if args else None
    if path is not None and "/" + path.rpartition("/")[2] in ("/maestro", "/maestro.pyz"):
        from maestro.hooks.bash_channels_maestro import maestro_writes

        for found in maestro_writes(argv[2:], st.cwd, None):  # `. ~/.local/bin/maestro rollback`: the launcher
            an.add(found)
    unknown = st.copy()
    unknown.cwd, unknown.poisoned = None, True
    if path is not None and path.startswith(("/dev/", "/proc/")):
        if path in ("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0") and stdin is not None and stdin[0] == "text":
            return an.run_script(Script("sh", None, argv[1].raw), st, stdin, None, True) or (st, st)
        an.add(Target("source", "run", None, argv[1].raw))
        return unknown, unknown
    text = None
    if path is not None and "/" in path and (path.startswith("/") or st.cwd is not None):
        full = posixpath.normpath(posixpath.join(st.cwd or "/", path))
        written = any(t.path is None or posixpath.normpath(posixpath.join(t.cwd or "/", t.path)) == full
                      for t in an.targets)
        try:
            # a regular file only: opening a FIFO or a device could block the hook
            if not written and stat.S_ISREG(os.stat(full).st_mode):
                with open(full, "rb") as handle:
                    data = handle.read(SOURCE_LIMIT + 1)
                if len(data) <= SOURCE_LIMIT:
                    text = data.decode("utf-8", "replace")
        except (OSError, ValueError):
            pass
    tree = None
    if text is not None and an.nested(path):
        try:
            tree = parse(text, MAX_NESTING - an.level)
        except BashSyntaxError:
            tree = None
        finally:
            an.depth -= 1
    if tree is None:
        return unknown, unknown
    an.quiet += 1
    an.depth += 1
    try:
        return an.run_list(tree, st, None)
    finally:
        an.quiet -= 1
        an.depth -= 1


def _loop_control(an, argv, st, stdin):
    if an.loops and an.loops[-1] is not None:
        an.loops[-1].append(st.copy())
    return st, st
