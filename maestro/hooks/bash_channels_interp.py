"""Write channels of shells, interpreters and command runners (part of the bash_channels table).

Shells and interpreters do not write on their own: they run program text, returned as a Script for
the engine (lang "sh", "python", "node"; perl/ruby live in bash_channels_scripts.py with their -i).
- `bash -c STRING` (also `-ec`, `-lc`, `-o pipefail -c`) → Script("sh", STRING); no script operand
  or `-s` → Script("sh", None) (the engine supplies a heredoc/here-string/pipe); `bash script.sh`
  → nothing: a program outside the table. `eval WORDS` → Script("sh", words joined by spaces).
- `python -c CODE` → Script("python", CODE); `python -`/bare `python` → code None; `-m mod` and
  `python script.py` → nothing, except maestro itself (`python maestro.pyz …`, `python -- maestro.pyz`,
  `-m maestro[.cli] …`, a script named by an unknown word or `{}`, `sh ~/.local/bin/maestro …`:
  bash_channels_maestro; other `-m maestro.*` fail closed). node/bun `-e/-p`, `deno eval` → Script("node", …).
- Languages without an inline analysis (php -r, lua -e, Rscript -e, julia -e, pwsh -c,
  osascript -e): the code cannot be judged, so it fails closed (Target with path None).
- Runners: `su -c`, `runuser`, `watch`, `flock`, `strace`/`ltrace` (-o FILE), `script` (its log
  file), `uv run`, `poetry run`, `pipenv run`, `pdm run`, `rye run`, `hatch run`, `pixi run`,
  `conda run`, `bundle exec`, `nix-shell --run`.
Program text whose value is unknown (`bash -c "$CMD"`) fails closed: a Target with path None.
"""

from maestro.hooks.bash_channels_common import (chdir, has, run_rest, scan, target, under_dir, unresolved_code,
                                                values)
from maestro.hooks.targets import Script, Target, Word


def opaque_option(word):
    """An unknown word written as an option (`"-c$CODE"`, `--eval="$X"`): it may carry program text."""
    return word.value is None and word.raw.lstrip("'\"").startswith("-")


def code_script(lang, channel, word):
    return Script(lang, word.value, word.raw) if word.value is not None else unresolved_code(channel, word)


def _shell(name, argv, cwd, env, home, depth):
    args = argv[1:]
    i = 0
    command_mode = stdin_mode = False
    command_word = None
    while i < len(args):
        value = args[i].value
        if value is None:
            if opaque_option(args[i]):
                return [unresolved_code(name, args[i])]
            break
        if value in ("--", "-"):
            i += 1
            break
        if value.startswith("--"):
            key, eq, attached = value[2:].partition("=")
            if key in ("version", "help"):
                return []
            if key == "command":  # fish
                command_mode = True
                command_word = args[i] if eq else (args[i + 1] if i + 1 < len(args) else None)
                if eq:
                    command_word = Word(attached, attached, args[i].literal)
                i += 1 if eq else 2
                continue
            i += 2 if key in ("rcfile", "init-file") and not eq else 1
            continue
        if value[:1] in ("-", "+") and len(value) > 1:
            needs = 0
            for letter in value[1:]:
                if letter == "c":
                    command_mode = True
                elif letter == "s":
                    stdin_mode = True
                elif letter == "n" and value[0] == "-" and name not in ("fish",):
                    return []  # noexec: parse only
                elif letter in "oO":
                    needs += 1
            i += 1 + needs
            continue
        break
    operands = args[i:]
    if command_mode:
        word = command_word or (operands[0] if operands else None)
        return [] if word is None else [code_script("sh", name + " -c", word)]
    if stdin_mode or not operands:
        return [Script("sh", None, argv[0].raw)]
    script = operands[0].value
    if script is None or script == "{}" or script.rpartition("/")[2] in ("maestro", "maestro.pyz"):
        from maestro.hooks.bash_channels_maestro import maestro_writes, unknown_script_args

        # `sh ~/.local/bin/maestro rollback`: the launcher; `sh "$(command -v maestro)" …`, `xargs sh`,
        # find's `{}`: it may be the launcher (_python_script's rule)
        if script is not None and script != "{}":
            return maestro_writes(operands[1:], cwd, None)
        return maestro_writes(unknown_script_args(operands[0], operands[1:]), cwd, None, strict=False)
    return []  # `bash script.sh`: a program outside the table


