"""mcp-check: which MCP servers background Codex jobs inherit; secrets never printed."""

import json

import pytest

CONFIG = """\
model = "gpt-5.6-sol"
web_search = "disabled"

[tools]
web_search = true  # not the top-level key

[mcp_servers.tavily]
command = "npx"
args = ["-y", "tavily-mcp@latest", "--api-key", "sk-live-1", "--token=tok-2"]
env = { TAVILY_API_KEY = "tvly-secret", DEBUG = "1" }

[mcp_servers.docs]
url = "https://user:pw-3@mcp.example.com/mcp?key=qs-4&x=1"
bearer_token_env_var = "DOCS_TOKEN"
http_headers = { "X-Api-Key" = "hdr-5" }

[mcp_servers."with space"]
command = "/usr/local/bin/srv"
env_vars = ["HOME_TOKEN"]
enabled = false

[mcp_servers.broken]
cwd = "/tmp"
"""
SECRETS = ("sk-live-1", "tok-2", "tvly-secret", "pw-3", "qs-4", "hdr-5")


@pytest.fixture
def config(home):
    (home / ".codex").mkdir()
    path = home / ".codex" / "config.toml"
    path.write_text(CONFIG)
    return path


def test_lists_servers_with_transport_and_masked_secrets(maestro, config):
    result = maestro("mcp-check")
    assert result.rc == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == f"=== MCP servers in {config} (inherited by every Maestro Codex job) ==="
    assert "  • tavily (stdio): npx -y tavily-mcp@latest --api-key **** --token=****" in lines
    assert "      env: TAVILY_API_KEY=****, DEBUG=****" in lines
    assert "  • docs (http): https://user:****@mcp.example.com/mcp?key=****&x=****" in lines
    assert "      bearer token from $DOCS_TOKEN" in lines and "      headers: X-Api-Key=****" in lines
    assert "  • with space (stdio) (disabled — not inherited): /usr/local/bin/srv" in lines
    assert "      env from the shell: HOME_TOKEN" in lines
    assert "  • broken: invalid — no command or url" in lines
    assert any(line.startswith("=== built-in web_search: disabled — ") for line in lines)
    for secret in SECRETS:
        assert secret not in result.out


def test_json_envelope(maestro, config):
    result = maestro("mcp-check", "--json")
    assert result.rc == 0
    envelope = json.loads(result.out)
    assert list(envelope)[:3] == ["version", "command", "ok"]
    assert (envelope["version"], envelope["command"], envelope["ok"], envelope["error"]) == (1, "mcp-check", True, None)
    assert envelope["web_search"] == "disabled"
    servers = {s["name"]: s for s in envelope["servers"]}
    assert list(servers) == ["tavily", "docs", "with space", "broken"]
    assert servers["tavily"]["env"] == {"TAVILY_API_KEY": "****", "DEBUG": "****"}
    assert servers["tavily"]["args"] == ["-y", "tavily-mcp@latest", "--api-key", "****", "--token=****"]
    assert servers["docs"]["transport"] == "http" and servers["docs"]["bearer_token_env_var"] == "DOCS_TOKEN"
    assert servers["with space"]["enabled"] is False
    assert servers["broken"]["problem"] == "no command or url"
    for secret in SECRETS:
        assert secret not in result.out


def test_no_servers_exits_3_with_an_example(maestro, home):
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text('model = "m"\n[tools]\nweb_search = false\n')
    result = maestro("mcp-check")
    assert result.rc == 3
    assert "  (none found)" in result.out and "[mcp_servers.tavily]" in result.out
    assert "=== built-in web_search: (Codex default) — " in result.out  # [tools].web_search is not top-level


def test_only_disabled_servers_exit_3(maestro, home):
    (home / ".codex").mkdir()
    config = 'web_search = false\n[mcp_servers.a]\ncommand = "x"\nenabled = false\n'
    (home / ".codex" / "config.toml").write_text(config)
    result = maestro("mcp-check")
    assert result.rc == 3
    assert "no enabled, well-formed MCP server" in result.out and "web_search: false" in result.out


def test_missing_config_is_one_line_exit_3(maestro):
    result = maestro("mcp-check")
    assert (result.rc, result.out) == (3, "")
    assert result.err == "MCP_CHECK: no config.toml — background Codex jobs get no MCP servers\n"
    envelope = json.loads(maestro("mcp-check", "--json").out)
    assert envelope["ok"] is False and envelope["servers"] == [] and "no config.toml" in envelope["error"]


@pytest.mark.parametrize("content, fragment", [(b"[mcp_servers.a\n", "is not valid TOML"),
                                               (b"a = '\xff'\n", "is not UTF-8")])
def test_invalid_config_is_one_line_exit_3(maestro, home, content, fragment):
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_bytes(content)
    result = maestro("mcp-check")
    assert result.rc == 3 and result.out == ""
    assert result.err.startswith("MCP_CHECK: ") and fragment in result.err and result.err.count("\n") == 1


def test_codex_home_is_honoured(maestro, tmp_path):
    other = tmp_path / "codex-home"
    other.mkdir()
    (other / "config.toml").write_text('[mcp_servers.x]\nurl = "https://x.example"\n')
    result = maestro("mcp-check", env={"CODEX_HOME": str(other)})
    assert result.rc == 0 and "  • x (http): https://x.example" in result.out


def test_bom_config_is_read(maestro, home):
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_bytes(b'\xef\xbb\xbf[mcp_servers.x]\ncommand = "srv"\n')
    assert maestro("mcp-check").rc == 0


def test_mask_helpers():
    from maestro.commands.mcp_check import mask_args, mask_url

    assert mask_args(["--password", "p", "--verbose", "AUTH_HEADER=v", "plain=ok"]) == [
        "--password", "****", "--verbose", "AUTH_HEADER=****", "plain=ok"]
    assert mask_url("http://h:8080/p?a=1#frag") == "http://h:8080/p?a=****"
    assert mask_url("https://u:p@[::1]:99/x") == "https://u:****@[::1]:99/x"
    assert mask_url("https://ghp_token@h/") == "https://****@h/"  # a bare user part is often a token
