"""What inline Python (`python3 -c CODE`, `python - <<'EOF'`) would write, judged by its literal paths.

The code is parsed with `ast` and never run; this module (and `ast`) is imported only when a Bash
command runs inline Python. What names and expressions mean comes from hooks/inline_python_values.py;
here are the write APIs and what each call writes. Code that does not parse is code Python would
refuse to run, so it writes nothing; code too deep to analyse, or any surprise inside the analysis,
fails closed (one unresolved target) instead of raising.
"""

import ast
import os
import posixpath

from maestro.hooks.inline_paths import UNKNOWN_SHELL_WORD, after_chdir, join_path, looks_like_directory, quote
from maestro.hooks.inline_python_values import MISSING, UNKNOWN, PythonValues, canonical
from maestro.hooks.targets import Script, Target

MAX_EXEC_DEPTH = 8
# file openers: qualified name -> (mode position, mode keyword)
OPENERS = {"open": (1, "mode"), "io.open": (1, "mode"), "codecs.open": (1, "mode"), "io.FileIO": (1, "mode"),
           "gzip.open": (1, "mode"), "bz2.open": (1, "mode"), "lzma.open": (1, "mode"), "gzip.GzipFile": (1, "mode"),
           "tarfile.open": (1, "mode"), "zipfile.ZipFile": (1, "mode"), "wave.open": (1, "mode"),
           "aifc.open": (1, "mode"), "sunau.open": (1, "mode")}
# functions whose path arguments are written: name -> ((position, keyword, action, how), ...)
# how: "" a file, "tree" a directory judged as a tree, "into" a destination that may be a directory
_DELETE0 = ((0, "path", "delete", ""),)
_MOVE = ((0, "src", "move", "tree"), (1, "dst", "move onto", ""))
PATH_FUNCTIONS = {
    "os.remove": _DELETE0, "os.unlink": _DELETE0, "os.rmdir": _DELETE0, "os.removedirs": ((0, "name", "delete", ""),),
    "os.truncate": ((0, "path", "truncate", ""),), "os.mkfifo": ((0, "path", "create", ""),),
    "os.mknod": ((0, "path", "create", ""),), "os.link": ((1, "dst", "create", ""),),
    "os.symlink": ((1, "dst", "create", ""),), "os.rename": _MOVE, "os.replace": _MOVE,
    "os.renames": ((0, "old", "move", "tree"), (1, "new", "move onto", "")),
    "shutil.move": ((0, "src", "move", "tree"), (1, "dst", "move onto", "into")),
    "shutil.copy": ((1, "dst", "write", "into"),), "shutil.copy2": ((1, "dst", "write", "into"),),
    "shutil.copyfile": ((1, "dst", "write", ""),), "shutil.copytree": ((1, "dst", "write", "tree"),),
    "shutil.rmtree": ((0, "path", "delete", "tree"),), "shutil.copymode": ((1, "dst", "change", ""),),
    "shutil.copystat": ((1, "dst", "change", ""),), "urllib.request.urlretrieve": ((1, "filename", "write", ""),),
    "shutil.unpack_archive": ((1, "extract_dir", "write", "tree"),),
    # standard-library writers found by the third attack round
    "cProfile.run": ((1, "filename", "write", ""),), "profile.run": ((1, "filename", "write", ""),),
    "cProfile.runctx": ((3, "filename", "write", ""),), "profile.runctx": ((3, "filename", "write", ""),),
    "py_compile.compile": ((1, "cfile", "write", ""),),
    "distutils.file_util.copy_file": ((1, "dst", "write", "into"),),
    "distutils.dir_util.copy_tree": ((1, "dst", "write", "tree"),),
    "readline.write_history_file": ((0, "filename", "write", ""),),
    "readline.append_history_file": ((1, "filename", "write", ""),),
}
# constructors that run shell text the analysis cannot follow
RUNS_SHELL = frozenset({"pipes.Template"})
SHELL_STRING = frozenset({"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput",
                          "asyncio.create_subprocess_shell"})
SUBPROCESS = frozenset({"subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
                        "subprocess.Popen"})
