"""`memory mcp`: the stdio MCP server, spoken to over real pipes (newline-delimited JSON-RPC 2.0).
Key-track writes are queued for approval, never written; tool failures are isError results;
protocol errors keep the server running; EOF ends it with exit 0."""

import json
import queue
import subprocess
import threading
import time

import pytest
from testing.memory import command, key_file, process_env

from maestro import __version__

pytestmark = pytest.mark.timeout(60)
WAIT = 20  # seconds a reply may take (a cold pyz start included)


class Server:
    def __init__(self, cwd):
        self.proc = subprocess.Popen(command("memory", "mcp"), env=process_env(), cwd=str(cwd),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send_raw(self, data: bytes):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message):
        self.send_raw(json.dumps(message).encode() + b"\n")

    def read(self, timeout=WAIT):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("no reply within the timeout") from None
        assert line is not None, "the server closed stdout"
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        return json.loads(line)

    def request(self, method, params=None):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        reply = self.read()
        assert reply["id"] == self.next_id and reply["jsonrpc"] == "2.0", reply
        return reply

    def call(self, tool, **arguments):
        reply = self.request("tools/call", {"name": tool, "arguments": arguments})
        result = reply["result"]
        [content] = result["content"]
        assert content["type"] == "text"
        return content["text"], result["isError"]

    def initialize(self, version="2025-06-18"):
        reply = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                            "clientInfo": {"name": "pytest", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply["result"]

    def close(self, timeout=WAIT):
        """Close stdin (EOF) and wait; the exit code."""
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def server(project):
    srv = Server(project)
    yield srv
    srv.close()
    srv.proc.stdout.close()
    srv.proc.stderr.close()


@pytest.fixture
def ready(server):
    server.initialize()
    return server


def queued(mem_root):
    path = mem_root / "SUGGESTIONS.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# --- the handshake ------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18"])
def test_initialize_echoes_a_supported_protocol_version(server, version):
    result = server.initialize(version)
    assert result["protocolVersion"] == version
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"] == {"name": "maestro-memory", "version": __version__}


def test_initialize_with_an_unknown_version_offers_the_latest(server):
    assert server.initialize("1999-01-01")["protocolVersion"] == "2025-06-18"


def test_ping_and_a_notification_gets_no_reply(ready):
    ready.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}})
    ready.send({"jsonrpc": "2.0", "method": "no/such/notification"})
    assert ready.request("ping")["result"] == {}  # the next line on stdout is the ping's reply


def test_requests_before_initialize_are_answered(server):
    assert server.request("ping")["result"] == {}
    assert len(server.request("tools/list")["result"]["tools"]) == 5


def test_tools_list_gives_closed_schemas_with_required_fields(ready):
    tools = {t["name"]: t for t in ready.request("tools/list")["result"]["tools"]}
    assert set(tools) == {"memory_add", "memory_list", "memory_search", "memory_suggest", "memory_todo"}
    for tool in tools.values():
        schema = tool["inputSchema"]
        assert tool["description"] and schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
    assert tools["memory_add"]["inputSchema"]["required"] == ["track", "content"]
    assert "key" in tools["memory_add"]["inputSchema"]["properties"]["track"]["enum"]
    assert tools["memory_todo"]["inputSchema"]["properties"]["action"]["enum"] == [
        "add", "list", "start", "done", "drop", "reopen"]


# --- the tools ----------------------------------------------------------------------------------


def test_memory_add_to_daily_writes_the_file(ready, mem_root):
    text, is_error = ready.call("memory_add", track="daily", content="fixed the flaky test", date="2024-05-01")
    assert not is_error and text.startswith("added daily: ") and "\n" not in text
    data = (mem_root / "daily" / "2024-05-01.md").read_bytes()
    assert b"fixed the flaky test" in data and data.endswith(b"\n")
    again, is_error = ready.call("memory_add", track="daily", content="fixed the flaky test", date="2024-05-01")
    assert not is_error and again.startswith("duplicate daily")


def test_memory_add_to_key_is_queued_not_written(ready, mem_root, project):
    text, is_error = ready.call("memory_add", track="key", content="use pnpm, not npm", branches=["main"],
                                summary="package manager")
    assert not is_error
    assert text.startswith("queued 1 for key") and "approv" in text and "\n" not in text
    assert not key_file(mem_root, project).exists()
    [item] = queued(mem_root)
    assert item["target"] == "key" and item["n"] == 1 and item["branches"] == ["main"]
    assert item["content"].startswith("use pnpm, not npm") and "package manager" in item["content"]


def test_memory_list_shows_the_entries(ready):
    ready.call("memory_add", track="user", content="prefers short answers")
    ready.call("memory_add", track="user", content="works in Berlin")
    text, is_error = ready.call("memory_list", track="user")
    assert not is_error
    assert "prefers short answers" in text and "works in Berlin" in text and "\n§\n" in text
    newest, _ = ready.call("memory_list", track="user", limit=1)
    assert "works in Berlin" in newest and "prefers short answers" not in newest and "1 older" in newest
    empty, is_error = ready.call("memory_list", track="reference")
    assert not is_error and empty.startswith("no entries in reference")


