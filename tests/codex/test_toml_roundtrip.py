"""Property test of the top-level key editor over generated real-world config.toml shapes.

A seeded grammar (stdlib `random`, no Hypothesis) builds each document from fragments, knowing
which fragment (if any) is the top-level `model` / `model_reasoning_effort` statement. After
`set_top_level`, removing the pinned statements from the output must give back the input with its
pinned statements removed, byte for byte; tomllib must read the output as the old data plus the
new pins; and a second edit with the same values must change nothing.
"""

import random
import time
import tomllib

import pytest

from maestro.codex.toml_edit import BOM, TomlEditError, set_top_level
from maestro.codex.toml_edit import _same as same  # NaN-aware equality (TOML allows nan)

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)

SEED = 20260820
DOCUMENTS = 1500
KEYS = ("model", "model_reasoning_effort")


class Doc:
    def __init__(self, rng):
        self.rng = rng
        self.eol = "\r\n" if rng.random() < 0.25 else "\n"
        self.parts = []  # (text, pin key or None, (prefix, suffix) for pins)
        self.top_names = set()
        self.counter = 0

    def name(self, stem="k"):
        self.counter += 1
        return f"{stem}{self.counter}"

    def add(self, text, pin=None, around=None):
        self.parts.append((text, pin, around))


def comment(rng):
    return rng.choice(["#", "# plain comment", '# model = "in-a-comment"', "# [not.a.table]",
                       "#model_reasoning_effort=x",
                       "#  ''' \"\"\" unbalanced quotes in a comment", "# ünïcødé ✓"])


def scalar(rng):
    return rng.choice([
        "42", "-17", "+3", "0x1F", "0o755", "0b1010", "1_000", "3.14", "-0.5e10", "inf", "-inf", "nan",
        "true", "false", "1979-05-27T07:32:00Z", "1979-05-27 07:32:00-07:00", "1979-05-27", "07:32:00",
        '"basic"', '"with \\"escaped\\" quotes and \\\\ backslash"', '"unicode \\u00e9 é"', '"has # hash"',
        "'literal \\ no escapes'", "'has \"double\" quotes'", '""', "''",
        '"[looks.like.a.table]"', "'model = \"x\"'",
    ])


def multiline_string(rng, eol):
    body = rng.choice([
        ["[fake.table]", 'model = "inside-a-string"', "model_reasoning_effort = 'x'"],
        ["  [[fake.array]]", "", "# not a comment"],
        ['model = """', "still inside"],
        ["line one", "line two \\", "   continued"],
        ["ends with quotes\"\""],
    ])
    if rng.random() < 0.5:
        body = [line.replace("\\", "\\\\") if not line.endswith("\\") else line for line in body]
        text = '"""' + eol + eol.join(line.replace('"""', '\\"""') for line in body) + '"""'
        return text
    body = [line.replace("'''", "''") for line in body]
    if body[-1].endswith("'") or body[-1].endswith("\\"):
        body[-1] += " end"
    return "'''" + eol + eol.join(body) + "'''"


def array(rng, eol, depth, single_line):
    items = [value(rng, eol, depth + 1, single_line) for _ in range(rng.randint(0, 3))]
    if single_line or rng.random() < 0.5 or not items:
        return "[" + ", ".join(items) + "]"
    lines = ["["]
    for item in items:
        note = rng.choice([" # item comment", " # it's ] unbalanced"]) if rng.random() < 0.3 else ""
        lines.append("  " + item + "," + note)
    if rng.random() < 0.3:
        lines.append(rng.choice(["  # trailing comment, [bracket] inside", '  # "quote and { brace']))
    lines.append("]")
    return eol.join(lines)


def inline_table(rng, eol, depth):
    pairs = []
    for index in range(rng.randint(0, 3)):
        key = rng.choice([f"i{index}", f'"q {index}"', f"'l{index}'", f"d{index}.sub"])
        pairs.append(f"{key} = {value(rng, eol, depth + 1, single_line=True)}")
    return "{ " + ", ".join(pairs) + " }" if pairs else "{}"


ONE_LINE_MULTILINE = ('"""one [line] model = "x" """', "'''one 'line' model = 'y''''")


def value(rng, eol, depth=0, single_line=False):
    """Any TOML value; inside an inline table everything stays on one line (TOML 1.0)."""
    roll = rng.random()
    if depth < 2 and roll < 0.15:
        return array(rng, eol, depth, single_line)
    if depth < 2 and roll < 0.25:
        return inline_table(rng, eol, depth)
    if roll < 0.35:
        return rng.choice(ONE_LINE_MULTILINE) if single_line else multiline_string(rng, eol)
    return scalar(rng)


