"""Which MCP servers background Codex jobs inherit, read from the config they read.

Lists every `[mcp_servers.<name>]` table of ~/.codex/config.toml: its transport (command + args,
or url), declared env keys with values masked (`KEY=****`), variables passed through from the
shell, and whether it is enabled; then the top-level `web_search` setting (maestro turns Codex's
built-in search off on purpose; MCP servers are unaffected by it). Secrets never print: env and
header values, query-string values, URL passwords and values of secret-looking arguments are masked.
Exit 0 when at least one enabled server is configured, 3 otherwise (none, no config, bad TOML).
`--json` prints one envelope: {"version": 1, "command": "mcp-check", "ok", "config", "error",
"servers": [...], "web_search"}.
"""

import shlex
import sys
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from maestro import paths
from maestro.commands.support import parser, write_envelope
from maestro.errors import Exit
from maestro.util.text import printable

MASK = "****"
_SECRET_WORDS = ("key", "token", "secret", "passw", "auth", "credential", "bearer", "cookie", "session")


def _shown(value) -> str:
    return printable(str(value))


def _secretish(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_WORDS)


def mask_args(args) -> list:
    """`--api-key=X`, `TOKEN=X` and the argument after `--token` become `****`."""
    masked, hide_next = [], False
    for arg in args:
        arg = str(arg)
        if hide_next:
            masked.append(MASK)
            hide_next = False
            continue
        name, sep, _ = arg.partition("=")
        if sep and _secretish(name):
            masked.append(f"{name}={MASK}")
            continue
        if arg.startswith("-") and _secretish(arg):
            hide_next = True
        masked.append(arg)
    return masked


def mask_url(url: str) -> str:
    try:
        parts = urlsplit(url)
        userinfo, at, hostport = parts.netloc.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        # user:password keeps the user; a bare user part is often a token itself (https://<token>@host)
        netloc = (f"{user}:{MASK}@{hostport}" if colon else f"{MASK}@{hostport}") if at else parts.netloc
        query = urlencode([(key, MASK) for key, _ in parse_qsl(parts.query, keep_blank_values=True)], safe="*")
        return urlunsplit((parts.scheme, netloc, parts.path, query, ""))
    except ValueError:
        return "(unparsable url)"


def _names(value) -> list:
    if isinstance(value, dict):
        return [str(key) for key in value]
    if isinstance(value, list):
        return [str(item) for item in value]
    return []


def describe(name: str, table) -> dict:
    server = {"name": name, "enabled": False, "transport": None, "command": None, "args": [], "url": None,
              "env": {}, "env_vars": [], "bearer_token_env_var": None, "http_headers": [], "problem": None}
    if not isinstance(table, dict):
        server["problem"] = "not a table"
        return server
    server["enabled"] = table.get("enabled", True) is not False
    command, url = table.get("command"), table.get("url")
    if isinstance(command, str) and command:
        server["transport"], server["command"] = "stdio", command
        args = table.get("args", [])
        server["args"] = mask_args(args if isinstance(args, list) else [])
    elif isinstance(url, str) and url:
        server["transport"], server["url"] = "http", mask_url(url)
    else:
        server["problem"] = "no command or url"
    server["env"] = {key: MASK for key in _names(table.get("env"))}
    server["env_vars"] = _names(table.get("env_vars"))
    token_var = table.get("bearer_token_env_var")
    server["bearer_token_env_var"] = token_var if isinstance(token_var, str) else None
    server["http_headers"] = _names(table.get("http_headers")) + _names(table.get("env_http_headers"))
    return server


def inspect(path: str) -> dict:
    report = {"version": 1, "command": "mcp-check", "ok": False, "config": path, "error": None, "servers": [],
              "web_search": None}
    import tomllib

    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        report["error"] = "no config.toml — background Codex jobs get no MCP servers"
        return report
    except OSError as exc:
        report["error"] = f"cannot read {path}: {exc.strerror or exc}"
        return report
    try:
        data = tomllib.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        report["error"] = f"{path} is not UTF-8 text"
        return report
    except tomllib.TOMLDecodeError as exc:
        report["error"] = f"{path} is not valid TOML ({exc})"
        return report
    servers = data.get("mcp_servers", {})
    if isinstance(servers, dict):
        report["servers"] = [describe(str(name), table) for name, table in servers.items()]
    web_search = data.get("web_search")
    if web_search is not None and not isinstance(web_search, (str, bool, int, float)):
        web_search = "(not a top-level value)"
    report["web_search"] = web_search
    report["ok"] = any(s["enabled"] and not s["problem"] for s in report["servers"])
    return report


def _quoted(arg: str) -> str:
    return arg if arg == MASK or arg.endswith("=" + MASK) else shlex.quote(arg)


def _render_value(value) -> str:
    if value is None:
        return "(Codex default)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return _shown(value)


def render(report: dict) -> str:
    lines = [f"=== MCP servers in {report['config']} (inherited by every Maestro Codex job) ==="]
    for s in report["servers"]:
        state = "" if s["enabled"] else " (disabled — not inherited)"
        if s["problem"]:
            lines.append(f"  • {_shown(s['name'])}: invalid — {s['problem']}")
            continue
        target = " ".join(_quoted(a) for a in [s["command"], *s["args"]]) if s["transport"] == "stdio" else s["url"]
        lines.append(f"  • {_shown(s['name'])} ({s['transport']}){state}: {_shown(target)}")
        if s["env"]:
            lines.append("      env: " + ", ".join(f"{_shown(k)}={MASK}" for k in s["env"]))
        if s["env_vars"]:
            lines.append("      env from the shell: " + ", ".join(_shown(k) for k in s["env_vars"]))
        if s["bearer_token_env_var"]:
            lines.append(f"      bearer token from ${_shown(s['bearer_token_env_var'])}")
        if s["http_headers"]:
            lines.append("      headers: " + ", ".join(f"{_shown(k)}={MASK}" for k in s["http_headers"]))
    if not report["servers"]:
        lines += ["  (none found)", "", "MCP_CHECK: no [mcp_servers.*] tables. Add e.g.:", "  [mcp_servers.tavily]",
                  '  command = "npx"', '  args = ["-y", "tavily-mcp@latest"]', '  env = { TAVILY_API_KEY = "..." }']
    elif not report["ok"]:
        lines += ["", "MCP_CHECK: no enabled, well-formed MCP server — background Codex jobs get none."]
    lines += [
        "",
        (f"=== built-in web_search: {_render_value(report['web_search'])} — Maestro disables this on purpose; "
         "MCP servers are unaffected ==="),
        "",
        "Note: env keys listed above come from the config's env tables. Variables a server expects from the",
        "SHELL must be exported in the shell that launches Claude Code — background jobs inherit that environment.",
    ]
    return "\n".join(lines) + "\n"


def main(argv) -> int:
    p = parser("mcp-check", __doc__)
    p.add_argument("--json", action="store_true", help="print one JSON envelope instead of text")
    args = p.parse_args(argv)
    report = inspect(paths.codex_config())
    if args.json:
        write_envelope("mcp-check", report["ok"],
                       **{k: v for k, v in report.items() if k not in ("version", "command", "ok")})
    elif report["error"]:
        sys.stderr.write(f"MCP_CHECK: {report['error']}\n")
    else:
        sys.stdout.write(render(report))
    return Exit.OK if report["ok"] else Exit.USAGE