def test_memory_suggest_queues_with_hits(ready, mem_root):
    text, is_error = ready.call("memory_suggest", content="Always run the linter", reason="seen twice")
    assert not is_error and text.startswith("queued 1 for key")
    text, _ = ready.call("memory_suggest", content="always  run the LINTER", reason="seen twice")
    assert text.startswith("already queued as 1") and "hits 2" in text
    text, _ = ready.call("memory_suggest", content="likes tea", track="user")
    assert text.startswith("queued 2 for user")
    assert [(i["n"], i["target"], i["hits"]) for i in queued(mem_root)] == [(1, "key", 2), (2, "user", 1)]
    assert not (mem_root / "USER.md").exists()


def test_memory_todo_add_list_done(ready, mem_root):
    text, is_error = ready.call("memory_todo", action="add", text="call the plumber", quadrant="q1")
    assert not is_error and text.startswith("added todo ")
    todo_id = text.split()[2]
    assert todo_id in (mem_root / "TODOS-work.md").read_text()
    listing, _ = ready.call("memory_todo", action="list")
    assert todo_id in listing and "call the plumber" in listing
    done, is_error = ready.call("memory_todo", action="done", id=todo_id)
    assert not is_error and done.startswith(f"done {todo_id} [done]")
    assert "[status: done]" in (mem_root / "TODOS-work.md").read_text()
    missing, is_error = ready.call("memory_todo", action="start", id="deadbeef")
    assert is_error and "no todo with id deadbeef" in missing
    needs_id, is_error = ready.call("memory_todo", action="drop")
    assert is_error and "needs id" in needs_id


def test_a_secret_is_filtered_and_a_pure_secret_refused(ready, mem_root):
    text, is_error = ready.call("memory_add", track="user", content="deploy with password=hunter2 on fridays")
    assert not is_error and "hunter2" not in text
    assert b"hunter2" not in (mem_root / "USER.md").read_bytes()
    text, is_error = ready.call("memory_add", track="user", content="sk-abcdefgh12345678")
    assert is_error and "sensitive" in text and "sk-abcdefgh" not in text
    text, is_error = ready.call("memory_suggest", content="sk-abcdefgh12345678")
    assert is_error and "sensitive" in text and not queued(mem_root)
    text, is_error = ready.call("memory_suggest", content="CI pushes with ghp_abcdefghijklmnopqrstuvwxyz0123456789")
    assert not is_error and "ghp_" not in text and "[Filtered:" in text
    assert b"ghp_" not in (mem_root / "SUGGESTIONS.jsonl").read_bytes()


@pytest.mark.parametrize("tool, arguments, message", [
    ("memory_add", {"track": "daily"}, "needs content"),
    ("memory_add", {"track": "nowhere", "content": "x"}, "must be one of"),
    ("memory_add", {"track": "daily", "content": 5}, "must be a string"),
    ("memory_add", {"track": "daily", "content": "x", "colour": "red"}, "unknown argument"),
    ("memory_add", {"track": "daily", "content": "x", "date": "../../etc"}, "does not match"),
    ("memory_add", {"track": "daily", "content": "x", "date": "2024-01-01\n"}, "does not match"),
    ("memory_list", {"track": "user", "limit": "5"}, "must be an integer"),
    ("memory_list", {"track": "user", "limit": 0}, "between 1 and 500"),
    ("memory_todo", {}, "needs action"),
    ("memory_todo", {"action": "add", "text": ["a"]}, "must be a string"),
])
def test_arguments_the_schema_rejects_are_invalid_params(ready, mem_root, tool, arguments, message):
    """Issue 10 §3 (MCP): these were isError results; MCP makes invalid arguments a -32602 error."""
    reply = ready.request("tools/call", {"name": tool, "arguments": arguments})
    assert "result" not in reply and reply["error"]["code"] == -32602, reply
    assert message in reply["error"]["message"] and "\n" not in reply["error"]["message"]
    assert not mem_root.exists() or not list(mem_root.rglob("*.md"))
    assert ready.request("ping")["result"] == {}


@pytest.mark.parametrize("arguments, message", [
    ({"track": "user", "content": "x", "branches": ["main"]}, "key track only"),
    ({"track": "daily", "content": "x", "date": "2024-02-30"}, "no such day"),
    ({"track": "daily", "content": "sk-abcdefgh12345678"}, "sensitive"),
])
def test_a_failure_found_by_running_the_tool_stays_an_error_result(ready, arguments, message):
    reply = ready.request("tools/call", {"name": "memory_add", "arguments": arguments})
    result = reply["result"]
    assert result["isError"] is True
    [content] = result["content"]
    assert message in content["text"] and "\n" not in content["text"]
    assert ready.request("ping")["result"] == {}