def _eval(name, argv, cwd, env, home, depth):
    words = argv[1:]
    if not words:
        return []
    if any(word.value is None for word in words):
        return [Target("eval", "run", None, " ".join(word.raw for word in words), cwd)]
    return [Script("sh", " ".join(word.value for word in words), " ".join(word.raw for word in words))]


def _python(name, argv, cwd, env, home, depth):
    """With -i (or $PYTHONINSPECT) python reads the rest of stdin as more program text after its
    -c code, module or script: that stdin is judged as a program too."""
    found = _python_run(argv, cwd)
    if (_inspects(argv) or (env and env.get("PYTHONINSPECT"))) and not any(
            type(item) is Script and item.code is None for item in found):
        found.append(Script("python", None, "python -i"))
    return found


def _inspects(argv):
    """True when an interpreter switch before the program (-c/-m/script) is -i."""
    skip = False
    for word in argv[1:]:
        value = word.value
        if skip or value == "--check-hash-based-pycs" or (value or "").startswith("--help"):
            skip = value == "--check-hash-based-pycs"
            continue
        if value is None or not value.startswith("-") or value in ("-", "--") or value.startswith("--"):
            return False
        letters = value[1:]
        for letter in letters:
            if letter == "i":
                return True
            if letter in "cmWX":
                return False
    return False


def _python_run(argv, cwd):
    args = argv[1:]
    i = 0
    while i < len(args):
        word = args[i]
        value = word.value
        i += 1
        if value is None:  # `-c"$CODE"`: unknown code; "$SCRIPT": a program file, judged as maestro may be
            return [unresolved_code("python", word)] if opaque_option(word) else _python_script(word, args[i:], cwd)
        if value == "-":
            return [Script("python", None, word.raw)]
        if value == "--":  # the next word is the program (`python3 -- - <<X`, `python3 -- maestro.pyz …`)
            return _python_script(args[i], args[i + 1:], cwd) if i < len(args) else [
                Script("python", None, argv[0].raw)]
        if value.startswith("--"):
            if value in ("--version", "--help") or value.startswith("--help-"):
                return []
            if value == "--check-hash-based-pycs":
                i += 1
            continue
        if not value.startswith("-"):
            return _python_script(word, args[i:], cwd)
        for j in range(1, len(value)):
            letter = value[j]
            if letter in "cmWX":
                if j + 1 < len(value):
                    argument = Word(value[j + 1:], value[j + 1:], word.literal)
                elif i < len(args):
                    argument = args[i]
                    i += 1
                else:
                    return []
                if letter == "c":
                    return [code_script("python", "python -c", argument)]
                if letter == "m":
                    return _python_module(argument, args[i:], cwd)
                break
            if letter in "hV?":
                return []
    return [] if i < len(args) else [Script("python", None, argv[0].raw)]


def _python_script(word, rest, cwd):
    """`python3 SCRIPT ARGS`: stdin for `-`, /dev/stdin and /proc paths; maestro itself for its archive
    or launcher (named maestro/maestro.pyz); a script whose name is unknown (`"$PYZ"`, find's/xargs' `{}`)
    may be maestro: a writing, hook, setup or unknown first argument fails closed, a literal non-verb
    (`input.txt`, `-v`) does not. Any other named script (`report.py`, `bundle.pyz`) is outside the table."""
    value = word.value
    if value == "-" or (value or "").startswith(("/dev/", "/proc/")):
        return [Script("python", None, word.raw)]  # `python3 /dev/stdin`: the program is stdin
    named = value is not None and value != "{}"
    if named and value.rstrip("/").rpartition("/")[2] not in ("maestro", "maestro.pyz"):
        return []  # python script.py, tools/bundle.pyz: another program
    from maestro.hooks.bash_channels_maestro import maestro_writes, unknown_script_args

    if named:
        return maestro_writes(rest, cwd, None)  # `python3 ~/.local/bin/maestro rollback …`

    # an unknown script: the word may hold the verb too (xargs' stdin arguments, unquoted `$S`)
    return maestro_writes(unknown_script_args(word, rest), cwd, None, strict=False)



