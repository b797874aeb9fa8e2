"""Issue 17 item 2: the rules and the plan-authoring skill now send plans to `~/.maestro/plans/<slug>-plan.md`
(`mkdir -p -m 700 ~/.maestro/plans` first). The gate must let the orchestrator write them — a `.md` file is
non-code — with every tool it uses to, next to the gate controls `~/.maestro` also holds. HOME is a real
directory outside every scratch root, so no scratch rule can be what allows these."""

import json

import pytest

from testing.bash_corpus import SID, bash_payload, describe, is_allowed

REPO = "/nonexistent-maestro/repo"

BASH = [
    "mkdir -p -m 700 ~/.maestro/plans",
    "echo x > ~/.maestro/plans/a-plan.md",
    "cat > ~/.maestro/plans/value-plan.md <<'EOF'\n# Plan\n1. edit src/app.py\nEOF",
    "mkdir -p -m 700 ~/.maestro/plans && cat <<'EOF' > ~/.maestro/plans/value-plan.md\nsteps\nEOF",
    "chmod 600 ~/.maestro/plans/value-plan.md",
    'python3 ~/.claude/hooks/maestro.pyz loop --plan ~/.maestro/plans/value-plan.md --verify "pytest -q" --max-iters 4',
    "python3 ~/.claude/hooks/maestro.pyz watchdog --file ~/.maestro/plans/value-plan.md",
]


@pytest.fixture
def plans_home(outside_tmp, monkeypatch):
    home = outside_tmp / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.mark.parametrize("exists", [False, True], ids=["no-plans-dir", "plans-dir"])
@pytest.mark.parametrize("command", BASH)
def test_writing_a_plan_in_the_private_plan_directory_passes_the_gate(maestro, plans_home, command, exists):
    if exists:
        (plans_home / ".maestro" / "plans").mkdir(parents=True, mode=0o700)
    result = maestro("gate", stdin=bash_payload(command, cwd=REPO))
    assert is_allowed(result), f"false block: {command!r} → {describe(result)}"


@pytest.mark.parametrize("tool, field", [("Write", "content"), ("Edit", "new_string"), ("MultiEdit", None)])
def test_editing_a_plan_in_the_private_plan_directory_passes_the_gate(maestro, plans_home, tool, field):
    (plans_home / ".maestro" / "plans").mkdir(parents=True, mode=0o700)
    path = str(plans_home / ".maestro" / "plans" / "a-plan.md")
    tool_input = {"file_path": path}
    if field:
        tool_input[field] = "# Plan\n"
    else:
        tool_input["edits"] = [{"old_string": "a", "new_string": "b"}]
    body = {"session_id": SID, "cwd": REPO, "tool_name": tool, "tool_input": tool_input}
    result = maestro("gate", stdin=json.dumps(body))
    assert is_allowed(result), describe(result)
