"""`install [--with-workflow]`: publish maestro into Claude Code, safely.

Copies the running maestro.pyz to ~/.claude/hooks/, the rules and skills beside it, and
registers the SessionStart, UserPromptSubmit, PreToolUse and Stop hooks as commands that run the
installed archive with an absolute interpreter path that survives a Python upgrade
(maestro/install/interpreter.py) and that fail closed when they cannot run
(maestro/install/settings.py: the gate then blocks and names `doctor`). Everything is validated before
anything changes; then every file is published atomically, and a late failure rolls back every
path already published. An original (Bash/Node) Maestro install is migrated in the same step.
"""

import sys

from maestro.errors import Exit, MaestroError

USAGE = "usage: maestro install [--with-workflow]"


def _parse(argv):
    """True/False for --with-workflow; None for --help."""
    unknown = [arg for arg in argv if arg != "--with-workflow"]
    if argv in (["--help"], ["-h"]):
        return None
    if unknown:
        raise MaestroError(f"[maestro] WARN: unknown option: {', '.join(unknown)}\n{USAGE}", Exit.ERROR)
    return "--with-workflow" in argv


def main(argv) -> int:
    with_workflow = _parse(list(argv))
    if with_workflow is None:
        sys.stdout.write(__doc__.strip() + f"\n\n{USAGE}\n")
        return Exit.OK
    from maestro.install.install import run

    return run(with_workflow)
