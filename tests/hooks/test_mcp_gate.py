"""`mcp_writes(tool_name, tool_input)` — what an MCP tool call would write (issue 14 part 2).

The payloads below are RECORDED shapes of real servers: tool names and argument names exactly as
their source or schema declares them (repository + file cited next to each group). Each server's
read tools are listed too: they must pass.
"""

import random
import subprocess
import sys
from pathlib import Path

import pytest

from maestro.hooks.mcp_gate import mcp_script, mcp_writes, split_tool_name, tool_words
from maestro.hooks.targets import Script, Target

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)

ROOT = Path(__file__).resolve().parents[2]


def t(tool_name, action, path, word=None, tree=False):
    return Target(tool_name, action, path, path if word is None else word, None, tree)


# ----------------------------------------------------------------------------- recorded payloads

# modelcontextprotocol/servers — src/filesystem/server.ts (zod schemas + registerTool names)
FS = "mcp__filesystem__"
FILESYSTEM_READS = [
    (FS + "read_file", {"path": "src/app.py"}),  # deprecated alias of read_text_file
    (FS + "read_text_file", {"path": "src/app.py", "head": 20}),
    (FS + "read_media_file", {"path": "docs/logo.png"}),
    (FS + "read_multiple_files", {"paths": ["src/app.py", "src/util.py"]}),
    (FS + "list_directory", {"path": "src"}),
    (FS + "list_directory_with_sizes", {"path": "src", "sortBy": "size"}),
    (FS + "directory_tree", {"path": ".", "excludePatterns": ["node_modules"]}),
    (FS + "search_files", {"path": ".", "pattern": "app", "excludePatterns": []}),
    (FS + "get_file_info", {"path": "src/app.py"}),
    (FS + "list_allowed_directories", {}),
]

# oraios/serena — src/serena/tools/file_tools.py, symbol_tools.py, memory_tools.py, cmd_tools.py
# (tool name = the Tool class name in snake_case without "Tool"; arguments = apply()'s parameters)
SE = "mcp__serena__"
SERENA_READS = [
    (SE + "read_file", {"relative_path": "src/app.py", "start_line": 0, "end_line": 40}),
    (SE + "list_dir", {"relative_path": ".", "recursive": True, "skip_ignored_files": False}),
    (SE + "find_file", {"file_mask": "*.py", "relative_path": "src"}),
    (SE + "search_for_pattern", {"substring_pattern": "def main", "relative_path": "src"}),
    (SE + "get_symbols_overview", {"relative_path": "src/app.py"}),
    (SE + "find_symbol", {"name_path": "App/run", "depth": 1, "relative_path": "src/app.py",
                          "include_body": True}),
    (SE + "find_referencing_symbols", {"name_path": "App/run", "relative_path": "src/app.py"}),
    (SE + "read_memory", {"memory_file_name": "suggested_commands"}),
    (SE + "list_memories", {}),
    (SE + "restart_language_server", {}),
]
SERENA_MEMORY_WRITES = [  # serena's own memory store (.serena/memories), not project files
    (SE + "write_memory", {"memory_file_name": "notes", "content": "x"}),
    (SE + "delete_memory", {"memory_file_name": "notes"}),
    (SE + "edit_memory", {"memory_file_name": "notes", "needle": "a", "repl": "b", "mode": "literal"}),
]

# wonderwhy-er/DesktopCommanderMCP — src/tools/schemas.ts
DC = "mcp__desktop-commander__"
DESKTOP_COMMANDER_READS = [
    (DC + "read_file", {"path": "/repo/src/app.py", "offset": 0, "length": 100}),
    (DC + "read_multiple_files", {"paths": ["/repo/src/app.py"]}),
    (DC + "list_directory", {"path": "/repo", "depth": 2}),
    (DC + "get_file_info", {"path": "/repo/src/app.py"}),
    (DC + "start_search", {"path": "/repo", "pattern": "TODO", "searchType": "content"}),
    (DC + "get_config", {}),
    (DC + "list_processes", {}),
]

# github/github-mcp-server — pkg/github/__toolsnaps__/<tool>.snap (remote repository writes)
GH = "mcp__github__"
GITHUB_READS_AND_RECORDS = [
    (GH + "get_file_contents", {"owner": "o", "repo": "r", "path": "src/app.py", "ref": "main"}),
    (GH + "create_issue", {"owner": "o", "repo": "r", "title": "Bug", "body": "src/app.py crashes"}),
    (GH + "add_comment_to_pending_review", {"owner": "o", "repo": "r", "pullNumber": 3, "path": "src/app.py",
                                            "body": "nit", "subjectType": "LINE", "line": 4}),
]

