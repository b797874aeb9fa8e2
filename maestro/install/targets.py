"""What the installer publishes into ~/.claude, keyed as in the manifest."""

from maestro import runtime

BASE_RULES = ("orchestrator-implementer.md", "coding-discipline.md")
WORKFLOW_RULES = ("workflow.md",)
BASE_SKILLS = ("plan-authoring",)
WORKFLOW_SKILLS = ("ralph-protocol",)
PYZ_KEY = "hooks/maestro.pyz"


def payload_keys(with_workflow: bool):
    rules = BASE_RULES + (WORKFLOW_RULES if with_workflow else ())
    skills = BASE_SKILLS + (WORKFLOW_SKILLS if with_workflow else ())
    return [f"rules/{name}" for name in rules] + [f"skills/{name}/SKILL.md" for name in skills]


def sources(archive: str, keys) -> dict:
    """manifest key -> bytes to publish: the archive (its code compiled by this interpreter, which the hooks
    will run with: archive_code.for_this_python), then the payload `keys` (from payload_keys)."""
    from maestro.install import archive_code

    with open(archive, "rb") as handle:
        result = {PYZ_KEY: archive_code.for_this_python(handle.read())}
    for key in keys:
        result[key] = runtime.payload_bytes(key)
    return result
