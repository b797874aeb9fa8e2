"""Write channels of wrappers (part of the bash_channels table): programs that run another command.

`sudo`, `env`, `timeout`, `nice`, `xargs`, `nohup`, … write nothing themselves (`time -o` aside):
each hands the command it runs back to the engine as a `Run`, resolved against `-C`/`-D`/`--chdir`
through bash_channels_common.under_dir. `env -S` splits its string into words; `sudo -s`/`doas -s` with no
command run a shell on stdin; `xargs` runs its command with arguments read from stdin (unknown
words). Split out of bash_channels.py so that a Bash call naming no wrapper does not load them;
imported on the first wrapper seen. Their functions take (argv, cwd, env, home, depth).
"""

from maestro.hooks.bash_channels_common import (chdir, has, run_rest, scan, target, under_dir, unresolved_code,
                                                values)
from maestro.hooks.targets import Run, Script, Target, Word


ENV_LONG_ARG = ("unset", "chdir", "split-string")
# GNU env takes these signals only attached (`--ignore-signal=INT`): a separate word is the program
ENV_LONG_OPT = ("default-signal", "ignore-signal", "block-signal")
ENV_ARG_OPTIONS = frozenset(("u", "C", "S") + ENV_LONG_ARG)


def _env_options(words):
    found, _ = scan(words, "uCS", ENV_LONG_ARG, "", ENV_LONG_OPT, ("ignore-environment", "null", "debug",
                                                         "list-signal-handling"), permute=False)
    return found


def _env(argv, cwd, env, home, depth):
    opts, rest = [], argv[1:]
    splits = 0
    while rest:
        value = rest[0].value
        raw = rest[0].raw
        if value is None:
            name = raw.partition("=")[0].strip("'\"")
            if "=" in raw and name.replace("_", "a").isalnum():
                rest = rest[1:]  # NAME=$unknown: an assignment all the same
                continue
            break
        if value == "--":
            rest = rest[1:]
            break
        if value.startswith("-") and value != "-":
            # one option word (and its argument) at a time: `-S STRING` replaces itself at once with
            # STRING's words and parsing goes on over them (GNU env), so `env -S sed -i …` runs sed -i
            found = _env_options(rest[:1])
            consumed = 1
            if found and found[-1][1] is None and found[-1][0] in ENV_ARG_OPTIONS:
                found, consumed = _env_options(rest[:2]), 2
            rest = rest[consumed:]
            opts += found
            if found and found[-1][0] in ("S", "split-string") and found[-1][1] is not None:
                split = found[-1][1]
                splits += 1
                if split.value is None or splits > 8:  # unknown, or `-S '-S …'` nested past reason
                    return [unresolved_code("env -S", split)]
                rest = [Word(part, part, split.literal) for part in split.value.split()] + rest
            continue
        if value == "-" or ("=" in value and not value.startswith("=")):
            rest = rest[1:]
            continue
        break
    dirs = values(opts, "C", "chdir")
    if dirs and rest:
        return under_dir(rest, chdir(cwd, dirs[-1]))
    return run_rest(rest)


def _sudo(argv, cwd, env, home, depth):
    opts, rest = scan(argv[1:], "ugpCcrtTUDRh", ("user", "group", "prompt", "close-from", "login-class", "role",
                                                 "type", "command-timeout", "other-user", "chdir", "chroot",
                                                 "host"), "", ("preserve-env",),
                      ("edit", "shell", "login", "list", "help", "version", "validate", "reset-timestamp",
                       "remove-timestamp", "non-interactive", "stdin", "background", "askpass", "bell",
                       "preserve-groups", "set-home", "no-update"), permute=False)
    if argv[0].value.rpartition("/")[2] == "sudoedit" or has(opts, "e", "edit"):
        return [target("sudoedit", "change", word, cwd) for word in rest]
    if has(opts, "l", "list", "V", "version", "help", "K", "remove-timestamp") or \
            (has(opts, "h") and not rest):
        return []
    while rest and rest[0].value and "=" in rest[0].value and not rest[0].value.startswith("="):
        rest = rest[1:]
    if not rest and has(opts, "s", "shell", "i", "login"):
        return [Script("sh", None, argv[0].raw)]
    if has(opts, "R", "chroot") and rest:
        return under_dir(rest, None)
    dirs = values(opts, "D", "chdir")
    if dirs and rest:
        return under_dir(rest, chdir(cwd, dirs[-1]))
    return run_rest(rest)


