"""The arguments of an MCP writer (hooks/mcp_gate.py): which of them name files, and how.

Path-like keys (PATH_KEYS, compared without `_`/`-` and case), strings, lists of them and objects
holding them become Targets through a Collector, bounded (MAX_TARGETS, MAX_DEPTH) so hostile input
stays cheap; `file:` URIs are decoded, `~/` expanded, other schemes and unusable values are
unresolved; patch text names its files; a move's or rename's source is deleted. Split out of
mcp_gate.py, which reads the tool name: a tool whose name says it only reads never loads this.
"""

import os

from maestro.hooks.targets import Target

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
PATCH_KEYS = ("patch", "diff", "input", "content", "changes")
MAX_DEPTH = 4
MAX_TARGETS = 500
UNNAMED = "a file it does not name"


def normal_key(key: str) -> str:
    return key.replace("_", "").replace("-", "").lower()


def kind_of(value) -> str:
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


class Collector:
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
            self.add(action, None, f"{label}=<{kind_of(value)}>", tree)

    def mapping(self, arguments: dict, action: str, depth: int, relocating: bool) -> bool:
        """Every path-like key of one object; True when there was at least one.

        In a move, rename or copy that names a destination, every other path is its source:
        a move deletes it, a copy only reads it."""
        keys = [(key, normal_key(key)) for key in arguments if isinstance(key, str)]
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


def patch_paths(text: str) -> list:
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


def has_destination(tool_input: dict) -> bool:
    return any(isinstance(key, str) and normal_key(key) in DESTINATION_KEYS for key in tool_input)


def renamed_in_place(collector: Collector, tool_input: dict) -> None:
    """rename_file {path, new_name}: the new name lands next to the old file. The named path
    was collected with "move onto"; it is really the source, which a rename deletes."""
    for target in collector.targets:
        target.action = "delete"
    new_name = next((value for key, value in tool_input.items()
                     if isinstance(key, str) and normal_key(key) in ("newname", "name")), None)
    sources = [target.path for target in collector.targets if target.path is not None]
    if isinstance(new_name, str) and new_name.strip() and "\0" not in new_name and len(sources) == 1:
        collector.add("move onto", os.path.join(os.path.dirname(sources[0]), new_name), new_name)
    else:
        word = f"new_name=<{kind_of(new_name)}>" if not isinstance(new_name, str) else new_name or "new_name=<empty>"
        collector.add("move onto", None, word)


def unnamed_targets(collector: Collector, words: list, tool_input: dict, names_a_file: bool) -> None:
    """A writer without a path-like argument: a patch names its files in its text; a tool
    whose name says it writes a file (`names_a_file`: a noun of mcp_gate.FILE_NOUNS, the IDE's
    open editor) writes one we cannot place."""
    if any(word in ("apply", "patch", "diff", "diffs") for word in words):
        for key in PATCH_KEYS:
            text = tool_input.get(key)
            if isinstance(text, str):
                for name in patch_paths(text)[: MAX_TARGETS + 1]:
                    collector.add("change", name, name)
        if not collector.targets:
            collector.add("change", None, "the files of a patch it does not name")
        return
    if names_a_file:
        collector.add(collector.action, None, UNNAMED)
