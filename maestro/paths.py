"""Where maestro reads and writes, all derived from HOME at call time (tests repoint HOME).

`CLAUDE_CONFIG_DIR` and `CODEX_HOME` are honoured because Claude Code and Codex honour them:
installing hooks anywhere else would leave them unread.
"""

import os


def home() -> str:
    return os.path.expanduser("~")


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
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home(), ".claude")


def codex_dir() -> str:
    return os.environ.get("CODEX_HOME") or os.path.join(home(), ".codex")


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