def other_statement(doc):
    rng = doc.rng
    kind = rng.random()
    if kind < 0.15:  # near-miss names that must never be touched
        name = rng.choice(["model_provider", "models", "model-x", "model_reasoning_effort_x", "xmodel",
                           '"model "', "'model_reasoning'", "model_reasoning_summary"])
    elif kind < 0.3:  # dotted keys, some ending in model
        name = rng.choice([f"{doc.name('dot')}.model", f'{doc.name("dot")} . "model"', f"{doc.name('dot')}.a.b",
                           f'site."{doc.name("g")}.com"'])
    elif kind < 0.4:
        name = rng.choice([f'"{doc.name("quoted key ")}"', f"'{doc.name('lit.key')}'", f'"{doc.name("esc")}\\u00e9"'])
    else:
        name = doc.name()
    if name in doc.top_names:
        name = doc.name()
    doc.top_names.add(name)
    spacing = rng.choice([" = ", "=", "   =\t", " =  "])
    tail = rng.choice(["", "", "  # trailing comment", "\t#x", " "])
    return f"{rng.choice(['', '', '  ', chr(9)])}{name}{spacing}{value(rng, doc.eol)}{tail}"


def pin_statement(doc, key):
    rng = doc.rng
    spelled = rng.choice([key, key, f'"{key}"', f"'{key}'"])
    indent = rng.choice(["", "", "  ", "\t"])
    spacing = rng.choice([" = ", "=", "  =  "])
    old = rng.choice(['"old-value"', "'old-literal'", '"""' + doc.eol + 'multi' + doc.eol + 'line"""',
                      "'''old" + doc.eol + "[fake]'''", "7", "true", '["a", "b"]', "{ a = 1 }", '""'])
    tail = rng.choice(["", "", "  # the pin", " "])
    prefix, suffix = indent + spelled + spacing, tail
    return prefix + old + suffix, (prefix, suffix)


def table_section(doc):
    rng = doc.rng
    roll = rng.random()
    name = doc.name("t")
    if roll < 0.2:
        header = f"[[{name}]]"
    elif roll < 0.35:
        header = f'[ {name} . "quoted part" ]'
    elif roll < 0.5:
        header = f"  [{name}.nested]"
    else:
        header = f"[{name}]"
    if rng.random() < 0.3:
        header += "  # header comment"
    lines = [header]
    used = set()
    for _ in range(rng.randint(0, 4)):
        key = rng.choice(["model", "model_reasoning_effort", "command", "args", "env", "enabled", doc.name()])
        if key in used:
            continue
        used.add(key)
        lines.append(f"{rng.choice(['', '  '])}{key} = {value(rng, doc.eol)}")
        if rng.random() < 0.2:
            lines.append(comment(rng))
    if header.startswith("[[") and rng.random() < 0.5:
        lines += [header, "model = \"second-entry\""]
    if rng.random() < 0.3:
        lines.append("")
    return doc.eol.join(lines) + doc.eol


def generate(rng):
    doc = Doc(rng)
    items = []
    for _ in range(rng.randint(0, 8)):
        roll = rng.random()
        if roll < 0.2:
            items.append(("text", comment(rng)))
        elif roll < 0.35:
            items.append(("text", rng.choice(["", "   ", "\t"])))
        else:
            items.append(("text", other_statement(doc)))
    for key in KEYS:
        if rng.random() < 0.6:
            items.insert(rng.randint(0, len(items)), ("pin", key))
    for kind, payload in items:
        if kind == "pin":
            text, around = pin_statement(doc, payload)
            doc.add(text + doc.eol, payload, around)
        else:
            doc.add(payload + doc.eol)
    for _ in range(rng.randint(0, 4)):
        doc.add(table_section(doc))
    if doc.parts and rng.random() < 0.2:  # no trailing newline
        text, pin, around = doc.parts[-1]
        if text.endswith(doc.eol):
            doc.parts[-1] = (text[: -len(doc.eol)], pin, around)
    bom = BOM if rng.random() < 0.1 else b""
    return doc, bom


def source_of(doc, bom):
    return bom + "".join(text for text, _, _ in doc.parts).encode()


def strip_pins(doc, new_text, values):
    """new_text without the pinned statements: replaced ones in place, inserted ones as one line each."""
    old_text = "".join(text for text, _, _ in doc.parts)
    eol = doc.eol if "\n" in old_text else "\n"  # a document without any line ending gets LF
    present = {pin: around for _, pin, around in doc.parts if pin}
    stripped = new_text
    for key in KEYS:
        line = f'{key} = "{values[key]}"'
        if key in present:
            prefix, suffix = present[key]
            text = next(text for text, pin, _ in doc.parts if pin == key)
            candidates = [prefix + f'"{values[key]}"' + suffix + (doc.eol if text.endswith(doc.eol) else "")]
        else:  # a new line; after a last line without a line ending it brings its own in front
            candidates = [line + eol, eol + line]
        found = next((c for c in candidates if c in stripped), None)
        assert found is not None, f"pinned statement for {key} not found as {candidates!r}"
        stripped = stripped.replace(found, "", 1)
    return stripped