# JetBrains/mcp-server-plugin — src/main/kotlin/org/jetbrains/mcpserverplugin/general/textTools.kt,
# general/fileTools.kt, terminal/Terminal.kt
JB = "mcp__jetbrains__"
JETBRAINS_READS = [
    (JB + "get_file_text_by_path", {"pathInProject": "src/app.py", "projectName": "p"}),
    (JB + "get_open_in_editor_file_text", {}),
    (JB + "get_selected_in_editor_text", {}),
    (JB + "list_files_in_folder", {"pathInProject": "/", "projectName": "p"}),
    (JB + "list_directory_tree_in_folder", {"pathInProject": "src", "maxDepth": 3, "projectName": "p"}),
    (JB + "find_files_by_name_substring", {"nameSubstring": "app", "projectName": "p"}),
    (JB + "open_file_in_editor", {"filePath": "src/app.py", "projectName": "p"}),
    (JB + "get_terminal_text", {}),
]

# maestro itself — maestro/commands/memory/mcp_tools.py (registered as `maestro-memory`)
MM = "mcp__maestro-memory__"
MAESTRO_MEMORY = [
    (MM + "memory_add", {"track": "daily", "content": "edited src/app.py", "cwd": "/repo"}),
    (MM + "memory_list", {"track": "project", "cwd": "/repo", "limit": 5}),
    (MM + "memory_suggest", {"content": "use src/app.py", "track": "key"}),
    (MM + "memory_todo", {"action": "add", "text": "fix src/app.py", "cwd": "/repo"}),
]


