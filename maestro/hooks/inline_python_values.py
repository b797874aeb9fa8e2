"""What the expressions of inline Python mean, statically: bindings, dotted names, literal values.

The base of the analysis in hooks/inline_python.py (imported only when a Bash command runs inline
Python, so `ast` at module level is paid only then). Flow-insensitive on purpose: a name bound
exactly once by a plain assignment stands for that expression everywhere (`p = Path('src/app.py')`);
a name bound twice, by a loop or as a parameter is unknown. Imports are followed under any alias;
a name nobody bound is taken at its word (`os.remove` is os.remove even without `import os`).
Every evaluation draws on one step budget and bounded depths: hostile code cannot make it slow.
"""

import ast
import posixpath

from maestro.hooks.inline_paths import MAX_WORD, join_path

MAX_STEPS = 20000  # evaluation budget per analysis; past it values are unknown (and fail closed)
MAX_VALUE = 4096
PATH_RETURNING = frozenset({"joinpath", "with_name", "with_suffix", "with_stem", "absolute", "resolve",
                            "expanduser"})
PATH_CLASSES = {"Path": "Path", "PosixPath": "Path", "WindowsPath": "Path",
                "PurePath": "PurePath", "PurePosixPath": "PurePath", "PureWindowsPath": "PurePath"}


class _Sentinel:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


MISSING, UNKNOWN = _Sentinel("MISSING"), _Sentinel("UNKNOWN")  # argument not given / not knowable (*args)


