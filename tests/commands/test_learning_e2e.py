"""maestro learns from its own work, end to end (issue 6's acceptance): three real loop runs in a
temp repo with the fake companion — one VERIFIED_DONE, one STUCK on the same failing check twice,
one NEEDS_ANSWERS — leave three outcomes, one candidate skill mined from the repeated failure,
handoffs for the open tasks only, and a session-start context that names the open task and stays
within Claude Code's 10,000-character cap."""

import json
import subprocess

import pytest
from testing.processes import run

pytestmark = pytest.mark.timeout(120)

CHECK = "grep -q 'VALUE = 2' app.py || { echo 'FAILED check_value: VALUE is not 2 (took 0.31s)'; exit 1; }"
NO_EDIT_DONE = {"final_message": "Looked at it.\nRESULT: DONE"}
EDIT_DONE = {"final_message": "Edited app.py.\nRESULT: DONE", "edits": {"app.py": "VALUE = 2\n"}}
QUESTIONS = "RESULT: NEEDS_ANSWERS\nQUESTIONS:\n1. Which module owns VALUE?\n2. May I rename it?"


def write_plan(repo, name, title):
    path = repo.parent / name
    path.write_text(f"# {title}\n\nSet VALUE to 2 in app.py.\n")
    return path


def loop(repo, plan_path, *extra):
    return run("loop", "--plan", str(plan_path), "--verify", CHECK, "--poll", "1", *extra, cwd=repo)


def memory_json(repo, *args):
    result = run("memory", *args, "--cwd", str(repo), "--json", cwd=repo)
    assert result.rc == 0, result.out + result.err
    return json.loads(result.out)


def test_three_runs_leave_outcomes_a_candidate_skill_a_handoff_and_a_resume_line(repo, fake, home):
    done_plan = write_plan(repo, "value.md", "Set the value")
    fake.set(turn_seconds=0, script=[NO_EDIT_DONE, EDIT_DONE])
    assert loop(repo, done_plan).rc == 0  # fails the check once, then passes

    subprocess.run(["git", "checkout", "--", "app.py"], cwd=repo, check=True)
    stuck_plan = write_plan(repo, "stuck.md", "Make the value configurable")
    fake.set(turn_seconds=0, **NO_EDIT_DONE)
    assert loop(repo, stuck_plan, "--max-iters", "2").rc == 12

    open_plan = write_plan(repo, "rename.md", "Rename the value")
    fake.set(turn_seconds=0, final_message=QUESTIONS)
    assert loop(repo, open_plan).rc == 10

    outcomes = memory_json(repo, "outcome", "list")["outcomes"]
    assert sorted(o["state"] for o in outcomes) == ["NEEDS_ANSWERS", "STUCK", "VERIFIED_DONE"]
    by_state = {o["state"]: o for o in outcomes}
    assert by_state["VERIFIED_DONE"]["files_changed"] == ["app.py"]
    assert by_state["VERIFIED_DONE"]["iterations"] == 2 and by_state["VERIFIED_DONE"]["verify"]["last_rc"] == 0
    stuck = by_state["STUCK"]
    assert [a["result"] for a in stuck["attempts"]] == ["verify-failed", "verify-failed"]
    assert stuck["attempts"][0]["check"] == stuck["attempts"][1]["check"] == by_state["VERIFIED_DONE"]["attempts"][0]["check"]
    assert "FAILED check_value: VALUE is not <n> (took <time>)" in stuck["attempts"][0]["check"]
    assert "Which module owns VALUE?" in by_state["NEEDS_ANSWERS"]["questions"]

    extracted = run("memory", "patterns", "extract", "--cwd", str(repo), cwd=repo)
    assert extracted.rc == 0, extracted.out + extracted.err
    project_dir = next((home / ".maestro" / "memory" / "projects").iterdir())
    candidates = sorted(p.name for p in (project_dir / "candidate-skills").iterdir())
    assert len(candidates) == 1
    skill_dir = project_dir / "candidate-skills" / candidates[0]
    assert (skill_dir / "candidate-skill.md").read_text().startswith("---")
    observations = [json.loads(line) for line in (skill_dir / "observations.jsonl").read_text().splitlines()]
    assert len(observations) == 3  # once in the first run, twice in the stuck one

    handoffs = {p.stem: json.loads(p.read_text()) for p in (project_dir / "handoffs").glob("*.json")}
    assert sorted(h["state"] for h in handoffs.values()) == ["NEEDS_ANSWERS", "STUCK"]  # nothing for the done task
    needs = next(h for h in handoffs.values() if h["state"] == "NEEDS_ANSWERS")
    assert needs["plan"] == str(open_plan) and "May I rename it?" in needs["questions"]

    payload = json.dumps({"session_id": "resume-1", "source": "startup", "cwd": str(repo)})
    context = run("session-start", stdin=payload, cwd=repo)
    assert context.rc == 0
    assert (f"Resuming: Rename the value — NEEDS_ANSWERS after 1 iteration; answer QUESTIONS in {open_plan}"
            in context.out)
    assert "Resuming: Make the value configurable — STUCK after 2 iterations" in context.out
    assert "Set the value" not in context.out.split("Known patterns")[0]
    assert "Known patterns for the files in play:" in context.out and "check_value" in context.out
    assert len(context.out) < 10_000
