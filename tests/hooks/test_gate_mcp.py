"""`maestro gate` on MCP tool payloads, end to end (issue 14 part 2).

The recorded payload shapes (server, tool and argument names) are those of
tests/hooks/test_mcp_gate.py, which cites each server's source. Paths sit under a nonexistent
repository, so they are classified lexically; /tmp is a scratch root.
"""

import json

import pytest

SID = "s1"
REPO = "/nonexistent-maestro/repo"
FAIL_CLOSED_PREFIX = "ORCHESTRATOR GATE: could not read the hook payload"
GUIDANCE_LINE = "ORCHESTRATOR GATE (source code): you plan and review here; Codex implements.\n"


def run_gate(maestro, tool_name, tool_input, **extra):
    body = {"session_id": SID, "cwd": REPO, "hook_event_name": "PreToolUse", "tool_name": tool_name,
            "tool_input": tool_input}
    body.update(extra)
    return maestro("gate", stdin=json.dumps(body))


def assert_allowed(result):
    assert (result.rc, result.out, result.err) == (0, "", ""), result


def assert_blocked(result, phrase):
    assert result.rc == 2, result
    assert result.out == ""
    assert phrase in result.err, result.err
    assert GUIDANCE_LINE in result.err, result.err


def grant(home):
    from maestro import direct_edit as flags

    flags.set_flag(SID)


# ------------------------------------------------------------------------------------- blocked

BLOCKED = [
    ("mcp__filesystem__write_file", {"path": "src/app.py", "content": "x"},
     "mcp__filesystem__write_file would write src/app.py"),
    ("mcp__filesystem__edit_file", {"path": f"{REPO}/src/app.py", "edits": [{"oldText": "a", "newText": "b"}]},
     f"mcp__filesystem__edit_file would change {REPO}/src/app.py"),
    ("mcp__filesystem__move_file", {"source": "notes.md", "destination": "src/app.py"},
     "mcp__filesystem__move_file would move onto src/app.py"),
    ("mcp__filesystem__move_file", {"source": "src/app.py", "destination": "/tmp/app.py"},
     "mcp__filesystem__move_file would delete src/app.py"),
    ("mcp__serena__replace_symbol_body", {"name_path": "App/run", "relative_path": "src/app.py", "body": "pass"},
     "mcp__serena__replace_symbol_body would change src/app.py"),
    ("mcp__serena__create_text_file", {"relative_path": "src/new.py", "content": "x"},
     "mcp__serena__create_text_file would write src/new.py"),
    ("mcp__serena__rename_symbol", {"name_path": "a", "relative_path": "README.md", "new_name": "b"},
     "mcp__serena__rename_symbol would change every file that refers to the symbol"),
    ("mcp__desktop-commander__edit_block", {"file_path": f"{REPO}/src/app.py", "old_string": "a", "new_string": "b"},
     f"mcp__desktop-commander__edit_block would change {REPO}/src/app.py"),
    ("mcp__github__push_files", {"owner": "o", "repo": "r", "branch": "main", "message": "m",
                                 "files": [{"path": "README.md", "content": "x"}, {"path": "src/app.py", "content": "y"}]},
     "mcp__github__push_files would write src/app.py"),
    ("mcp__jetbrains__create_new_file_with_text", {"pathInProject": "/tmp/x.py", "text": "x", "projectName": "p"},
     "mcp__jetbrains__create_new_file_with_text would write /tmp/x.py"),
    ("mcp__jetbrains__replace_selected_text", {"text": "x"},
     "mcp__jetbrains__replace_selected_text would change a file it does not name"),
]


@pytest.mark.parametrize("tool_name, tool_input, phrase", BLOCKED, ids=[f"{c[0]}-{i}" for i, c in enumerate(BLOCKED)])
def test_an_mcp_write_to_source_is_blocked_and_named(maestro, tool_name, tool_input, phrase):
    assert_blocked(run_gate(maestro, tool_name, tool_input), phrase)


@pytest.mark.parametrize("value", [None, 3, "", ["src/a.py", 7], {"nested": True}])
def test_an_unresolvable_path_argument_fails_closed_and_says_so(maestro, value):
    result = run_gate(maestro, "mcp__filesystem__write_file", {"path": value, "content": "x"})
    assert result.rc == 2, result
    assert "cannot be resolved" in result.err or FAIL_CLOSED_PREFIX in result.err, result.err


def test_a_write_to_claude_code_settings_through_mcp_is_blocked(maestro, home):
    settings = home / ".claude" / "settings.json"
    result = run_gate(maestro, "mcp__filesystem__write_file", {"path": str(settings), "content": "{}"})
    assert_blocked(result, f"mcp__filesystem__write_file would write {settings}")


# ------------------------------------------------------------------------------------- allowed

