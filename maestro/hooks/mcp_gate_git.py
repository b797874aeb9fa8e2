"""MCP git servers (cyanheads/git-mcp-server, modelcontextprotocol/servers src/git): what a git tool writes.

Their `path` / `repo_path` argument is the repository, not a file, so the name-based rules of
hooks/mcp_gate.py do not fit; the subcommands are judged like the Bash channels of git
(hooks/bash_channels_git.py). Imported by mcp_gate only for a tool whose name starts with the
word `git` (git_checkout, gitReset).
"""

import os

from maestro.hooks.mcp_arguments import MAX_TARGETS, PATCH_KEYS, Collector, kind_of, patch_paths


def git_writes(tool_name: str, verb: str, tool_input: dict) -> list:
    """git servers (cyanheads/git-mcp-server, modelcontextprotocol/servers src/git): `path` /
    `repo_path` is the repository, not a file. Judged like the Bash channels: checkout/restore of
    `paths`, rm, mv, reset --hard/--merge/--keep, clean and stash push/pop/apply write the working
    tree; switching branches, add, commit, merge, pull, log, diff… pass."""
    repo_key = next((key for key in ("path", "repo_path", "repoPath") if key in tool_input), None)
    repo = tool_input.get(repo_key) if repo_key else None
    base = repo if isinstance(repo, str) and repo.strip() and "\0" not in repo else None
    collector = Collector(tool_name, "change")

    def tree(action: str) -> list:
        if repo_key is None:
            collector.add(action, ".", "the repository", tree=True)  # the session's cwd
        else:
            collector.add(action, base, base or f"{repo_key}=<{kind_of(repo)}>", tree=True)
        return collector.targets

    def rooted(start: int) -> list:
        """Paths git takes relative to the repository root (itself relative to the session
        cwd, which the gate fills in); an unusable repository argument leaves them unresolved."""
        for target in collector.targets[start:]:
            if target.path is not None and not target.path.startswith("/") and repo_key is not None:
                target.path = os.path.join(base, target.path) if base is not None else None
        return collector.targets

    def listed(action: str, keys) -> list:
        start = len(collector.targets)
        for key in keys:
            if key in tool_input:
                collector.value("paths", key, tool_input[key], action, 0)
        return rooted(start)

    if verb in ("checkout", "restore"):
        return listed("change", ("paths", "files", "file"))
    if verb == "apply":
        for key in PATCH_KEYS:
            if isinstance(tool_input.get(key), str):
                for name in patch_paths(tool_input[key])[: MAX_TARGETS + 1]:
                    collector.add("change", name, name)
        return rooted(0) or tree("change")
    if verb == "rm":
        return listed("delete", ("paths", "files", "file"))
    if verb == "mv":
        listed("delete", ("source",))
        collector.action = "move onto"
        return listed("move onto", ("destination",)) or tree("move onto")
    if verb == "reset":
        mode = tool_input.get("mode", "mixed")
        return tree("change") if mode in ("hard", "merge", "keep") or not isinstance(mode, str) else []
    if verb == "clean":
        return [] if tool_input.get("dryRun") is True or tool_input.get("dry_run") is True else tree("delete")
    if verb == "stash":
        mode = next((tool_input[key] for key in ("mode", "operation", "action") if key in tool_input), "push")
        return [] if mode in ("list", "drop", "clear", "show") else tree("change")
    return []
