"""Program text of tools that can run shell commands: makefiles, Tcl, gdb commands, sqlite3 input.

    tool_writes(lang, code) -> list[Target | Script]      lang: "make", "tcl", "gdb", "sqlite"

- make: each recipe line (tab-indented, or after `;` on a rule line) is shell text → Script("sh");
  text using functions or directives that run or read other text ($(shell …), $(file …), $(eval …),
  include, define, SHELL=, .RECIPEPREFIX, …) fails closed.
- tcl: any command that can run a program or touch a file (exec, open, file, source, load, eval,
  interp, socket, …; expect's spawn/system) fails closed: a static reading of Tcl is not attempted.
- gdb: `shell CMD`/`!CMD` → Script("sh"); `pipe …|CMD`/`|…|CMD` → Script("sh", CMD); `python CODE`
  → Script("python"); commands that write files or read commands (dump, append, save, gcore,
  source, set logging, make, python-interactive …) fail closed.
- sqlite: dot-commands (see sqlite_writes); SQL is allowed except writefile(), edit(),
  load_extension(), ATTACH and VACUUM INTO, which write or load files → fail closed.
Targets carry cwd None (the engine fills in its cwd). Never raises for any text.
"""

from maestro.hooks.targets import Script, Target
from maestro.util.text import bounded, squeeze

MAKE_UNSAFE = ("$(shell", "${shell", "$(file", "${file", "$(eval", "${eval", "$(call", "${call", "$(value",
               "${value", ".RECIPEPREFIX", "SHELL", "include", "define", "$(guile", "${guile", "load ", "MAKEFLAGS",
               "vpath", ".ONESHELL")
TCL_UNSAFE = frozenset(("exec", "open", "file", "source", "load", "eval", "interp", "socket", "spawn", "system",
                        "uplevel", "subst", "package", "cd", "chan", "fconfigure", "after", "trace", "namespace",
                        "apply", "rename", "unknown", "interact", "send", "tailcall", "coroutine", "yieldto",
                        "history", "auto_execok", "auto_load", "auto_import", "tcl_findLibrary", "fileevent"))
GDB_UNSAFE = ("shell", "pipe", "python", "python-interactive", "pi", "dump", "append", "save", "gcore",
              "generate-core-file", "source", "make", "guile", "gu", "compile", "define", "document", "restore",
              "eval", "alias", "tee", "jit-reader-load", "add-auto-load-safe-path", "edit", "record", "interpreter-exec")


def tool_writes(lang, code):
    if lang == "make":
        return _make_writes(code)
    if lang == "tcl":
        return _tcl_writes(code)
    if lang == "gdb":
        out = []
        for line in code.split("\n")[:2000]:
            out += gdb_command_writes(line, line)
        return out
    if lang == "sqlite":
        return sqlite_writes(code, "sqlite3 input")
    raise ValueError(f"no tool-text analysis for {lang!r}")


def _short(text):
    return bounded(squeeze(text), 80, "...")


def _make_writes(code):
    if any(marker in code for marker in MAKE_UNSAFE) or "\\\n" in code:
        return [Target("make (a makefile that runs or reads more text)", "run", None, _short(code))]
    out = []
    for line in code.split("\n")[:2000]:
        if line.startswith("\t"):
            recipe = line[1:].lstrip(" @+-")
        elif ":" in line and ";" in line.partition("#")[0] and not line.lstrip().startswith("#"):
            recipe = line.partition(";")[2].lstrip(" @+-")
        else:
            continue
        if recipe.strip():
            out.append(Script("sh", recipe.replace("$$", "$"), _short(recipe)))
    return out


def _tcl_writes(code):
    """Fail closed on a command that runs or touches files, or a command whose name is computed."""
    text = code.replace("{", " ").replace("}", " ").replace("[", "\n[\n").replace(";", "\n").replace("]", " ")
    for statement in text.split("\n"):
        words = statement.split()
        if not words or words[0] == "#":
            continue
        if words[0] in TCL_UNSAFE or words[0].startswith(("$", "::", "\\")) or any(w in TCL_UNSAFE for w in words):
            return [Target("tcl code", "run", None, _short(code))]
    return []