def _doas(argv, cwd, env, home, depth):
    opts, rest = scan(argv[1:], "uC", permute=False)
    if not rest and has(opts, "s"):
        return [Script("sh", None, argv[0].raw)]
    return [] if has(opts, "C") else run_rest(rest)


def _timeout(argv, cwd, env, home, depth):
    opts, rest = scan(argv[1:], "ks", ("kill-after", "signal"), "", (),
                      ("preserve-status", "foreground", "verbose", "help", "version"), permute=False)
    return run_rest(rest[1:])  # rest[0] is the duration


def _nice(argv, cwd, env, home, depth):
    rest = argv[1:]
    if rest and rest[0].value and rest[0].value[:1] == "-" and rest[0].value[1:].lstrip("-").isdigit():
        rest = rest[1:]  # the obsolete `nice -10 cmd`
    opts, rest = scan(rest, "n", ("adjustment",), permute=False)
    return run_rest(rest)


def _ionice(argv, cwd, env, home, depth):
    opts, rest = scan(argv[1:], "cn", ("class", "classdata"), "", (), ("pid", "pgid", "uid", "ignore"),
                      permute=False)
    return [] if has(opts, "p", "P", "u", "pid", "pgid", "uid") else run_rest(rest)


def _time(argv, cwd, env, home, depth):
    opts, rest = scan(argv[1:], "fo", ("format", "output"), "", (),
                      ("append", "portability", "verbose", "quiet", "help", "version"), permute=False)
    out = [target("time -o", "write", word, cwd) for word in values(opts, "o", "output")]
    return out + run_rest(rest)


def _command(argv, cwd, env, home, depth):
    opts, rest = scan(argv[1:], permute=False)
    return [] if has(opts, "v", "V") else run_rest(rest)


def _exec(argv, cwd, env, home, depth):
    opts, rest = scan(argv[1:], "a", permute=False)
    return run_rest(rest)


def _stdbuf(argv, cwd, env, home, depth):
    opts, rest = scan(argv[1:], "ioe", ("input", "output", "error"), permute=False)
    return run_rest(rest)


def _plain_wrapper(argv, cwd, env, home, depth):
    """nohup, builtin, chronic, setsid, unbuffer, fakeroot…: flags only, then the command."""
    opts, rest = scan(argv[1:], permute=False)
    return [] if has(opts, "help", "version") else run_rest(rest)


def _xargs(argv, cwd, env, home, depth):
    """xargs runs its command with arguments read from stdin: they are unknown words. With
    -I/-i/--replace every word holding the replace string is unknown instead."""
    opts, rest = scan(argv[1:], "adEILnPs", ("arg-file", "delimiter", "max-args", "max-procs", "max-chars",
                                             "process-slot-var"), "eil", ("eof", "replace", "max-lines"),
                      ("null", "no-run-if-empty", "verbose", "exit", "interactive", "open-tty", "show-limits",
                       "help", "version"), permute=False)
    if not rest or has(opts, "help", "version", "show-limits"):
        return []  # no command: xargs runs echo
    marks = [(w.value if w is not None else "{}") for k, w in opts
             if (k == "I" and w is not None) or k in ("i", "replace")]
    if not marks:
        return [Run(list(rest) + [Word(None, STDIN_ARGUMENTS, False)], True)]
    inner = [Word(None, w.raw, False) if w.value is None or None in marks or any(m and m in w.value for m in marks)
             else w for w in rest[1:]]
    if rest[0].value is not None and any(m and m in rest[0].value for m in marks):
        return [Target("xargs", "run", None, rest[0].raw, cwd)]  # the command itself comes from stdin
    return [Run([rest[0]] + inner, True)]


STDIN_ARGUMENTS = "<arguments from stdin>"


def _busybox(argv, cwd, env, home, depth):
    return run_rest(argv[1:])


HANDLERS = {
    "env": _env, "sudo": _sudo, "sudoedit": _sudo, "doas": _doas, "timeout": _timeout, "nice": _nice,
    "ionice": _ionice, "time": _time, "command": _command, "exec": _exec, "stdbuf": _stdbuf, "xargs": _xargs,
    "nohup": _plain_wrapper, "builtin": _plain_wrapper, "chronic": _plain_wrapper, "setsid": _plain_wrapper,
    "unbuffer": _plain_wrapper, "fakeroot": _plain_wrapper, "catchsegv": _plain_wrapper,
    "proxychains": _plain_wrapper, "proxychains4": _plain_wrapper, "torsocks": _plain_wrapper,
    "busybox": _busybox,
}
