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
* git servers: `path`/`repo_path` is the repository (see _git_writes).
* Tools that run programs (shell commands, code) cannot be judged by name: `mcp_script()` hands
  the program to the Bash / inline-code analysis as a `Script`; `mcp_writes()` fails closed on
  them (action "run", path None) unless the caller says `scripts_judged=True`.

Hot path: no `re`, no `json`; str methods only.
"""

import os

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
# Path-like argument names, compared lower-cased without `_`/`-`: path_in_project == pathInProject.
PATH_KEYS = frozenset(
    "path paths filepath filepaths file files filename filenames relativepath relativepaths "
    "absolutepath fullpath pathinproject filepathinproject notebookpath uri fileuri uris "
    "destination destinationpath dest destpath target targetpath targetfile newpath oldpath "
    "frompath topath newfilepath oldfilepath sourcepath srcpath source src outputpath outputfile "
    "outpath outfile dir dirpath directory directorypath folder folderpath".split()
)
DESTINATION_KEYS = frozenset("destination destinationpath dest destpath newpath topath newfilepath "
                             "to target targetpath".split())
RELOCATION_ONLY_KEYS = frozenset(("from", "to"))  # too generic to be paths outside move/copy/rename
TREE_KEYS = frozenset("dir dirpath directory directorypath folder folderpath".split())
PROJECT_RELATIVE_KEYS = frozenset(("pathinproject", "filepathinproject"))  # JetBrains: "/x" = <project>/x
DRY_RUN_KEYS = ("dryRun", "dry_run", "dryrun")
MAESTRO_MEMORY_TOOLS = frozenset(("memory_add", "memory_list", "memory_suggest", "memory_todo"))
SHELL_WORDS = frozenset("exec execute run shell terminal bash sh zsh cmd command commands process "
                        "spawn interact repl".split())
RUN_WORDS = frozenset("exec execute run eval evaluate interpret repl".split())
SHELL_KEYS = ("command", "cmd", "commandLine", "command_line", "script", "input")
CODE_KEYS = ("code", "source_code", "sourceCode")
CODE_LANGS = {"python": "python", "py": "python", "python3": "python", "node": "node",
              "javascript": "node", "js": "node", "perl": "perl", "ruby": "ruby"}
PATCH_KEYS = ("patch", "diff", "input", "content", "changes")
MAX_DEPTH = 4
MAX_TARGETS = 500
UNNAMED = "a file it does not name"


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


def _normal_key(key: str) -> str:
    return key.replace("_", "").replace("-", "").lower()


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "empty" if not value.strip() else "string with NUL"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, (list, tuple)):
        return "list"
    return "value"


def _file_uri_path(uri: str):
    """The local path of a `file:` URI (percent-decoded), or None when it names no local file."""
    rest = uri[5:]
    if rest.startswith("//"):
        host, slash, tail = rest[2:].partition("/")
        if host not in ("", "localhost") or not slash:
            return None
        rest = "/" + tail
    raw = rest.encode("utf-8", "surrogatepass")
    out = bytearray()
    index = 0
    while index < len(raw):
        byte = raw[index]
        if byte == 0x25:  # '%'
            digits = raw[index + 1:index + 3]
            if len(digits) != 2 or not all(chr(d) in "0123456789abcdefABCDEF" for d in digits):
                return None
            out.append(int(digits, 16))
            index += 3
            continue
        out.append(byte)
        index += 1
    try:
        path = out.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(path) >= 3 and path[0] == "/" and path[1].isalpha() and path[2] == ":":
        path = path[1:]  # file:///C:/x -> C:/x, which the gate classifies as a Windows path
    return path or None


def _usable_path(key: str, value: str):
    """The path a string argument names, or None when it cannot be resolved statically."""
    if not value.strip() or "\0" in value:
        return None
    lowered = value[:8].lower()
    if lowered.startswith("file:"):
        return _file_uri_path(value)
    if "://" in value[:40] or key in ("uri", "uris", "fileuri"):
        return None  # another scheme (http, untitled, jetbrains): not a file we can place
    if value.startswith("~"):
        home = os.environ.get("HOME", "")
        if not (value == "~" or value.startswith("~/")) or not home.startswith("/"):
            return None  # ~user or no usable HOME: the server's expansion is unknown
        return home.rstrip("/") + value[1:] if value != "~" else home
    if key in PROJECT_RELATIVE_KEYS:
        stripped = value.lstrip("/")
        return stripped or None
    return value


class _Collector:
    """Accumulates the Targets of one call, bounded so hostile input stays cheap."""

    def __init__(self, channel: str, action: str):
        self.channel = channel
        self.action = action
        self.targets = []

    def add(self, action, path, word, tree=False):
        if len(self.targets) < MAX_TARGETS:
            self.targets.append(Target(self.channel, action, path, word, None, tree))
        elif len(self.targets) == MAX_TARGETS:
            self.targets.append(Target(self.channel, action, None, "<more paths than the gate reads>"))

    def value(self, key: str, label: str, value, action: str, depth: int):
        """One path-like argument: a string, a list of them, or objects holding path keys."""
        tree = key in TREE_KEYS
        if isinstance(value, str) and value.strip() and "\0" not in value:
            self.add(action, _usable_path(key, value), value, tree)
        elif isinstance(value, (list, tuple)) and depth < MAX_DEPTH:
            for index, item in enumerate(value[: MAX_TARGETS + 1]):
                self.value(key, f"{label}[{index}]", item, action, depth + 1)
        elif isinstance(value, dict) and depth < MAX_DEPTH:
            if not self.mapping(value, action, depth + 1, relocating=False):
                self.add(action, None, f"{label}=<object>", tree)
        else:
            self.add(action, None, f"{label}=<{_kind(value)}>", tree)

    def mapping(self, arguments: dict, action: str, depth: int, relocating: bool) -> bool:
        """Every path-like key of one object; True when there was at least one.

        In a move, rename or copy that names a destination, every other path is its source:
        a move deletes it, a copy only reads it."""
        keys = [(key, _normal_key(key)) for key in arguments if isinstance(key, str)]
        has_destination = relocating and any(normal in DESTINATION_KEYS for _, normal in keys)
        found = False
        for key, normal in keys:
            if normal not in PATH_KEYS and not (relocating and normal in RELOCATION_ONLY_KEYS):
                continue
            found = True
            key_action = action
            if has_destination and normal not in DESTINATION_KEYS:
                if action != "move onto":
                    continue
                key_action = "delete"
            self.value(normal, key, arguments[key], key_action, depth)
        return found


def _patch_paths(text: str) -> list:
    """Files a unified diff or an apply_patch envelope names (`+++ b/x`, `*** Update File: x`)."""
    paths, seen = [], set()
    for line in text.splitlines():
        if line.startswith(("+++ ", "--- ")):
            name = line[4:].split("\t")[0].strip()
            if name == "/dev/null" or not name:
                continue
            if name.startswith(("a/", "b/")):
                name = name[2:]
        elif line.startswith("*** ") and (" File: " in line or line.startswith("*** Move to: ")):
            name = line.partition(": ")[2].strip()
        else:
            continue
        if name and name not in seen:
            seen.add(name)
            paths.append(name)
            if len(paths) > MAX_TARGETS:
                break  # the collector reports "more paths than the gate reads"
    return paths


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
    `cd '<cwd>' && `; `interact_with_process {input}` is judged as shell text, since the process
    is usually a shell); code runners whose language is known → Script("python" | "node" |
    "perl" | "ruby", code, word). None when the tool runs nothing, or when the program or its
    directory is not a usable string: mcp_writes then fails closed on it.
    """
    _, tool = split_tool_name(tool_name)
    if not isinstance(tool_input, dict):
        raise ValueError("tool_input is not an object")
    words = tool_words(tool)
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
    keys = SHELL_KEYS if _shell_like(words, tool_input) else CODE_KEYS
    for key in keys:
        program = tool_input.get(key)
        if program is not None:
            word = program if isinstance(program, str) else f"{key}=<{_kind(program)}>"
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
    if _shell_like(words, tool_input) or _code_runner(words, tool_input):
        if not scripts_judged or mcp_script(tool_name, tool_input) is None:
            targets = _runner_targets(tool_name, words, tool_input)
    if words[:1] == ["git"] and len(words) > 1:
        return targets + _git_writes(tool_name, words[1], tool_input)
    return targets + _named_writes(tool_name, words, tool_input)


