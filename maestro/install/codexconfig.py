"""The one edit the installer makes to `~/.codex/config.toml`: `web_search = "disabled"`.

Codex's built-in web search can hang a background job on "Searching:"; MCP servers are not
affected. The key is added only when the file has no true top-level `web_search` (tomllib
decides, so keys in tables or inside multi-line strings do not count), and only to a file that
parses: an unparseable config is reported, never edited.
"""

import tomllib

NOTE = (
    "# maestro: disables Codex's built-in web search so background jobs cannot hang on \"Searching:\";\n"
    "# MCP servers ([mcp_servers.*]) are unaffected and stay available.\n"
    'web_search = "disabled"\n\n'
)
BOM = b"\xef\xbb\xbf"


def with_web_search_disabled(raw: bytes):
    """(new bytes or None when no change is needed, message)."""
    try:
        data = tomllib.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return None, f"~/.codex/config.toml is not valid TOML ({exc}); left it unchanged"
    if "web_search" in data:
        return None, "~/.codex/config.toml already sets web_search (no change)"
    note = NOTE.encode()
    if b"\r\n" in raw and b"\n" not in raw.replace(b"\r\n", b""):
        note = note.replace(b"\n", b"\r\n")
    if raw.startswith(BOM):
        return BOM + note + raw[len(BOM):], "added web_search = \"disabled\" to ~/.codex/config.toml"
    return note + raw, "added web_search = \"disabled\" to ~/.codex/config.toml"