@pytest.mark.parametrize(
    "tool_name, tool_input",
    FILESYSTEM_READS + SERENA_READS + SERENA_MEMORY_WRITES + DESKTOP_COMMANDER_READS
    + GITHUB_READS_AND_RECORDS + JETBRAINS_READS + MAESTRO_MEMORY,
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_read_tools_and_record_tools_write_no_file(tool_name, tool_input):
    assert mcp_writes(tool_name, tool_input) == []


WRITES = [
    # modelcontextprotocol/servers src/filesystem/server.ts
    (FS + "write_file", {"path": "src/app.py", "content": "x = 1\n"},
     [t(FS + "write_file", "write", "src/app.py")]),
    (FS + "edit_file", {"path": "/repo/src/app.py", "edits": [{"oldText": "1", "newText": "2"}], "dryRun": False},
     [t(FS + "edit_file", "change", "/repo/src/app.py")]),
    (FS + "move_file", {"source": "src/old.py", "destination": "src/new.py"},
     [t(FS + "move_file", "delete", "src/old.py"), t(FS + "move_file", "move onto", "src/new.py")]),
    # oraios/serena src/serena/tools/file_tools.py
    (SE + "create_text_file", {"relative_path": "src/new.py", "content": "print(1)\n"},
     [t(SE + "create_text_file", "write", "src/new.py")]),
    (SE + "replace_regex", {"relative_path": "src/app.py", "regex": "1", "repl": "2",
                            "allow_multiple_occurrences": False},
     [t(SE + "replace_regex", "change", "src/app.py")]),
    (SE + "delete_lines", {"relative_path": "src/app.py", "start_line": 3, "end_line": 4},
     [t(SE + "delete_lines", "change", "src/app.py")]),
    (SE + "replace_lines", {"relative_path": "src/app.py", "start_line": 3, "end_line": 4, "content": "x\n"},
     [t(SE + "replace_lines", "change", "src/app.py")]),
    (SE + "insert_at_line", {"relative_path": "src/app.py", "line": 3, "content": "x\n"},
     [t(SE + "insert_at_line", "change", "src/app.py")]),
    # newer serena: replace_content {relative_path, needle, repl, mode} (memory_tools.py uses it)
    (SE + "replace_content", {"relative_path": "src/app.py", "needle": "a", "repl": "b", "mode": "literal"},
     [t(SE + "replace_content", "change", "src/app.py")]),
    # oraios/serena src/serena/tools/symbol_tools.py
    (SE + "replace_symbol_body", {"name_path": "App/run", "relative_path": "src/app.py", "body": "def run(): ..."},
     [t(SE + "replace_symbol_body", "change", "src/app.py")]),
    (SE + "insert_after_symbol", {"name_path": "App", "relative_path": "src/app.py", "body": "X = 1"},
     [t(SE + "insert_after_symbol", "change", "src/app.py")]),
    (SE + "insert_before_symbol", {"name_path": "App", "relative_path": "src/app.py", "body": "import os"},
     [t(SE + "insert_before_symbol", "change", "src/app.py")]),
    (SE + "rename_symbol", {"name_path": "App/run", "relative_path": "src/app.py", "new_name": "start"},
     [t(SE + "rename_symbol", "change", "src/app.py"),
      t(SE + "rename_symbol", "change", None, "every file that refers to the symbol")]),
    # wonderwhy-er/DesktopCommanderMCP src/tools/schemas.ts
    (DC + "write_file", {"path": "/repo/src/app.py", "content": "x", "mode": "append"},
     [t(DC + "write_file", "write", "/repo/src/app.py")]),
    (DC + "edit_block", {"file_path": "/repo/src/app.py", "old_string": "1", "new_string": "2",
                         "expected_replacements": 1},
     [t(DC + "edit_block", "change", "/repo/src/app.py")]),
    (DC + "move_file", {"source": "/repo/a.md", "destination": "/repo/src/a.py"},
     [t(DC + "move_file", "delete", "/repo/a.md"), t(DC + "move_file", "move onto", "/repo/src/a.py")]),
    (DC + "write_pdf", {"path": "/repo/doc.pdf", "content": "# x", "outputPath": "/repo/out.pdf"},
     [t(DC + "write_pdf", "write", "/repo/doc.pdf"), t(DC + "write_pdf", "write", "/repo/out.pdf")]),
    # github/github-mcp-server pkg/github/__toolsnaps__/create_or_update_file.snap, push_files.snap,
    # delete_file.snap — a remote repository's files are judged by the same names
    (GH + "create_or_update_file", {"owner": "o", "repo": "r", "path": "src/app.py", "content": "x",
                                    "message": "m", "branch": "main", "sha": "abc"},
     [t(GH + "create_or_update_file", "write", "src/app.py")]),
    (GH + "push_files", {"owner": "o", "repo": "r", "branch": "main", "message": "m",
                         "files": [{"path": "src/app.py", "content": "x"}, {"path": "README.md", "content": "y"}]},
     [t(GH + "push_files", "write", "src/app.py"), t(GH + "push_files", "write", "README.md")]),
    (GH + "delete_file", {"owner": "o", "repo": "r", "path": "src/app.py", "message": "m", "branch": "main"},
     [t(GH + "delete_file", "delete", "src/app.py")]),
    # JetBrains/mcp-server-plugin general/textTools.kt, general/fileTools.kt
    (JB + "replace_specific_text", {"pathInProject": "src/app.py", "oldText": "1", "newText": "2", "projectName": "p"},
     [t(JB + "replace_specific_text", "change", "src/app.py")]),
    (JB + "replace_file_text_by_path", {"pathInProject": "src/app.py", "text": "x", "projectName": "p"},
     [t(JB + "replace_file_text_by_path", "change", "src/app.py")]),
    (JB + "create_new_file_with_text", {"pathInProject": "src/new.py", "text": "x", "projectName": "p"},
     [t(JB + "create_new_file_with_text", "write", "src/new.py")]),
    # the IDE's open editor: a file the call does not name
    (JB + "replace_selected_text", {"text": "x"},
     [t(JB + "replace_selected_text", "change", None, "a file it does not name")]),
    (JB + "replace_current_file_text", {"text": "x"},
     [t(JB + "replace_current_file_text", "change", None, "a file it does not name")]),
]


@pytest.mark.parametrize("tool_name, tool_input, expected", WRITES, ids=[case[0] for case in WRITES])
def test_recorded_writers_name_every_file_they_write(tool_name, tool_input, expected):
    assert mcp_writes(tool_name, tool_input) == expected


# ------------------------------------------------------------------------------------- the rules


def test_a_project_path_with_a_leading_slash_is_inside_the_project_for_jetbrains():
    # JetBrains resolveRel: "/src/app.py" is <project>/src/app.py — "/tmp/x.py" must not pass as scratch
    assert mcp_writes(JB + "create_new_file_with_text", {"pathInProject": "/tmp/x.py", "text": ""}) == [
        t(JB + "create_new_file_with_text", "write", "tmp/x.py", "/tmp/x.py")
    ]


def test_a_symbol_rename_by_the_ide_is_always_unresolved():
    assert mcp_writes(JB + "rename_refactoring", {"pathInProject": "README.md", "symbolName": "a", "newName": "b"}) == [
        t(JB + "rename_refactoring", "change", "README.md"),
        t(JB + "rename_refactoring", "change", None, "every file that refers to the symbol"),
    ]


def test_a_copy_writes_its_destination_and_only_reads_its_source():
    assert mcp_writes("mcp__fs__copy_file", {"source": "src/a.py", "destination": "/tmp/a.py"}) == [
        t("mcp__fs__copy_file", "write", "/tmp/a.py")
    ]


def test_a_move_with_from_and_to_deletes_from_and_moves_onto_to():
    assert mcp_writes("mcp__fs__move", {"from": "a.md", "to": "src/a.py"}) == [
        t("mcp__fs__move", "delete", "a.md"), t("mcp__fs__move", "move onto", "src/a.py")
    ]


def test_from_and_to_are_not_paths_outside_a_move():
    assert mcp_writes("mcp__cal__create_event", {"from": "2024-01-01", "to": "2024-01-02"}) == []


def test_a_rename_in_place_deletes_the_old_name_and_moves_onto_the_new_one():
    assert mcp_writes("mcp__fs__rename_file", {"path": "docs/a.md", "new_name": "a.py"}) == [
        t("mcp__fs__rename_file", "delete", "docs/a.md"), t("mcp__fs__rename_file", "move onto", "docs/a.py", "a.py")
    ]


def test_a_rename_without_a_usable_new_name_is_unresolved():
    assert mcp_writes("mcp__fs__rename_file", {"path": "docs/a.md"}) == [
        t("mcp__fs__rename_file", "delete", "docs/a.md"), t("mcp__fs__rename_file", "move onto", None, "new_name=<null>")
    ]


def test_deleting_a_directory_is_judged_as_a_tree():
    assert mcp_writes("mcp__fs__delete_directory", {"path": "src"}) == [
        t("mcp__fs__delete_directory", "delete", "src", tree=True)
    ]


def test_a_directory_argument_of_a_file_writer_is_judged_as_a_tree():
    assert mcp_writes("mcp__x__write_file", {"directory": "src", "name": "a.py", "content": ""}) == [
        t("mcp__x__write_file", "write", "src", tree=True)
    ]


@pytest.mark.parametrize("tool", ["create_directory", "make_directory", "create_folder", "mkdir", "create_dir"])
def test_creating_a_directory_writes_no_file(tool):
    assert mcp_writes(f"mcp__fs__{tool}", {"path": "src/pkg"}) == []


def test_a_dry_run_preview_writes_nothing_but_only_when_it_is_literally_true():
    tool = FS + "edit_file"
    assert mcp_writes(tool, {"path": "src/a.py", "edits": [], "dryRun": True}) == []
    assert mcp_writes(tool, {"path": "src/a.py", "edits": [], "dryRun": "true"}) == [t(tool, "change", "src/a.py")]
    assert mcp_writes(tool, {"path": "src/a.py", "edits": [], "dryRun": 1}) == [t(tool, "change", "src/a.py")]


@pytest.mark.parametrize(
    "value, word",
    [(None, "path=<null>"), (3, "path=<number>"), (True, "path=<boolean>"), ("", "path=<empty>"),
     ("   ", "path=<empty>"), ("src/\0a.py", "path=<string with NUL>"), ({}, "path=<object>"),
     ({"content": "x"}, "path=<object>")],
)
def test_an_unusable_path_argument_is_unresolved_and_named(value, word):
    assert mcp_writes(FS + "write_file", {"path": value, "content": "x"}) == [t(FS + "write_file", "write", None, word)]


def test_a_list_of_paths_gives_one_target_each_and_names_its_bad_items():
    tool = "mcp__fs__delete_files"
    assert mcp_writes(tool, {"paths": ["README.md", 7, None, "src/a.py"]}) == [
        t(tool, "delete", "README.md"), t(tool, "delete", None, "paths[1]=<number>"),
        t(tool, "delete", None, "paths[2]=<null>"), t(tool, "delete", "src/a.py"),
    ]


def test_an_empty_list_of_paths_writes_nothing():
    assert mcp_writes("mcp__fs__write_files", {"files": []}) == []


@pytest.mark.parametrize(
    "key", ["path", "file_path", "filePath", "relative_path", "relativePath", "pathInProject", "notebook_path",
            "file", "filename", "fileName", "target", "new_path", "destination", "outputPath", "target_file"],
)
def test_every_path_like_argument_name_is_read(key):
    assert mcp_writes("mcp__x__write_file", {key: "src/a.py", "content": ""}) == [
        t("mcp__x__write_file", "write", "src/a.py")
    ]


def test_a_file_uri_is_the_local_path_percent_decoded():
    assert mcp_writes("mcp__lsp__format_document", {"uri": "file:///repo/src/my%20app.py"}) == [
        t("mcp__lsp__format_document", "change", "/repo/src/my app.py", "file:///repo/src/my%20app.py")
    ]


@pytest.mark.parametrize("uri", ["file://otherhost/src/a.py", "untitled:Untitled-1", "http://x/a.py",
                                 "file:///repo/%zz.py", "file:///repo/%ff.py"])
def test_a_uri_that_names_no_local_file_is_unresolved(uri):
    assert mcp_writes("mcp__lsp__format_document", {"uri": uri}) == [
        t("mcp__lsp__format_document", "change", None, uri)
    ]


def test_a_home_relative_path_is_expanded_like_the_server_does(monkeypatch):
    monkeypatch.setenv("HOME", "/home/u")
    assert mcp_writes(FS + "write_file", {"path": "~/.claude/settings.json", "content": "{}"}) == [
        t(FS + "write_file", "write", "/home/u/.claude/settings.json", "~/.claude/settings.json")
    ]
    assert mcp_writes(FS + "write_file", {"path": "~bob/a.py", "content": ""}) == [
        t(FS + "write_file", "write", None, "~bob/a.py")
    ]
    monkeypatch.setenv("HOME", "")
    assert mcp_writes(FS + "write_file", {"path": "~/a.md", "content": ""}) == [
        t(FS + "write_file", "write", None, "~/a.md")
    ]


@pytest.mark.parametrize(
    "tool",
    ["writeFile", "editBlock", "find-and-replace", "files_edit", "apply_edits", "str_replace", "append_to_file",
     "save_file", "update_file", "overwrite_file", "patch_file", "modify_file", "new_file", "add_file",
     "reformat_file", "download_file", "remove_file", "unlink", "create_or_update_file", "WriteFileTool"],
)
def test_a_writer_is_known_by_a_verb_in_its_name_in_any_spelling(tool):
    targets = mcp_writes(f"mcp__x__{tool}", {"path": "src/a.py"})
    assert [target.path for target in targets] == ["src/a.py"]


@pytest.mark.parametrize(
    "tool",
    ["read_file", "get_file", "list_files", "search_candidates_preview", "view", "stat_file",
     "find_files", "open_file_in_editor", "get_saved_file", "readFileContents", "diff_files", "git_diff",
     "add_issue_comment", "set_config_value"],
)
def test_a_tool_without_a_write_verb_passes_even_with_a_path(tool):
    assert mcp_writes(f"mcp__x__{tool}", {"path": "src/a.py", "key": "x", "value": "y"}) == []


def test_a_remote_writer_without_a_path_passes():
    for tool, arguments in [("update_issue", {"owner": "o", "repo": "r", "issue_number": 1, "title": "t"}),
                            ("create_entities", {"entities": [{"name": "a", "entityType": "b"}]}),
                            ("delete_branch", {"owner": "o", "repo": "r", "branch": "x"}),
                            ("format_date", {"date": "2024-01-01", "pattern": "%Y"}),
                            ("create_pull_request", {"owner": "o", "repo": "r", "head": "h", "base": "b"})]:
        assert mcp_writes(f"mcp__remote__{tool}", arguments) == []


def test_a_file_writer_without_a_path_argument_is_unresolved():
    assert mcp_writes("mcp__drive__update_file", {"fileId": "1x", "content": "y"}) == [
        t("mcp__drive__update_file", "change", None, "a file it does not name")
    ]


def test_a_patch_is_judged_by_the_files_its_text_names():
    tool = "mcp__codex__apply_patch"
    envelope = ("*** Begin Patch\n*** Update File: src/app.py\n@@\n-a\n+b\n*** Add File: docs/new.md\n+x\n"
                "*** Delete File: old.py\n*** End Patch\n")
    assert mcp_writes(tool, {"input": envelope}) == [
        t(tool, "change", "src/app.py"), t(tool, "change", "docs/new.md"), t(tool, "change", "old.py")
    ]
    unified = "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-a\n+b\n--- /dev/null\n+++ b/src/n.py\n"
    assert mcp_writes("mcp__git__apply_diff", {"diff": unified}) == [
        t("mcp__git__apply_diff", "change", "README.md"), t("mcp__git__apply_diff", "change", "src/n.py")
    ]
    assert mcp_writes(tool, {"input": "no headers here"}) == [
        t(tool, "change", None, "the files of a patch it does not name")
    ]


def test_a_third_party_memory_tool_with_a_path_is_still_judged():
    assert mcp_writes("mcp__other__memory_save", {"file_path": "src/a.py", "content": "x"}) == [
        t("mcp__other__memory_save", "write", "src/a.py")
    ]


# -------------------------------------------------------------------------- programs it runs


def test_a_shell_tool_fails_closed_and_hands_its_command_to_the_bash_analysis():
    # oraios/serena src/serena/tools/cmd_tools.py: execute_shell_command {command, cwd, capture_stderr}
    tool = SE + "execute_shell_command"
    assert mcp_writes(tool, {"command": "pytest -q", "capture_stderr": True}) == [t(tool, "run", None, "pytest -q")]
    script = mcp_script(tool, {"command": "pytest -q"})
    assert (script.lang, script.code, script.word) == ("sh", "pytest -q", "pytest -q")
    script = mcp_script(tool, {"command": "sed -i s/a/b/ x.py", "cwd": "sub dir's"})
    assert (script.lang, script.code, script.word) == (
        "sh", "cd 'sub dir'\\''s' && sed -i s/a/b/ x.py", "sed -i s/a/b/ x.py")
    assert mcp_script(tool, {"command": "ls", "cwd": 5}) is None


@pytest.mark.parametrize(
    "tool_name, tool_input, program",
    [(DC + "start_process", {"command": "make", "timeout_ms": 1000}, "make"),  # DesktopCommanderMCP schemas.ts
     (JB + "execute_terminal_command", {"command": "ls"}, "ls")],  # JetBrains terminal/Terminal.kt
)
def test_every_recorded_shell_tool_is_a_shell_script(tool_name, tool_input, program):
    script = mcp_script(tool_name, tool_input)
    assert (script.lang, script.code) == ("sh", program)
    assert mcp_writes(tool_name, tool_input) == [t(tool_name, "run", None, program)]


def test_a_code_runner_is_a_script_in_its_language():
    script = mcp_script("mcp__py__run_python", {"code": "open('a.py','w')"})
    assert (script.lang, script.code) == ("python", "open('a.py','w')")
    script = mcp_script("mcp__x__execute_code", {"code": "1", "language": "JavaScript"})
    assert (script.lang, script.code) == ("node", "1")
    assert mcp_script("mcp__x__execute_code", {"code": "1", "language": "cobol"}) is None
    assert mcp_writes("mcp__x__execute_code", {"code": "1", "language": "cobol"}) == [
        t("mcp__x__execute_code", "run", None, "1")
    ]


def test_a_shell_tool_with_a_non_string_command_fails_closed():
    assert mcp_writes(DC + "start_process", {"command": ["rm", "x"]}) == [
        t(DC + "start_process", "run", None, "command=<list>")
    ]
    assert mcp_script(DC + "start_process", {"command": ["rm", "x"]}) is None


def test_read_and_write_tools_run_no_program():
    assert mcp_script(FS + "write_file", {"path": "a", "content": "b"}) is None
    assert mcp_script(SE + "find_symbol", {"name_path": "x"}) is None


# ------------------------------------------------------------------------------- input checking


@pytest.mark.parametrize("tool_input", [None, [], "path", 3, ["path", "src/a.py"]])
def test_a_tool_input_that_is_not_an_object_raises_value_error(tool_input):
    with pytest.raises(ValueError):
        mcp_writes(FS + "write_file", tool_input)
    with pytest.raises(ValueError):
        mcp_script(FS + "write_file", tool_input)


@pytest.mark.parametrize("tool_name", [None, 3, "Write", "mcp_filesystem_write_file", ""])
def test_a_name_that_is_not_an_mcp_tool_raises_value_error(tool_name):
    with pytest.raises(ValueError):
        mcp_writes(tool_name, {"path": "src/a.py"})


def test_tool_names_split_into_server_and_tool():
    assert split_tool_name("mcp__filesystem__write_file") == ("filesystem", "write_file")
    assert split_tool_name("mcp__plugin_x_srv__edit__file") == ("plugin_x_srv", "edit__file")
    assert split_tool_name("mcp__lonely") == ("lonely", "")
    assert mcp_writes("mcp__write_file", {"path": "src/a.py"}) == []  # no tool part: the server's name is not read


def test_tool_names_split_into_words():
    assert tool_words("replace_symbol_body") == ["replace", "symbol", "body"]
    assert tool_words("editBlock") == ["edit", "block"]
    assert tool_words("find-and-replace") == ["find", "and", "replace"]
    assert tool_words("HTMLFileWriter") == ["html", "file", "writer"]
    assert tool_words("files.edit") == ["files", "edit"]
    assert tool_words("write2file") == ["write", "2", "file"]
    assert tool_words("s3PutObject") == ["s", "3", "put", "object"]
    assert tool_words("") == [] and tool_words("__") == []


def test_the_module_imports_neither_re_nor_json():
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import maestro.hooks.mcp_gate; "
            "print(sorted(m for m in ('re', 'json', 'dataclasses', 'typing', 'collections') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(ROOT)], capture_output=True, text=True,
                          timeout=60)
    assert (proc.returncode, proc.stdout.strip()) == (0, "[]"), proc.stderr


