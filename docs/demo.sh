#!/usr/bin/env bash
# `make demo`: maestro end to end in a throw-away HOME — offline, a few seconds.
# Installs the built archive, shows the gate blocking a source edit (Edit and Bash) and allowing a README edit,
# shows "edit it yourself" opening the gate, uninstalls, and proves settings.json came back.
set -euo pipefail
umask 077  # plans must not be writable by others (loop refuses them), whatever the caller's umask
PYZ=$(cd "$(dirname "${1:-dist/maestro.pyz}")" && pwd)/$(basename "${1:-dist/maestro.pyz}")
PYTHON=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
DEMO_HOME=$(mktemp -d "${TMPDIR:-/tmp}/maestro-demo.XXXXXX")
trap 'rm -rf "$DEMO_HOME"' EXIT
export HOME="$DEMO_HOME"
REPO=/nonexistent-maestro-demo/repo  # never created: the gate classifies paths, it does not write

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
hook() { # verb payload -> runs the command exactly as registered in settings.json
  local command
  command=$("$PYTHON" - "$1" <<'PY'
import json, os, sys
settings = json.load(open(os.path.expanduser("~/.claude/settings.json")))
for blocks in settings["hooks"].values():
    for block in blocks:
        for hook in block["hooks"]:
            if hook["command"].endswith("maestro-managed:" + sys.argv[1]):
                print(hook["command"])
PY
)
  printf '%s' "$2" | sh -c "$command"
}

mkdir -p "$HOME/.claude"
printf '{\n  "theme": "dark",\n  "permissions": {"allow": ["Bash(git status)"]}\n}\n' > "$HOME/.claude/settings.json"
cp "$HOME/.claude/settings.json" "$DEMO_HOME/settings.before"

say "install into a throw-away HOME ($HOME)"
"$PYTHON" "$PYZ" install

say "the gate blocks a direct source edit (exit 2, guidance for the model on stderr)"
set +e
hook gate '{"session_id":"demo","cwd":"'$REPO'","tool_name":"Edit","tool_input":{"file_path":"'$REPO'/src/app.py"}}'
rc=$?
set -e
echo "exit $rc"; [ "$rc" -eq 2 ]

say "the gate allows a README edit (exit 0)"
hook gate '{"session_id":"demo","cwd":"'$REPO'","tool_name":"Edit","tool_input":{"file_path":"'$REPO'/README.md"}}'
echo "exit $?"

say "the same write through Bash is blocked too, naming the channel and the target"
set +e
hook gate '{"session_id":"demo","cwd":"'$REPO'","tool_name":"Bash","tool_input":{"command":"cd src && sed -i s/1/2/ app.py"}}' 2>&1 | head -1
rc=${PIPESTATUS[0]}
set -e
echo "exit $rc"; [ "$rc" -eq 2 ]

say "a test run through Bash is allowed (exit 0): running programs is not writing source"
hook gate '{"session_id":"demo","cwd":"'$REPO'","tool_name":"Bash","tool_input":{"command":"python3 -m pytest -q 2>&1 | tail -5"}}'
echo "exit $?"

say 'the user says "edit it yourself": inject records a private grant for this session'
hook inject '{"session_id":"demo","prompt":"edit it yourself this time"}'
ls -l "$HOME/.maestro/direct-edit/"

say "now the same source edit is allowed (exit 0)"
hook gate '{"session_id":"demo","cwd":"'$REPO'","tool_name":"Edit","tool_input":{"file_path":"'$REPO'/src/app.py"}}'
echo "exit $?"

say "a new task revokes the grant, and gets the orchestrator directive"
hook inject '{"session_id":"demo","prompt":"now fix the login bug in auth.py"}' | head -3
set +e
hook gate '{"session_id":"demo","cwd":"'$REPO'","tool_name":"Edit","tool_input":{"file_path":"'$REPO'/src/app.py"}}' 2>/dev/null
rc=$?
set -e
echo "gate exit $rc (blocked again)"; [ "$rc" -eq 2 ]

say "session start: the Codex pin status the model sees"
hook session-start '{"session_id":"demo","source":"resume"}'

say "doctor"
"$PYTHON" "$PYZ" doctor || true

