"""What an MCP tool call would write: `mcp_writes(tool_name, tool_input) -> list[Target]`.

Claude Code names MCP tools `mcp__<server>__<tool>`; nothing else says whether a tool writes, so
the tool part is read as words (split on `_`, `-`, `.`, camelCase):

* A writer has a write verb (STRONG_VERBS: write, edit, create, replace, insert, move, rename,
  delete, apply, patch, append, save, update, copy, format, push…) or a weak verb (add, set, new,
  put, make…) next to a file noun. Every other tool (read_file, find_symbol, get_file_contents,
  list_directory…) passes.
* Each path-like argument of a writer (PATH_KEYS: path, file_path, filePath, relative_path,
  paths, pathInProject, source, destination, uri, dir…; lists and `files: [{path}]` included)
  is one Target: channel = the tool name, action by verb; a move's or rename's source is
  deleted, a copy's source only read; directories (`dir`, delete_directory) are trees. Relative
  paths are left relative with Target.cwd None: the gate takes them against the session cwd. A
  path argument that is not a usable string is a Target with path None, word `key=<kind>`.
* Remote servers follow the same rule: GitHub's create_or_update_file / push_files of
  `src/app.py` are blocked, of `README.md` allowed — the orchestrator writes source nowhere.
* A writer with no path-like argument passes (remote records: create_issue, write_memory,
  add_observations) unless its name says it writes a file (replace_selected_text writes the
  IDE's open editor; a patch tool whose text names no file): then one unresolved Target.
* Not writes: creating a directory, a literal `dryRun: true`, maestro's own memory_* tools.
* Symbol renames also change every file that refers to the symbol: always unresolved.
* git servers: `path`/`repo_path` is the repository (see hooks/mcp_gate_git.py).
* Tools that run programs (shell commands, code) cannot be judged by name: `mcp_script()` hands
  the program to the Bash / inline-code analysis as a `Script`; `mcp_writes()` fails closed on
  them (action "run", path None) unless the caller says `scripts_judged=True`.

This module reads the tool name and runs on every MCP call; the arguments of a writer are read by
hooks/mcp_arguments.py and git servers judged by hooks/mcp_gate_git.py, each imported on first use.
Hot path: no `re`, no `json`; str methods only.
"""

from maestro.hooks.targets import Script, Target

# Verb word -> the action it does to each named file.
STRONG_VERBS = {
    "write": "write", "writes": "write", "save": "write", "overwrite": "write", "create": "write",
    "download": "write", "export": "write", "push": "write", "copy": "write", "cp": "write", "duplicate": "write",
    "edit": "change", "edits": "change", "replace": "change", "insert": "change", "append": "change",
    "prepend": "change", "apply": "change", "patch": "change", "update": "change", "modify": "change",
    "format": "change", "reformat": "change",
    "delete": "delete", "remove": "delete", "rm": "delete", "unlink": "delete", "erase": "delete",
    "trash": "delete",
    "move": "move onto", "mv": "move onto", "rename": "move onto",
}
WEAK_VERBS = {"add": "write", "set": "change", "new": "write", "put": "write", "make": "write",
              "generate": "write", "touch": "write", "truncate": "change"}
FILE_NOUNS = frozenset(
    "file files filename text line lines content contents code source symbol symbols body block "
    "selection selected editor notebook cell cells snippet regex diff diffs patch".split()
)
DIRECTORY_NOUNS = frozenset("directory directories dir dirs folder folders mkdir".split())
# A delete or move of these changes a file rather than removing or moving it: delete_lines.
CONTENT_NOUNS = frozenset(
    "text line lines content contents code symbol symbols body block selection selected cell cells "
    "snippet regex refactoring refactor".split()
)
WHOLE_FILE_NOUNS = frozenset("file files filename directory directories dir dirs folder folders".split())
DRY_RUN_KEYS = ("dryRun", "dry_run", "dryrun")
MAESTRO_MEMORY_TOOLS = frozenset(("memory_add", "memory_list", "memory_suggest", "memory_todo"))
SHELL_WORDS = frozenset("exec execute run shell terminal bash sh zsh cmd command commands process "
                        "spawn interact repl".split())
