"""serve the memory store to Claude Code as MCP tools (stdio, JSON-RPC 2.0)

Register it with Claude Code:
  claude mcp add --scope user maestro-memory -- "$(command -v maestro)" memory mcp
(the shell puts the launcher's absolute path in: Claude Code may start the server with another PATH)

Tools: memory_add, memory_list, memory_search, memory_suggest, memory_todo (each with a JSON input schema).
A key-track entry is never written by this server: memory_add to key queues it, like
`memory suggest`, for `maestro memory queue approve N`.

Protocol: one JSON-RPC 2.0 message a line on stdin, one reply a line on stdout (nothing else is
ever written there; diagnostics go to stderr). Protocol versions 2024-11-05, 2025-03-26 and
2025-06-18: the client's is echoed when supported, else the latest is offered. Requests before
`initialize` are answered all the same (the only state is the negotiated version). A batch (a
JSON array) is refused with one -32600 error (id null) once 2025-06-18 is negotiated (that
revision removed batching); otherwise it is answered as JSON-RPC 2.0 says: one array of the
replies to its requests, none when it holds only notifications, -32600 when it is empty. A line
over 1 MiB is answered with -32600 (id null) and skipped; a line that is not JSON with -32700 (id
null). An unknown tool and arguments its input schema rejects (a wrong type, an unknown or a
missing required argument) are -32602 errors; a tool's execution failure (a refused write, a date
that names no day) is a result with isError true and a one-line message. EOF on stdin ends the
server with exit 0.
"""

import json
import sys

from maestro.errors import Exit, MaestroError
from maestro.util.text import bounded, squeeze

PROTOCOL_VERSIONS = ("2025-06-18", "2025-03-26", "2024-11-05")  # latest first
NO_BATCH_VERSIONS = ("2025-06-18",)  # revisions that removed JSON-RPC batching
MAX_LINE_BYTES = 1024 * 1024
MAX_BATCH = 100
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
INSTRUCTIONS = ("maestro's durable memory. memory_add writes to a track, except key (decisions): key entries "
                "are queued for a human to approve, never written directly. memory_list reads a track; "
                "memory_search finds entries by relevance across every track; memory_suggest queues an entry; memory_todo manages todos.")


class Session:
    """What one connection has negotiated: the protocol version (None before `initialize`)."""

    def __init__(self):
        self.version = None


class ProtocolError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code, self.message = code, message


def _error(id_, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}


def _one_line(text: str, limit: int = 500) -> str:
    """A message as the client sees it: sanitized (sanitize.filter_text), one line, bounded."""
    from maestro.memory.store.sanitize import filter_text

    return bounded(squeeze(filter_text(str(text))), limit)


# --- methods ------------------------------------------------------------------------------------