say "the write path: a throw-away git repo, a plan, and the loop"
ROOT_DIR=$(cd "$(dirname "$0")/.." && pwd)
REPO_DIR="$DEMO_HOME/repo"
mkdir -p "$REPO_DIR" "$HOME/.codex"
printf 'model = "gpt-demo"\nmodel_reasoning_effort = "high"\n' > "$HOME/.codex/config.toml"
(cd "$REPO_DIR" && git init -q -b main && git config user.email demo@example.com && git config user.name demo &&
  printf 'VALUE = 1\n' > app.py && git add app.py && git commit -qm "initial")
# The bundled demo companion stands in for codex-companion.mjs: it speaks the real CLI/JSON
# contract, "edits" app.py as a Write job would, and answers RESULT: DONE.
export MAESTRO_COMPANION="$ROOT_DIR/tests/fixtures/fake_companion.py"
export FAKE_COMPANION_STATE="$DEMO_HOME/companion-state" FAKE_COMPANION_KNOBS="$DEMO_HOME/knobs.json"
printf '%s' '{"turn_seconds": 1, "log_growth_bytes": 64, "edits": {"app.py": "VALUE = 2\n"},
  "final_message": "Set VALUE to 2 in app.py.\nVerification: python3 -c ... -> exit 0\nRESULT: DONE"}' > "$FAKE_COMPANION_KNOBS"
printf '# Plan\nObjective: set VALUE to 2 in app.py.\nFiles: app.py\nVerification: python3 -c "import app; assert app.VALUE == 2"\n' \
  > "$DEMO_HOME/plan-1.md"
(cd "$REPO_DIR" && "$PYTHON" "$PYZ" loop --plan "$DEMO_HOME/plan-1.md" \
  --verify 'python3 -c "import app; assert app.VALUE == 2"' --poll 1)
echo "exit $?  — app.py now: $(cat "$REPO_DIR/app.py")"

say "a plan whose verification keeps failing: two attempts, then STUCK with the history in the plan"
printf '%s' '{"turn_seconds": 0, "final_message": "Tried.\nRESULT: DONE"}' > "$FAKE_COMPANION_KNOBS"
printf '# Plan\nObjective: set VALUE to 3.\n' > "$DEMO_HOME/plan-2.md"
set +e
(cd "$REPO_DIR" && "$PYTHON" "$PYZ" loop --plan "$DEMO_HOME/plan-2.md" --verify "grep -q 'VALUE = 3' app.py" \
  --max-iters 2 --poll 1 2>/dev/null)
rc=$?
set -e
echo "exit $rc (STUCK)"; [ "$rc" -eq 12 ]
echo "--- the plan now ends with:"; tail -n 8 "$DEMO_HOME/plan-2.md"

say "what maestro learned: both runs left an outcome; the stuck one is open work for the next session"
(cd "$REPO_DIR" && "$PYTHON" "$PYZ" memory outcome list)
hook session-start "{\"session_id\":\"demo-2\",\"source\":\"startup\",\"cwd\":\"$REPO_DIR\"}" | head -n 3

say "a read-only debate turn: Claude argues, Codex answers with a stance and converges"
printf '%s' '{"turn_seconds": 0, "final_message": "STANCE: AGREE\nA module-level constant is fine here; a config file would be speculative.\nCONVERGED: keep VALUE in app.py"}' \
  > "$FAKE_COMPANION_KNOBS"
printf 'Should VALUE move to a config file, or stay a constant in app.py?\n' > "$DEMO_HOME/turn-1.md"
(cd "$REPO_DIR" && "$PYTHON" "$PYZ" discuss --new "Where does VALUE live?" demo &&
  "$PYTHON" "$PYZ" discuss --turn "$DEMO_HOME/turn-1.md" demo 30 1 && "$PYTHON" "$PYZ" discuss --list)

say "status: the lease is free again; the last provenance record names the job"
(cd "$REPO_DIR" && "$PYTHON" "$PYZ" status)
unset MAESTRO_COMPANION

say "uninstall, then prove settings.json is byte-identical to before"
"$PYTHON" "$PYZ" uninstall
cmp "$HOME/.claude/settings.json" "$DEMO_HOME/settings.before" && echo "settings.json restored byte-for-byte"
echo; echo "demo finished"
