"""`memory codemap-init | codemap-probe | codemap-audit`: the commands over the project codemaps of
maestro/memory/project/codemap.py (the probe itself is maestro/memory/project/codemap_probe.py).

Every failure exits 1 with one line on stderr (argument errors: 3); `--json` prints the memory
envelope with the spec's fields at top level.
"""

import os
import sys

from maestro.commands.support import write_envelope
from maestro.commands.memory.output import parser, run
from maestro.errors import Exit
from maestro.memory.project.codemap import CONFIDENCE, audit, init_codemap, resolve_path, save_audit
from maestro.memory.project.codemap_probe import CodemapError, probe
from maestro.memory.project.files import ProjectMemory, check_id
from maestro.memory.store.errors import StoreError


def _emit(out, rc: int, fields: dict) -> int:
    """The memory envelope with the spec's fields at top level; `ok` is whether the exit code is 0."""
    if out.as_json:
        write_envelope(out.command, rc == Exit.OK, **fields)
    return rc


def _command(sub: str, argv, body) -> int:
    def guarded(out):
        try:
            return body(out)
        except StoreError as exc:  # an unusable --cwd or a bad id: the spec's rc 1
            raise CodemapError(exc.message, exc.reason) from None
        except OSError as exc:
            raise CodemapError(f"{exc.strerror or exc}{': ' + exc.filename if exc.filename else ''}", "io") from None

    return run(sub, argv, guarded)


def _parser(sub: str, doc: str):
    p = parser(sub, doc)
    p.add_argument("--cwd", default=".", help="the project directory (default: .)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _probe_lines(result: dict) -> list:
    lines = [f"stale={result['stale']} reason={result['reason']}"]
    for key, label in (("changed_paths", "changed"), ("missing_paths", "missing"),
                       ("uncommitted_paths", "uncommitted")):
        if result.get(key):
            lines.append(f"{label}: {', '.join(result[key])}")
    if result["git_error"]:
        lines.append(f"git_error: {result['git_error']}")
    if result.get("error"):
        lines.append(f"error: {result['error']}")
    return lines


def init_main(argv) -> int:
    """create a codemap: codemap-init REPO_ID MODULE_SLUG --source-path P…

Writes <memory>/projects/<h>/codemaps/REPO_ID/<slug>.md: frontmatter source_paths,
verified_commit (a rev is stored as its full sha), generated_at, confidence, stale_note, then the
template's sections. REPO_ID must be a plain id; MODULE_SLUG is slugified. Refuses to overwrite
without --force. Exit 0, or 1 with one line on stderr."""

    def body(out):
        p = _parser("codemap-init", init_main.__doc__)
        p.add_argument("repo_id")
        p.add_argument("module_slug")
        p.add_argument("--source-path", dest="source_paths", action="append", required=True, metavar="P",
                       help="a source file or directory, relative to the project root (repeatable)")
        p.add_argument("--verified-commit", default="", help="the commit the map was checked against (e.g. HEAD)")
        p.add_argument("--confidence", choices=CONFIDENCE, default="medium")
        p.add_argument("--purpose", help="the Purpose section's text")
        p.add_argument("--force", action="store_true", help="overwrite an existing codemap")
        args = p.parse_args(argv)
        memory = ProjectMemory.for_cwd(args.cwd)
        result = init_codemap(memory.project, memory.codemaps, args.repo_id, args.module_slug, args.source_paths,
                              args.verified_commit, args.confidence, args.purpose, args.force)
        out.line(f"Initialized CodeMap: {result['codemap_path']}")
        return _emit(out, 0, result)

    return _command("codemap-init", argv, body)


def probe_main(argv) -> int:
    """is a codemap stale? codemap-probe PATH [--write] [--worktree]

PATH: absolute; else relative to --cwd when it exists there; else relative to the project's
codemaps directory. Prints `stale=<True|False|None> reason=<r>` and changed:/missing:/
uncommitted:/git_error: lines. --write records codemap_probe_at and codemap_stale (and
confidence: low when stale) in the frontmatter; the body stays byte-identical. --worktree also
counts staged, unstaged and untracked changes to a source. Exit 0 ok/no_verified_commit, else 1."""

    def body(out):
        p = _parser("codemap-probe", probe_main.__doc__)
        p.add_argument("path")
        p.add_argument("--write", action="store_true", help="record the result in the frontmatter")
        p.add_argument("--worktree", action="store_true", help="uncommitted changes count as changes")
        args = p.parse_args(argv)
        memory = ProjectMemory.for_cwd(args.cwd)
        path = resolve_path(args.path, args.cwd, memory.codemaps)
        result, rc = probe(path, memory.project, write=args.write, worktree=args.worktree)
        for line in _probe_lines(result):
            out.line(line)
        if result["wrote"]:
            out.line(f"updated frontmatter in {path}")
        return _emit(out, rc, result)

    return _command("codemap-probe", argv, body)


def audit_main(argv) -> int:
    """probe every codemap: codemap-audit [PATH] [--write] [--worktree] [--task-id ID]

PATH (default: the project's codemaps directory) is a codemap or a directory searched for *.md.
Prints one line per codemap and the summary (total, fresh, stale, missing_verified_commit,
invalid, written). --task-id also saves the payload as the task's codemap-audit.json; the task
must have an outcome or a handoff (checked after probing). Exit 1 when any codemap is stale or
invalid, or on an error; a missing verified_commit alone is 0."""

    def body(out):
        p = _parser("codemap-audit", audit_main.__doc__)
        p.add_argument("path", nargs="?")
        p.add_argument("--write", action="store_true", help="record each result in its frontmatter")
        p.add_argument("--worktree", action="store_true", help="uncommitted changes count as changes")
        p.add_argument("--task-id", help="save the payload under this task (it must exist)")
        args = p.parse_args(argv)
        if args.task_id is not None:
            check_id(args.task_id, "task id")
        memory = ProjectMemory.for_cwd(args.cwd)
        base = resolve_path(args.path, args.cwd, memory.codemaps) if args.path else memory.codemaps
        payload, rc = audit(base, memory.project, write=args.write, worktree=args.worktree)
        for result in payload["results"]:
            shown = os.path.relpath(result["codemap_path"], base) if os.path.isdir(base) else result["codemap_path"]
            out.line(f"{shown}: " + "; ".join(_probe_lines(result)))
            if result["wrote"]:
                out.line(f"updated frontmatter in {result['codemap_path']}")
        if args.task_id is not None:
            save_audit(memory, args.task_id, payload)
        out.line(" ".join(f"{key}={value}" for key, value in payload["summary"].items()))
        return _emit(out, rc, payload)

    return _command("codemap-audit", argv, body)