RUN_WORDS = frozenset("exec execute run eval evaluate interpret repl".split())
SHELL_KEYS = ("command", "cmd", "commandLine", "command_line", "script", "input")
CODE_KEYS = ("code", "source_code", "sourceCode")
CODE_LANGS = {"python": "python", "py": "python", "python3": "python", "node": "node",
              "javascript": "node", "js": "node", "perl": "perl", "ruby": "ruby"}


def tool_words(tool: str) -> list:
    """Lower-case words of a tool name: `replace_symbol_body`, `editBlock`, `find-and-replace`,
    `HTMLFile`, `write2file`."""
    words, current = [], []
    previous = ""
    for index, ch in enumerate(tool):
        if not ch.isalnum():
            if current:
                words.append("".join(current))
            current, previous = [], ""
            continue
        upper = ch.isupper()
        following = tool[index + 1] if index + 1 < len(tool) else ""
        if current and ((upper and (previous.islower() or (previous.isupper() and following.islower())))
                        or ch.isdigit() != previous.isdigit()):  # write2file: digits split words
            words.append("".join(current))
            current = []
        current.append(ch)
        previous = ch
    if current:
        words.append("".join(current))
    return [word.lower() for word in words]


def split_tool_name(tool_name) -> tuple:
    """(server, tool) of `mcp__<server>__<tool>`; ValueError for anything else."""
    if not isinstance(tool_name, str) or not tool_name.startswith("mcp__"):
        raise ValueError("not an MCP tool name")
    server, _, tool = tool_name[5:].partition("__")
    return server, tool


PROCESS_NOUNS = frozenset("process processes stdin input keys terminal session repl pty tty console".split())


def sends_process_input(words: list) -> bool:
    """interact_with_process, send_input, write_stdin, send_keys_to_terminal: text for a program
    that is already running, whose language the gate cannot know (a REPL of any interpreter)."""
    return "interact" in words or (any(word in ("send", "write", "type", "feed") for word in words)
                                   and any(word in PROCESS_NOUNS for word in words))


def _shell_like(words: list, tool_input: dict) -> bool:
    return any(word in SHELL_WORDS for word in words) and any(key in tool_input for key in SHELL_KEYS)


def _code_runner(words: list, tool_input: dict) -> bool:
    """run_python {code}, execute_code {code, language}, evaluate {code}; NOT create_python_file
    {path, code}, which writes the code instead of running it."""
    return (any(word in RUN_WORDS for word in words)
            and any(key in tool_input for key in CODE_KEYS))


def mcp_script(tool_name: str, tool_input) -> "Script | None":
    """The program an MCP tool runs, for the Bash / inline-code analysis, or None.

    Shell tools → Script("sh", command, word) (a string `cwd` argument becomes a leading
    `cd '<cwd>' && `); `interact_with_process {input}` and other input for a running process: None
    (its interpreter is unknown, so mcp_writes fails closed); code runners whose language is known → Script("python" | "node" |
    "perl" | "ruby", code, word). None when the tool runs nothing, or when the program or its
    directory is not a usable string: mcp_writes then fails closed on it.
    """
    _, tool = split_tool_name(tool_name)
    if not isinstance(tool_input, dict):
        raise ValueError("tool_input is not an object")
    words = tool_words(tool)
    if sends_process_input(words):
        return None  # the running program's language is unknown: mcp_writes fails closed
    if _shell_like(words, tool_input):
        lang, keys = "sh", SHELL_KEYS
    elif _code_runner(words, tool_input):
        declared = next((tool_input[key] for key in ("language", "lang") if key in tool_input), None)
        if declared is None:
            lang = next((CODE_LANGS[word] for word in words if word in CODE_LANGS), None)
        else:
            lang = CODE_LANGS.get(declared.lower()) if isinstance(declared, str) else None
        keys = CODE_KEYS
    else:
        return None
    programs = [tool_input[key] for key in keys if key in tool_input]
    if lang is None or not all(isinstance(program, str) for program in programs):
        return None  # unknown language, or a program that is not text: mcp_writes fails closed
    text = "\n".join(programs)  # several program arguments: judge them all
    cwd = tool_input.get("cwd")
    if lang == "sh" and cwd is not None:
        if not (isinstance(cwd, str) and cwd.strip() and "\0" not in cwd):
            return None  # the command runs somewhere unknown
        # serena's execute_shell_command {command, cwd}: the command runs in that directory
        return Script("sh", "cd '" + cwd.replace("'", "'\\''") + "' && " + text, text)
    return Script(lang, text, text)


