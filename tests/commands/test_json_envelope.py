"""Every `--json` verb prints the one envelope (maestro/commands/support.py write_envelope): the same three leading keys."""

import json

import pytest

pytestmark = pytest.mark.timeout(60)

ENVELOPE_KEYS = ["version", "command", "ok"]


@pytest.mark.parametrize("argv, command", [
    (("status", "--json"), "status"),
    (("doctor", "--json"), "doctor"),
    (("mcp-check", "--json"), "mcp-check"),
    (("memory", "add", "memory", "likes tea", "--json"), "memory add"),
    (("memory", "list", "memory", "--json"), "memory list"),
    (("memory", "remove", "memory", "no-such-id", "--json"), "memory remove"),  # a failure keeps the envelope
])
def test_every_json_verb_leads_with_version_command_ok(maestro, repo, home, argv, command):
    result = maestro(*argv)
    envelope = json.loads(result.out)
    assert list(envelope)[:3] == ENVELOPE_KEYS
    assert envelope["version"] == 1 and envelope["command"] == command
    assert isinstance(envelope["ok"], bool) and envelope["ok"] is (result.rc == 0)
