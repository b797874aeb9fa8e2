"""Seeded fuzz of the project-memory readers: whatever sits in outcomes/, handoffs/ and
patterns.json (hand-edited, truncated, hostile), the readers either accept a record or skip it
with a named error — never another exception — and the session-start block stays bounded."""

import json
import os
import random

import pytest

from maestro.memory.project import handoffs
from maestro.memory.project import outcomes
from maestro.memory.project import patterns
from maestro.memory.project import files as project
from maestro.memory.project import context as project_context
from maestro.memory.store.errors import StoreError

pytestmark = [pytest.mark.in_process, pytest.mark.timeout(60)]  # never runs the archive (tests/testing/in_process.py)

ATOMS = [None, True, False, 0, -1, 2**70, 1.5, float("inf"), "", "x", "../x", "a/b", "..", "NEEDS_ANSWERS", "STUCK",
         "VERIFIED_DONE", "loop", "session", "manual", "\u202e\n\x00", "🙂" * 50, "[A001]", "*", "src/"]
KEYS = ["version", "id", "task_id", "kind", "state", "title", "plan", "iterations", "next_command", "questions",
        "files", "attempts", "files_changed", "what_worked", "what_didnt", "patterns", "avoid", "applies_to",
        "reason", "updated_at", "started_at", "doing", "verify"]


def value(rng, depth=0):
    roll = rng.random()
    if depth > 2 or roll < 0.5:
        return rng.choice(ATOMS)
    if roll < 0.75:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(KEYS): value(rng, depth + 1) for _ in range(rng.randint(0, 6))}


def record_like(rng, base):
    doc = dict(base)
    for _ in range(rng.randint(0, 4)):
        doc[rng.choice(KEYS)] = value(rng)
    if rng.random() < 0.2:
        doc.pop(rng.choice(list(doc)), None)
    return doc


def raw_bytes(rng, doc):
    data = json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")
    roll = rng.random()
    if roll < 0.1:
        return data[: rng.randint(0, len(data))]  # torn
    if roll < 0.15:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))
    return data


@pytest.mark.parametrize("seed", range(4))
def test_readers_never_raise_anything_but_a_named_error(tmp_path, seed):
    rng = random.Random(seed)
    memory = project.ProjectMemory(str(tmp_path / "proj"), str(tmp_path / "store"))
    good = outcomes.record(kind="loop", task_id="t-1", state="STUCK", started_at="2026-01-01T00:00:00Z")
    handoff = {"version": 1, "task_id": "a", "kind": "loop", "title": "T", "state": "NEEDS_ANSWERS",
               "iterations": 2, "next_command": "n", "plan": "/p.md", "files": ["app.py"]}
    for n in range(80):
        doc = record_like(rng, good)
        name = doc.get("id") if isinstance(doc.get("id"), str) and project.is_valid_id(doc.get("id")) else f"o{n}"
        path = tmp_path / "store" / "x.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw_bytes(rng, doc))
        try:
            outcomes.validate(project.read_json(str(path)))
        except StoreError:
            pass
        os.makedirs(memory.outcomes, exist_ok=True)
        with open(os.path.join(memory.outcomes, f"{name}.json"), "wb") as handle:
            handle.write(raw_bytes(rng, doc))
        task = handoff["task_id"] if rng.random() < 0.5 else f"h{n}"
        os.makedirs(memory.handoffs, exist_ok=True)
        with open(os.path.join(memory.handoffs, f"{task}.json"), "wb") as handle:
            handle.write(raw_bytes(rng, record_like(rng, dict(handoff, task_id=task))))
        with open(memory.patterns_file, "wb") as handle:
            handle.write(raw_bytes(rng, {"version": 1, "patterns": value(rng), "avoid": value(rng)}))

        errors = []
        assert all(isinstance(item, dict) for item in outcomes.load_all(memory, errors))
        lines = handoffs.resume_lines(memory)
        assert all("\n" not in line and len(line) <= handoffs.LINE_LIMIT for line in lines)
        try:
            doc = project.read_json(memory.patterns_file)
        except StoreError:
            doc = None
        assert isinstance(patterns.applicable(doc, ["app.py", "src/a.py"]), list)
        budget = rng.randint(0, 2500)
        block = project_context.render(str(tmp_path / "store"), memory.project, budget, timeout=1.0)
        assert len(block) <= budget