def _python_module(module, rest, cwd):
    """`python -m MODULE ARGS`: modules that run code given as arguments or read from stdin, and
    stdlib modules writing a file they name (bash_channels_tools.python_module_writes)."""
    if module.value is None:
        return [unresolved_code("python -m", module)]
    from maestro.hooks.bash_channels_tools import python_module_writes

    written = python_module_writes(module, rest, cwd)
    if written:
        return written
    if module.value in ("timeit", "cProfile", "profile", "trace", "pdb", "doctest", "runpy"):
        # timeit's -s SETUP and statements, cProfile/profile/trace -c CODE, pdb -c COMMAND, runpy's module: code
        code = [w for w in rest if w.value is None or not w.value.startswith("-")]
        if any(w.value is None for w in rest):
            return [unresolved_code("python -m " + module.value, next(w for w in rest if w.value is None))]
        if module.value == "timeit" and code:
            return [Script("python", "\n".join(w.value for w in code), code[0].raw)]
        if code and module.value != "timeit":
            return [Target("python -m " + module.value, "run", None, code[0].raw)]
        return []
    if module.value.partition(".")[0] in ("maestro", "maestro_hook"):
        if module.value not in ("maestro", "maestro.__main__", "maestro.cli", "maestro_hook"):
            return [Target("python -m", "run", None, module.raw)]  # a verb module run directly: fail closed
        from maestro.hooks.bash_channels_maestro import maestro_writes

        return maestro_writes(rest, cwd, None)
    if module.value in ("code", "idlelib", "asyncio", "IPython", "ptpython", "bpython") and not rest:
        return [Script("python", None, module.raw)]  # an interactive console reading stdin
    return []


NODE_ARG_OPTIONS = ("-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions",
                    "--input-type", "--title", "--env-file", "--inspect-port", "--debug-port", "--stack-size",
                    "--max-old-space-size", "--icu-data-dir", "--openssl-config", "--redirect-warnings",
                    "--diagnostic-dir", "--report-dir", "--secure-heap", "--disable-warning", "--watch-path")


def _node(name, argv, cwd, env, home, depth):
    args = argv[1:]
    i = 0
    if name == "deno":
        if not args or args[0].value != "eval":
            return []
        opts, rest = scan(args[1:], "", ("ext", "config", "import-map", "location", "cert", "env-file"))
        return [code_script("node", "deno eval", rest[0])] if rest else []
    options = env.get("NODE_OPTIONS", "") if env else ""
    if "data:" in options or "http:" in options or "https:" in options:
        return [Target(name + " (NODE_OPTIONS)", "run", None, "$NODE_OPTIONS", cwd)]  # a module given inline
    while i < len(args):
        word = args[i]
        value = word.value
        i += 1
        if value is None:
            return [unresolved_code(name, word)] if opaque_option(word) else []
        if value == "-":
            return [Script("node", None, word.raw)]
        if value == "--":
            break
        key, eq, attached = value.partition("=")
        if key in ("-r", "--require", "--import", "--loader", "--experimental-loader"):
            module = Word(attached, attached, word.literal) if eq else (args[i] if i < len(args) else None)
            if module is not None and (module.value is None or module.value.startswith(("data:", "http:",
                                                                                         "https:"))):
                return [unresolved_code(name + " " + key, module)]  # module text given inline
        if key in ("-p", "--print") and not eq and i < len(args) and (args[i].value or "").startswith("-"):
            continue  # `node -p -e CODE`: -p is a flag here, the next option carries the code
        if key in ("-e", "--eval", "-p", "--print", "-pe", "-ep"):
            if eq:
                return [code_script("node", name + " " + key, Word(attached, attached, word.literal))]
            return [code_script("node", name + " " + key, args[i])] if i < len(args) else []
        if key in ("-v", "--version", "-h", "--help", "-c", "--check", "--test", "--run"):
            return []
        if not value.startswith("-"):
            return []  # node script.js, bun run x, bun test
        if key in NODE_ARG_OPTIONS and not eq:
            i += 1
    return [Script("node", None, argv[0].raw)] if name == "node" else []


