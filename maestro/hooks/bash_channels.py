"""The write-channel table: what one program writes on its own, given one expanded simple command.

    command_writes(argv, cwd, env, home) -> list[Target | Run | Script]      (notes/interfaces.md)

argv is a list of `Word` (assignments and redirections already removed by the engine); argv[0] is
normalised (`/usr/bin/sed` → sed, `python3.12` → python, `gsed` → sed, `vim.basic` → vim). Each
program of the table has a small function; everything outside the table (test runners, make,
formatters, project scripts) writes nothing here by design — the documented limit of a static gate.
- Target   a write the program makes itself (`sed -i`, `cp`, `tar -x`, `git restore`, …); a word
           naming a written file whose value is unknown → Target with path None (the gate fails closed).
- Run      a command the program runs (wrappers `sudo`/`env`/`timeout`/…, `xargs`, `find -exec`);
           the engine calls command_writes on it again.
- Script   program text it runs (`bash -c`, `eval`, `python -c`, `node -e`, …; code None = stdin).
A command name whose value is unknown (`$(which sed) -i …`, `"$EDITOR" f`) fails closed, and so
does a program whose table entry raises (a bug must not open the gate).
This module is the dispatch; the option scanner, helpers and program names the program modules
share are in bash_channels_common.py; the programs live in bash_channels_wrappers.py (sudo, env,
timeout, xargs, …), bash_channels_files.py (coreutils-style file tools, find, patch), bash_channels_scripts.py
(sed, perl, ruby, editors; awk in bash_channels_awk.py), bash_channels_git.py (git),
bash_channels_archive.py (tar, zip, compressors, curl, wget), bash_channels_programs.py (make, gdb,
tmux, sqlite3, …), bash_channels_maestro.py (maestro's own verbs) and bash_channels_interp.py (shells,
interpreters, runners), each imported only when one of its programs is seen.
Hot path: only os at import; no re/shlex/collections.
"""

from maestro.hooks.bash_channels_common import (  # noqa: F401 (the table's names and scan, re-exported)
    LAZY, WRAPPERS, RunIn, program_name, scan)
from maestro.hooks.targets import Run, Script, Target

MAX_DEPTH = 16  # nested wrappers resolved here (`env -C dir sudo -D dir …`); past it: fail closed


def command_writes(argv, cwd, env, home):
    """Every Target / Run / Script of one expanded simple command (see the module docstring)."""
    return _writes(argv, cwd, env, home, 0)


def _writes(argv, cwd, env, home, depth):
    if not argv:
        return []
    if depth > MAX_DEPTH:
        return [Target("nested command", "run", None, argv[0].raw, cwd)]
    first = argv[0]
    if first.value is None:
        # `$(which sed) -i …`, `"$EDITOR" file`: any program at all, so any write at all
        return [Target("a command whose name is unknown", "run", None, first.raw, cwd)]
    name = program_name(first.value)
    if name not in WRAPPERS and name not in LAZY and len(argv) < 2:
        return []
    try:
        if name not in WRAPPERS and name not in LAZY:
            from maestro.hooks.bash_channels_generic import unknown_program_writes

            return unknown_program_writes(name, argv)
        return _dispatch(name, argv, cwd, env, home, depth)
    except (IndexError, KeyError, ValueError, TypeError, AttributeError, RecursionError):
        # a bug in one program's table must not open the gate: the command is judged unanalysable
        return [Target(UNANALYSED + name, "run", None, first.raw, cwd)]


UNANALYSED = "an unanalysable "


def posix_order(argv):
    """With POSIXLY_CORRECT, GNU getopt stops at the first operand: a later `--help`/`--version` is
    a file name, not an option, so it cannot stop the program (`rm src/app.py --help` deletes)."""
    for k in range(1, len(argv)):
        value = argv[k].value
        if value is None or not value.startswith("-") or value == "-":
            return argv[:k + 1] + [w for w in argv[k + 1:] if w.value not in ("--help", "--version")]
        if value == "--":
            break
    return argv


def _dispatch(name, argv, cwd, env, home, depth):
    if name in WRAPPERS:
        from maestro.hooks.bash_channels_wrappers import HANDLERS

        return _placed(HANDLERS[name](argv, cwd, env, home, depth), env, home, depth)
    module_name = LAZY[name]
    if env and "POSIXLY_CORRECT" in env and module_name in ("files", "scripts", "archive"):
        argv = posix_order(argv)
    if module_name == "files":
        from maestro.hooks import bash_channels_files as module
    elif module_name == "scripts":
        from maestro.hooks import bash_channels_scripts as module
    elif module_name == "git":
        from maestro.hooks import bash_channels_git as module
    elif module_name == "archive":
        from maestro.hooks import bash_channels_archive as module
    elif module_name == "tools":
        from maestro.hooks import bash_channels_tools as module
    elif module_name == "programs":
        from maestro.hooks import bash_channels_programs as module
    elif module_name == "maestro":
        from maestro.hooks import bash_channels_maestro as module
    else:
        from maestro.hooks import bash_channels_interp as module
    return _placed(module.HANDLERS[name](name, argv, cwd, env, home, depth), env, home, depth)


def _placed(found, env, home, depth):
    """`found` with each RunIn (a command run in another directory) replaced by what it writes there."""
    if not any(type(item) is RunIn for item in found):
        return found
    out = []
    for item in found:
        if type(item) is RunIn:
            out += _under_dir(item.argv, item.cwd, env, home, depth)
        else:
            out.append(item)
    return out


def _under_dir(argv, cwd, env, home, depth):
    """`env -C DIR cmd`, `sudo -D DIR cmd`, `find -execdir cmd`: the inner command runs elsewhere.
    A Run cannot carry a cwd, so it is resolved here; shell text gets a leading `cd` for the engine;
    other program text, or any text run in an unknown directory, fails closed."""
    out = []
    for item in _writes(argv, cwd, env, home, depth + 1):
        if isinstance(item, Run):
            out += _under_dir(item.argv, cwd, env, home, depth + 1)
        elif isinstance(item, Script) and item.lang == "sh" and item.code is not None and cwd is not None:
            quoted = "'" + cwd.replace("'", "'\\''") + "'"
            out.append(Script("sh", "cd -- " + quoted + " || exit\n" + item.code, item.word))
        elif isinstance(item, Script):
            out.append(Target(item.lang + " code", "run", None, item.word or "<stdin>", cwd))
        else:
            out.append(item)
    return out
