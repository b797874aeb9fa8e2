"""`memory patterns`: patterns.json (add, list, remove, fail closed), `applicable()`, and `extract`,
which turns a lesson seen in >= 2 distinct outcomes into a candidate skill and an avoid item."""

import json
import os
import threading
from pathlib import Path

import pytest

from maestro.memory.project import learn, outcomes
from maestro.memory.project import patterns
from maestro.memory.project.files import ProjectMemory

pytestmark = pytest.mark.timeout(60)

CHECK = outcomes.failure_signature("pytest -q", "FAILED tests/test_a.py::test_x - assert 1 == 2 (0.52s)")
OTHER = outcomes.failure_signature("pytest -q", "FAILED tests/test_b.py::test_y - KeyError")


@pytest.fixture
def memory(project):
    return ProjectMemory.for_cwd(str(project))


def save(memory, *, checks=(), didnt=(), files=("src/a.py",), state="STUCK", day=1, named=()):
    attempts = [{"n": n, "result": "verify_failed", "check": check, "summary": "tried"} for n, check in
                enumerate(checks, 1)]
    rec = outcomes.record(kind="loop", task_id="plan-abc12345", state=state, started_at=f"2026-01-{day:02d}T00:00:00Z",
                          ended_at=f"2026-01-{day:02d}T01:00:00Z", attempts=attempts, files_changed=files,
                          what_didnt=didnt, files_named=named)
    outcomes.save(memory, rec)
    return rec


def text(path):
    return Path(path).read_text(encoding="utf-8")


def extract(maestro, project, *extra):
    result = maestro("memory", "patterns", "extract", "--cwd", str(project), "--json", *extra)
    assert result.rc == 0, result.err
    return json.loads(result.out)


def candidates(memory):
    root = memory.candidate_skills
    return sorted(os.listdir(root)) if os.path.isdir(root) else []


def tree(memory):
    found = {}
    for dirpath, _, names in os.walk(memory.dir):
        for name in names:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, memory.dir)] = handle.read()
    return found


def test_one_observation_makes_no_candidate(maestro, project, memory):
    save(memory, checks=[CHECK])
    result = extract(maestro, project)
    assert result["candidates"] == [] and result["lessons"] == 1
    assert candidates(memory) == [] and not os.path.exists(memory.patterns_file)


def test_two_outcomes_make_one_candidate_with_two_observations_and_an_avoid_item(maestro, project, memory):
    first = save(memory, checks=[CHECK], files=["src/a.py"], day=1)
    second = save(memory, checks=[CHECK], files=["src/b.py"], day=2)
    result = extract(maestro, project)
    assert [c["action"] for c in result["candidates"]] == ["created"]
    (slug,) = candidates(memory)
    assert slug.startswith("check-pytest-q-failed")
    lines = text(os.path.join(memory.candidate_skills, slug, "observations.jsonl")).splitlines()
    observations = [json.loads(line) for line in lines]
    assert [o["outcome"] for o in observations] == [first["id"], second["id"]]
    assert all({"ts", "outcome", "task", "prediction", "actual", "match", "notes"} <= set(o) for o in observations)
    assert observations[0]["actual"] == "STUCK" and observations[0]["match"] is True
    md = text(os.path.join(memory.candidate_skills, slug, "candidate-skill.md"))
    assert md.startswith("---\nname: verify check keeps failing: pytest -q :: FAILED")
    assert "status: candidate\nconfidence: low\noccurrences: 2\n" in md
    assert "## What to do" in md and "--max-iters" in md and "## When this applies" in md
    doc = json.loads(text(memory.patterns_file))
    (item,) = doc["avoid"]
    assert item["id"] == "A001" and item["candidate"] == slug and item["applies_to"] == ["src/a.py", "src/b.py"]
    assert first["id"] in item["source"] and second["id"] in item["source"] and item["confidence"] == "low"
    assert doc["version"] == 1 and doc["project"] == memory.project and doc["last_updated"].endswith("Z")