def gdb_command_writes(text, raw):
    """One gdb command line."""
    line = text.strip()
    if not line or line.startswith("#"):
        return []
    head, _, rest = line.partition(" ")
    if head == "shell" or head.startswith("!"):
        command = rest if head == "shell" else line[1:]
        return [Script("sh", command, raw)] if command.strip() else []
    if head in ("pipe", "|") or head.startswith("|"):
        body = line[4:] if head == "pipe" else line[1:]
        if body.lstrip().startswith("-d"):
            return [Target("gdb pipe", "run", None, raw)]
        return [Script("sh", body.partition("|")[2], raw)] if "|" in body else [Target("gdb pipe", "run", None,
                                                                                        raw)]
    if head in ("python", "py", "python3") and rest.strip():
        return [Script("python", rest, raw)]
    lowered = head.lower()
    # gdb takes any unambiguous prefix of a command name: `she` is shell
    if any(cmd.startswith(lowered) and (len(lowered) >= 2 or cmd == lowered) for cmd in GDB_UNSAFE) or (
            lowered == "set" and rest.lower().startswith(("logging", "history", "trace"))):
        return [Target("gdb " + head, "run", None, raw)]
    return []


SQLITE_SAFE_DOT = frozenset((
    ".tables", ".table", ".schema", ".headers", ".header", ".mode", ".dump", ".quit", ".exit", ".help",
    ".indexes", ".indices", ".databases", ".nullvalue", ".separator", ".width", ".timer", ".print", ".show",
    ".echo", ".bail", ".changes", ".eqp", ".stats", ".explain", ".prompt", ".limit", ".lint", ".dbinfo",
    ".fullschema", ".scanstats", ".sha3sum", ".timeout", ".vfsinfo", ".vfslist", ".vfsname", ".dbconfig",
    ".filectrl", ".testcase", ".unmodule", ".nonce", ".progress", ".binary", ".connection", ".imposter",
))
SQLITE_WRITES_FILE = frozenset((".output", ".once", ".log", ".save", ".backup", ".clone", ".trace"))
SQL_UNSAFE = ("writefile", "edit(", "load_extension", "attach", "vacuum", "fts3_tokenizer")


def sqlite_writes(text, raw):
    """sqlite3 input: dot-commands (one per line, or one argument) and SQL."""
    out = []
    lines = text.split("\n")[:5000]
    sql = []
    for line in lines:
        stripped = line.strip()
        if not stripped.startswith("."):
            sql.append(line)
            continue
        parts = stripped.split(None, 1)
        command, argument = parts[0], (parts[1] if len(parts) > 1 else "")
        if command in SQLITE_SAFE_DOT or command == ".":
            continue
        if command in (".shell", ".system"):
            out.append(Script("sh", argument, _short(stripped)))
            continue
        if command in SQLITE_WRITES_FILE:
            words = [w for w in argument.split() if not w.startswith("-") or w == "-"]
            if any(w.startswith("-") and w != "-" for w in argument.split()) and command in (".once", ".output"):
                out.append(Target("sqlite3 " + command, "run", None, _short(stripped)))  # -x/-e: a viewer
                continue
            if not words or words[0] in ("stdout", "stderr", "off", "-"):
                continue
            name = words[0].strip("'\"")
            if name.startswith("|"):
                out.append(Script("sh", argument.strip().strip("'\"")[1:], _short(stripped)))
            elif "'" in words[0][1:-1] or '"' in words[0][1:-1] or len(words) > 1 and command != ".backup":
                out.append(Target("sqlite3 " + command, "write", None, _short(stripped)))
            else:
                name = (words[-1] if command in (".backup", ".save") else words[0]).strip("'\"")
                out.append(Target("sqlite3 " + command, "write", name, name))
            continue
        # .open/.import/.read/.load/.cd/.excel/.edit/.restore/.archive/.recover…: other files
        out.append(Target("sqlite3 " + command, "write", None, _short(stripped)))
    lowered = "\n".join(sql).lower()
    if any(marker in lowered for marker in SQL_UNSAFE):
        out.append(Target("sqlite3 SQL", "write", None, _short("\n".join(sql))))
    return out
