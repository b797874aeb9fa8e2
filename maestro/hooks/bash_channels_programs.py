"""Programs that run program text of their own kind (part of the bash_channels table).

- make -f -/--file=-/-f /dev/stdin: the makefile is stdin → Script("make", None); -E/--eval TEXT →
  Script("make", TEXT). Recipes are judged as shell text by inline_tools (other makefiles: project code).
- tclsh/wish/expect: a script from stdin (no script operand, `-`) → Script("tcl", None); expect -c
  CMDS → Script("tcl", CMDS); Tcl text that can run or write anything fails closed (inline_tools).
- gdb: -ex/-iex/--eval-command COMMAND judged as gdb commands (`shell`, `!`, `pipe`, `python` …);
  -x/--command FILE (commands from a file) fails closed; with -batch and no commands file, stdin
  commands → Script("gdb", None).
- tmux: new-session/new-window/split-window/respawn-*/run-shell/display-popup/if-shell/pipe-pane
  run their shell command (Script "sh"); send-keys types text into a shell (Script "sh" of the keys);
  source-file, -f FILE fail closed; `-c CMD` is sh -c.
- screen: the command after its options runs (Run); -X (commands to a session) fails closed.
- sqlite3: dot-commands in the arguments (-cmd too) and in stdin (Script("sqlite", None)) are judged
  by inline_tools: .output/.once/.log/.save/.backup/.clone F write F, .shell/.system run sh, others
  that read or load files fail closed; plain SQL is allowed (writefile(), ATTACH, VACUUM INTO fail closed).
"""

from maestro.hooks.targets import Run, Script, Target, Word


def _make(name, argv, cwd, env, home, depth):
    out = []
    args = argv[1:]
    i = 0
    while i < len(args):
        word = args[i]
        value = word.value
        i += 1
        if value is None or not value.startswith("-") or value == "-":
            continue
        if value == "--":
            break
        if value.startswith("--"):
            key, eq, attached = value.partition("=")
            if key in ("--file", "--makefile", "--eval"):
                argument = Word(attached, attached, word.literal) if eq else (args[i] if i < len(args) else None)
                i += 0 if eq else 1
                out += _make_text(key, argument, cwd)
            continue
        for k in range(1, len(value)):
            letter = value[k]
            if letter in "CfIoWE":
                rest = value[k + 1:]
                argument = Word(rest, rest, word.literal) if rest else (args[i] if i < len(args) else None)
                i += 0 if rest else 1
                if letter in "fE":
                    out += _make_text("-" + letter, argument, cwd)
                break
    return out


def _make_text(option, argument, cwd):
    if argument is None:
        return []
    if argument.value is None:
        return [Target("make " + option, "run", None, argument.raw, cwd)]
    if option in ("-E", "--eval"):
        return [Script("make", argument.value, argument.raw)]
    if argument.value in ("-", "/dev/stdin", "/proc/self/fd/0", "/dev/fd/0"):
        return [Script("make", None, argument.raw)]
    return []


def _tcl(name, argv, cwd, env, home, depth):
    args = argv[1:]
    out = []
    if name == "expect":
        from maestro.hooks.bash_channels_generic import unknown_program_writes

        out += unknown_program_writes("expect", argv)
        k = 0
        while k < len(args):
            value = args[k].value
            if value is None:
                return out + [Target("expect", "run", None, args[k].raw, cwd)]
            if value in ("-c", "-f") and k + 1 < len(args):
                code = args[k + 1]
                if value == "-c":
                    out.append(Script("tcl", code.value, code.raw) if code.value is not None else
                               Target("expect -c", "run", None, code.raw, cwd))
                elif code.value in ("-", "/dev/stdin"):
                    return out + [Script("tcl", None, code.raw)]
                else:
                    return out
                k += 2
                continue
            if value == "-" or value == "--":
                return out + [Script("tcl", None, args[k].raw)]
            if not value.startswith("-"):
                return out  # a script file: outside the table
            k += 1
        return out
    for word in args:
        value = word.value
        if value is None:
            return [Target(name, "run", None, word.raw, cwd)]
        if value in ("-", "/dev/stdin"):
            return [Script("tcl", None, word.raw)]
        if not value.startswith("-"):
            return []  # tclsh script.tcl: outside the table
        if value in ("-encoding", "-name", "-display", "-geometry", "-colormap", "-visual", "-use"):
            continue
    return [Script("tcl", None, argv[0].raw)]


