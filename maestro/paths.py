"""Where maestro reads and writes, all derived from HOME at call time (tests repoint HOME).

`CLAUDE_CONFIG_DIR` and `CODEX_HOME` are honoured because Claude Code and Codex honour them:
installing hooks anywhere else would leave them unread.
"""

import os


def home() -> str:
    return os.path.expanduser("~")


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