FOREIGN_CODE = {  # program -> options that take program text in a language we cannot judge
    "php": ("-r",), "lua": ("-e",), "Rscript": ("-e",), "julia": ("-e", "--eval", "-E", "--print"),
    "pwsh": ("-c", "-command", "-Command", "-encodedcommand", "-EncodedCommand", "-e", "-ec"),
    "powershell": ("-c", "-command", "-Command", "-encodedcommand", "-EncodedCommand", "-e", "-ec"),
    "osascript": ("-e",),
}


def _foreign(name, argv, cwd, env, home, depth):
    flags = FOREIGN_CODE[name]
    for i, word in enumerate(argv[1:], start=1):
        value = word.value if word.value is not None else word.raw.lstrip("'\"")
        if value in flags and i + 1 < len(argv):
            return [Target(name + " " + value, "run", None, argv[i + 1].raw, cwd)]
        attached = [flag for flag in flags if len(flag) == 2 and value.startswith(flag) and len(value) > 2]
        if attached and (word.value is None or name in ("php", "lua")):  # `php -r'code'`, `"-e$CODE"`
            return [Target(name + " " + attached[0], "run", None, word.raw, cwd)]
    return []


def _su(name, argv, cwd, env, home, depth):
    opts, rest = scan(argv[1:], "cgGsuwC", ("command", "session-command", "group", "supp-group", "shell",
                                            "user", "whitelist-environment"), "", (),
                      ("login", "preserve-environment", "pty", "help", "version"))
    commands = values(opts, "c", "command", "C", "session-command")
    if commands:
        return [code_script("sh", name + " -c", commands[-1])]
    if name == "runuser" and has(opts, "u", "user"):
        return run_rest(rest)
    return [] if has(opts, "help", "version") else [Script("sh", None, argv[0].raw)]


def _watch(name, argv, cwd, env, home, depth):
    opts, rest = scan(argv[1:], "nq", ("interval", "equexit"), "d", ("differences",),
                      ("exec", "beep", "errexit", "chgexit", "color", "no-title", "precise", "no-wrap"),
                      permute=False)
    if not rest:
        return []
    if has(opts, "x", "exec"):
        return run_rest(rest)
    return _eval(name, [argv[0]] + rest, cwd, env, home, depth)


def _flock(name, argv, cwd, env, home, depth):
    opts, rest = scan(argv[1:], "wEc", ("timeout", "conflict-exit-code", "command"), "", (),
                      ("shared", "exclusive", "unlock", "nonblock", "close", "no-fork", "verbose"), permute=False)
    commands = values(opts, "c", "command")
    if commands:
        return [code_script("sh", "flock -c", commands[-1])]
    if len(rest) >= 3 and rest[1].value in ("-c", "--command"):  # flock FILE -c COMMAND
        return [code_script("sh", "flock -c", rest[2])]
    if len(rest) >= 2 and rest[1].value is None:
        return [unresolved_code("flock", rest[1])]
    return run_rest(rest[1:])