class PythonValues:
    """Bindings and values of one parsed program; `known` is the set of API names a star import
    (`from os import *`) can bring in."""

    known = frozenset()

    def __init__(self, code, tree, depth):
        self.code = code
        self.tree = tree
        self.depth = depth
        self.lines = None
        self.imports = {}    # name -> qualified name ("os", "shutil.move"); None when imported as two things
        self.stars = []      # modules imported with `from m import *`
        self.bound = {}      # name -> how often it is bound other than by import
        self.values = {}     # name -> the expression of its (single) plain assignment
        self.calls = []
        self.chdirs = []     # each os.chdir argument's literal value, or None
        self.memo = {}
        self.steps = 0
        self.out = []

    def collect(self):
        a = ast
        stack = [self.tree]
        while stack:
            node = stack.pop()
            stack.extend(a.iter_child_nodes(node))
            kind = type(node)
            if kind is a.Call:
                self.calls.append(node)
            elif kind is a.Name:
                if type(node.ctx) is not a.Load:
                    self.bind(node.id)
            elif kind is a.Assign:
                if len(node.targets) == 1 and type(node.targets[0]) is a.Name:
                    self.values[node.targets[0].id] = node.value
            elif kind is a.AnnAssign or kind is a.NamedExpr:
                if type(node.target) is a.Name and node.value is not None:
                    self.values[node.target.id] = node.value
            elif kind is a.Import:
                for alias in node.names:
                    if alias.asname:
                        self.imported(alias.asname, alias.name)
                    else:
                        first = alias.name.split(".")[0]
                        self.imported(first, first)
            elif kind is a.ImportFrom:
                for alias in node.names:
                    if node.level or not node.module:
                        self.bind(alias.asname or alias.name)
                    elif alias.name == "*":
                        self.stars.append(node.module)
                    else:
                        self.imported(alias.asname or alias.name, f"{node.module}.{alias.name}")
            elif kind in (a.FunctionDef, a.AsyncFunctionDef, a.ClassDef):
                self.bind(node.name)
            elif kind is a.arg:
                self.bind(node.arg)
            elif kind in (a.ExceptHandler, a.MatchAs, a.MatchStar) and node.name:
                self.bind(node.name)
            elif kind is a.MatchMapping and node.rest:
                self.bind(node.rest)

    def bind(self, name):
        self.bound[name] = self.bound.get(name, 0) + 1

    def imported(self, name, qualified):
        if self.imports.get(name, qualified) != qualified:
            qualified = None
        self.imports[name] = qualified

    def single_value(self, name):
        """The expression a name stands for, when it is bound exactly once by a plain assignment."""
        if name not in self.imports and self.bound.get(name) == 1:
            return self.values.get(name)
        return None

    def qualify(self, node, depth=0):
        """The dotted name an expression refers to ("os.remove", "Path.write_text"), or None."""
        a = ast
        if depth > 30 or not self.budget():
            return None
        kind = type(node)
        if kind is a.Name:
            name = node.id
            if name in self.imports:
                return self.imports[name] if name not in self.bound else None
            value = self.single_value(name)
            if value is not None:
                return self.qualify(value, depth + 1)
            if name in self.bound:
                return None
            for module in self.stars:
                if canonical(f"{module}.{name}") in self.known:
                    return f"{module}.{name}"
            return name  # a builtin, or a module used without an import: taken at its word
        if kind is a.Attribute:
            base = self.qualify(node.value, depth + 1)
            return f"{base}.{node.attr}" if base else None
        if kind is a.Call and node.args and canonical(self.qualify(node.func, depth + 1)) in (
                "__import__", "importlib.import_module"):
            return self.text(node.args[0])
        return None

    def budget(self) -> bool:
        self.steps += 1
        return self.steps <= MAX_STEPS

    def text(self, node, depth=0):
        """The string (or path) an expression evaluates to when every part is literal, else None."""
        if node is MISSING or node is UNKNOWN:
            return None
        key = id(node)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = None  # a name assigned from itself is unknown, not a loop
        value = self.evaluate(node, depth) if depth <= 40 and self.budget() else None
        if value is not None and len(value) > MAX_VALUE:
            value = None
        self.memo[key] = value
        return value

    def evaluate(self, node, depth):
        a = ast
        kind = type(node)
        if kind is a.Constant:
            if isinstance(node.value, str):
                return node.value
            if isinstance(node.value, bytes):
                return node.value.decode("utf-8", "surrogateescape")
            return None
        if kind is a.JoinedStr:
            parts = []
            for part in node.values:
                if type(part) is a.FormattedValue:
                    if part.format_spec is not None or part.conversion not in (-1, 115):
                        return None
                    part = part.value
                value = self.text(part, depth + 1)
                if value is None:
                    return None
                parts.append(value)
            return "".join(parts)
        if kind is a.BinOp and type(node.op) is a.Add:
            left, right = self.text(node.left, depth + 1), self.text(node.right, depth + 1)
            return left + right if left is not None and right is not None else None
        if kind is a.Name:
            value = self.single_value(node.id)
            return self.text(value, depth + 1) if value is not None else None
        if kind is a.Attribute:
            name = self.qualify(node)
            if name == "sys.executable":  # subprocess.run([sys.executable, "-c", …]) runs Python
                return "python3"
            if name == "os.devnull":
                return "/dev/null"
        if kind is a.Call:
            name = canonical(self.qualify(node.func))
            if name in ("str", "os.fspath", "os.path.normpath", "os.path.abspath", "os.path.realpath"):
                return self.text(node.args[0], depth + 1) if len(node.args) == 1 else None
            if name == "os.path.join":
                return self.joined(node.args, depth)
            if name == "os.path.expanduser":
                value = self.text(node.args[0], depth + 1) if len(node.args) == 1 else None
                return value if value is not None and not value.startswith("~") else None
            if name == "os.getcwd":
                return "."
        return self.path_object(node, depth)[1]

    def joined(self, args, depth):
        parts = [self.text(arg, depth + 1) for arg in args]
        return None if None in parts or any(type(arg) is ast.Starred for arg in args) else join_path(parts)

    def path_object(self, node, depth=0):
        """(is a pathlib.Path, its value or None) for an expression."""
        key = ("path", id(node))
        if key not in self.memo:
            self.memo[key] = (False, None)  # in progress: a name defined through itself is no path
            self.memo[key] = self.evaluate_path(node, depth) if depth <= 40 and self.budget() else (False, None)
        return self.memo[key]

    def evaluate_path(self, node, depth):
        a = ast
        kind = type(node)
        if kind is a.Call:
            name = canonical(self.qualify(node.func))
            if name in ("Path", "PurePath"):
                return name == "Path", self.joined(node.args, depth) if not node.keywords else None
            if name == "Path.cwd":
                return True, "."
            if name == "Path.home":
                return True, None
            func = node.func
            if type(func) is a.Attribute and func.attr in PATH_RETURNING:
                is_path, base = self.path_object(func.value, depth + 1)
                if not is_path:
                    return False, None
                if base is None or func.attr in ("absolute", "resolve"):
                    return True, base
                if func.attr == "expanduser":
                    return True, None if base.startswith("~") else base
                arg = self.text(node.args[0], depth + 1) if len(node.args) == 1 else None
                return True, self.derive(func.attr, base, arg, node.args)
            return False, None
        if kind is a.BinOp and type(node.op) is a.Div:
            left_path, left = self.path_object(node.left, depth + 1)
            right_path, right = self.path_object(node.right, depth + 1)
            if not (left_path or right_path):
                return False, None
            left = left if left_path else self.text(node.left, depth + 1)
            right = right if right_path else self.text(node.right, depth + 1)
            return True, join_path((left, right)) if left is not None and right is not None else None
        if kind is a.Attribute and node.attr == "parent":
            is_path, base = self.path_object(node.value, depth + 1)
            return is_path, (posixpath.dirname(base) or ".") if is_path and base is not None else None
        if kind is a.Name:
            value = self.single_value(node.id)
            return self.path_object(value, depth + 1) if value is not None else (False, None)
        return False, None

    @staticmethod
    def derive(method, base, arg, args):
        if method == "joinpath":
            return join_path((base, arg)) if arg is not None and len(args) == 1 else None
        if arg is None:
            return None
        head, name = posixpath.split(base)
        if method == "with_name":
            return join_path((head, arg))
        stem, suffix = posixpath.splitext(name)
        return join_path((head, stem + arg if method == "with_suffix" else arg + suffix))

    def arg(self, call, position, keyword, default=MISSING):
        """The argument at a position or keyword; UNKNOWN behind *args/**kwargs; `default` when absent."""
        for index, value in enumerate(call.args):
            if type(value) is ast.Starred:
                return UNKNOWN
            if index == position:
                return value
        unknown = False
        for kw in call.keywords:
            if kw.arg is None:
                unknown = True
            elif kw.arg == keyword:
                return kw.value
        return UNKNOWN if unknown else default

    def items(self, node, depth=0):
        """The elements of a literal list/tuple (through names bound once), or None."""
        a = ast
        if type(node) is a.Name and depth < 20 and self.single_value(node.id) is not None:
            return self.items(self.single_value(node.id), depth + 1)
        if type(node) not in (a.List, a.Tuple) or any(type(item) is a.Starred for item in node.elts):
            return None
        return node.elts

    def segment(self, node) -> str:
        """The source text of a node (its first line, at most MAX_WORD characters), for messages."""
        if self.lines is None:
            self.lines = self.code.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        try:
            line = self.lines[node.lineno - 1].encode("utf-8", "surrogatepass")
            end = node.end_col_offset if node.end_lineno == node.lineno else len(line)
            text = line[node.col_offset:end].decode("utf-8", "replace")
        except (AttributeError, IndexError, TypeError):
            text = "…"
        return text if len(text) <= MAX_WORD else text[:MAX_WORD - 1] + "…"


def canonical(name):
    """One spelling per API: builtins.open -> open, posix.remove -> os.remove, pathlib.PosixPath -> Path."""
    if name is None:
        return None
    head, _, rest = name.partition(".")
    if head == "pathlib" and rest.partition(".")[0] in PATH_CLASSES:
        head, _, rest = rest.partition(".")
    suffix = "." + rest if rest else ""
    if head in PATH_CLASSES:
        return PATH_CLASSES[head] + suffix
    if head == "builtins" and rest:
        return rest
    if head == "_io" and rest:
        return "io." + rest
    if head in ("posix", "nt") and rest:
        return "os." + rest
    return name
