"""Inline Python that reaches a write API in a way the call-by-call analysis cannot follow.

inline_python.py judges calls whose callee it can name (`os.system(…)`, `open(…, 'w')`). These
spellings reach the same APIs without such a call, so each fails closed (one unresolved target):
- `getattr(X, NAME)` with a computed NAME, or a literal NAME that is a write API of X
  (`getattr(os, 'system')`); `getattr(os, 'sep')` stays allowed;
- `__builtins__`, `X.__dict__`, `globals()[…]` / `vars(…)[…]` / `locals()[…]`, `__import__` /
  `importlib.import_module` of a computed name;
- a write API used as a value and not called (`map(os.system, …)`, `@os.system` decorators,
  `f = open`);
- APIs that run code or open files in ways not modelled: pty.spawn, ctypes/cffi, code
  (InteractiveInterpreter/Console, `.runsource`/`.runcode`), runpy, logging file handlers
  (`logging.basicConfig(filename=…)`, `FileHandler(…)`), `timeit` with code strings;
- maestro itself imported (`import maestro_hook`, `from maestro.cli import main`, `__import__('maestro…')`):
  its verbs (rollback, checkpoints prune, install, …) run in-process, out of the call analysis' sight;
  so does any string constant containing `maestro` (`pkgutil.resolve_name("maestro.cli:main")`,
  `pydoc.locate`, `pickle.loads(b"cmaestro.cli…")`, `mock.patch("maestro.cli.VERBS")`). A name built at
  run time (`"mae" + "stro"`) is beyond a static gate: only computed `__import__` names are caught.
"""

import ast

DANGEROUS_PREFIXES = ("ctypes", "_ctypes", "cffi", "pty.", "code.", "codeop.", "runpy.", "multiprocessing.",
                      "importlib.", "pdb.", "builtins.__import__")
DANGEROUS_METHODS = frozenset(("runsource", "runcode", "interact", "FileHandler", "RotatingFileHandler",
                               "TimedRotatingFileHandler", "WatchedFileHandler", "spawn", "system", "popen",
                               "exec_module", "load_module", "CDLL", "PyDLL", "LoadLibrary"))
TIMEIT_FUNCTIONS = frozenset(("timeit.timeit", "timeit.repeat", "timeit.Timer"))
FAIL = "inline python"
MAESTRO_MODULES = ("maestro", "maestro_hook")  # the package and the archive's hook launcher


def _imports_maestro(module) -> bool:
    return type(module) is str and module.partition(".")[0] in MAESTRO_MODULES


def dynamic_risks(analysis, write_apis) -> list:
    """Targets (path None) for every construct of the module docstring in `analysis.tree`."""
    from maestro.hooks.inline_python_values import canonical
    from maestro.hooks.targets import Target

    a = ast
    analysis.steps = 0  # a fresh budget: the call analysis may have spent its own
    called = set()
    found = []
    nodes = list(a.walk(analysis.tree))
    for node in nodes:
        if type(node) is a.Call:
            called.add(id(node.func))
        elif type(node) is a.Assign and len(node.targets) == 1 and type(node.targets[0]) is a.Name and \
                analysis.single_value(node.targets[0].id) is node.value:
            called.add(id(node.value))  # `r = os.remove`: the analysis follows r to os.remove
    for node in nodes:
        if len(found) >= 4:
            break
        kind = type(node)
        why = None
        if kind is a.Name and node.id in ("__builtins__", "__loader__", "__spec__"):
            why = node.id
        elif kind is a.Attribute and node.attr in ("__dict__", "__builtins__", "__globals__", "__code__",
                                                    "__subclasses__", "__closure__"):
            why = "." + node.attr
        elif kind is a.Subscript and type(node.value) is a.Call and type(node.value.func) is a.Name and \
                node.value.func.id in ("globals", "vars", "locals"):
            why = node.value.func.id + "()[…]"
        elif kind is a.Import and any(_imports_maestro(alias.name) for alias in node.names):
            why = "import maestro"
        elif kind is a.ImportFrom and _imports_maestro(node.module):
            why = "import maestro"
        elif kind is a.Constant and type(node.value) in (str, bytes) and (
                "maestro" in node.value if type(node.value) is str else b"maestro" in node.value):
            why = "a string naming maestro"  # pkgutil.resolve_name, pydoc.locate, pickle, mock.patch …
        elif kind is a.Call:
            why = _call_risk(analysis, node, canonical, write_apis)
        elif kind in (a.Name, a.Attribute) and id(node) not in called and type(getattr(node, "ctx", None)) is a.Load:
            name = canonical(analysis.qualify(node))
            if name in write_apis or (name and name.startswith(DANGEROUS_PREFIXES)):
                why = name + " used as a value"
        if why:
            found.append(Target(FAIL, "run", None, f"({why}: code the gate cannot follow)"))
    return found


def _call_risk(analysis, node, canonical, write_apis):
    a = ast
    name = canonical(analysis.qualify(node.func))
    if name == "getattr" and len(node.args) >= 2:
        attribute = node.args[1]
        if not (type(attribute) is a.Constant and type(attribute.value) is str):
            return "getattr with a computed name"
        base = canonical(analysis.qualify(node.args[0]))
        if base is None and type(node.args[0]) is not a.Name:
            base = "?"
        joined = canonical((base or "") + "." + attribute.value)
        if joined in write_apis or attribute.value in write_apis or attribute.value.startswith("__") or \
                attribute.value in DANGEROUS_METHODS:
            return "getattr(…, " + repr(attribute.value) + ")"
        return None
    if name in ("__import__", "importlib.import_module") and node.args and not (
            type(node.args[0]) is a.Constant and type(node.args[0].value) is str):
        return name + " of a computed name"
    if name in ("__import__", "importlib.import_module") and node.args and _imports_maestro(node.args[0].value):
        return name + "('" + node.args[0].value + "')"
    if name in ("vars", "globals", "locals") and type(node.func) is a.Name:
        return None  # only subscripts of them are a way in (see dynamic_risks)
    if name == "logging.basicConfig" and any(k.arg in ("filename", "handlers") for k in node.keywords):
        return name
    if name in TIMEIT_FUNCTIONS and (node.args or node.keywords):
        return name
    if name and name.startswith(DANGEROUS_PREFIXES) and name not in ("importlib.import_module",):
        return name
    if name and name.rpartition(".")[2] in DANGEROUS_METHODS and not name.startswith(("os.", "subprocess.")):
        return name
    if name is None and type(node.func) is a.Attribute and node.func.attr in DANGEROUS_METHODS:
        return "." + node.func.attr
    return None