def test_two_failing_attempts_of_one_stuck_run_are_one_outcome_not_a_candidate(maestro, project, memory):
    save(memory, checks=[CHECK, CHECK], state="STUCK", day=1)
    result = extract(maestro, project)
    assert result["candidates"] == [] and result["lessons"] == 1
    assert candidates(memory) == [] and not os.path.exists(memory.patterns_file)
    save(memory, checks=[CHECK], state="STUCK", day=2)  # a second outcome with the same check
    result = extract(maestro, project)
    assert [(c["action"], c["occurrences"]) for c in result["candidates"]] == [("created", 3)]
    (slug,) = candidates(memory)
    assert len(text(os.path.join(memory.candidate_skills, slug, "observations.jsonl")).splitlines()) == 3


def test_applies_to_is_the_union_of_files_changed_and_files_named(maestro, project, memory):
    save(memory, checks=[CHECK], files=[], named=["src/plan_named.py"], day=1)
    save(memory, checks=[CHECK], files=["src/b.py"], named=["src/plan_named.py", "docs/x.md"], day=2)
    extract(maestro, project)
    (item,) = json.loads(text(memory.patterns_file))["avoid"]
    assert item["applies_to"] == ["docs/x.md", "src/b.py", "src/plan_named.py"]
    doc = patterns.load(memory)
    assert [i["id"] for i in patterns.applicable(doc, ["src/plan_named.py"])] == [item["id"]]
    assert patterns.applicable(doc, ["src/elsewhere.py"]) == []


def test_a_stuck_run_that_changed_and_named_nothing_gives_an_avoid_item_that_applies_nowhere(maestro, project, memory):
    save(memory, checks=[CHECK], files=[], day=1)
    save(memory, checks=[CHECK], files=[], day=2)
    extract(maestro, project)
    (item,) = json.loads(text(memory.patterns_file))["avoid"]
    assert item["applies_to"] == [] and "lesson" in item
    doc = patterns.load(memory)
    assert patterns.applicable(doc, ["src/a.py"]) == [] and patterns.applicable(doc, []) == []
    listed = maestro("memory", "patterns", "list", "--file", "src/a.py", "--cwd", str(project), "--json")
    assert listed.rc == 0 and json.loads(listed.out)["items"] == []


def test_rerunning_extract_changes_no_byte_and_new_observations_are_appended_once(maestro, project, memory):
    save(memory, checks=[CHECK], didnt=["Test setup took  2 retries"], day=1)
    save(memory, checks=[CHECK], didnt=["test setup took 2 retries"], day=2)
    extract(maestro, project)
    before = tree(memory)
    again = extract(maestro, project)
    assert {c["action"] for c in again["candidates"]} == {"unchanged"} and not again["patterns_written"]
    assert tree(memory) == before
    save(memory, checks=[CHECK], day=3)
    third = extract(maestro, project)
    changed = {c["slug"]: (c["action"], c["added"], c["occurrences"], c["confidence"]) for c in third["candidates"]}
    assert sorted(changed.values()) == [("unchanged", 0, 2, "low"), ("updated", 1, 3, "medium")]
    slug = next(s for s, v in changed.items() if v[0] == "updated")
    assert len(text(os.path.join(memory.candidate_skills, slug, "observations.jsonl")).splitlines()) == 3
    assert len(json.loads(text(memory.patterns_file))["avoid"]) == 2


def test_different_checks_are_separate_lessons(maestro, project, memory):
    save(memory, checks=[CHECK, OTHER], day=1)
    save(memory, checks=[OTHER], day=2)
    result = extract(maestro, project)
    assert result["lessons"] == 2
    assert [(c["occurrences"]) for c in result["candidates"]] == [2]
    assert "test_b" in result["candidates"][0]["title"]


def test_volatile_parts_are_normalised_so_two_signatures_match(maestro, project, memory):
    one = outcomes.failure_signature("pytest -q", "FAILED t.py::x - assert 3 == 4 in 1.25s at 0xdeadbeef")
    two = outcomes.failure_signature("pytest  -q", "FAILED t.py::x - assert 5 == 6 in 0.02s at 0x1234abcd")
    assert one == two
    save(memory, checks=[one], day=1)
    save(memory, checks=[two], day=2)
    assert [c["occurrences"] for c in extract(maestro, project)["candidates"]] == [2]


