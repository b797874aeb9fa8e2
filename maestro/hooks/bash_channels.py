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
This module holds what every call needs: the dispatch, and the option scanner and helpers the
program modules share; the programs live in bash_channels_wrappers.py (sudo, env, timeout, xargs,
…), bash_channels_files.py (coreutils-style file tools, find, patch), bash_channels_scripts.py
(sed, perl, ruby, editors; awk in bash_channels_awk.py), bash_channels_git.py (git),
bash_channels_archive.py (tar, zip, compressors, curl, wget) and bash_channels_interp.py (shells,
interpreters, runners), each imported only when one of its programs is seen.
Hot path: only os at import; no re/shlex/collections.
"""

import os

from maestro.hooks.targets import Run, Script, Target, Word

MAX_DEPTH = 16  # nested wrappers resolved here (`env -C dir sudo -D dir …`); past it: fail closed


# --------------------------------------------------------------------------------------------- helpers
# shared with the sibling modules bash_channels_*.py (imported lazily, on their first program)


def scan(args, short_arg="", long_arg=(), short_opt="", long_opt=(), long_flags=(), permute=True):
    """getopt_long for one program: -> (opts, operands).

    opts is a list of (name, Word | None): a short option's letter or a long option's full name
    (unique prefixes are expanded as GNU getopt does), with its argument. `short_arg`/`long_arg`
    take a required argument (attached or the next word), `short_opt`/`long_opt` an optional one
    (attached only). A word whose value is unknown is an operand. `permute=False` stops at the first
    operand (POSIX order: the rest are the command's own words)."""
    longs = long_arg + long_opt + long_flags
    opts = []
    operands = []
    i, n = 0, len(args)
    while i < n:
        word = args[i]
        value = word.value
        i += 1
        if value is None or len(value) < 2 or value[0] != "-":
            operands.append(word)
            if not permute:
                operands.extend(args[i:])
                break
            continue
        if value == "--":
            operands.extend(args[i:])
            break
        if value[1] == "-":
            name, eq, attached = value[2:].partition("=")
            name = long_name(name, longs)
            if eq:
                opts.append((name, Word(attached, attached, word.literal)))
            elif name in long_arg:
                opts.append((name, args[i] if i < n else None))
                i += 1
            else:
                opts.append((name, None))
            continue
        j = 1
        while j < len(value):
            letter = value[j]
            j += 1
            if letter in short_arg:
                if j < len(value):
                    opts.append((letter, Word(value[j:], value[j:], word.literal)))
                else:
                    opts.append((letter, args[i] if i < n else None))
                    i += 1
                break
            if letter in short_opt:
                rest = value[j:]
                opts.append((letter, Word(rest, rest, word.literal) if rest else None))
                break
            opts.append((letter, None))
    return opts, operands


def long_name(name, longs):
    """A long option's full name: exact, or the one known name it abbreviates (GNU getopt)."""
    if name in longs:
        return name
    found = [known for known in longs if known.startswith(name)]
    return found[0] if len(found) == 1 and name else name


def has(opts, *names):
    return any(key in names for key, _ in opts)


def values(opts, *names):
    """The arguments given to any of `names` (None entries — a missing argument — left out)."""
    return [word for key, word in opts if key in names and word is not None]


LINK_KEEPING = " (keeping symlinks)"  # channel suffix: see as_link_maker


def as_link_maker(found):
    """`found` from a copy that keeps symlinks as symlinks (`cp -a`, `rsync -l`): its destination may
    hold links leading anywhere, so the engine treats a later write at or under it like one through
    an `ln` link (unresolved). Archive extraction ("extract into") is treated the same way there."""
    return [Target(t.channel + LINK_KEEPING, t.action, t.path, t.word, t.cwd, t.tree) if type(t) is Target else t
            for t in found]


def target(channel, action, word, cwd, tree=False):
    return Target(channel, action, word.value, word.raw, cwd, tree)


def resolve(path, cwd):
    """An absolute path for a stat, or None when it cannot be known (relative with no cwd)."""
    if path is None:
        return None
    if path.startswith("/"):
        return path
    return None if cwd is None else os.path.join(cwd, path)


def is_dir(word, cwd):
    """True/False, or None when unknown (a relative path without cwd, an unknown value)."""
    if word.value is None:
        return None
    if word.value.endswith("/"):
        return True
    full = resolve(word.value, cwd)
    return None if full is None else os.path.isdir(full)


def into_dir(channel, action, directory, source, cwd):
    """A write of `source`'s basename inside `directory` (cp/mv/ln/install to a directory). When the
    source's name is unknown the write still lands directly in the directory: a tree target."""
    if directory.value is None:
        return Target(channel, action, None, directory.raw, cwd)
    if source.value is None:
        return Target(channel, action, directory.value, directory.raw, cwd, True)
    base = os.path.basename(source.value.rstrip("/")) or source.value
    joined = os.path.join(directory.value, base)
    return Target(channel, action, joined, directory.raw.rstrip("/") + "/" + base, cwd)


def chdir(cwd, directory):
    """The cwd after `cd directory` (a Word), None when unknown."""
    path = directory.value
    if path is None or (cwd is None and not path.startswith("/")):
        return None
    return os.path.normpath(os.path.join(cwd or "/", path))


def unresolved_code(channel, word):
    """Program text whose value is unknown: fail closed."""
    return Target(channel, "run", None, word.raw)


# --------------------------------------------------------------------------------------------- running
# what wrappers (bash_channels_wrappers.py) and find/watch/… do with the command they run


def run_rest(rest):
    return [Run(list(rest))] if rest else []


def under_dir(argv, cwd, env, home, depth):
    """`env -C DIR cmd`, `sudo -D DIR cmd`, `find -execdir cmd`: the inner command runs elsewhere.
    A Run cannot carry a cwd, so it is resolved here; shell text gets a leading `cd` for the engine;
    other program text, or any text run in an unknown directory, fails closed."""
    out = []
    for item in _writes(argv, cwd, env, home, depth + 1):
        if isinstance(item, Run):
            out += under_dir(item.argv, cwd, env, home, depth + 1)
        elif isinstance(item, Script) and item.lang == "sh" and item.code is not None and cwd is not None:
            quoted = "'" + cwd.replace("'", "'\\''") + "'"
            out.append(Script("sh", "cd -- " + quoted + " || exit\n" + item.code, item.word))
        elif isinstance(item, Script):
            out.append(Target(item.lang + " code", "run", None, item.word or "<stdin>", cwd))
        else:
            out.append(item)
    return out


# --------------------------------------------------------------------------------------------- dispatch

# program name -> module holding its function (imported on first use); see the module docstring
LAZY = {}
for _module, _names in (
    ("files", "cp mv install ln link rm unlink rmdir shred touch truncate tee dd sort uniq sponge xxd iconv "
              "dos2unix unix2dos fallocate rsync scp rename prename file-rename find patch"),
    ("scripts", "sed awk perl ruby ed ex vi vim nvim view vimdiff rvim gvim nano emacs yq"),
    ("git", "git"),
    ("archive", "tar unzip zip 7z 7za 7zr cpio gzip gunzip bzip2 bunzip2 xz unxz lzma unlzma zstd unzstd "
                "curl wget"),
    ("tools", "shuf sdiff openssl logsave csplit split ar mktemp gio"),
    ("programs", "make gmake tclsh wish expect gdb tmux screen sqlite3"),
    ("interp", "sh bash zsh dash ksh mksh ash yash posh fish tcsh csh rbash eval python node bun deno php "
               "lua Rscript julia pwsh powershell osascript su runuser watch flock strace ltrace script uv "
               "poetry pipenv pdm rye hatch pixi conda mamba micromamba bundle nix-shell"),
):
    for _name in _names.split():
        LAZY[_name] = _module
del _module, _names, _name

# wrappers: they run the rest of the command line (bash_channels_wrappers.py, imported on first use)
WRAPPERS = frozenset((
    "env", "sudo", "sudoedit", "doas", "timeout", "nice", "ionice", "time", "command", "exec", "stdbuf", "xargs",
    "nohup", "builtin", "chronic", "setsid", "unbuffer", "fakeroot", "catchsegv", "proxychains", "proxychains4",
    "torsocks", "busybox",
))

ALIASES = {"nodejs": "node", "pypy": "python", "gawk": "awk", "mawk": "awk", "nawk": "awk",
           "original-awk": "awk", "bsdtar": "tar", "gtar": "tar", "vim.basic": "vim", "vim.tiny": "vim",
           "vi.tiny": "vi", "mksh-static": "mksh"}


def program_name(raw_name):
    """The table's name for argv[0]: its basename; a version suffix dropped for interpreters and
    shells (`python3.12`, `perl5.36`, `node18`, `bash5`), a `g` prefix for GNU tools installed
    beside BSD ones (`gsed`, `gcp`, `gtimeout`). `script.sh` or `cp2` stay themselves: not ours."""
    name = raw_name.rpartition("/")[2]
    if name in WRAPPERS or name in LAZY:
        return name
    if name in ALIASES:
        return ALIASES[name]
    stripped = name.rstrip("0123456789.").rstrip("-")
    if stripped in VERSIONED:
        return ALIASES.get(stripped, stripped)
    if name[:1] == "g" and name[1:] in GNU_TOOLS:
        return name[1:]
    return name


VERSIONED = frozenset(("python", "pypy", "perl", "ruby", "node", "nodejs", "php", "lua", "julia", "bash", "zsh",
                       "ksh", "mksh", "pwsh", "vim", "nvim", "emacs", "deno", "bun", "awk", "gawk", "mawk",
                       "nawk", "tclsh", "wish"))
GNU_TOOLS = frozenset(("sed", "awk", "tar", "cp", "mv", "rm", "ln", "install", "touch", "truncate", "tee", "dd",
                       "sort", "uniq", "shred", "unlink", "rmdir", "find", "xargs", "env", "timeout", "nice",
                       "nohup", "stdbuf", "patch", "link", "split", "csplit", "shuf", "sdiff", "mktemp", "ar"))


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

        return HANDLERS[name](argv, cwd, env, home, depth)
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
    else:
        from maestro.hooks import bash_channels_interp as module
    return module.HANDLERS[name](name, argv, cwd, env, home, depth)