def _runner_targets(tool_name: str, words: list, tool_input: dict) -> list:
    """Fail closed on a program-running tool: what it writes is only known by analysing it."""
    from maestro.hooks.mcp_arguments import kind_of

    keys = SHELL_KEYS if _shell_like(words, tool_input) else CODE_KEYS
    for key in keys:
        program = tool_input.get(key)
        if program is not None:
            word = program if isinstance(program, str) else f"{key}=<{kind_of(program)}>"
            return [Target(tool_name, "run", None, word[:200])]
    return [Target(tool_name, "run", None, "<program>")]


def _verb_action(words: list):
    """The action of the first write verb in the name, or None for a read tool."""
    has_file_noun = any(word in FILE_NOUNS for word in words)
    action = next((STRONG_VERBS[word] for word in words if word in STRONG_VERBS), None)
    if action is None and has_file_noun:
        action = next((WEAK_VERBS[word] for word in words if word in WEAK_VERBS), None)
    if action in ("delete", "move onto") and any(word in CONTENT_NOUNS for word in words) and not any(
        word in WHOLE_FILE_NOUNS for word in words
    ):
        return "change"  # delete_lines, rename_symbol, move_block: the file stays where it is
    return action


def _creates_only_directories(words: list, action: str) -> bool:
    return (action == "write" and any(word in DIRECTORY_NOUNS for word in words)
            and not any(word in FILE_NOUNS for word in words))


def mcp_writes(tool_name: str, tool_input, *, scripts_judged: bool = False) -> list:
    """Every file an MCP tool call would create, change, delete or move onto (see module doc).

    A tool that runs a program (see mcp_script) gets a fail-closed Target (action "run", path
    None) — unless `scripts_judged` is True and mcp_script() returns its program, which the caller
    then judges with the Bash / inline-code analysis. The name-based rules apply on top either way.
    """
    _, tool = split_tool_name(tool_name)
    if not isinstance(tool_input, dict):
        raise ValueError("tool_input is not an object")
    if tool in MAESTRO_MEMORY_TOOLS:
        return []
    words = tool_words(tool)
    targets = []
    if sends_process_input(words) and not _shell_like(words, tool_input):
        targets = [Target(tool_name, "run", None, "input to a running process")]
    elif _shell_like(words, tool_input) or _code_runner(words, tool_input):
        if not scripts_judged or mcp_script(tool_name, tool_input) is None:
            targets = _runner_targets(tool_name, words, tool_input)
    if words[:1] == ["git"] and len(words) > 1:
        from maestro.hooks.mcp_gate_git import git_writes

        return targets + git_writes(tool_name, words[1], tool_input)
    return targets + _named_writes(tool_name, words, tool_input)


def _named_writes(tool_name: str, words: list, tool_input: dict) -> list:
    """The writes a tool's name announces, on its path-like arguments."""
    action = _verb_action(words)
    if action is None or _creates_only_directories(words, action):
        return []
    if any(tool_input.get(key) is True for key in DRY_RUN_KEYS):
        return []
    from maestro.hooks.mcp_arguments import Collector, has_destination, renamed_in_place, unnamed_targets

    relocating = action == "move onto" or any(word in ("copy", "cp", "duplicate") for word in words)
    collector = Collector(tool_name, action)
    found = collector.mapping(tool_input, action, 0, relocating)
    if action == "delete" and any(word in DIRECTORY_NOUNS for word in words):
        for target in collector.targets:
            target.tree = True
    if not found:
        unnamed_targets(collector, words, tool_input, any(word in FILE_NOUNS for word in words))
    elif "rename" in words and any(word in ("symbol", "symbols", "refactoring") for word in words):
        collector.add("change", None, "every file that refers to the symbol")
    elif action == "move onto" and not has_destination(tool_input):
        renamed_in_place(collector, tool_input)
    return collector.targets
