"""maestro's own verbs run from Bash (part of the bash_channels table; also reached from
bash_channels_interp for `python3 SCRIPT`/`sh SCRIPT`/`-m maestro`, and from `. LAUNCHER`).

maestro (also `maestro.pyz`, `python maestro.pyz`, `python -m maestro`, `sh ~/.local/bin/maestro`):
  `rollback` without `--dry-run`, `checkpoints prune` and `worktrees remove` write the work tree (a
  checkpoint restored over it, the user's undo points dropped, a worktree's uncommitted files
  discarded): a tree target, blocked like `git stash apply`. `install`/`uninstall` rewrite
  ~/.claude/settings.json and ~/.claude/hooks (the gate's own files): a protected target. A verb that is
  not maestro's (`parallel maestro ::: rollback` hands it `:::`) or whose value is unknown fails closed;
  `-h`/`--help`/`help`/`--version` write nothing.

Hook verbs (gate, inject, session-start, stop) run by hand fail closed (`-h`/`--help` aside): Claude
Code runs its hooks itself, never through the Bash tool. A script whose name is unknown (`"$S"`, `{}`,
xargs' stdin) may be maestro: a writing, hook, setup or unknown first argument fails closed there too,
a literal non-verb (`input.txt`, `-v`, `serve`) does not (maestro refuses it before writing).
"""

from maestro.hooks.targets import Target

# verb -> the word that makes it write (None: the verb itself; `rollback --dry-run` only lists)
MAESTRO_WRITERS = {"rollback": None, "checkpoints": "prune", "worktrees": "remove"}
# maestro's verbs (maestro/cli.py VERBS; the hooks cannot import cli, tests/hooks keep the two equal)
MAESTRO_VERBS = frozenset((
    "gate", "inject", "session-start", "stop", "loop", "watchdog", "status", "statusline", "worktrees", "digest",
    "provenance-check", "rollback", "checkpoints", "discuss", "scout", "install", "uninstall", "model-select",
    "mcp-check", "memory", "doctor",
))
MAESTRO_NO_OP = frozenset(("-h", "--help", "help", "--version"))  # cli.main prints and returns
MAESTRO_SETUP = frozenset(("install", "uninstall"))  # they rewrite the gate's own settings and hooks
# Claude Code runs the hooks itself, never through the Bash tool: by hand, `inject` grants direct edits
# (~/.maestro/direct-edit), `session-start` appends to any CLAUDE_ENV_FILE; all four fail closed
MAESTRO_HOOKS = frozenset(("gate", "inject", "session-start", "stop"))
MAESTRO_NAMES = ("maestro", "maestro.pyz")  # what maestro's launcher and archive are called


def _maestro(name, argv, cwd, env, home, depth):
    if (argv[0].value or "").rpartition("/")[2] not in MAESTRO_NAMES:
        return []  # `./dist/app.pyz serve`: another zipapp, not maestro
    return maestro_writes(argv[1:], cwd, env)


def maestro_writes(args, cwd, env, strict=True):
    """What `maestro ARGS` writes by itself: the work tree for the verbs of MAESTRO_WRITERS, the gate's
    settings for install/uninstall, a hook's files for MAESTRO_HOOKS. The log and refs those verbs trust
    are writable by the same user, so this gate is their guard (docs/gate.md). For a program named
    maestro (strict) any word that is not a verb fails closed: the verb may come later. For a script
    that only may be maestro (`python3 "$S" ARGS`, find's `{}`) a literal non-verb (`input.txt`, `-v`)
    is harmless: maestro would refuse it (exit 3) before writing anything."""
    if not args:
        return []
    verb = args[0]
    if verb.value in MAESTRO_NO_OP:
        return []
    if verb.value is None or (strict and verb.value not in MAESTRO_VERBS):
        return [Target("maestro", "run", None, verb.raw, cwd)]
    if verb.value in MAESTRO_HOOKS:
        if any(word.value in ("-h", "--help") for word in args[1:]):
            return []  # hook_help: printed, nothing read or written
        return [_hook_target(verb.value, cwd)]
    if verb.value not in MAESTRO_WRITERS and verb.value not in MAESTRO_SETUP:
        return []
    trigger = MAESTRO_WRITERS.get(verb.value)
    writes = trigger is None
    plain = True  # no `--` and no unknown word yet: an option still reads as an option
    for index, word in enumerate(args[1:], 1):
        value = word.value
        if value is None:  # it may be the trigger word, or a `--` turning later options into names
            writes, plain = True, False
            continue
        if plain and value == "--":
            plain = False
            continue
        if plain and value in ("-h", "--help"):
            return []  # argparse prints the help and exits before the verb runs
        if plain and verb.value == "rollback" and len(value) >= 3 and "--dry-run".startswith(value):
            return []  # `--dry-run` and the abbreviations argparse accepts: it only lists
        if value == trigger and (trigger != "remove" or index == 1):
            writes = True  # `worktrees remove` only as the first word; `checkpoints … prune` anywhere
    if not writes:
        return []
    if verb.value in MAESTRO_SETUP:
        return [_settings_target("maestro " + verb.value, cwd)]
    from maestro.hooks.bash_channels_git import Repo

    # maestro finds its repository from the working directory alone (GIT_WORK_TREE/GIT_DIR are not read)
    return [Repo(cwd).tree("maestro " + verb.value + ("" if trigger is None else " " + trigger))]


def _hook_target(verb, cwd):
    """`maestro inject` run by hand writes the direct-edit grant (a protected file); the other hooks'
    writes (CLAUDE_ENV_FILE, the session's state) are not modelled: path None, failing closed."""
    from maestro import paths

    try:
        grant = paths.direct_edit_flag("session") if verb == "inject" else None
    except Exception:  # noqa: BLE001 - no usable HOME: the gate cannot name the grant, so it fails closed
        grant = None
    grant = grant if grant is not None and grant.startswith("/") else None
    what = "~/.maestro/direct-edit (the direct-edit grant)" if verb == "inject" else "the hook's own files"
    return Target("maestro " + verb, "change", grant, what + " (Claude Code runs its hooks itself)", cwd)


def _settings_target(channel, cwd):
    """Claude Code's user settings.json (classify.is_protected): the file install/uninstall rewrite,
    beside ~/.claude/hooks; path None (fail closed) when HOME cannot name it."""
    from maestro import paths

    try:
        settings = paths.claude_dir().rstrip("/") + "/settings.json"
    except Exception:  # noqa: BLE001 - no usable HOME: the gate cannot name the file, so it fails closed
        settings = None
    if settings is not None and not settings.startswith("/"):
        settings = None
    return Target(channel, "change", settings, "~/.claude/settings.json (the gate's own settings)", cwd)


def unknown_script_args(word, rest):
    """The arguments maestro may see when an unknown word names the script: the word itself first when
    it may split into the script and more (xargs' stdin, unquoted `$S`), so that verb fails closed;
    `"$S"`, find's `{}` and a word ending in a literal name (`$(…)/tools/report.py`) are one script."""
    raw = word.raw
    tail = raw.rpartition("/")[2]
    single = raw == "{}" or (len(raw) > 1 and raw[0] == raw[-1] == '"') or (
        "/" in raw and tail and not any(c in tail for c in "$`\"'*?[{"))
    return list(rest) if word.value is not None or single else [word] + list(rest)


HANDLERS = {"maestro": _maestro}