ALLOWED = [
    ("mcp__filesystem__write_file", {"path": "README.md", "content": "# x"}),
    ("mcp__filesystem__write_file", {"path": "/tmp/x.py", "content": "x"}),
    ("mcp__filesystem__edit_file", {"path": "src/app.py", "edits": [], "dryRun": True}),
    ("mcp__filesystem__create_directory", {"path": "src/pkg"}),
    ("mcp__filesystem__move_file", {"source": "/tmp/a.py", "destination": "docs/a.md"}),
    ("mcp__github__create_or_update_file", {"owner": "o", "repo": "r", "path": "docs/guide.md", "content": "x",
                                            "message": "m", "branch": "main"}),
    ("mcp__github__create_issue", {"owner": "o", "repo": "r", "title": "src/app.py crashes"}),
    ("mcp__serena__write_memory", {"memory_file_name": "notes", "content": "x"}),
    ("mcp__maestro-memory__memory_add", {"track": "daily", "content": "changed src/app.py", "cwd": REPO}),
    ("mcp__maestro-memory__memory_todo", {"action": "add", "text": "edit src/app.py"}),
]

READS = [
    ("mcp__filesystem__read_text_file", {"path": "src/app.py"}),
    ("mcp__filesystem__read_multiple_files", {"paths": ["src/app.py", "src/b.py"]}),
    ("mcp__filesystem__list_directory", {"path": "src"}),
    ("mcp__filesystem__search_files", {"path": ".", "pattern": "app"}),
    ("mcp__serena__find_symbol", {"name_path": "App", "relative_path": "src/app.py", "include_body": True}),
    ("mcp__serena__get_symbols_overview", {"relative_path": "src/app.py"}),
    ("mcp__serena__search_for_pattern", {"substring_pattern": "TODO", "relative_path": "src"}),
    ("mcp__desktop-commander__read_file", {"path": f"{REPO}/src/app.py", "offset": 0, "length": 50}),
    ("mcp__github__get_file_contents", {"owner": "o", "repo": "r", "path": "src/app.py"}),
    ("mcp__jetbrains__get_file_text_by_path", {"pathInProject": "src/app.py", "projectName": "p"}),
]


@pytest.mark.parametrize("tool_name, tool_input", ALLOWED + READS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(ALLOWED + READS)])
def test_free_writes_records_and_reads_pass(maestro, tool_name, tool_input):
    assert_allowed(run_gate(maestro, tool_name, tool_input))


# ------------------------------------------------------------------------------ grant, subagent


def test_the_edit_it_yourself_grant_opens_mcp_writes_like_edits(maestro, home):
    grant(home)
    assert_allowed(run_gate(maestro, "mcp__filesystem__write_file", {"path": "src/app.py", "content": "x"}))


def test_a_subagent_never_inherits_the_grant_for_mcp_writes(maestro, home):
    grant(home)
    result = run_gate(maestro, "mcp__filesystem__write_file", {"path": "src/app.py", "content": "x"},
                      agent_id="agent-1", agent_type="general-purpose")
    assert_blocked(result, "mcp__filesystem__write_file would write src/app.py")


# --------------------------------------------------------------------------------- malformed


@pytest.mark.parametrize("tool_input", [None, [], "src/app.py", 3])
def test_a_tool_input_that_is_not_an_object_fails_closed(maestro, tool_input):
    result = run_gate(maestro, "mcp__filesystem__write_file", tool_input)
    assert result.rc == 2, result


# ------------------------------------------------------------------------- shell tools over MCP


def test_a_shell_command_over_mcp_that_writes_source_is_blocked(maestro):
    result = run_gate(maestro, "mcp__serena__execute_shell_command", {"command": "sed -i s/a/b/ src/app.py"})
    assert result.rc == 2, result


def test_a_shell_command_over_mcp_that_writes_nothing_passes(maestro):
    """Needs the gate to judge `mcp_gate.mcp_script()` with the Bash analysis; without that
    routing the gate fails closed on every MCP shell command."""
    assert_allowed(run_gate(maestro, "mcp__desktop-commander__start_process", {"command": "ls -la", "timeout_ms": 500}))


# ---------------------------------------------------------------------------------- git servers


def test_git_checkout_of_a_source_path_over_mcp_is_blocked(maestro):
    # cyanheads/git-mcp-server git-checkout.tool.ts {path (the repository), target, paths}
    result = run_gate(maestro, "mcp__git__git_checkout", {"path": REPO, "target": "HEAD", "paths": ["src/app.py"]})
    assert_blocked(result, "mcp__git__git_checkout would change src/app.py")


def test_git_reset_hard_over_mcp_is_blocked(maestro):
    result = run_gate(maestro, "mcp__git__git_reset", {"path": REPO, "mode": "hard"})
    assert_blocked(result, f"mcp__git__git_reset would change {REPO}")


@pytest.mark.parametrize("tool, arguments", [
    ("git_checkout", {"path": REPO, "target": "feature"}),
    ("git_add", {"repo_path": REPO, "files": ["src/app.py"]}),
    ("git_commit", {"path": REPO, "message": "m"}),
    ("git_status", {"path": REPO}),
])
def test_git_reads_commits_and_branch_switches_over_mcp_pass(maestro, tool, arguments):
    assert_allowed(run_gate(maestro, "mcp__git__" + tool, arguments))