# ----------------------------------------------------------------------------------------- fuzz


def _random_value(rng, depth):
    choice = rng.randrange(9 if depth < 6 else 5)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([0, -1, 1.5, True, False, 10 ** 30])
    if choice in (2, 3, 4):
        alphabet = "ab/._~%:\\\0 \n*+-@F" + "é🙂"
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(12))) + rng.choice(
            ["", ".py", ".md", "file://", "/", "~/x"])
    if choice in (5, 6):
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    keys = ["path", "paths", "files", "file", "source", "destination", "uri", "dryRun", "command", "cwd",
            "code", "language", "input", "new_name", "from", "to", "dir", "x", "pathInProject"]
    return {rng.choice(keys): _random_value(rng, depth + 1) for _ in range(rng.randrange(5))}


def test_fuzzed_payloads_answer_with_targets_or_value_error_only():
    rng = random.Random(1414)
    verbs = ["write", "read", "edit", "move", "copy", "rename", "delete", "apply", "patch", "create",
             "execute", "run", "shell", "symbol", "file", "directory", "lines", "memory", "Add", "Set", "X"]
    for _ in range(3000):
        tool = rng.choice(["_", "-", "", "."]).join(rng.choice(verbs) for _ in range(rng.randrange(4)))
        name = rng.choice(["mcp__s__", "mcp__", "mcp____", "x__", "mcp__a__b__"]) + tool
        tool_input = _random_value(rng, 0) if rng.random() < 0.2 else {
            rng.choice(["path", "paths", "files", "source", "destination", "uri", "command", "code", "patch",
                        "input", "new_name", "from", "to", "relative_path", "dryRun", "cwd", 3]): _random_value(rng, 1)
            for _ in range(rng.randrange(6))}
        for function in (mcp_writes, mcp_script):
            try:
                result = function(name, tool_input)
            except ValueError:
                continue
            if function is mcp_writes:
                assert isinstance(result, list) and all(isinstance(item, Target) for item in result)
                for target in result:
                    assert target.path is None or isinstance(target.path, str)
                    assert isinstance(target.word, str) and target.cwd is None
            else:
                assert result is None or isinstance(result, Script)


