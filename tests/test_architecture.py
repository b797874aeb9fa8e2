"""The house plan holds (docs/ARCHITECTURE.md): no import runs up a layer, no two modules import each other
(directly or around a circle), no module is over 400 lines, and every verb is found in one hop.

Imports are read with `ast` from the source tree, function-level (lazy) imports included: an import that
is deferred to save start-up time is still a dependency.
"""

import ast
from pathlib import Path

import pytest

from testing import ROOT

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)

PACKAGE = ROOT / "maestro"
MAX_LINES = 400

# What each part of maestro may import, besides itself. The first matching prefix (longest first) names
# a module's part. docs/ARCHITECTURE.md explains the layers; keep the two in step.
FOUNDATION = ("maestro", "maestro.errors", "maestro.util")
BASE = FOUNDATION + ("maestro.paths", "maestro.knobs", "maestro.runtime", "maestro.crash", "maestro.direct_edit",
                     "maestro.messages")
DOMAIN = BASE + ("maestro.codex", "maestro.locks", "maestro.provenance", "maestro.memory", "maestro.memory.store")
ALLOWED = {
    "maestro": (),
    "maestro.errors": (),
    "maestro.util": ("maestro", "maestro.errors"),
    "maestro.paths": FOUNDATION,
    "maestro.knobs": FOUNDATION,
    "maestro.runtime": FOUNDATION,
    "maestro.crash": FOUNDATION + ("maestro.paths",),
    "maestro.messages": FOUNDATION,
    "maestro.direct_edit": FOUNDATION + ("maestro.paths",),
    "maestro.codex": BASE,
    "maestro.locks": BASE,
    "maestro.provenance": BASE,
    "maestro.memory": (),
    "maestro.memory.store": BASE + ("maestro.memory", "maestro.locks"),
    "maestro.install": BASE + ("maestro.codex",),
    "maestro.memory.project": DOMAIN + ("maestro.install",),
    "maestro.workflow": DOMAIN + ("maestro.memory.project",),
    "maestro.hooks": DOMAIN + ("maestro.memory.project",),
    "maestro.commands": DOMAIN + ("maestro.memory.project", "maestro.install", "maestro.workflow"),
    "maestro.cli": FOUNDATION + ("maestro.crash",),
    "maestro.__main__": ("maestro", "maestro.cli"),
}


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path = PACKAGE) -> dict:
    return {module_name(path, root): path for path in sorted(root.rglob("*.py"))}


def imports_of(path: Path, known) -> set:
    """The maestro modules `path` imports; `from P import name` counts as P.name when that is a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in known else node.module
                     for alias in node.names]
        else:
            continue
        found.update(name for name in names if name == "maestro" or name.startswith("maestro."))
    return found


def private_names_crossing(path: Path, known) -> list:
    """`_name`s of other maestro modules this file uses: imported by name, or read off an imported module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    bound, found = {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("maestro"):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in known:
                    bound[alias.asname or alias.name] = full
                elif alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in known:
                    bound[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            found.append(f"{bound[node.value.id]}.{node.attr}")
    return sorted(set(found))


def graph(root: Path = PACKAGE) -> dict:
    known = modules(root)
    return {name: imports_of(path, known) - {name} for name, path in known.items()}


def part_of(module: str) -> str:
    matches = [part for part in ALLOWED if module == part or module.startswith(part + ".")]
    return max(matches, key=len) if matches else module


def upward_imports(edges: dict) -> list:
    bad = []
    for importer, targets in sorted(edges.items()):
        own = part_of(importer)
        allowed = set(ALLOWED.get(own, ())) | {own}
        for target in sorted(targets):
            if part_of(target) not in allowed:
                bad.append(f"{importer} imports {target} ({own} may import only {', '.join(sorted(allowed))})")
    return bad


def cycles(edges: dict) -> list:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in edges:
                    continue
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


# ------------------------------------------------------------------------------------------- the rules


def test_no_module_imports_from_a_layer_above_it():
    assert upward_imports(graph()) == []


def test_no_two_modules_import_each_other_directly_or_around_a_circle():
    assert cycles(graph()) == []


def test_no_module_uses_another_modules_private_names():
    known = modules()
    crossing = {name: names for name, path in known.items() if (names := private_names_crossing(path, known))}
    assert crossing == {}


def test_every_module_maps_to_a_known_part_of_the_house():
    assert [name for name in modules() if part_of(name) not in ALLOWED] == []


def test_no_module_is_over_400_lines():
    long = {str(path.relative_to(ROOT)): n for path in PACKAGE.rglob("*.py")
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_every_verb_lives_in_the_module_named_after_it():
    from maestro.cli import VERBS

    hooks = {"gate", "inject", "session-start", "stop"}
    for verb, (module, _) in VERBS.items():
        home = "maestro.hooks" if verb in hooks else "maestro.commands"
        expected = f"{home}.{verb.replace('-', '_')}" + (".main" if verb == "memory" else "")
        assert module == expected, verb
        assert (ROOT / (module.replace(".", "/") + ".py")).is_file(), verb


def test_every_memory_subcommand_lives_in_the_module_named_after_it():
    from maestro.commands.memory.main import SUBCOMMANDS

    for sub, (target, _) in SUBCOMMANDS.items():
        module, _, function = target.partition(":")
        stem = "codemap" if sub.startswith("codemap-") else sub.replace("-", "_")
        assert module == f"maestro.commands.memory.{stem}", sub
        source = (ROOT / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8")
        assert f"def {function}(" in source, sub  # defined there, not re-exported from the domain


# ------------------------------------------------------------------ the checker itself can fail


@pytest.fixture
def toy(tmp_path):
    def make(files: dict) -> dict:
        for rel, text in files.items():
            path = tmp_path / "maestro" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return graph(tmp_path / "maestro")

    return make


def test_an_import_from_a_higher_layer_is_reported_even_when_it_is_deferred_into_a_function(toy):
    edges = toy({"__init__.py": "", "util/__init__.py": "", "util/text.py": "def f():\n    from maestro.hooks import gate\n",
                 "hooks/__init__.py": "", "hooks/gate.py": "from maestro.util import text\n"})
    assert upward_imports(edges) == [
        "maestro.util.text imports maestro.hooks.gate (maestro.util may import only maestro, maestro.errors, maestro.util)"]


def test_a_private_name_taken_from_another_module_is_reported(tmp_path):
    package = tmp_path / "maestro"
    (package / "locks").mkdir(parents=True)
    for rel in ("__init__.py", "locks/__init__.py", "locks/joblock.py"):
        (package / rel).write_text("")
    user = package / "status.py"
    user.write_text("from maestro.locks import joblock\nfrom maestro.locks.joblock import _read as r\n"
                    "def f(lock):\n    return joblock._holder_alive(lock), joblock.public(lock), r\n")
    assert private_names_crossing(user, modules(package)) == [
        "maestro.locks.joblock._holder_alive", "maestro.locks.joblock._read"]


def test_two_modules_importing_each_other_through_a_third_are_a_cycle(toy):
    edges = toy({"__init__.py": "", "a.py": "import maestro.b\n", "b.py": "from maestro import c\n",
                 "c.py": "from maestro.a import x\n", "d.py": "import maestro.a\n"})
    assert cycles(edges) == [["maestro.a", "maestro.b", "maestro.c"]]
