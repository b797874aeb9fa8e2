"""The MCP `memory_search` tool (issue 11 §4): the verb's arguments and result lines, over the server's
JSON-RPC handler in-process (the stdio transport itself is tested in test_mcp.py)."""

import hashlib
import os

import pytest

from maestro.commands.memory import mcp
from testing.memory import write_track as write

pytestmark = pytest.mark.in_process


@pytest.fixture
def store(mem_root, project):
    write(mem_root / "MEMORY.md", ["[2024-04-01 09:00] [summary:shell] use bash strict mode in scripts"])
    digest = hashlib.sha1(os.path.realpath(project).encode()).hexdigest()[:12]
    write(mem_root / "projects" / digest / "KEY.md",
          ["[id:0000000a] [2024-04-04] [summary:sqlite] decided: the search index lives in sqlite fts5",
           "[id:0000000b] [2024-04-06] [summary:lock] the sqlite writer takes the store flock"])
    return mem_root


def call(arguments):
    return mcp.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "memory_search", "arguments": arguments}})


def text_of(reply):
    result = reply["result"]
    [content] = result["content"]
    return content["text"], result["isError"]


def test_the_tool_gives_the_verbs_lines(store, project):
    from maestro.commands.memory.search import hit_line, run_search

    text, is_error = text_of(call({"query": "sqlite index", "cwd": str(project), "limit": 5}))
    assert not is_error
    expected = [hit_line(hit) for hit in run_search("sqlite index", cwd=str(project), limit=5)]
    assert text.splitlines() == expected and len(expected) == 2
    assert "0000000a" in expected[0]


def test_tracks_since_and_archived_are_the_verbs_options(store, project):
    text, _ = text_of(call({"query": "sqlite bash", "cwd": str(project), "tracks": ["global"]}))
    assert text.splitlines()[0].split()[1] == "memory" and len(text.splitlines()) == 1
    text, _ = text_of(call({"query": "sqlite", "cwd": str(project), "since": "2024-04-05", "archived": True}))
    assert "0000000b" in text and "0000000a" not in text


def test_no_hit_is_a_plain_result_not_an_error(store, project):
    text, is_error = text_of(call({"query": "kubernetes", "cwd": str(project)}))
    assert (text, is_error) == ("no entry matches 'kubernetes'", False)


@pytest.mark.parametrize("arguments, words", [
    ({}, "needs query"),
    ({"query": "x", "limit": 0}, "between 1 and 100"),
    ({"query": "x", "tracks": ["secrets"]}, "must be one of"),
    ({"query": "x", "since": "yesterday"}, "does not match"),
    ({"query": "x", "rank": "bm25"}, "unknown argument"),
])
def test_arguments_the_schema_rejects_are_invalid_params(store, arguments, words):
    reply = call(arguments)
    assert reply["error"]["code"] == mcp.INVALID_PARAMS and words in reply["error"]["message"]


def test_a_date_that_names_no_day_is_a_tool_error(store, project):
    text, is_error = text_of(call({"query": "sqlite", "cwd": str(project), "since": "2024-02-30"}))
    assert is_error and "invalid date" in text and "\n" not in text


def test_the_tool_is_listed_with_its_schema():
    tools = {tool["name"]: tool for tool in mcp.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
             ["result"]["tools"]}
    schema = tools["memory_search"]["inputSchema"]
    assert schema["required"] == ["query"] and schema["additionalProperties"] is False
    assert set(schema["properties"]) == {"query", "tracks", "limit", "cwd", "branch", "since", "archived"}