def test_deeply_nested_and_huge_inputs_stay_bounded():
    nested = "src/a.py"
    for _ in range(10_000):
        nested = [nested]
    targets = mcp_writes(FS + "write_file", {"path": nested})
    assert targets == [t(FS + "write_file", "write", None, "path" + "[0]" * 4 + "=<list>")]
    many = mcp_writes("mcp__fs__delete_files", {"paths": ["a.md"] * 100_000})
    assert len(many) == 501 and many[-1].path is None


def test_a_tool_that_writes_code_is_a_writer_not_a_runner():
    tool = "mcp__x__create_python_file"
    assert mcp_script(tool, {"path": "src/a.py", "code": "print(1)"}) is None
    assert mcp_writes(tool, {"path": "src/a.py", "code": "print(1)"}) == [t(tool, "write", "src/a.py")]


def test_claude_codes_ide_code_execution_fails_closed_and_its_diagnostics_pass():
    # Claude Code's IDE bridge: mcp__ide__executeCode {code} runs in the notebook's kernel (language unknown)
    assert mcp_writes("mcp__ide__executeCode", {"code": "open('a.py','w')"}) == [
        t("mcp__ide__executeCode", "run", None, "open('a.py','w')")
    ]
    assert mcp_script("mcp__ide__executeCode", {"code": "x"}) is None
    assert mcp_writes("mcp__ide__getDiagnostics", {"uri": "file:///repo/src/a.py"}) == []