def _gdb(name, argv, cwd, env, home, depth):
    from maestro.hooks.bash_channels_generic import unknown_program_writes
    from maestro.hooks.inline_tools import gdb_command_writes

    out = list(unknown_program_writes("gdb", argv))
    args = argv[1:]
    batch = False
    for k, word in enumerate(args):
        value = word.value
        if value is None:
            continue
        if value == "--args":
            break
        option, eq, attached = value.lstrip("-").partition("=")
        if option in ("batch", "batch-silent"):
            batch = True
        if option in ("ex", "iex", "eval-command", "init-eval-command", "x", "ix", "command", "init-command"):
            argument = Word(attached, attached, word.literal) if eq else (args[k + 1] if k + 1 < len(args) else None)
            if argument is None:
                continue
            if argument.value is None or option in ("x", "ix", "command", "init-command"):
                if option not in ("x", "ix", "command", "init-command") or argument.value != "/dev/null":
                    out.append(Target("gdb -" + option, "run", None, argument.raw, cwd))
                continue
            out += gdb_command_writes(argument.value, argument.raw)
    if batch:
        out.append(Script("gdb", None, "gdb commands from stdin"))
    return out


TMUX_RUNS = ("new-session", "new-window", "split-window", "respawn-pane", "respawn-window", "run-shell",
             "display-popup", "if-shell", "pipe-pane", "send-keys", "source-file", "command-prompt",
             "confirm-before", "bind-key", "set-hook", "set-option", "set-window-option")
TMUX_ALIASES = {"new": "new-session", "neww": "new-window", "splitw": "split-window", "respawnp": "respawn-pane",
                "respawnw": "respawn-window", "run": "run-shell", "popup": "display-popup", "if": "if-shell",
                "pipep": "pipe-pane", "send": "send-keys", "source": "source-file", "bind": "bind-key",
                "set": "set-option", "setw": "set-window-option"}
TMUX_ARG_LETTERS = {  # per command: the option letters that take an argument
    "new-session": "cefFnstxy", "new-window": "ceFnt", "split-window": "celtF", "respawn-pane": "cet",
    "respawn-window": "cet", "run-shell": "dt", "display-popup": "bcdehsStTwxy", "if-shell": "t", "pipe-pane": "t",
    "send-keys": "Nt"}
KEY_NAMES = frozenset(("Enter", "C-m", "C-j", "C-c", "C-d", "Escape", "Tab", "Space", "BSpace", "Up", "Down",
                       "Left", "Right", "Home", "End", "KPEnter"))


def _tmux(name, argv, cwd, env, home, depth):
    args = argv[1:]
    out = []
    k = 0
    while k < len(args) and args[k].value is not None and args[k].value.startswith("-"):
        value = args[k].value
        if value[1:2] in "LSfcT" and len(value) == 2:
            if value in ("-f", "-c") and k + 1 < len(args):
                argument = args[k + 1]
                if value == "-c":
                    out.append(Script("sh", argument.value, argument.raw) if argument.value is not None else
                               Target("tmux -c", "run", None, argument.raw, cwd))
                elif argument.value != "/dev/null":
                    out.append(Target("tmux -f", "run", None, argument.raw, cwd))
            k += 2
            continue
        k += 1
    if k < len(args) and args[k].value is None:
        return out + [Target("tmux", "run", None, args[k].raw, cwd)]
    part = []
    for word in args[k:] + [Word(";", ";", True)]:
        if word.value in (";", "\\;"):
            out += _tmux_command(part, cwd)
            part = []
        else:
            part.append(word)
    return out