def _git_writes(tool_name: str, verb: str, tool_input: dict) -> list:
    """git servers (cyanheads/git-mcp-server, modelcontextprotocol/servers src/git): `path` /
    `repo_path` is the repository, not a file. Judged like the Bash channels: checkout/restore of
    `paths`, rm, mv, reset --hard/--merge/--keep, clean and stash push/pop/apply write the working
    tree; switching branches, add, commit, merge, pull, log, diff… pass."""
    repo_key = next((key for key in ("path", "repo_path", "repoPath") if key in tool_input), None)
    repo = tool_input.get(repo_key) if repo_key else None
    base = repo if isinstance(repo, str) and repo.strip() and "\0" not in repo else None
    collector = _Collector(tool_name, "change")

    def tree(action: str) -> list:
        if repo_key is None:
            collector.add(action, ".", "the repository", tree=True)  # the session's cwd
        else:
            collector.add(action, base, base or f"{repo_key}=<{_kind(repo)}>", tree=True)
        return collector.targets

    def rooted(start: int) -> list:
        """Paths git takes relative to the repository root (itself relative to the session
        cwd, which the gate fills in); an unusable repository argument leaves them unresolved."""
        for target in collector.targets[start:]:
            if target.path is not None and not target.path.startswith("/") and repo_key is not None:
                target.path = os.path.join(base, target.path) if base is not None else None
        return collector.targets

    def listed(action: str, keys) -> list:
        start = len(collector.targets)
        for key in keys:
            if key in tool_input:
                collector.value("paths", key, tool_input[key], action, 0)
        return rooted(start)

    if verb in ("checkout", "restore"):
        return listed("change", ("paths", "files", "file"))
    if verb == "apply":
        for key in PATCH_KEYS:
            if isinstance(tool_input.get(key), str):
                for name in _patch_paths(tool_input[key])[: MAX_TARGETS + 1]:
                    collector.add("change", name, name)
        return rooted(0) or tree("change")
    if verb == "rm":
        return listed("delete", ("paths", "files", "file"))
    if verb == "mv":
        listed("delete", ("source",))
        collector.action = "move onto"
        return listed("move onto", ("destination",)) or tree("move onto")
    if verb == "reset":
        mode = tool_input.get("mode", "mixed")
        return tree("change") if mode in ("hard", "merge", "keep") or not isinstance(mode, str) else []
    if verb == "clean":
        return [] if tool_input.get("dryRun") is True or tool_input.get("dry_run") is True else tree("delete")
    if verb == "stash":
        mode = next((tool_input[key] for key in ("mode", "operation", "action") if key in tool_input), "push")
        return [] if mode in ("list", "drop", "clear", "show") else tree("change")
    return []