def _initialize(params: dict, session: Session) -> dict:
    from maestro import __version__

    wanted = params.get("protocolVersion")
    if wanted is not None and not isinstance(wanted, str):
        raise ProtocolError(INVALID_PARAMS, "protocolVersion must be a string")
    version = wanted if wanted in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
    session.version = version
    return {"protocolVersion": version, "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "maestro-memory", "version": __version__}, "instructions": INSTRUCTIONS}


def _tools_list(params: dict, session: Session) -> dict:
    from maestro.commands.memory.mcp_tools import TOOLS

    return {"tools": TOOLS}


def _tool_result(text: str, is_error: bool) -> dict:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def _tools_call(params: dict, session: Session) -> dict:
    from maestro.commands.memory import mcp_tools

    name, arguments = params.get("name"), params.get("arguments")
    if not isinstance(name, str):
        raise ProtocolError(INVALID_PARAMS, "tools/call needs a tool name (params.name)")
    if name not in mcp_tools.HANDLERS:
        raise ProtocolError(INVALID_PARAMS, f"unknown tool: {_one_line(name, 80)}")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ProtocolError(INVALID_PARAMS, "tools/call arguments must be an object")
    try:
        checked = mcp_tools.check_arguments(name, arguments)
    except mcp_tools.InvalidArguments as exc:
        raise ProtocolError(INVALID_PARAMS, _one_line(f"Invalid params: {name}: {exc.message}")) from None
    try:
        text = mcp_tools.HANDLERS[name](checked)
        return _tool_result(text, False)
    except MaestroError as exc:
        return _tool_result(_one_line(f"{name}: {exc.message}"), True)
    except Exception as exc:  # noqa: BLE001 - a tool's bug is a failed call and a crash note, never a traceback
        return _tool_result(_internal(exc, name), True)


def _internal(exc: BaseException, where: str) -> str:
    from maestro import crash

    note = crash.record("memory-mcp", exc)
    sys.stderr.write(f"maestro memory mcp: internal error in {where}: {type(exc).__name__}\n")
    return _one_line(f"{where}: internal error: {type(exc).__name__}: {exc}" + (f"; details in {note}" if note else ""))


METHODS = {"initialize": _initialize, "ping": lambda params, session: {}, "tools/list": _tools_list,
           "tools/call": _tools_call}


# --- messages -----------------------------------------------------------------------------------


def _valid_id(value) -> bool:
    return isinstance(value, str) or isinstance(value, int) and not isinstance(value, bool)


def handle(message, session: Session = None):
    """The reply to one decoded message (a dict), or None when it gets none."""
    session = session or Session()
    if not isinstance(message, dict):
        return _error(None, INVALID_REQUEST, "Invalid Request: expected a JSON object")
    has_id = "id" in message
    id_ = message.get("id")
    if "method" not in message and ("result" in message or "error" in message):
        return None  # a response to a request we never send: nothing to answer
    if has_id and not _valid_id(id_):
        return _error(None, INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
    method = message.get("method")
    if message.get("jsonrpc") != "2.0" or not isinstance(method, str):
        return _error(id_, INVALID_REQUEST, "Invalid Request: needs jsonrpc \"2.0\" and a method")
    if not has_id:
        return None  # a notification (notifications/initialized, notifications/cancelled, …): never answered
    params = message.get("params", {})
    if params is None:
        params = {}
    try:
        if method not in METHODS:
            raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {_one_line(method, 80)}")
        if not isinstance(params, dict):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: params must be an object")
        return {"jsonrpc": "2.0", "id": id_, "result": METHODS[method](params, session)}
    except ProtocolError as exc:
        return _error(id_, exc.code, exc.message)
    except Exception as exc:  # noqa: BLE001 - never a traceback on stdout or stderr
        return _error(id_, INTERNAL_ERROR, _internal(exc, method))


def handle_line(raw: bytes, session: Session = None):
    """The reply (a dict or a list) to one line, or None."""
    session = session or Session()
    try:
        message = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return _error(None, PARSE_ERROR, "Parse error: not a JSON UTF-8 message")
    if isinstance(message, list):
        if session.version in NO_BATCH_VERSIONS:
            return _error(None, INVALID_REQUEST, f"Invalid Request: protocol {session.version} has no batches; "
                                                 "send one message a line")
        if not message:
            return _error(None, INVALID_REQUEST, "Invalid Request: empty batch")
        if len(message) > MAX_BATCH:
            return _error(None, INVALID_REQUEST, f"Invalid Request: a batch of more than {MAX_BATCH} messages")
        replies = [reply for reply in (handle(item, session) for item in message) if reply is not None]
        return replies or None
    return handle(message, session)


def encode(reply) -> bytes:
    """One line: no raw newline (json escapes it), and U+2028/U+2029 escaped for line splitters."""
    try:
        text = json.dumps(reply, ensure_ascii=False, separators=(",", ":"))
        data = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a \ud800 escape: plain ASCII escapes survive it
        data = json.dumps(reply, separators=(",", ":")).encode("ascii")
    return data + b"\n"


def _read_line(stream):
    """(the line without its newline, or None at EOF; whether it was longer than MAX_LINE_BYTES)."""
    line = stream.readline(MAX_LINE_BYTES + 1)
    if not line:
        return None, False
    if len(line) <= MAX_LINE_BYTES or line.endswith(b"\n"):
        return line.rstrip(b"\r\n"), len(line.rstrip(b"\r\n")) > MAX_LINE_BYTES
    while line and not line.endswith(b"\n"):  # skip the rest of the overlong line
        line = stream.readline(64 * 1024)
    return b"", True


def serve(stdin, stdout) -> int:
    session = Session()
    while True:
        line, too_long = _read_line(stdin)
        if line is None:
            return Exit.OK
        if too_long:
            reply = _error(None, INVALID_REQUEST, f"Invalid Request: a message longer than {MAX_LINE_BYTES} bytes")
        elif not line.strip():
            continue
        else:
            reply = handle_line(line, session)
        if reply is not None:
            stdout.write(encode(reply))
            stdout.flush()


def main(argv) -> int:
    from maestro.commands.memory.output import parser

    args = list(argv)
    if args:
        p = parser("mcp", __doc__)
        p.parse_args(args)  # --help prints the usage; anything else is a usage error
    stdin = getattr(sys.stdin, "buffer", None)
    stdout = getattr(sys.stdout, "buffer", None)
    if stdin is None or stdout is None:
        sys.stderr.write("maestro memory mcp: needs binary stdin and stdout\n")
        return Exit.USAGE
    saved = sys.stdout
    sys.stdout = sys.stderr  # a stray print in the store code must not corrupt the protocol stream
    try:
        return serve(stdin, stdout)
    except KeyboardInterrupt:
        return Exit.OK
    except BrokenPipeError:
        return Exit.OK  # the client went away
    finally:
        sys.stdout = saved
