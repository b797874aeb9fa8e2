"""The context texts the hooks hand to Claude Code. Facts and commands, phrased as guidance.

Kept in one place so the gate, inject and session-start hooks, the rules and the README name
the same commands (`maestro <verb>`, the launcher install puts on PATH; the rules tell the model
what to run where it is missing).
"""

MAESTRO = "maestro"  # messages.MAESTRO, copied: importing messages would cost the hooks' hot path

MODEL_PICKS = (
    "Implementation model — suggested: gpt-5.6-luna at effort max.\n"
    "Other choices: gpt-5.6-sol at low | medium | high; gpt-5.6-luna at xhigh; gpt-5.6-terra at\n"
    "xhigh or max. Which exist depends on the user's ChatGPT plan.\n"
    "Debate suggestion: model gpt-5.6-sol, effort max.\n"
    "max/ultra reach the implementation side only when the debate effort is the same value: the\n"
    "companion cannot pass them per job, so the pinned top-level config value delivers that tier.\n"
)

# The phrases "separate role-specific efforts" and "<model> <debate-effort> <impl-effort>" are the
# original Maestro's and are grepped for by users' scripts and tests: each stays whole on one line.
MODEL_SETUP = (
    "CODEX MODEL SETUP — ask the user for the debate model, the implementation model, and separate role-specific "
    "efforts\n"
    "(debate effort for read-only discussions, implementation effort for write jobs).\n"
    f"Show the current pins first:  {MAESTRO} model-select --show\n"
    + MODEL_PICKS
    + f"Apply the picks:  {MAESTRO} model-select <model> <debate-effort> <impl-effort> <impl-model>\n"
    "and confirm all four values back to the user in one line.\n"
)

LOOP_DIRECTIVE = (
    "ORCHESTRATOR/IMPLEMENTER LOOP — this prompt carries a code/design signal.\n"
    "You lead: you debate, plan, dispatch, answer questions and review. Codex argues and writes.\n"
    "1) DEBATE when there is a real fork (design choice, unclear root cause) or the user asked to\n"
    "   grill/debate — a read-only discussion with Codex:\n"
    f'   {MAESTRO} discuss --new "<topic>" <slug>\n'
    f"   {MAESTRO} discuss --turn <your-turn-file> <slug>\n"
    "   It ends in CONVERGED, ESCALATE or the 6-turn cap; the converged design becomes the plan's\n"
    "   Decisions section. Skip it for settled, obvious work.\n"
    "2) PLAN: objective, exact files in scope, concrete steps, constraints, and the checks Codex must\n"
    "   run. Look up external facts yourself first (Codex has no web) and put them in the plan.\n"
    "3) DISPATCH through the autonomous loop:\n"
    f'   {MAESTRO} loop --plan <plan-file> --verify "<verify command>" [--max-iters 4]\n'
    "   Each round re-dispatches with the real failing output and re-runs your verify command locally\n"
    "   after every DONE claim. Exit codes: 0 VERIFIED_DONE · 10 NEEDS_ANSWERS · 11 BLOCKED · 12 STUCK.\n"
    f"   One turn without verification: {MAESTRO} watchdog --file <plan-file>.\n"
    "   Both append the implementer contract; do not retype it, and never use a subagent to write code.\n"
    "4) HANDLE the state:\n"
    "   VERIFIED_DONE → review the diff yourself before believing it (step 5).\n"
    "   NEEDS_ANSWERS → answer on your own only to allow a mechanically necessary adjacent file with\n"
    "     unchanged design and behaviour, or to substitute an equally strong verifier or venue; otherwise\n"
    "     relay the QUESTIONS to the user verbatim. Append the answers to the plan and run the loop again.\n"
    "   BLOCKED → report the blocker; never work around credentials or destructive steps.\n"
    "   STUCK → do not raise --max-iters. Unclear root cause → debate the attempts log (step 1);\n"
    "     otherwise re-plan and run the loop again.\n"
    "5) REVIEW before reporting done: read the actual git diff against the goal, re-run cheap checks,\n"
    "   and open your report with a verdict: SHIP / FIX-FIRST / RETHINK. FIX-FIRST → dispatch a fix\n"
    "   plan. Say that the review is same-vendor (you reviewing your own plan's execution).\n"
    '6) Never edit source files directly (the gate blocks it) unless the user says "edit it yourself".\n'
    "   Details: ~/.claude/rules/orchestrator-implementer.md\n"
)

# The write guard's fixed backlog alert (spec memory.md §2.7): added by `inject` while this
# session's gap is at the threshold; never shows the count (maestro/memory/store/write_guard.py).
BACKLOG_ALERT = (
    "MEMORY BACKLOG: several tool-using turns have passed without a daily or project memory entry.\n"
    f'Record what was learned before going on: {MAESTRO} memory add daily "<what changed and why>"\n'
    f'(or, for this project\'s timeline: {MAESTRO} memory add project "<…>"). Only real progress, never idle filler.\n'
)
