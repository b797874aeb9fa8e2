"""`install [--with-workflow] [--force]`: publish maestro into Claude Code, safely.

Copies the running maestro.pyz to ~/.claude/hooks/ ($CLAUDE_CONFIG_DIR/hooks/ when that is set),
the rules orchestrator-implementer.md and coding-discipline.md and the plan-authoring skill beside
it, and registers four hooks in settings.json:
  PreToolUse        gate: blocks Claude's direct code edits (Edit, Write, MultiEdit, NotebookEdit,
                    writing Bash, MCP writes) unless you said "edit it yourself" this session
  UserPromptSubmit  inject: grants or revokes that permission from your prompt and adds the
                    orchestrator/implementer reminder to prompts about code or design
  SessionStart      session-start: the memory snapshot and the pinned Codex models
  Stop              stop: records the handoff for unfinished work at the end of each turn
                    (and counts turns for the memory write guard, when enabled)
Each runs the installed archive with an absolute interpreter path that survives a Python upgrade
(a stable alias such as /usr/bin/python3 when one points at the running Python) and fails closed
when it cannot run (the gate then blocks and names `doctor`). Everything is validated before
anything changes; then every file is published atomically, and a late failure rolls back every
path already published. An original (Bash/Node) Maestro install is migrated in the same step.

Upgrading: run install from the newer archive. A file you did not change is replaced. A rule or
skill you edited is kept, and the new version is written beside it as <name>.maestro-new (merge
it by hand; the next install replaces or removes it); everything else upgrades and install exits
0. --force replaces edited files instead, after backing each up under ~/.maestro/backups/. A file
at maestro's place that maestro never installed, or a changed archive, is refused (nothing
changes) unless --force. A symlink there is never replaced, not even with --force.

--statusline also registers `maestro statusline` as Claude Code's statusLine: one line after each
assistant message with this worktree's write lease, a running Codex job and this session's alerts.
Only when settings.json has no statusLine of yours (yours is never replaced); a later install keeps
maestro's current, and uninstall removes exactly it.

--with-workflow also installs rules/workflow.md and the ralph-protocol skill: how to run longer,
multi-plan tasks as a bounded outer loop over `maestro loop`. That outer loop is the ralph-loop
Claude Code plugin's /ralph-loop command: install the plugin inside Claude Code with
  /plugin install ralph-loop@claude-plugins-official
(install warns when it is missing; without it, drive each plan with `maestro loop` by hand). A
later plain install keeps and updates the two files and says so; delete them to drop them.
"""

import sys

from maestro.errors import Exit, MaestroError
from maestro.messages import ARCHIVE_FALLBACK

USAGE = "usage: maestro install [--with-workflow] [--statusline] [--force] [--bin-dir DIR] [--no-launcher]"
OPTIONS_HELP = (
    "--with-workflow also install rules/workflow.md and the ralph-protocol skill (needs the ralph-loop plugin)\n"
    "--statusline    register `maestro statusline` as Claude Code's statusLine (only when you have none)\n"
    "--force         replace installed files you edited, and files maestro did not install, after backing\n"
    "                each up under ~/.maestro/backups/ (without it they are kept or refused)\n"
)
LAUNCHER_HELP = (
    "--bin-dir DIR   where the `maestro` launcher goes (default ~/.local/bin): a small sh script that runs the\n"
    "                installed archive with the recorded Python; a file there that maestro did not write is\n"
    "                never replaced (not even with --force), and uninstall removes it\n"
    f"--no-launcher   do not install the launcher (then run `{ARCHIVE_FALLBACK} <verb>`, Python 3.11+)\n"
)


def _launcher_options(argv):
    """(argv without the launcher options, --bin-dir value or None, whether to install the launcher)."""
    rest, bin_dir, with_launcher = [], None, True
    args = iter(argv)
    for arg in args:
        if arg == "--no-launcher":
            with_launcher = False
        elif arg == "--bin-dir" or arg.startswith("--bin-dir="):
            value = arg.partition("=")[2] if "=" in arg else next(args, "")
            if not value or value.startswith("-"):
                raise MaestroError(f"[maestro] WARN: --bin-dir needs a directory\n{USAGE}", Exit.ERROR)
            bin_dir = value
        else:
            rest.append(arg)
    if bin_dir is not None and not with_launcher:
        raise MaestroError(f"[maestro] WARN: --bin-dir and --no-launcher contradict each other\n{USAGE}", Exit.ERROR)
    return rest, bin_dir, with_launcher


FLAGS = ("--with-workflow", "--force", "--statusline")


def _parse(argv):
    """(--with-workflow given, --force given, --statusline given); None for --help."""
    unknown = [arg for arg in argv if arg not in FLAGS]
    if argv in (["--help"], ["-h"]):
        return None
    if unknown:
        raise MaestroError(f"[maestro] WARN: unknown option: {', '.join(unknown)}\n{USAGE}", Exit.ERROR)
    return "--with-workflow" in argv, "--force" in argv, "--statusline" in argv


def main(argv) -> int:
    argv, bin_dir, with_launcher = _launcher_options(list(argv))
    parsed = _parse(argv)
    if parsed is None:
        sys.stdout.write(__doc__.strip() + f"\n\n{USAGE}\n{OPTIONS_HELP}{LAUNCHER_HELP}")
        return Exit.OK
    with_workflow, force, with_statusline = parsed
    from maestro.install.install import run

    return run(with_workflow, bin_dir=bin_dir, with_launcher=with_launcher, force=force,
               with_statusline=with_statusline)
