"""Where maestro reads and writes, all derived from HOME at call time (tests repoint HOME).

`CLAUDE_CONFIG_DIR` and `CODEX_HOME` are honoured because Claude Code and Codex honour them:
installing hooks anywhere else would leave them unread.
"""

import os


def home() -> str:
    return os.path.expanduser("~")


def home_relative(path: str) -> str:
    """`~/…` for a path under HOME, for a person to read (never expanded again), else the path."""
    home_dir = home().rstrip("/")
    if home_dir and (path == home_dir or path.startswith(home_dir + "/")):
        return "~" + path[len(home_dir):]
    return path


def grant_home():
    """HOME when it may hold direct-edit grants, else None (then there are no grants at all).

    It must be set, absolute, an existing directory, and not `/` (not even through `..` or a
    symlink). `expanduser` would answer `/` for an empty HOME and fall back to the password
    database for an unset one: an authorization must not land in `/.maestro`, nor in a directory
    guessed for an environment that named none."""
    raw = os.environ.get("HOME")
    if not raw or not raw.startswith("/") or "\0" in raw or os.path.normpath(raw) == "/":
        return None
    try:
        if not os.path.isdir(raw) or os.path.realpath(raw) == "/":
            return None
    except (OSError, ValueError):
        return None
    return home()


def maestro_dir() -> str:
    return os.path.join(home(), ".maestro")


def memory_dir() -> str:
    """The memory store's root. `MAESTRO_MEMORY_DIR` may point at an existing dsh-maestro-memory
    store (`~/.dsh/memories`): the file format is the same."""
    override = os.environ.get("MAESTRO_MEMORY_DIR")
    if override:
        return os.path.abspath(os.path.expanduser(override))
    return os.path.join(maestro_dir(), "memory")


def claude_dir() -> str:
    """`CLAUDE_CONFIG_DIR` made absolute (a relative one would name a different directory from
    every working directory, and install would register hook commands naming a relative archive
    that the gate cannot find from the user's projects), else ~/.claude."""
    override = os.environ.get("CLAUDE_CONFIG_DIR")
    return os.path.abspath(override) if override else os.path.join(home(), ".claude")


def codex_dir() -> str:
    """`CODEX_HOME` made absolute, for the same reason as `claude_dir`, else ~/.codex."""
    override = os.environ.get("CODEX_HOME")
    return os.path.abspath(override) if override else os.path.join(home(), ".codex")


def direct_edit_dir() -> str:
    return os.path.join(maestro_dir(), "direct-edit")


def direct_edit_flag(session_id: str) -> str:
    return os.path.join(direct_edit_dir(), f"maestro-direct-{session_id}.flag")


def ask_on_start_flag() -> str:
    return os.path.join(maestro_dir(), "ask-on-start")


def install_manifest() -> str:
    return os.path.join(maestro_dir(), "install-manifest.json")


def logs_dir() -> str:
    return os.path.join(maestro_dir(), "logs")


def codex_config() -> str:
    return os.path.join(codex_dir(), "config.toml")


def installed_pyz() -> str:
    return os.path.join(claude_dir(), "hooks", "maestro.pyz")


def prompts_dir() -> str:
    """Where a prompt too large for one argv element waits for the companion to read it."""
    return os.path.join(maestro_dir(), "prompts")


def private_prompts_dir() -> str:
    """`prompts_dir()`, made fit to hold a prompt, and its path. It and `~/.maestro` are created
    0700; one of them that is ours but open to group or others is closed to 0700; a symlink, a
    non-directory or one owned by another user is refused with a MaestroError (exit 3). Whoever
    could swap or edit a prompt file between our write and the companion's read could rewrite a
    Codex write job, so a shared temp directory will not do (issue 17)."""
    from maestro.errors import MaestroError
    from maestro.util.atomic import NotPrivate, ensure_private_dir

    for directory in (maestro_dir(), prompts_dir()):
        try:
            ensure_private_dir(directory)
        except NotPrivate as exc:
            raise MaestroError(f"{directory} {exc.problem}; maestro writes prompt files only into a private "
                               f"directory of yours — move it away and maestro recreates it (mode 0700)") from None
        except OSError as exc:
            raise MaestroError(f"cannot create the private prompt directory {directory}: "
                               f"{exc.strerror or exc}") from None
    return prompts_dir()