# os.exec*/spawn*: name -> (program position, first argv position or None for a list argument)
EXEC_ARGV = {"os.execl": (0, 2), "os.execle": (0, 2), "os.execlp": (0, 2), "os.execlpe": (0, 2),
             "os.execv": (0, None), "os.execve": (0, None), "os.execvp": (0, None), "os.execvpe": (0, None),
             "os.spawnl": (1, 3), "os.spawnle": (1, 3), "os.spawnlp": (1, 3), "os.spawnlpe": (1, 3),
             "os.spawnv": (1, None), "os.spawnve": (1, None), "os.spawnvp": (1, None), "os.spawnvpe": (1, None),
             "os.posix_spawn": (0, None), "os.posix_spawnp": (0, None), "asyncio.create_subprocess_exec": (0, 1)}
# Path methods that write: method -> action on the path itself (None: the argument is the target)
PATH_METHODS = {"write_text": "write", "write_bytes": "write", "touch": "create", "unlink": "delete",
                "rmdir": "delete", "symlink_to": "create", "hardlink_to": "create", "rename": "move",
                "replace": "move", "link_to": None, "open": "open"}
# methods only a Path has: written off even when the receiver is unknown (`for f in …glob(…): f.write_text(…)`)
PATH_ONLY_METHODS = frozenset({"write_text", "write_bytes", "touch", "symlink_to", "hardlink_to", "unlink", "rmdir"})
# every API above, for the dynamic-access rules of inline_python_dynamic.py
WRITE_APIS = frozenset(set(OPENERS) | set(PATH_FUNCTIONS) | SHELL_STRING | SUBPROCESS | set(EXEC_ARGV) | {
    "exec", "eval", "compile", "os.open", "os.write", "os.chdir", "os.fchdir", "fileinput.input",
    "fileinput.FileInput", "__import__", "importlib.import_module", "getattr", "setattr", "os.fork",
    "os.forkpty", "pty.spawn", "shutil.chown", "os.chmod", "os.chown", "os.makedirs", "os.mkdir"})
READ_FLAGS = frozenset({"O_RDONLY", "O_CLOEXEC", "O_NONBLOCK", "O_NDELAY", "O_NOFOLLOW", "O_DIRECTORY", "O_BINARY",
                        "O_NOCTTY", "O_NOATIME", "O_PATH", "O_SYNC", "O_DSYNC", "O_RSYNC", "O_DIRECT", "O_LARGEFILE",
                        "O_EXCL", "O_NOINHERIT", "O_TEXT", "O_SHLOCK", "O_EXLOCK", "O_ASYNC"})


