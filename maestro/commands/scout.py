"""`scout`: one read-only reconnaissance question to Codex, on the scout's own model pin.

    maestro scout --query FILE [--codemap REPO_ID SLUG [--force]]

FILE holds the question; the SCOUT CONTRACT is appended. With --codemap, a DONE answer is also
saved as the project's codemap REPO_ID/SLUG in maestro memory (never in the repository): its
source_paths are the repository files the answer cites as path:line, verified_commit is HEAD,
confidence medium, the question is its Purpose; an existing
codemap is kept unless --force (checked before the job starts). The job runs read-only under the
repository's companion job lock with the pin in `~/.codex/maestro-scout` (`model=` and `effort=`
lines; set it with `model-select --scout <model> <effort>`), never with the debate or
implementation pin. The reply goes to stdout. Exit: 0 DONE · 11 BLOCKED (no valid scout pin —
nothing is started —, the job lock is busy, or the companion's read tasks would not be
read-only) · 3 FAILED to start · 4 FAILED (job failed, hung
or lost) or INTERRUPTED. Last line: `MAESTRO_FINAL: SCOUT <STATE> rc=<n>`.
"""

import os
import sys

from maestro import paths
from maestro.commands.entry import adapter_main
from maestro.errors import Exit, UsageError
from maestro.messages import PIN_SCOUT
from maestro.util import progress

SCOPE = "SCOUT"
MAX_IDLE = 300.0
POLL = 20.0

CONTRACT = """

--- SCOUT CONTRACT (always applies) ---
- This is reconnaissance only. Read whatever you need; change nothing — no edits, no new files, no
  commands that write.
- Every claim needs evidence a reader can open: cite it as path:line (or path:start-end).
  If you could not find something, say where you looked.
- Built-in web search is off. You may make at most 2 MCP lookups; if one stalls or fails, do not
  retry it.
- Be brief. The last line of your answer is exactly one line of the form:
    SCOUT_SUMMARY: <the answer in one sentence>
"""


def scout_pin_problem() -> str:
    """Why `~/.codex/maestro-scout` gives no usable pin (pins.py decides; this only explains)."""
    from maestro.codex.pins import WRAPPER_EFFORTS, is_valid_model, read_line_file

    path = os.path.join(paths.codex_dir(), "maestro-scout")
    if not os.path.lexists(path):
        return f"scout pin is missing ({path}); pin with: {PIN_SCOUT}"
    text = read_line_file(path)
    fields = dict(line.partition("=")[::2] for line in text.splitlines() if "=" in line)
    model, effort = fields.get("model", ""), fields.get("effort", "")
    if not is_valid_model(model):
        return f"invalid scout model {model!r} in {path}; pin with: {PIN_SCOUT}"
    if effort not in WRAPPER_EFFORTS:
        return (f"invalid scout effort {effort!r} in {path} (expected: {' | '.join(WRAPPER_EFFORTS)}); "
                f"pin with: {PIN_SCOUT}")
    return f"malformed scout pin {path}; pin with: {PIN_SCOUT}"


USAGE = "usage: scout --query FILE [--codemap REPO_ID SLUG [--force]]"


def _arguments(argv):
    """(query file, (repo_id, slug) or None, force)."""
    argv = list(argv)
    force = "--force" in argv
    if force:
        argv.remove("--force")
    codemap = None
    if "--codemap" in argv:
        at = argv.index("--codemap")
        if len(argv) < at + 3:
            raise UsageError(USAGE)
        codemap = (argv[at + 1], argv[at + 2])
        del argv[at:at + 3]
    if len(argv) != 2 or argv[0] != "--query" or (force and not codemap):
        raise UsageError(USAGE)
    return argv[1], codemap, force


def _prepare_codemap(codemap, force):
    from maestro.memory.project import codemap_scout
    from maestro.memory.project.codemap_probe import CodemapError

    try:
        return codemap_scout.prepare(*codemap, force)
    except CodemapError as exc:
        raise UsageError(f"--codemap: {exc.message}") from None


def _write_codemap(memory, codemap, force, query, answer) -> bool:
    from maestro.memory.project import codemap_scout
    from maestro.memory.project.codemap_probe import CodemapError

    try:
        result = codemap_scout.write(memory, *codemap, query.strip(), answer, force)
    except CodemapError as exc:
        sys.stderr.write(f"SCOUT_CODEMAP_ERROR: {exc.message}\n")
        return False
    sys.stdout.write(f"SCOUT_CODEMAP: {result['codemap_path']} ({len(result['source_paths'])} source paths)\n")
    sys.stdout.flush()
    return True


def _run(argv) -> int:
    query_file, codemap, force = _arguments(argv)
    try:
        with open(query_file, encoding="utf-8", errors="replace") as handle:
            query = handle.read()
    except OSError as exc:
        raise UsageError(f"query file is not readable: {query_file} ({exc.strerror or exc})") from None
    if not query.strip():
        raise UsageError(f"the query file is empty: {query_file}")
    memory = _prepare_codemap(codemap, force) if codemap else None

    from maestro.workflow.read_turn import ReadRouting
    from maestro.codex.pins import read_pins

    pin = read_pins().scout
    if not pin:
        sys.stderr.write(f"SCOUT_BLOCKED: {scout_pin_problem()}\n")
        return progress.final(SCOPE, "BLOCKED", Exit.BLOCKED)
    model, effort = pin
    from maestro.workflow.read_context import ReadContext

    ctx = ReadContext(SCOPE)
    ctx.signals.install()
    outcome = ctx.read_turn(ReadRouting(model, effort, effort), MAX_IDLE, POLL).run(query + CONTRACT)
    if outcome.rc in (Exit.OK, Exit.BLOCKED) and outcome.result.strip():
        sys.stdout.write(outcome.result if outcome.result.endswith("\n") else outcome.result + "\n")
        sys.stdout.flush()
    for line in outcome.evidence:
        sys.stderr.write(line.rstrip("\n") + "\n")
    if outcome.refused:  # the task would not be read-only (workflow/read_turn): nothing was launched
        sys.stderr.write(f"SCOUT_BLOCKED: {outcome.refused}\n")
        return progress.final(SCOPE, "BLOCKED", Exit.BLOCKED)
    if outcome.interrupted or (outcome.rc != Exit.OK and ctx.signals.stop_requested()):
        return progress.final(SCOPE, "INTERRUPTED", Exit.FAILED)
    if outcome.rc == Exit.OK:
        if not outcome.result.strip():
            sys.stderr.write(f"SCOUT_FAILED: job {outcome.job} returned an empty reply\n")
            return progress.final(SCOPE, "FAILED", Exit.FAILED)
        if codemap and not _write_codemap(memory, codemap, force, query, outcome.result):
            return progress.final(SCOPE, "FAILED", Exit.FAILED)
        return progress.final(SCOPE, "DONE", Exit.OK)
    if outcome.rc == Exit.BLOCKED:
        sys.stderr.write("SCOUT_BLOCKED: the companion job lock is busy or could not be released safely\n")
        return progress.final(SCOPE, "BLOCKED", Exit.BLOCKED)
    if outcome.rc == Exit.USAGE:
        sys.stderr.write("SCOUT_ERROR: the scout job could not start\n")
        return progress.final(SCOPE, "FAILED", Exit.USAGE)
    if outcome.rc == Exit.HUNG:
        sys.stderr.write(f"SCOUT_FAILED: job {outcome.job} was cancelled ({outcome.cancel_reason})\n")
    return progress.final(SCOPE, "FAILED", Exit.FAILED)


def main(argv) -> int:
    return adapter_main(SCOPE, "scout", __doc__, argv, _run)