def _named_writes(tool_name: str, words: list, tool_input: dict) -> list:
    """The writes a tool's name announces, on its path-like arguments."""
    action = _verb_action(words)
    if action is None or _creates_only_directories(words, action):
        return []
    if any(tool_input.get(key) is True for key in DRY_RUN_KEYS):
        return []
    relocating = action == "move onto" or any(word in ("copy", "cp", "duplicate") for word in words)
    collector = _Collector(tool_name, action)
    found = collector.mapping(tool_input, action, 0, relocating)
    if action == "delete" and any(word in DIRECTORY_NOUNS for word in words):
        for target in collector.targets:
            target.tree = True
    if not found:
        _unnamed_targets(collector, words, tool_input)
    elif "rename" in words and any(word in ("symbol", "symbols", "refactoring") for word in words):
        collector.add("change", None, "every file that refers to the symbol")
    elif action == "move onto" and not _has_destination(tool_input):
        _renamed_in_place(collector, tool_input)
    return collector.targets


def _has_destination(tool_input: dict) -> bool:
    return any(isinstance(key, str) and _normal_key(key) in DESTINATION_KEYS for key in tool_input)


def _renamed_in_place(collector: _Collector, tool_input: dict) -> None:
    """rename_file {path, new_name}: the new name lands next to the old file. The named path
    was collected with "move onto"; it is really the source, which a rename deletes."""
    for target in collector.targets:
        target.action = "delete"
    new_name = next((value for key, value in tool_input.items()
                     if isinstance(key, str) and _normal_key(key) in ("newname", "name")), None)
    sources = [target.path for target in collector.targets if target.path is not None]
    if isinstance(new_name, str) and new_name.strip() and "\0" not in new_name and len(sources) == 1:
        collector.add("move onto", os.path.join(os.path.dirname(sources[0]), new_name), new_name)
    else:
        word = f"new_name=<{_kind(new_name)}>" if not isinstance(new_name, str) else new_name or "new_name=<empty>"
        collector.add("move onto", None, word)


def _unnamed_targets(collector: _Collector, words: list, tool_input: dict) -> None:
    """A writer without a path-like argument: a patch names its files in its text; a tool
    whose name says it writes a file (the IDE's open editor) writes one we cannot place."""
    if any(word in ("apply", "patch", "diff", "diffs") for word in words):
        for key in PATCH_KEYS:
            text = tool_input.get(key)
            if isinstance(text, str):
                for name in _patch_paths(text)[: MAX_TARGETS + 1]:
                    collector.add("change", name, name)
        if not collector.targets:
            collector.add("change", None, "the files of a patch it does not name")
        return
    if any(word in FILE_NOUNS for word in words):
        collector.add(collector.action, None, UNNAMED)