def check(doc, bom, values):
    source = source_of(doc, bom)
    old_data = tomllib.loads(source[len(bom):].decode())
    result = set_top_level(source, values)
    assert result.startswith(bom) and not result[len(bom):].startswith(BOM)
    new_text = result[len(bom):].decode()
    assert strip_pins(doc, new_text, values) == "".join(text for text, pin, _ in doc.parts if not pin)
    assert same(tomllib.loads(new_text), {**old_data, **values})
    assert set_top_level(result, values) == result


def test_generated_documents_change_only_the_two_pinned_keys():
    rng = random.Random(SEED)
    started = time.process_time()  # this process's CPU time: what the editor costs, not how busy the machine is
    shapes = {"crlf": 0, "bom": 0, "no-final-newline": 0, "replaced": 0, "inserted": 0, "tables": 0}
    for index in range(DOCUMENTS):
        doc, bom = generate(rng)
        source = source_of(doc, bom)
        try:
            tomllib.loads(source[len(bom):].decode())
        except tomllib.TOMLDecodeError as exc:  # a generator bug, not an editor bug
            pytest.fail(f"generator produced invalid TOML (doc {index}): {exc}\n{source!r}")
        values = {"model": f"gpt-{index}.new_x", "model_reasoning_effort": rng.choice(["low", "xhigh", "max"])}
        try:
            check(doc, bom, values)
        except AssertionError as exc:
            raise AssertionError(f"document {index}:\n{source!r}\n{exc}") from None
        text = source.decode("utf-8", "replace")
        shapes["crlf"] += "\r\n" in text
        shapes["bom"] += bool(bom)
        shapes["no-final-newline"] += bool(text) and not text.endswith("\n")
        shapes["replaced"] += any(pin for _, pin, _ in doc.parts)
        shapes["inserted"] += sum(1 for _, pin, _ in doc.parts if pin) < 2
        shapes["tables"] += "[" in text
    assert all(count >= 50 for count in shapes.values()), shapes
    assert time.process_time() - started < 20


@pytest.mark.parametrize(
    "source, expected",
    [
        (b"", b'model = "m"\nmodel_reasoning_effort = "e"\n'),
        (BOM, BOM + b'model = "m"\nmodel_reasoning_effort = "e"\n'),
        (b"# only a comment", b'model = "m"\nmodel_reasoning_effort = "e"\n# only a comment'),
        (b"a = 1", b'a = 1\nmodel = "m"\nmodel_reasoning_effort = "e"'),
        (b"a = 1\r\n[t]\r\n", b'a = 1\r\nmodel = "m"\r\nmodel_reasoning_effort = "e"\r\n[t]\r\n'),
        (b"model_reasoning_effort = 'x' # c\nmodel = \"\"\"\n[t]\n\"\"\"\n",
         b"model_reasoning_effort = \"e\" # c\nmodel = \"m\"\n"),
        (b"[t]\nmodel = 1\n", b'model = "m"\nmodel_reasoning_effort = "e"\n[t]\nmodel = 1\n'),
        (b"'model'='x'\na = [\n  1, # ]\n]\nmodel_reasoning_effort = \"y\"\n",
         b"'model'=\"m\"\na = [\n  1, # ]\n]\nmodel_reasoning_effort = \"e\"\n"),
    ],
)
def test_exact_edits(source, expected):
    assert set_top_level(source, {"model": "m", "model_reasoning_effort": "e"}) == expected


@pytest.mark.parametrize(
    "source, fragment",
    [
        (b"model.x = 1\n", "dotted key 'model.x'"),
        (b"[model]\nx = 1\n", "'model' is defined as a table"),
        (b"[[model_reasoning_effort]]\n", "'model_reasoning_effort' is defined as a table"),
        (b"a = \n", "not valid TOML"),
        (b"a = 1\rb = 2\n", "not valid TOML"),
        (b"a = '\xff'\n", "not UTF-8"),
    ],
)
def test_documents_that_cannot_be_edited_safely_are_refused(source, fragment):
    with pytest.raises(TomlEditError, match=fragment.replace(".", r"\.").replace("[", r"\[")):
        set_top_level(source, {"model": "m", "model_reasoning_effort": "e"})


@pytest.mark.parametrize("broken", ['"x" "y"', '"not-the-pin"'])
def test_an_edit_that_does_not_read_back_is_refused(monkeypatch, broken):
    from maestro.codex import toml_edit

    monkeypatch.setattr(toml_edit, "basic_string", lambda value: broken)
    with pytest.raises(TomlEditError, match="would not read back"):
        set_top_level(b'model = "old"\n', {"model": "m"})


def test_values_are_written_as_escaped_basic_strings():
    result = set_top_level(b"", {"model": 'a"b\\c\n'})
    assert tomllib.loads(result.decode())["model"] == 'a"b\\c\n'
