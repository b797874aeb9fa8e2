"""The commands maestro tells a person to run, each spelled once.

A recovery hint is a command the user copies from an error line, so every place that prints one
must print the same bytes: the lease's and job lock's refusals, the loop's poison and cancel
notes, `status`, the discuss and write-turn errors and the SessionStart handoff. The hooks'
guidance text (maestro/hooks/guidance.py) keeps its own `PYZ`: importing this module would be
one more import on the hooks' hot path.
"""

PYZ = "python3 ~/.claude/hooks/maestro.pyz"  # the installed archive, as the user types it

LOOP_CLEAR_LEASE = "loop --clear-lease"
LOOP_CLEAR_JOB_LOCK = "loop --clear-job-lock"

CLEAR_LEASE = f"{PYZ} {LOOP_CLEAR_LEASE}"
CLEAR_JOB_LOCK = f"{PYZ} {LOOP_CLEAR_JOB_LOCK}"
STATUS = f"{PYZ} status"
PIN_MODELS = f"{PYZ} model-select <model> <debate-effort> <impl-effort> <impl-model>"
PIN_SCOUT = f"{PYZ} model-select --scout <model> <effort>"