# --- protocol errors ----------------------------------------------------------------------------


def test_an_unknown_tool_is_invalid_params(ready):
    reply = ready.request("tools/call", {"name": "memory_nuke", "arguments": {}})
    assert reply["error"]["code"] == -32602 and "memory_nuke" in reply["error"]["message"]


def test_an_unknown_method_is_method_not_found(ready):
    assert ready.request("resources/list")["error"]["code"] == -32601


def test_params_that_are_not_an_object_are_invalid_params(ready):
    assert ready.request("tools/call", [1, 2])["error"]["code"] == -32602
    assert ready.request("tools/call", {"name": "memory_list", "arguments": "track=user"})["error"]["code"] == -32602


def test_a_parse_error_is_answered_and_the_next_request_still_is(ready):
    ready.send_raw(b"{not json\n")
    reply = ready.read()
    assert reply["id"] is None and reply["error"]["code"] == -32700
    ready.send_raw(b"\xff\xfe\n")
    assert ready.read()["error"]["code"] == -32700
    assert ready.request("ping")["result"] == {}


def test_invalid_requests(ready):
    ready.send({"id": 5, "method": "ping"})  # no jsonrpc
    reply = ready.read()
    assert reply["id"] == 5 and reply["error"]["code"] == -32600
    ready.send({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"})
    reply = ready.read()
    assert reply["id"] is None and reply["error"]["code"] == -32600
    ready.send_raw(b"42\n")
    assert ready.read()["error"]["code"] == -32600


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
def test_a_batch_is_answered_with_an_array_of_its_requests_replies_before_2025_06_18(server, version):
    ready = server
    ready.initialize(version)
    ready.send([{"jsonrpc": "2.0", "id": "a", "method": "ping"},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": "b", "method": "nope"}])
    replies = ready.read()
    assert [r["id"] for r in replies] == ["a", "b"]
    assert replies[0]["result"] == {} and replies[1]["error"]["code"] == -32601
    ready.send_raw(b"[]\n")
    assert ready.read()["error"]["code"] == -32600


def test_a_batch_is_refused_with_one_invalid_request_under_2025_06_18(server, mem_root):
    """Issue 10 §3 (MCP): 2025-06-18 removed batching; an unknown version negotiates it too."""
    server.initialize("1999-01-01")
    server.send([{"jsonrpc": "2.0", "id": "a", "method": "ping"},
                 {"jsonrpc": "2.0", "id": "b", "method": "tools/call",
                  "params": {"name": "memory_add", "arguments": {"track": "daily", "content": "batched"}}}])
    reply = server.read()
    assert isinstance(reply, dict) and reply["id"] is None and reply["error"]["code"] == -32600, reply
    assert "2025-06-18" in reply["error"]["message"]
    assert not (mem_root / "daily").exists()  # nothing in the refused batch ran
    assert server.request("ping")["result"] == {}  # the next line is the ping's reply, not a batch's


def test_an_overlong_line_is_refused_and_the_server_keeps_running(ready):
    big = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * (1024 * 1024 + 10) + b'"}}\n'
    ready.send_raw(big)
    reply = ready.read()
    assert reply["id"] is None and reply["error"]["code"] == -32600
    assert ready.request("ping")["result"] == {}


def test_eof_exits_0_promptly_and_stdout_holds_only_protocol(server):
    server.initialize()
    server.call("memory_add", track="daily", content="one entry")
    started = time.monotonic()
    assert server.close() == 0
    assert time.monotonic() - started < 10
    assert server.lines.get(timeout=WAIT) is None  # nothing after the replies
    assert b"Traceback" not in server.proc.stderr.read()


def test_a_bug_in_a_tool_is_an_error_result_and_a_crash_note(monkeypatch, home):
    from maestro.commands.memory import mcp
    from maestro.commands.memory import mcp_tools

    def boom(args):
        raise RuntimeError("kaboom")

    monkeypatch.setitem(mcp_tools.HANDLERS, "memory_list", boom)
    reply = mcp.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                        "params": {"name": "memory_list", "arguments": {"track": "user"}}})
    result = reply["result"]
    assert result["isError"] is True and "internal error: RuntimeError: kaboom" in result["content"][0]["text"]
    log = (home / ".maestro" / "logs" / "crashes.log").read_text()
    assert "verb=memory-mcp" in log and "RuntimeError: kaboom" in log


def test_help_and_stray_arguments(maestro):
    result = maestro("memory", "mcp", "--help")
    assert result.rc == 0 and "claude mcp add" in result.out
    result = maestro("memory", "mcp", "--bogus")
    assert result.rc == 3 and "unrecognized arguments" in result.err and "Traceback" not in result.err
    assert "mcp" in maestro("memory", "--help").out