def test_a_gate_that_judges_scripts_gets_only_the_named_writes():
    tool = DC + "start_process"
    assert mcp_writes(tool, {"command": "ls", "timeout_ms": 5}, scripts_judged=True) == []
    # a program that cannot be handed over still fails closed
    assert mcp_writes(tool, {"command": 5}, scripts_judged=True) == [t(tool, "run", None, "command=<number>")]
    assert mcp_writes("mcp__x__run_code", {"code": "1", "language": "cobol"}, scripts_judged=True) == [
        t("mcp__x__run_code", "run", None, "1")
    ]
    both = "mcp__x__execute_and_write_file"
    assert mcp_writes(both, {"command": "ls", "path": "src/a.py"}, scripts_judged=True) == [
        t(both, "write", "src/a.py")
    ]
    assert mcp_writes(both, {"command": "ls", "path": "src/a.py"}) == [
        t(both, "run", None, "ls"), t(both, "write", "src/a.py")
    ]


def test_a_shell_tool_named_with_a_write_verb_is_still_a_shell_tool():
    tool = "mcp__iterm__run_in_terminal"
    assert mcp_writes(tool, {"command": "echo x > src/a.py"}) == [t(tool, "run", None, "echo x > src/a.py")]
    assert mcp_script(tool, {"command": "echo x > src/a.py"}).code == "echo x > src/a.py"
    # text typed into a terminal goes to whatever runs there (a shell, or a python REPL): unknown
    tool = "mcp__iterm__write_to_terminal"
    assert mcp_writes(tool, {"command": "echo x > src/a.py"}) == [t(tool, "run", None, "echo x > src/a.py")]
    assert mcp_script(tool, {"command": "echo x > src/a.py"}) is None