def _tmux_command(words, cwd):
    if not words or words[0].value is None:
        return [Target("tmux", "run", None, words[0].raw, cwd)] if words else []
    sub = TMUX_ALIASES.get(words[0].value, words[0].value)
    if sub not in TMUX_RUNS:
        matches = [full for full in TMUX_RUNS if full.startswith(sub)]
        if len(matches) != 1:
            return []
        sub = matches[0]
    if sub in ("source-file", "command-prompt", "confirm-before", "bind-key", "set-hook", "set-option",
               "set-window-option"):
        # tmux commands (run-shell inside) bound or read from a file: not analysed here
        return [Target("tmux " + sub, "run", None, " ".join(w.raw for w in words), cwd)] if sub in (
            "source-file", "bind-key", "set-hook") else []
    rest = []
    k = 1
    while k < len(words):
        word = words[k]
        value = word.value
        if value is not None and value.startswith("-") and len(value) > 1 and not rest:
            if value == "--":
                rest = words[k + 1:]
                break
            if value[-1] in TMUX_ARG_LETTERS[sub]:
                k += 2
                continue
            k += 1
            continue
        rest = words[k:]
        break
    if any(w.value is None for w in rest):
        return [Target("tmux " + sub, "run", None, " ".join(w.raw for w in rest), cwd)]
    if not rest:
        return []
    if sub == "send-keys":
        text = " ".join("\n" if w.value in KEY_NAMES else w.value for w in rest)
        return [Script("sh", text, " ".join(w.raw for w in rest))]
    if sub == "if-shell":
        rest = rest[:1]
    if len(rest) == 1 or sub in ("run-shell", "pipe-pane", "if-shell"):
        return [Script("sh", " ".join(w.value for w in rest), rest[0].raw)]
    return [Run(rest)]


def _screen(name, argv, cwd, env, home, depth):
    args = argv[1:]
    k = 0
    while k < len(args):
        value = args[k].value
        if value is None:
            return [Target("screen", "run", None, args[k].raw, cwd)]
        if not value.startswith("-"):
            return [Run(args[k:])]
        if value == "-X":
            return [Target("screen -X", "run", None, " ".join(w.raw for w in args[k + 1:]) or "-X", cwd)]
        if value in ("-c", "-Logfile", "-logfile") and k + 1 < len(args):
            if value == "-c" and args[k + 1].value != "/dev/null":
                return [Target("screen -c", "run", None, args[k + 1].raw, cwd)]
            if value != "-c":
                return [Target("screen -Logfile", "write", args[k + 1].value, args[k + 1].raw, cwd)] + [
                    Run(args[j:]) for j in range(k + 2, min(k + 3, len(args)))]
        if value.endswith(("S", "e", "h", "p", "s", "t", "T", "c")) and not value.startswith("--"):
            k += 2
            continue
        k += 1
    return []


SQLITE_ARG = frozenset(("init", "cmd", "separator", "nullvalue", "newline", "mmap", "vfs", "heap", "maxsize",
                        "nonce", "escape", "lookaside", "pagecache"))


def _sqlite3(name, argv, cwd, env, home, depth):
    from maestro.hooks.inline_tools import sqlite_writes

    args = argv[1:]
    out = []
    operands = []
    k = 0
    while k < len(args):
        word = args[k]
        value = word.value
        k += 1
        if value is None:
            operands.append(word)
            continue
        if value.startswith("-") and len(value) > 1:
            option = value.lstrip("-")
            if option == "safe":
                return []  # safe mode refuses every command that touches other files
            if option in ("A", "Ax") or option.startswith("A"):
                return [Target("sqlite3 -A", "write", None, value, cwd)]  # archive mode extracts files
            if option in SQLITE_ARG:
                argument = args[k] if k < len(args) else None
                k += 2 if option in ("lookaside", "pagecache") else 1
                if argument is None:
                    continue
                if option == "init" and argument.value != "/dev/null":
                    out.append(Target("sqlite3 -init", "run", None, argument.raw, cwd))
                if option == "cmd":
                    out += sqlite_writes(argument.value, argument.raw) if argument.value is not None else [
                        Target("sqlite3 -cmd", "run", None, argument.raw, cwd)]
            continue
        operands.append(word)
    for word in operands[1:]:
        out += sqlite_writes(word.value, word.raw) if word.value is not None else [
            Target("sqlite3", "run", None, word.raw, cwd)]
    if len(operands) <= 1:
        out.append(Script("sqlite", None, "sqlite3 commands from stdin"))
    for item in out:
        if type(item) is Target and item.cwd is None:
            item.cwd = cwd
    return out


HANDLERS = {"make": _make, "gmake": _make, "tclsh": _tcl, "wish": _tcl, "expect": _tcl, "gdb": _gdb,
            "tmux": _tmux, "screen": _screen, "sqlite3": _sqlite3}