def test_dry_run_writes_nothing(maestro, project, memory):
    save(memory, checks=[CHECK], day=1)
    save(memory, checks=[CHECK], day=2)
    before = tree(memory)
    result = extract(maestro, project, "--dry-run")
    assert [c["action"] for c in result["candidates"]] == ["created"] and result["dry_run"]
    assert tree(memory) == before


def test_promoted_or_archived_status_survives_reextraction(maestro, project, memory):
    save(memory, checks=[CHECK], day=1)
    save(memory, checks=[CHECK], day=2)
    extract(maestro, project)
    (slug,) = candidates(memory)
    assert maestro("memory", "skill", "archive", slug, "--reason", "not useful", "--cwd", str(project)).rc == 0
    save(memory, checks=[CHECK], day=3)
    result = extract(maestro, project)
    assert [(c["status"], c["added"]) for c in result["candidates"]] == [("archived", 1)]
    assert "archive_reason: not useful" in text(os.path.join(memory.candidate_skills, slug, "candidate-skill.md"))


def test_malformed_patterns_json_fails_closed_and_stays_untouched(maestro, project, memory):
    save(memory, checks=[CHECK], day=1)
    save(memory, checks=[CHECK], day=2)
    os.makedirs(os.path.dirname(memory.patterns_file), exist_ok=True)
    for raw in (b"{not json", b'{"version": 1, "patterns": {}}', b'{"avoid": [{"id": "X1", "title": "t"}]}'):
        with open(memory.patterns_file, "wb") as handle:
            handle.write(raw)
        for args in (("extract",), ("add", "--title", "x"), ()):
            result = maestro("memory", "patterns", *args, "--cwd", str(project))
            assert result.rc == 3, (raw, args, result)
            assert len(result.err.strip().splitlines()) == 1 and "patterns.json" in result.err
            assert Path(memory.patterns_file).read_bytes() == raw
        assert candidates(memory) == []
    result = maestro("memory", "patterns", "--cwd", str(project), "--json")
    assert json.loads(result.out)["error"]["reason"] == "malformed"


def test_add_list_remove_and_ids(maestro, project, memory):
    def run(*args):
        return maestro("memory", "patterns", *args, "--cwd", str(project))

    assert run("add", "--title", "JWT auth follows express-jwt", "--confidence", "high",
               "--applies-to", "src/auth", "lib/*.py").rc == 0
    assert run("add", "--title", "bcrypt sync", "--avoid", "--reason", "blocks the event loop").rc == 0
    assert run("add", "--title", "second", "--source", "epic x").rc == 0
    doc = json.loads(text(memory.patterns_file))
    assert [p["id"] for p in doc["patterns"]] == ["P001", "P002"] and doc["avoid"][0]["id"] == "A001"
    assert doc["patterns"][0] == {"id": "P001", "title": "JWT auth follows express-jwt", "source": "manual",
                                  "confidence": "high", "applies_to": ["src/auth", "lib/*.py"]}
    assert doc["avoid"][0]["reason"] == "blocks the event loop"
    listed = run("list", "--file", "src/auth/jwt.py")
    assert "P001" in listed.out and "A001" in listed.out and "P002" in listed.out
    assert run("remove", "P001").rc == 0
    assert run("remove", "P001").rc == 4
    assert run("remove", "../x").rc == 3
    assert run("add", "--title", "third").rc == 0
    assert [p["id"] for p in json.loads(text(memory.patterns_file))["patterns"]] == ["P002", "P003"]
    assert run("add", "--title", "x", "--avoid").rc == 3  # avoid needs a reason


def test_a_secret_in_a_title_or_reason_never_reaches_disk(maestro, project, memory):
    secret = "sk-abcdefghijklmnopqrstuvwxyz123456"
    result = maestro("memory", "patterns", "add", "--title", f"use the key {secret} carefully", "--avoid",
                     "--reason", "password=hunter2hunter2 was in a log", "--cwd", str(project))
    assert result.rc == 0
    raw = text(memory.patterns_file)
    assert secret not in raw and "hunter2" not in raw and "[Filtered:" in raw
    assert maestro("memory", "patterns", "add", "--title", secret, "--cwd", str(project)).rc == 3  # only a secret
    save(memory, didnt=[f"leaked {secret} in a log"], day=1)
    save(memory, didnt=[f"leaked {secret} in a log"], day=2)
    extract(maestro, project)
    written = {name: data for name, data in tree(memory).items() if not name.startswith("outcomes")}
    assert written and all(secret.encode() not in data for data in written.values())
    assert len(candidates(memory)) == 1
    for slug in candidates(memory):
        for name in ("candidate-skill.md", "observations.jsonl"):
            assert secret not in text(os.path.join(memory.candidate_skills, slug, name))


