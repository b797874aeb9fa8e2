"""What the programs of the write-channel table share (bash_channels and its sibling modules
bash_channels_*.py): the option scanner, the Target makers and path helpers, the table's program
names (program_name), and RunIn, a command a program runs in another directory.

Kept below the dispatch (bash_channels) so that the program modules, which the dispatch imports
on their first program, never import it back: a program that runs another command returns a Run
(or a RunIn), and the dispatch judges it. Hot path: only os at import; no re/shlex/collections.
"""

import os

from maestro.hooks.targets import Run, Target, Word


# --------------------------------------------------------------------------------------------- helpers
# shared by bash_channels and the program modules bash_channels_*.py


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


def read_program_file(channel, word, cwd):
    """The text of a script file named by `-f FILE` (sed/awk), or a fail-closed Target."""
    full = resolve(word.value, cwd)
    if full is not None and full not in ("-", "/dev/stdin") and os.path.isfile(full):
        try:
            with open(full, "rb") as handle:
                data = handle.read(65537)
            if len(data) <= 65536:
                return data.decode("utf-8", "replace")
        except OSError:
            pass
    return Target(channel, "run", None, word.raw)


# --------------------------------------------------------------------------------------------- running
# what wrappers (bash_channels_wrappers.py) and find/watch/… do with the command they run


def run_rest(rest):
    return [Run(list(rest))] if rest else []


class RunIn:
    """A command a program runs in another directory (`env -C DIR cmd`, `sudo -D DIR cmd`,
    `find -execdir cmd`; cwd None: unknown). A Run cannot carry a cwd: the dispatch
    (bash_channels.command_writes) resolves it where the program's function returns it."""

    __slots__ = ("argv", "cwd")

    def __init__(self, argv, cwd):
        self.argv, self.cwd = argv, cwd


def under_dir(argv, cwd):
    """The inner command `argv` runs in `cwd`: see RunIn."""
    return [RunIn(argv, cwd)]


# --------------------------------------------------------------------------------------------- program names

# program name -> module holding its function (imported on first use); see bash_channels' docstring
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
    ("maestro", "maestro"),
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
    beside BSD ones (`gsed`, `gcp`, `gtimeout`); `maestro.pyz` is maestro. `script.sh` or `cp2`
    stay themselves: not ours."""
    name = raw_name.rpartition("/")[2]
    if name in WRAPPERS or name in LAZY:
        return name
    if name in ALIASES:
        return ALIASES[name]
    if name == "maestro.pyz":
        return "maestro"  # maestro ships as `maestro.pyz`; another zipapp (`app.pyz`) is not maestro
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
