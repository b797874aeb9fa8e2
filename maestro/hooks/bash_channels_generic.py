"""Programs outside the write-channel table that still run a command (part of the bash_channels table).

- wrappers the table has no option grammar for (taskset, chrt, prlimit, unshare, nsenter, setpriv,
  gdb, valgrind, firejail, bwrap, systemd-run, npx, …): the command they run starts at one of their
  first non-option words; each candidate suffix is judged as a command (a wrong guess is a command
  that is not in the table: harmless).
- any other program: a shell or interpreter name among its words followed later by a code option
  (`-c`, `-e`, `--eval`, `-p`, `-xc`, …) is judged as that interpreter running that code
  (`mytool --run bash -c 'echo x > src/app.py'`).
"""

from maestro.hooks.bash_channels_common import program_name
from maestro.hooks.targets import Run

UNPARSED_WRAPPERS = frozenset((
    "taskset", "chrt", "prlimit", "unshare", "nsenter", "setpriv", "gdb", "valgrind", "firejail", "bwrap",
    "systemd-run", "npx", "bunx", "pnpx", "cgexec", "numactl", "schedtool", "faketime", "sg", "newgrp",
    "capsh", "chroot", "ssh-agent", "dbus-run-session", "xvfb-run", "flatpak-spawn", "tsp", "parallel",
    "caffeinate", "mpirun", "srun", "hyperfine", "entr", "inotifywait", "watchexec", "nodemon", "retry",
    "with-contenv", "s6-setuidgid", "chpst", "daemonize", "start-stop-daemon", "pkexec", "lxterminal",
    "xterm", "tmux", "screen", "dtach", "abduco", "expect", "rlwrap", "pv", "cpulimit", "trickle", "proot",
))
INTERPRETERS = frozenset(("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "rbash", "python", "node",
                          "perl", "ruby", "php", "lua", "deno", "bun", "busybox"))
CODE_OPTIONS = frozenset(("-c", "-e", "-E", "-p", "--eval", "--print", "--command", "-r", "-m"))
MAX_CANDIDATES = 4


def unknown_program_writes(name, argv):
    """Runs for the commands a program outside the table may run (see the module docstring)."""
    out = []
    if name in UNPARSED_WRAPPERS:
        for k in range(1, len(argv)):
            value = argv[k].value
            if value is None:
                out.append(Run(argv[k:]))  # the command may start at an unknown word: fail closed there
                break
            if value.startswith("-") and value != "-":
                continue  # an option (its argument, if any, is tried as a command start: harmless)
            out.append(Run(argv[k:]))
            if len(out) >= MAX_CANDIDATES:
                break
        return out
    for k in range(1, len(argv)):
        value = argv[k].value
        if value is None or program_name(value) not in INTERPRETERS:
            continue
        if any(_is_code_option(word.value) for word in argv[k + 1:]):
            out.append(Run(argv[k:]))
            if len(out) >= MAX_CANDIDATES:
                break
    return out


def _is_code_option(value):
    if value is None or not value.startswith("-") or len(value) < 2:
        return False
    if value in CODE_OPTIONS or value.startswith(("--eval", "--print", "--command")):
        return True
    # clusters such as -xc / -ec / -ne / -pe: a short code option inside
    return value[1] != "-" and value[1:].isalpha() and value[-1] in "ceE"
