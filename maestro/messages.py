"""The commands maestro tells a person to run, each spelled once.

A recovery hint is a command the user copies from an error line, so every place that prints one
must print the same bytes: the lease's and job lock's refusals, the loop's poison and cancel
notes, `status`, the discuss and write-turn errors, the SessionStart handoff and install's own
lines. Every one is spelled `maestro <verb>`: the launcher `install` puts on PATH
(maestro/install/launcher.py; `doctor` says when it is not on PATH). The hooks' guidance text
(maestro/hooks/guidance.py) keeps its own copy of `MAESTRO`: importing this module would be one
more import on the hooks' hot path (tests/hooks/test_guidance.py keeps the two equal).
"""

MAESTRO = "maestro"  # the command a user types: the launcher install writes (~/.local/bin/maestro)
# Where the launcher is missing (install --no-launcher, or its directory not on PATH) a verb runs
# as this, with a Python 3.11 or newer; the rules tell the model the same.
ARCHIVE_FALLBACK = "python3 ~/.claude/hooks/maestro.pyz"

LOOP_CLEAR_LEASE = "loop --clear-lease"
LOOP_CLEAR_JOB_LOCK = "loop --clear-job-lock"

CLEAR_LEASE = f"{MAESTRO} {LOOP_CLEAR_LEASE}"
CLEAR_JOB_LOCK = f"{MAESTRO} {LOOP_CLEAR_JOB_LOCK}"
STATUS = f"{MAESTRO} status"
WORKTREES = f"{MAESTRO} worktrees"  # lists the isolated worktrees of loop --worktree
WORKTREES_REMOVE = f"{WORKTREES} remove"  # + NAME: discards a maestro worktree and its branch
PIN_MODELS = f"{MAESTRO} model-select <model> <debate-effort> <impl-effort> <impl-model>"
PIN_SCOUT = f"{MAESTRO} model-select --scout <model> <effort>"
MEMORY_MCP = f"claude mcp add --scope user maestro-memory -- \"$(command -v {MAESTRO})\" memory mcp"
# In Claude Code: the marketplace first, then the plugin (the plugin command alone finds nothing).
CODEX_PLUGIN = "/plugin marketplace add openai/codex-plugin-cc, then /plugin install codex@openai-codex"
RALPH_LOOP_PLUGIN = "/plugin install ralph-loop@claude-plugins-official"  # in Claude Code: --with-workflow's /ralph-loop
MEMORY_REPAIR = f"{MAESTRO} memory repair --confirm"  # rewrites a drifted or non-UTF-8 memory file (backup kept)
