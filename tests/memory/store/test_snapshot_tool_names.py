"""The snapshot's fixed texts name MCP tools only as the memory MCP server lists them (issue 16 item 7:
the note said "maestro_todo", the tool is memory_todo). Derived from the server's tool table."""

import re

from maestro.commands.memory.mcp_tools import TOOLS
from maestro.memory.store import snapshot
import pytest

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)

# A tool-like name: the server's prefix, or maestro's own name, then an underscore word.
TOOL_LIKE = re.compile(r"\b(?:memory|maestro)_[a-z_]+\b")


def _fixed_texts():
    return {name: value for name, value in vars(snapshot).items() if name.isupper() and isinstance(value, str)}


def test_every_tool_the_snapshot_names_is_one_the_mcp_server_lists():
    listed = {tool["name"] for tool in TOOLS}
    named = {name: set(TOOL_LIKE.findall(text)) for name, text in _fixed_texts().items()}
    assert {"memory_todo", "memory_suggest"} <= named["NOTE"]
    assert {name: tools - listed for name, tools in named.items() if tools - listed} == {}


def test_the_rendered_snapshot_names_only_listed_tools(mem_root):
    text = snapshot.render(str(mem_root)).text
    assert "memory_todo" in text
    assert set(TOOL_LIKE.findall(text)) <= {tool["name"] for tool in TOOLS}
