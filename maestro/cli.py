"""maestro's command line: `main(argv) -> int`, one module per verb, imported lazily.

The hook verbs run on every tool call and prompt, so dispatch never imports argparse or any
verb module but the one asked for (`python3 -X importtime maestro.pyz gate` shows the cost).
"""

import sys

from maestro.errors import Exit

# verb -> (module, one-line summary). Order is the order of `--help`.
VERBS = {
    "gate": ("maestro.hooks.gate", "PreToolUse hook: block direct source edits by the orchestrator"),
    "inject": ("maestro.hooks.inject", "UserPromptSubmit hook: direct-edit grant and loop directive"),
    "session-start": ("maestro.hooks.session_start", "SessionStart hook: session id export and Codex pin status"),
    "stop": ("maestro.hooks.stop", "Stop hook: memory write guard accounting and handoff; never blocks"),
    "loop": ("maestro.commands.loop", "dispatch a plan to Codex until --verify passes locally (or recover locks)"),
    "watchdog": ("maestro.commands.watchdog", "one Write turn under the write lease, no local verification"),
    "status": ("maestro.commands.status", "this worktree's write lease, job lock, last provenance record, recovery"),
    "statusline": ("maestro.commands.statusline", "one short line for Claude Code's status bar: lease, job, alerts"),
    "worktrees": ("maestro.commands.worktrees", "list the isolated worktrees of loop --worktree; remove NAME discards one"),
    "digest": ("maestro.commands.digest", "print the tree-v3 digest of this worktree (what the write lease records)"),
    "provenance-check": ("maestro.commands.provenance_check", "compare the worktree with the last dispatch's snapshot"),
    "rollback": ("maestro.commands.rollback", "restore the worktree to the checkpoint taken before a write (--last, JOB)"),
    "checkpoints": ("maestro.commands.checkpoints", "list the worktree's checkpoints (one before each write), or prune them"),
    "discuss": ("maestro.commands.discuss", "a bounded read-only Claude/Codex debate kept in a private transcript"),
    "scout": ("maestro.commands.scout", "one read-only question to Codex on the scout pin, answered with file:line"),
    "install": ("maestro.commands.install", "install hooks, rules and skills into ~/.claude"),
    "uninstall": ("maestro.commands.uninstall", "remove what install published and restore settings.json"),
    "model-select": ("maestro.commands.model_select", "show or pin the Codex model and the effort per role (debate, impl, scout)"),
    "mcp-check": ("maestro.commands.mcp_check", "which MCP servers background Codex jobs inherit (env values masked)"),
    "memory": ("maestro.commands.memory.main", "the durable memory store: add, list, replace, remove, archive, batch"),
    "doctor": ("maestro.commands.doctor", "check interpreter, git, node, companion, hooks and permissions"),
}


def _usage() -> str:
    width = max(len(verb) for verb in VERBS)
    lines = [
        "usage: maestro <verb> [args]   (maestro <verb> --help for each verb)",
        "",
        "Supervised orchestrator/implementer workflow for Claude Code: Claude plans and reviews,",
        "Codex writes the code under a write lease, maestro verifies and remembers.",
        "",
        "verbs:",
    ]
    lines += [f"  {verb.ljust(width)}  {summary}" for verb, (_, summary) in VERBS.items()]
    lines += ["", "options:", "  --help     show this list", "  --version  print the version"]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(_usage())
        return Exit.OK if argv else Exit.USAGE
    if argv[0] == "--version":
        from maestro import __version__

        sys.stdout.write(f"maestro {__version__}\n")
        return Exit.OK
    verb, rest = argv[0], argv[1:]
    if verb not in VERBS:
        sys.stderr.write(f"maestro: unknown verb '{verb}' (see maestro --help)\n")
        return Exit.USAGE
    module = __import__(VERBS[verb][0], fromlist=("main",))  # no importlib import on the hot path
    try:
        return module.main(rest)
    except SystemExit as exc:  # argparse's --help; keep main(argv) -> int
        return exc.code if isinstance(exc.code, int) else (Exit.OK if exc.code is None else Exit.USAGE)
    except KeyboardInterrupt:
        sys.stderr.write(f"maestro {verb}: interrupted\n")
        return Exit.FAILED
    except Exception as exc:  # noqa: BLE001 - the one place expected errors become one line
        from maestro import crash

        return crash.report(verb, exc, f"maestro {verb}")


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
