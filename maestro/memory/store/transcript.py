"""Reading the current turn out of a Claude Code transcript (JSONL at the hook's `transcript_path`),
for the Stop hook: the write guard's tool count and write evidence (maestro/memory/store/write_guard.py) and
the handoff's "what was being done" (maestro/memory/project/handoffs.py).

Only the last TRANSCRIPT_TAIL_BYTES are read (a turn longer than that is counted from the window);
a partial or malformed line — Claude Code appends asynchronously — is skipped. The current turn is
everything after the last genuine prompt: a main-chain `type: "user"` line (none of `isSidechain`,
`isMeta`, `isCompactSummary` true) whose content is a string, or a list with a text (or image) block
and no `tool_result`, and not Claude Code's "Stop hook feedback:" continuation (the same turn going
on). Its tool calls are the distinct `tool_use` (and `server_tool_use`) blocks of main-chain
assistant lines. JSON is parsed with maestro.util.fastjson's `_json` reader (no `json` import).
"""

import os

TRANSCRIPT_TAIL_BYTES = 2 * 1024 * 1024
MAX_TURN_ID_CHARS = 128
WRITE_TRACKS = ("daily", "project")
TOOL_BLOCKS = ("tool_use", "server_tool_use")
MCP_ADD_SUFFIX = "__memory_add"  # the `memory mcp` tool, as Claude Code names it: mcp__<server>__memory_add
CONTINUATION = "Stop hook feedback:"  # Claude Code's text when another Stop hook made the turn go on
NOT_PROMPT_FLAGS = ("isSidechain", "isMeta", "isCompactSummary")


def _is_prompt(record: dict) -> bool:
    if record.get("type") != "user" or any(record.get(flag) is True for flag in NOT_PROMPT_FLAGS):
        return False
    message = record.get("message")
    if not isinstance(message, dict):
        return False
    content = message.get("content")
    if isinstance(content, str):
        return not content.startswith(CONTINUATION)
    if not isinstance(content, list):
        return False
    blocks = [block for block in content if isinstance(block, dict)]
    kinds = {block.get("type") for block in blocks}
    if "tool_result" in kinds or not kinds & {"text", "image"}:
        return False
    first = next((b.get("text") for b in blocks if b.get("type") == "text"), "")
    return not (isinstance(first, str) and first.startswith(CONTINUATION))


def _mcp_writes(record: dict, pending: dict) -> None:
    """Note `memory mcp` adds to daily/project among a main-chain assistant line's tool calls
    (`pending`: tool id -> True). They run in the MCP server, which Claude Code starts without
    MAESTRO_SESSION_ID, so the store cannot mark them: the transcript does."""
    if record.get("type") != "assistant" or record.get("isSidechain") is True:
        return
    message = record.get("message")
    for block in message.get("content") or () if isinstance(message, dict) else ():
        if (isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("name"), str)
                and block["name"].endswith(MCP_ADD_SUFFIX) and isinstance(block.get("input"), dict)
                and block["input"].get("track") in WRITE_TRACKS and isinstance(block.get("id"), str)):
            pending[block["id"]] = True


def _result_wrote(record: dict, pending: dict) -> bool:
    """Did a tool_result in this user line answer a pending memory_add with a real write (not an
    error, not a duplicate)?"""
    message = record.get("message") if record.get("type") == "user" else None
    for block in message.get("content") or () if isinstance(message, dict) else ():
        if not (isinstance(block, dict) and block.get("type") == "tool_result"
                and pending.get(block.get("tool_use_id")) and block.get("is_error") is not True):
            continue
        content = block.get("content")
        text = content if isinstance(content, str) else " ".join(
            part.get("text", "") for part in content or () if isinstance(part, dict)
            and isinstance(part.get("text"), str)) if isinstance(content, list) else ""
        if text.startswith("added "):
            return True
    return False


def _tool_ids(record: dict, ids: set) -> int:
    """Adds the distinct ids of a main-chain assistant line's tool calls; returns id-less calls."""
    if record.get("type") != "assistant" or record.get("isSidechain") is True:
        return 0
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    anonymous = 0
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") in TOOL_BLOCKS:
            tool_id = block.get("id")
            if isinstance(tool_id, str) and tool_id:
                ids.add(tool_id)
            else:
                anonymous += 1
    return anonymous


def _records_backwards(transcript_path, tail: int):
    """The transcript's last `tail` bytes as parsed JSON objects, newest first; None when the
    transcript is missing or unreadable. Partial and malformed lines are skipped (Claude Code
    writes the file asynchronously)."""
    if not isinstance(transcript_path, str) or not transcript_path or "\0" in transcript_path:
        return None
    path = os.path.expanduser(transcript_path)
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            start = max(size - tail, 0)
            handle.seek(start)
            data = handle.read(tail)
    except (OSError, ValueError):
        return None
    lines = data.split(b"\n")
    if start > 0 and lines:
        lines = lines[1:]  # the window began inside a line
    from maestro.util.fastjson import PayloadError, parse

    def records():
        for line in reversed(lines):
            if not line.strip():
                continue
            try:
                record = parse(line.decode("utf-8"))
            except (PayloadError, UnicodeDecodeError):
                continue  # a partial last line or a torn one: skipped
            if isinstance(record, dict):
                yield record

    return records()


def read_turn(transcript_path, tail: int = TRANSCRIPT_TAIL_BYTES):
    """(turn id or None, tool calls, wrote) of the transcript's current turn — `wrote`: a `memory
    mcp` add to daily/project answered "added" — or None when the transcript is missing or unreadable."""
    records = _records_backwards(transcript_path, tail)
    if records is None:
        return None
    ids, anonymous, turn_id, results, calls = set(), 0, None, [], {}
    for record in records:
        if _is_prompt(record):
            uuid = record.get("uuid")
            turn_id = uuid if isinstance(uuid, str) and 0 < len(uuid) <= MAX_TURN_ID_CHARS else None
            break
        anonymous += _tool_ids(record, ids)
        _mcp_writes(record, calls)
        if record.get("type") == "user":
            results.append(record)
    wrote = bool(calls) and any(_result_wrote(record, calls) for record in results)
    return turn_id, len(ids) + anonymous, wrote


def last_prompt(transcript_path, tail: int = TRANSCRIPT_TAIL_BYTES):
    """The text of the current turn's prompt (what the session was doing), or None."""
    for record in _records_backwards(transcript_path, tail) or ():
        if _is_prompt(record):
            content = record["message"]["content"]
            if isinstance(content, str):
                return content
            return "\n".join(block.get("text", "") for block in content
                             if isinstance(block, dict) and block.get("type") == "text"
                             and isinstance(block.get("text"), str))
    return None