def _trace(name, argv, cwd, env, home, depth):
    opts, rest = scan(argv[1:], "oepsaEIOPSuXbFlnLAD", ("output", "trace", "signal", "status", "attach",
                                                        "string-limit", "env", "user", "detach-on"),
                      permute=False)
    return [target(name + " -o", "write", word, cwd) for word in values(opts, "o", "output")] + run_rest(rest)


def _script(name, argv, cwd, env, home, depth):
    opts, rest = scan(argv[1:], "cEmoTIOB", ("command", "echo", "logging-format", "output-limit",
                                             "log-timing", "log-in", "log-out", "log-io"), "t", ("timing",),
                      ("append", "return", "flush", "force", "quiet", "help", "version"))
    if has(opts, "help", "version"):
        return []
    out = [target("script", "write", word, cwd) for word in rest[:1]]
    if not rest and not values(opts, "O", "B", "log-out", "log-io"):
        out.append(Target("script", "write", "typescript", "typescript", cwd))
    out += [target("script", "write", word, cwd) for word in values(opts, "T", "I", "O", "B", "log-timing",
                                                                       "log-in", "log-out", "log-io")]
    commands = values(opts, "c", "command")
    return out + ([code_script("sh", "script -c", commands[-1])] if commands else [Script("sh", None, argv[0].raw)])


RUNNER_ARG_OPTIONS = frozenset((
    "--with", "--with-editable", "--with-requirements", "--python", "-p", "--project", "--directory", "--package",
    "--extra", "--group", "--no-group", "--only-group", "--env-file", "--index", "--default-index", "--index-url",
    "--extra-index-url", "--find-links", "-f", "--config-file", "--cache-dir", "--color", "--config-setting",
    "--exclude-newer", "--index-strategy", "--keyring-provider", "--resolution", "--prerelease", "--link-mode",
    "-n", "--name", "--prefix", "-e", "--environment", "--manifest-path", "--cwd", "-C", "--venv", "-s",
))
RUNNER_VERB = {"uv": "run", "poetry": "run", "pipenv": "run", "pdm": "run", "rye": "run", "hatch": "run",
               "pixi": "run", "conda": "run", "mamba": "run", "micromamba": "run", "bundle": "exec"}


def _runner(name, argv, cwd, env, home, depth):
    """`uv run [opts] cmd …` and friends: the command after the verb and its options."""
    rest = argv[1:]
    while rest and rest[0].value is not None and rest[0].value.startswith("-"):
        rest = rest[2:] if rest[0].value in RUNNER_ARG_OPTIONS else rest[1:]
    if not rest or rest[0].value != RUNNER_VERB[name]:
        return []
    rest = rest[1:]
    directory = None
    while rest and rest[0].value is not None and rest[0].value.startswith("-"):
        key, eq, attached = rest[0].value.partition("=")
        if key == "--":
            rest = rest[1:]
            break
        if key in ("--directory", "--cwd"):  # uv run --directory DIR, conda run --cwd DIR: run there
            if eq:
                directory = Word(attached, attached, rest[0].literal)
            elif len(rest) > 1:
                directory = rest[1]
        rest = rest[1:] if eq or key not in RUNNER_ARG_OPTIONS else rest[2:]
    if directory is not None and rest:
        return under_dir(rest, chdir(cwd, directory))
    return run_rest(rest)


def _nix_shell(name, argv, cwd, env, home, depth):
    for i, word in enumerate(argv[1:-1], start=1):
        if word.value in ("--run", "--command"):
            return [code_script("sh", "nix-shell --run", argv[i + 1])]
    return []


HANDLERS = {name: _shell for name in ("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish",
                                      "tcsh", "csh", "rbash")}
HANDLERS.update({"eval": _eval, "python": _python, "node": _node, "bun": _node, "deno": _node,
                 "su": _su, "runuser": _su, "watch": _watch, "flock": _flock, "strace": _trace, "ltrace": _trace,
                 "script": _script, "nix-shell": _nix_shell})
HANDLERS.update({name: _foreign for name in FOREIGN_CODE})
HANDLERS.update({name: _runner for name in RUNNER_VERB})
