"""The project part of the SessionStart context: open work first, then the learned patterns
that apply to the files in play.

    Open work (maestro project memory):
    Resuming: <task> — NEEDS_ANSWERS after 2 iterations; answer QUESTIONS in <plan>
    Known patterns for the files in play:
    - [A001] avoid: <title> — <reason>

"Files in play" are the files the open tasks changed plus the worktree's uncommitted changes
(one bounded `git status`, asked only when there are patterns to match). The block never
exceeds `max_chars`: whole lines are dropped from the end, the first line is cut if need be.
"""

import os

from maestro.memory.project import handoffs
from maestro.memory.project import files as project
from maestro.util.git import GitError, git
from maestro.util.text import one_line

MAX_PATTERNS = 5


def files_in_play(project_root: str, open_items: list, timeout: float) -> list:
    files = {path for item in open_items for path in item.get("files") or () if isinstance(path, str)}
    try:
        out = git(["status", "--porcelain", "-z", "--untracked-files=all"], cwd=project_root, timeout=timeout)
    except GitError:
        return sorted(files)
    skip_next = False
    for record in out.split("\0"):
        if skip_next:  # the original path of a rename
            skip_next = False
            continue
        if len(record) > 3:
            files.add(record[3:])
            skip_next = record[0] in "RC"
    return sorted(files)


def pattern_lines(memory, project_root: str, open_items: list, timeout: float) -> list:
    """'' for a malformed patterns.json: it must not hide the open work (`memory patterns` says
    what is wrong with it)."""
    from maestro.memory.store.errors import StoreError

    try:
        doc = project.read_json(memory.patterns_file) if os.path.isfile(memory.patterns_file) else None
    except StoreError:
        return []
    if not isinstance(doc, dict) or not (doc.get("patterns") or doc.get("avoid")):
        return []
    from maestro.memory.project.patterns import applicable

    items = applicable(doc, files_in_play(project_root, open_items, timeout))
    lines = []
    for item in items[:MAX_PATTERNS]:
        reason = item.get("reason")
        kind = "avoid: " if reason is not None or str(item.get("id", "")).startswith("A") else ""
        text = f"- [{one_line(item.get('id'), 12)}] {kind}{one_line(item.get('title'), 160)}"
        if reason:
            text += f" — {one_line(reason, 160)}"
        lines.append(text)
    if len(items) > MAX_PATTERNS:
        lines.append(f"- (+{len(items) - MAX_PATTERNS} more: maestro memory patterns)")
    return lines


def open_items(root: str, project_root: str) -> list:
    """The project's open handoffs (handoffs.load_open): session-start reads them once for `render`
    and `focus`."""
    return handoffs.load_open(project.ProjectMemory(project_root, root))


def render(root: str, project_root: str, max_chars: int, timeout: float = 2.0, items: list = None) -> str:
    """The block; `items` are the open handoffs when the caller already read them (else read here)."""
    memory = project.ProjectMemory(project_root, root)
    open_items = handoffs.load_open(memory) if items is None else items
    lines = []
    resume = handoffs.resume_lines(memory, items=open_items)
    if resume:
        lines += ["Open work (maestro project memory):", *resume]
    patterns = pattern_lines(memory, project_root, open_items, timeout)
    if patterns:
        lines += ["Known patterns for the files in play:", *patterns]
    return bounded(lines, max_chars)


FOCUS_ITEMS = 10
FOCUS_CHARS = 4000


def focus(root: str, project_root: str, branch, items: list = None) -> str:
    """What this session is about, as session-start knows it without asking git again: the branch name
    and the open tasks' titles, what they were doing and the files they changed (at most FOCUS_ITEMS
    tasks, FOCUS_CHARS characters). The snapshot picks its Project Context entries by it
    (maestro/memory/store/relevance.py). `items`: the open handoffs, when the caller already read them."""
    if items is None:
        memory = project.ProjectMemory(project_root, root)
        items = handoffs.load_open(memory) if os.path.isdir(memory.handoffs) else []
    parts = [branch or ""]
    if items:
        for item in items[:FOCUS_ITEMS]:
            parts += [item.get("title") or "", item.get("doing") or "", *item.get("files", ())]
    return " ".join(part for part in parts if part)[:FOCUS_CHARS]


def bounded(lines: list, max_chars: int) -> str:
    kept, size = [], 1  # the blank line that separates the block from the snapshot
    for line in lines:
        if size + len(line) + 1 > max_chars:
            if not kept and max_chars > 3:
                kept.append(line[: max_chars - 3] + "…")
            break
        kept.append(line)
        size += len(line) + 1
    return "".join(line + "\n" for line in kept) + ("\n" if kept else "")