# ----------------------------------------------------------------------------------- git servers
# cyanheads/git-mcp-server src/mcp-server/tools/definitions/git-checkout.tool.ts {path, target,
# createBranch, force, paths}, git-reset.tool.ts {path, mode, target, paths, confirmed},
# git-clean.tool.ts {path, force, dryRun, directories, ignored}; `path` is the repository.
# modelcontextprotocol/servers src/git: git_add {repo_path, files}, git_checkout {repo_path, branch_name}.
GIT = "mcp__git__"


@pytest.mark.parametrize(
    "tool, arguments",
    [("git_checkout", {"path": "/repo", "target": "feature"}),
     ("git_checkout", {"path": "/repo", "target": "new", "createBranch": True}),
     ("git_checkout", {"repo_path": "/repo", "branch_name": "main"}),
     ("git_reset", {"path": "/repo", "mode": "mixed", "paths": ["src/a.py"]}),
     ("git_reset", {"repo_path": "/repo"}),
     ("git_clean", {"path": "/repo", "force": True, "dryRun": True}),
     ("git_stash", {"path": "/repo", "mode": "list"}),
     ("git_add", {"repo_path": "/repo", "files": ["src/a.py"]}),
     ("git_commit", {"path": "/repo", "message": "m"}),
     ("git_diff", {"path": "/repo", "target": "HEAD"}),
     ("git_status", {"path": "/repo"})],
)
def test_git_tools_that_leave_the_working_tree_alone_pass(tool, arguments):
    assert mcp_writes(GIT + tool, arguments) == []