def python_writes(code: str, depth: int = 0) -> list:
    """Every write `code` would make: Target (cwd None) or Script("sh", …) for its shell-outs."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, OverflowError):
        return []  # Python would refuse to compile it: nothing of it runs
    except (RecursionError, MemoryError):
        return [cannot_analyse("code too deeply nested to analyse")]
    try:
        return _Analysis(code, tree, depth).run()
    except RecursionError:
        return [cannot_analyse("code too deeply nested to analyse")]
    except Exception:  # a gap in this analysis must block, never crash the gate or allow
        return [cannot_analyse("code the gate could not analyse")]


def cannot_analyse(why: str) -> Target:
    return Target("inline python", "run", None, f"({why})")


class _Analysis(PythonValues):
    """One program's writes: every call is judged on its own (in source order)."""

    def run(self) -> list:
        self.collect()
        self.calls.sort(key=lambda call: (call.lineno, call.col_offset))  # source order, for messages
        for call in self.calls:
            self.call(call)
        from maestro.hooks.inline_python_dynamic import dynamic_risks

        self.out += dynamic_risks(self, WRITE_APIS)
        return after_chdir(self.out, self.chdirs, "os.chdir")

    def call(self, node):
        name = canonical(self.qualify(node.func))
        if name is not None:
            if name in OPENERS:
                return self.opener(node, name, *OPENERS[name])
            if name in PATH_FUNCTIONS:
                return self.path_function(node, name)
            if name == "os.open":
                return self.os_open(node)
            if name in SHELL_STRING:
                return self.shell(node, name, self.arg(node, 0, "cmd"))
            if name in RUNS_SHELL:
                self.out.append(Target("python " + name, "run", None, self.segment(node)))
                return None
            if name in SUBPROCESS:
                return self.subprocess(node, name)
            if name in EXEC_ARGV:
                return self.exec_argv(node, name, *EXEC_ARGV[name])
            if name in ("exec", "eval"):
                return self.nested(node, name)
            if name in ("os.chdir", "os.fchdir"):
                self.chdirs.append(self.text(self.arg(node, 0, "path")))
                return None
            if name in ("fileinput.input", "fileinput.FileInput"):
                return self.fileinput(node, name)
            if name.startswith("Path.") and name[5:] in PATH_METHODS and node.args:
                return self.path_method(node, name[5:], node.args[0], node.args[1:], True)
        if type(node.func) is ast.Attribute:
            if node.func.attr == "extractall":
                return self.emit(f"python {node.func.attr}", "write", self.arg(node, 0, "path", "."), node, True)
            if node.func.attr == "extract":  # tarfile/zipfile .extract(member, path=".")
                return self.emit("python extract", "write", self.arg(node, 1, "path", "."), node, True)
            if node.func.attr == "dump_stats":  # cProfile/profile .dump_stats(filename)
                return self.emit("python dump_stats", "write", self.arg(node, 0, "filename"), node)
            if node.func.attr in PATH_METHODS:
                return self.path_method(node, node.func.attr, node.func.value, node.args, False)
        return None

    def emit(self, channel, action, node, call, tree=False):
        if node is MISSING:
            return None
        value = node if type(node) is str else self.text(node)
        word = value or self.segment(call if node is UNKNOWN or type(node) is str else node)
        self.out.append(Target(channel, action, value, word, None, tree))
        return value

    def opener(self, node, name, position, keyword):
        path, mode_node = self.arg(node, 0, "file"), self.arg(node, position, keyword)
        if name in ("gzip.open", "bz2.open", "lzma.open", "gzip.GzipFile", "tarfile.open"):
            path = self.arg(node, 0, "filename" if name != "tarfile.open" else "name")
        if mode_node is MISSING:
            return None  # every opener reads by default
        mode = self.text(mode_node)
        if mode is None:
            return self.emit(f"python {name}(…, mode)", "write", path, node)
        if not any(c in mode for c in "wax+"):
            return None
        action = "write" if "w" in mode else "create" if "x" in mode else "change"
        return self.emit(f"python {name}(…, {mode!r})", action, path, node)

    def path_function(self, node, name):
        for position, keyword, action, how in PATH_FUNCTIONS[name]:
            default = "." if name == "shutil.unpack_archive" else MISSING
            dst = self.emit(f"python {name}", action, self.arg(node, position, keyword, default), node, how == "tree")
            if how == "into" and dst is not None and looks_like_directory(dst):
                source = self.text(self.arg(node, 0, "src"))
                into = join_path((dst, posixpath.basename(source.rstrip("/")))) if source else None
                self.out.append(Target(f"python {name}", action, into, into or f"{dst}/…", None))

    def os_open(self, node):
        flags = self.arg(node, 1, "flags")
        if flags is MISSING or self.flags_read_only(flags):
            return None
        return self.emit("python os.open", "write", self.arg(node, 0, "path"), node)

    def flags_read_only(self, node) -> bool:
        a = ast
        stack = [node]
        while stack:
            item = stack.pop()
            if type(item) is a.BinOp and type(item.op) in (a.BitOr, a.Add):
                stack += (item.left, item.right)
            elif type(item) is a.Constant and type(item.value) is int:
                mask = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
                if item.value & mask:
                    return False
            else:
                name = (self.qualify(item) or "").rpartition(".")[2] if item is not UNKNOWN else ""
                if name not in READ_FLAGS:
                    return False  # a write flag, or flags the analysis cannot know: a write
        return True

    def path_method(self, node, method, receiver, args, unbound):
        if unbound:  # Path.write_text(p, …): the receiver is a path whatever it is
            is_path, value = True, self.text(receiver)
        else:
            is_path, value = self.path_object(receiver)
        if not is_path and (method not in PATH_ONLY_METHODS or (method in ("unlink", "rmdir") and args)):
            return None  # `text.replace(…)`, `df.rename(…)`, `zf.open(…)`, `sftp.unlink(p)`: not a Path
        channel = f"python Path.{method}"
        word = value or self.segment(receiver)
        action = PATH_METHODS[method]
        if method == "open":
            mode_node = args[0] if args else self.arg(node, 99, "mode", "r")
            mode = mode_node if type(mode_node) is str else None if type(mode_node) is ast.Starred else self.text(
                mode_node)
            if mode is not None and not any(c in mode for c in "wax+"):
                return None
            action = "write" if mode is None or "w" in mode else "create" if "x" in mode else "change"
            channel = f"python Path.open({mode!r})" if mode is not None else "python Path.open(mode)"
        if action is not None:
            self.out.append(Target(channel, action, value, word, None, method in ("rename", "replace")))
        if method in ("rename", "replace", "link_to"):
            destination = args[0] if args and type(args[0]) is not ast.Starred else self.arg(node, 99, "target")
            self.emit(channel, "move onto" if action else "create", destination, node)

    def shell(self, node, name, command, cwd=MISSING):
        if command is MISSING:
            return None
        text = self.text(command)
        word = self.segment(command if command is not UNKNOWN else node)
        if text is None:
            return self.out.append(Target(f"python {name}", "run", None, word))
        self.script(text, word, cwd)

    def script(self, text, word, cwd=MISSING):
        if cwd is not MISSING:
            directory = self.text(cwd)
            text = f"cd {quote(directory) if directory is not None else UNKNOWN_SHELL_WORD} && {text}"
        self.out.append(Script("sh", text, word))

    def words(self, items):
        """Argument values as shell words; a value the analysis cannot know becomes an unknown variable,
        so the engine judges the program and fails closed only where that word is a write target."""
        return [quote(text) if text is not None else UNKNOWN_SHELL_WORD for text in map(self.text, items)]

    def subprocess(self, node, name):
        command = self.arg(node, 0, "args")
        if command is MISSING:
            return None
        shell, cwd = self.arg(node, 99, "shell"), self.arg(node, 99, "cwd")
        as_shell = shell is not MISSING and not (type(shell) is ast.Constant and not shell.value)
        items = self.items(command) if command is not UNKNOWN else None
        if items is None:
            text = self.text(command)
            if as_shell or text is None:
                return self.shell(node, name, command, cwd)
            return self.script(quote(text), self.segment(command), cwd)  # one program, no arguments
        if as_shell:  # the first item is the shell script, the rest its $0, $1…
            return self.shell(node, name, items[0] if items else MISSING, cwd)
        if items:
            self.script(" ".join(self.words(items)), self.segment(command), cwd)

    def exec_argv(self, node, name, program_at, argv_at):
        program = self.text(self.arg(node, program_at, "path" if name.startswith("os.") else "program"))
        if argv_at is None:
            argv = self.arg(node, program_at + 1, "argv" if "posix" in name else "args")
            items = self.items(argv) if argv not in (MISSING, UNKNOWN) else None
            items = items[1:] if items else items  # argv[0] is the program's own name
        else:
            items = node.args[argv_at:]
            if any(type(item) is ast.Starred for item in items):
                items = None
        if program is None or items is None:
            return self.out.append(Target(f"python {name}", "run", None, self.segment(node)))
        self.script(" ".join([quote(program)] + self.words(items)), self.segment(node))

    def nested(self, node, name):
        source = self.arg(node, 0, "source")
        text = self.text(source)
        if text is None:
            if source is not MISSING:
                self.out.append(Target(f"python {name}", "run", None, self.segment(node)))
        elif self.depth >= MAX_EXEC_DEPTH:
            self.out.append(cannot_analyse("exec nested too deeply"))
        else:
            self.out.extend(python_writes(text, self.depth + 1))

    def fileinput(self, node, name):
        inplace = self.arg(node, 99, "inplace")
        if inplace is MISSING or (type(inplace) is ast.Constant and not inplace.value):
            return None
        files = self.arg(node, 0, "files")
        items = self.items(files) if type(files) in (ast.List, ast.Tuple) else [files]
        for item in items or [UNKNOWN]:
            self.emit(f"python {name}(inplace=True)", "change", item if item is not MISSING else UNKNOWN, node)


KNOWN = frozenset(OPENERS) | frozenset(PATH_FUNCTIONS) | SHELL_STRING | SUBPROCESS | frozenset(EXEC_ARGV) | {
    "os.open", "os.chdir", "Path", "PurePath", "fileinput.input", "fileinput.FileInput", "os.path.join"}
_Analysis.known = KNOWN
