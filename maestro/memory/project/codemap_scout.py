"""`scout --codemap REPO_ID SLUG`: a codemap written from a scout answer (into maestro memory only).

The source paths are the distinct repository files the answer cites as `path:line` (or
`path:start-end`), in order of first citation; a citation that names no file inside the project
root is dropped. verified_commit is HEAD now, confidence medium, and the query becomes the Purpose
with the answer under it — both through the secret filter, the answer without the companion's
`Codex session ID:` / `Resume in Codex:` trailer. `prepare` runs before the Codex job so a bad id or an existing codemap
(without --force) costs no job.
"""

import os
import re

from maestro.memory.project.codemap import codemap_target, init_codemap
from maestro.memory.project.codemap_probe import CodemapError, inside, resolve_commit
from maestro.memory.store.errors import StoreError
from maestro.memory.project.files import ProjectMemory
from maestro.memory.store.sanitize import filter_text

_TRAILER = re.compile(r"(?:Codex session ID|Resume in Codex):.*")
_CITATION = re.compile(r"([^\s:`'\"()\[\]<>,;*]+):[0-9]+(?:-[0-9]+)?")


def strip_trailer(answer: str) -> str:
    """The answer without the companion's closing `Codex session ID: …` / `Resume in Codex: …` lines."""
    lines = answer.split("\n")
    while lines and (not lines[-1].strip() or _TRAILER.fullmatch(lines[-1].strip())):
        lines.pop()
    return "\n".join(lines)


def cited_paths(answer: str, root: str) -> list:
    found = []
    for match in _CITATION.finditer(answer):
        candidate = match.group(1)
        while candidate.startswith("./"):
            candidate = candidate[2:]
        if not candidate or os.path.isabs(candidate):
            continue
        normal = os.path.normpath(candidate)
        full = os.path.join(root, normal)
        if normal.startswith("..") or not inside(root, full) or not os.path.isfile(full):
            continue
        if normal not in found:
            found.append(normal)
    return found


def prepare(repo_id: str, slug: str, force: bool, cwd: str = None) -> ProjectMemory:
    """The project memory to write into; CodemapError when the codemap could not be written."""
    try:
        memory = ProjectMemory.for_cwd(cwd)
    except StoreError as exc:
        raise CodemapError(exc.message, exc.reason) from None
    _, path = codemap_target(memory.codemaps, repo_id, slug)
    if os.path.lexists(path) and not force:
        raise CodemapError(f"CodeMap already exists: {path} (use --force to overwrite)", "exists")
    return memory


def write(memory: ProjectMemory, repo_id: str, slug: str, query: str, answer: str, force: bool) -> dict:
    """Save the answer (its trailer dropped; query and answer through the secret filter first)."""
    answer = filter_text(strip_trailer(answer or ""))
    query = filter_text(query or "")
    sources = cited_paths(answer, memory.project)
    if not sources:
        raise CodemapError("the answer cites no path:line of a file in the repository; no codemap written",
                           "no_sources")
    head = resolve_commit(memory.project, "HEAD") or ""
    return init_codemap(memory.project, memory.codemaps, repo_id, slug, sources, head, "medium",
                        purpose=query, force=force, notes="Scout answer:\n\n" + answer.strip("\n"))