def test_concurrent_extracts_do_not_lose_updates(project, memory):
    for day in (1, 2):
        save(memory, checks=[CHECK, OTHER], didnt=["flaky network"], day=day)
    errors = []

    def work():
        try:
            learn.extract(memory)
        except Exception as exc:  # noqa: BLE001 - any failure is reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(json.loads(text(memory.patterns_file))["avoid"]) == 3 and len(candidates(memory)) == 3
    for slug in candidates(memory):
        assert len(text(os.path.join(memory.candidate_skills, slug, "observations.jsonl")).splitlines()) == 2


@pytest.mark.parametrize("rules, files, expected", [
    (["src/*.py"], ["src/a.py"], True),
    (["src/auth"], ["src/auth/jwt/token.py"], True),
    (["src/auth"], ["src/authz.py"], False),
    (["./src/auth/"], ["src/auth/x"], True),
    (["docs/*.md"], ["src/a.py"], False),
    (["*"], ["anything"], True),
    ([], [], True),
    (["src"], [], False),
])
def test_applicable_matches_globs_and_prefixes(rules, files, expected):
    doc = {"patterns": [{"id": "P001", "title": "t", "applies_to": rules}], "avoid": []}
    found = patterns.applicable(doc, files)
    assert bool(found) is expected
    if expected:
        assert found[0]["kind"] == "pattern" and found[0]["id"] == "P001"


def test_empty_applies_to_means_everywhere_only_for_hand_added_items():
    doc = {"patterns": [{"id": "P001", "title": "hand", "applies_to": []}],
           "avoid": [{"id": "A001", "title": "hand", "reason": "r", "applies_to": []},
                     {"id": "A002", "title": "hand star", "reason": "r", "applies_to": ["*"]},
                     {"id": "A003", "title": "mined", "reason": "r", "applies_to": [], "lesson": "check:x"},
                     {"id": "A004", "title": "mined", "reason": "r", "lesson": "didnt:y"},
                     {"id": "A005", "title": "mined", "reason": "r", "applies_to": ["src"], "lesson": "check:z"}]}
    assert [i["id"] for i in patterns.applicable(doc, ["src/a.py"])] == ["P001", "A001", "A002", "A005"]
    assert [i["id"] for i in patterns.applicable(doc, [])] == ["P001", "A001", "A002"]


def test_lessons_read_a_missing_or_non_list_files_named_as_empty():
    base = {"id": "o1", "task_id": "t", "state": "STUCK", "attempts": [{"n": 1, "check": "c"}],
            "files_changed": ["a.py"]}
    for named in (None, "src/b.py", 3, {"x": 1}):
        record = dict(base, files_named=named) if named is not None else dict(base)
        (lesson,) = learn.lessons([record])
        assert lesson["files"] == {"a.py"}
    (lesson,) = learn.lessons([dict(base, files_named=["b.py", 7])])
    assert lesson["files"] == {"a.py", "b.py"}


def test_applicable_returns_both_kinds_and_ignores_junk():
    doc = {"patterns": [{"id": "P001", "title": "a", "applies_to": ["lib"]}, "junk", {"id": "P002", "title": "b",
                                                                                      "applies_to": ["x/*"]}],
           "avoid": [{"id": "A001", "title": "c", "reason": "r"}]}
    assert [(i["id"], i["kind"]) for i in patterns.applicable(doc, ["lib/m.py"])] == [("P001", "pattern"),
                                                                                       ("A001", "avoid")]
    assert patterns.applicable(None, ["x"]) == [] and patterns.applicable({"patterns": 3}, ["x"]) == []