def test_git_checkout_of_paths_changes_those_files_in_the_repository():
    tool = GIT + "git_checkout"
    assert mcp_writes(tool, {"path": "/repo", "target": "HEAD", "paths": ["src/a.py", "README.md"]}) == [
        t(tool, "change", "/repo/src/a.py", "src/a.py"), t(tool, "change", "/repo/README.md", "README.md")
    ]
    assert mcp_writes(tool, {"path": ".", "target": "HEAD", "paths": ["src/a.py"]}) == [
        t(tool, "change", "./src/a.py", "src/a.py")
    ]
    assert mcp_writes(tool, {"path": None, "target": "HEAD", "paths": ["src/a.py"]}) == [
        t(tool, "change", None, "src/a.py")
    ]


def test_git_reset_hard_clean_and_stash_write_the_whole_tree():
    assert mcp_writes(GIT + "git_reset", {"path": "/repo", "mode": "hard"}) == [
        t(GIT + "git_reset", "change", "/repo", tree=True)]
    assert mcp_writes(GIT + "git_clean", {"path": "/repo", "force": True}) == [
        t(GIT + "git_clean", "delete", "/repo", tree=True)]
    assert mcp_writes(GIT + "git_stash", {"path": "/repo", "mode": "pop"}) == [
        t(GIT + "git_stash", "change", "/repo", tree=True)]
    assert mcp_writes(GIT + "git_stash", {}) == [t(GIT + "git_stash", "change", ".", "the repository", tree=True)]
    assert mcp_writes(GIT + "git_clean", {"path": 3}) == [t(GIT + "git_clean", "delete", None, "path=<number>", tree=True)]


def test_git_apply_changes_the_files_its_patch_names():
    tool = GIT + "git_apply"
    assert mcp_writes(tool, {"path": "/repo", "patch": "--- a/src/x.py\n+++ b/src/x.py\n"}) == [
        t(tool, "change", "/repo/src/x.py", "src/x.py")]
    assert mcp_writes(tool, {"path": "/repo"}) == [t(tool, "change", "/repo", tree=True)]


def test_every_program_argument_is_handed_over_and_a_bad_one_fails_closed():
    script = mcp_script("mcp__x__run_command", {"command": "ls", "script": "rm src/a.py"})
    assert (script.lang, script.code) == ("sh", "ls\nrm src/a.py")
    assert mcp_script("mcp__x__run_command", {"command": ["ls"], "input": "rm src/a.py"}) is None
    assert mcp_script("mcp__x__run_python", {"code": "1", "language": 5}) is None


def test_huge_names_and_patches_stay_linear():
    patch = "".join(f"+++ b/src/f{i}.py\n" for i in range(200_000))
    targets = mcp_writes("mcp__x__apply_patch", {"patch": patch})
    assert len(targets) == 501 and targets[-1].path is None
    assert mcp_writes("mcp__x__" + "readFile" * 100_000, {"path": "src/a.py"}) == []
    uri = "file:///" + "%41" * 300_000
    assert mcp_writes("mcp__x__write_file", {"uri": uri})[0].path == "/" + "A" * 300_000


@pytest.mark.parametrize("tool_name, tool_input", [
    (DC + "interact_with_process", {"pid": 3, "input": "echo x > src/a.py"}),
    (DC + "interact_with_process", {"pid": 3, "input": "import os\n@os.system\n@lambda f: 'x'\nclass X: pass\n"}),
    (DC + "interact_with_process", {"pid": 3, "input": "print(1)"}),
    ("mcp__term__send_input", {"session": 1, "text": "ls"}),
    ("mcp__term__write_stdin", {"data": "ls"}),
])
def test_input_for_a_running_process_always_fails_closed(tool_name, tool_input):
    # the process may be any interpreter's REPL (start_process {command: "python3 -i"}): its
    # language is unknown, so the text cannot be judged as shell
    assert mcp_script(tool_name, tool_input) is None
    writes = mcp_writes(tool_name, tool_input)
    assert writes and all(w.path is None and w.action == "run" for w in writes)
