"""Project codemaps (spec memory.md §1.2–1.5); the commands `memory codemap-init | codemap-probe |
codemap-audit` over them are maestro/commands/memory/codemap.py.

A codemap is a Markdown file with a YAML-subset frontmatter (maestro/memory/project/frontmatter.py) at
`<memory>/projects/<h>/codemaps/<repo_id>/<slug>.md`; its `source_paths` are relative to the
project root (the git toplevel of --cwd). The probe (maestro/memory/project/codemap_probe.py) says whether
the sources changed since `verified_commit`; the audit probes every codemap under a path.
Failures raise CodemapError (one line; the commands exit 1 with it).
"""

import os
import stat

from maestro.errors import Exit
from maestro.util import atomic
from maestro.memory.project import frontmatter
from maestro.memory.store.sanitize import filter_text
from maestro.memory.project.codemap_probe import INVALID, CodemapError, inside, probe, resolve_commit, utc_stamp
from maestro.memory.store.errors import StoreError
from maestro.memory.project.files import ProjectMemory, check_id, read_json, slugify, write_json

CONFIDENCE = ("high", "medium", "low")
STALE_NOTE = "run maestro memory codemap-probe before trusting this map"
PURPOSE_PLACEHOLDER = "_What this module is for, in one or two sentences._"
SECTIONS = ("Entry points", "Dependencies in / out", "Invariants & constraints", "Hot files for changes",
            "Open questions / low confidence")


def _checked_dir(path: str, create: bool = False) -> None:
    """Refuse `path` when it is a symlink or not a directory (a codemap is written only inside the
    memory dir); a missing one is created 0700 when `create`, else left alone."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not create:
            return
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise CodemapError(f"cannot create {path}: {exc.strerror or exc}", "io") from None
        st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        kind = "a symlink" if stat.S_ISLNK(st.st_mode) else "not a directory"
        raise CodemapError(f"refusing to write a codemap through {path}: {kind}", "unsafe_path")


def codemap_target(codemaps: str, repo_id: str, module_slug: str):
    """(slug, path) of a codemap; refuses an unsafe repo id, an empty slug, an escaping path or a
    symlinked codemaps/ or codemaps/<repo_id> directory."""
    try:
        check_id(repo_id, "repo_id")
    except StoreError as exc:
        raise CodemapError(exc.message, "usage") from None
    if filter_text(repo_id) != repo_id:
        raise CodemapError("invalid repo_id: it looks like a secret", "usage")
    slug = slugify(filter_text(module_slug or ""))
    if not slug:
        raise CodemapError("module_slug cannot be empty", "usage")
    path = os.path.join(codemaps, repo_id, slug + ".md")
    _checked_dir(codemaps)
    _checked_dir(os.path.dirname(path))
    if not inside(codemaps, path) or os.path.realpath(path) == os.path.realpath(codemaps):
        raise CodemapError(f"codemap path escapes {codemaps}: {path}", "usage")
    return slug, path


def render_codemap(meta: dict, repo_id: str, slug: str, purpose: str = None, notes: str = None) -> str:
    """The codemap's text; the purpose and the notes pass the secret filter before anything is cut."""
    purpose_text = "## Purpose\n\n" + (filter_text(purpose or "").strip() or PURPOSE_PLACEHOLDER)
    notes = filter_text(notes or "")
    if notes.strip():
        purpose_text += "\n\n" + notes.strip("\n")
    blocks = [f"# CodeMap: {repo_id} / {slug}", purpose_text, *(f"## {section}" for section in SECTIONS)]
    return "---\n" + frontmatter.render(meta) + "\n---\n\n" + "\n\n".join(blocks) + "\n"


def init_codemap(root: str, codemaps: str, repo_id: str, module_slug: str, source_paths, verified_commit=None,
                 confidence: str = "medium", purpose: str = None, force: bool = False, notes: str = None,
                 now=None) -> dict:
    slug, path = codemap_target(codemaps, repo_id, module_slug)
    sources = [filter_text(p) for p in (source_paths or []) if p]
    if not sources:
        raise CodemapError("at least one --source-path is required", "usage")
    if confidence not in CONFIDENCE:
        raise CodemapError(f"invalid confidence {confidence!r} (high|medium|low)", "usage")
    if os.path.lexists(path) and not force:
        raise CodemapError(f"CodeMap already exists: {path} (use --force to overwrite)", "exists")
    commit = (verified_commit or "").strip()
    if commit:  # HEAD, a tag or a short sha: stored as the full sha it names now (else verbatim, filtered)
        commit = resolve_commit(root, commit) or filter_text(commit)
    meta = {"source_paths": sources, "verified_commit": commit, "generated_at": utc_stamp(now),
            "confidence": confidence, "stale_note": STALE_NOTE}
    try:
        atomic.make_private_dirs(os.path.dirname(codemaps))
        _checked_dir(codemaps, create=True)
        _checked_dir(os.path.dirname(path), create=True)
        atomic.write_atomic(path, render_codemap(meta, repo_id, slug, purpose, notes).encode("utf-8"))
    except OSError as exc:
        raise CodemapError(f"cannot write {path}: {exc.strerror or exc}", "io") from None
    return {"status": "ok", "codemap_path": path, "repo_id": repo_id, "module_slug": slug, "source_paths": sources}


def resolve_path(path: str, cwd: str, codemaps: str) -> str:
    """Absolute as is; else relative to cwd when it exists there; else relative to the codemaps dir."""
    if os.path.isabs(path):
        return path
    here = os.path.abspath(os.path.join(cwd, path))
    return here if os.path.lexists(here) else os.path.join(codemaps, path)


def task_exists(memory: ProjectMemory, task_id: str) -> bool:
    if os.path.isfile(os.path.join(memory.handoffs, task_id + ".json")):
        return True
    try:
        names = sorted(os.listdir(memory.outcomes))
    except OSError:
        return False
    for name in names:
        if name.endswith(".json"):
            try:
                record = read_json(os.path.join(memory.outcomes, name))
            except StoreError:
                continue
            if isinstance(record, dict) and record.get("task_id") == task_id:
                return True
    return False


def audit(base: str, root: str, write: bool = False, worktree: bool = False, now=None):
    """(payload, rc): every `*.md` under `base` (or the one file) probed, and the spec's summary."""
    if not os.path.exists(base):
        raise CodemapError(f"CodeMap path not found: {base}", "not_found")
    if os.path.isdir(base):
        files = sorted(os.path.join(d, n) for d, _, names in os.walk(base) for n in names if n.endswith(".md"))
    else:
        files = [base]
    results = [probe(path, root, write=write, worktree=worktree, now=now)[0] for path in files]
    summary = {"total": len(results), "fresh": sum(r["reason"] == "ok" for r in results),
               "stale": sum(r["stale"] is True for r in results),
               "missing_verified_commit": sum(r["reason"] == "no_verified_commit" for r in results),
               "invalid": sum(r["reason"] in INVALID for r in results), "written": sum(r["wrote"] for r in results)}
    payload = {"status": "ok", "base_path": base, "summary": summary, "results": results}
    return payload, (Exit.ERROR if summary["stale"] or summary["invalid"] else Exit.OK)



def save_audit(memory: ProjectMemory, task_id: str, payload: dict) -> None:
    """Keep an audit's payload as the task's codemap-audit.json; the task must have an outcome or a handoff."""
    if not task_exists(memory, task_id):
        raise CodemapError(f"Task not found: {task_id}", "not_found")
    write_json(os.path.join(memory.task_dir(task_id), "codemap-audit.json"), payload)
