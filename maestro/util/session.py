"""Claude Code session ids as maestro accepts them: safe in a file name and in a shell `export` line."""

_SESSION_ID_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def is_valid_session_id(value) -> bool:
    """`[A-Za-z0-9_-]{1,64}`: safe in a file name and in a shell `export` line."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= 64
        and all(ch in _SESSION_ID_CHARS for ch in value)
    )
