"""`uninstall [--purge [--yes]]`: remove exactly what install published, and restore settings.json.

Only manifest entries whose bytes are still the recorded ones are deleted; a file the user
changed is kept and named. Only maestro's exactly-marked hook commands — in the current
fail-closed shape or an older one — and the original Maestro's are stripped; when nothing else changed settings.json, its pre-install bytes come back
byte-for-byte. The `maestro` launcher goes too, unless it was edited. Then uninstall lists what it
leaves behind and the command that removes each: the memory store and the rest of ~/.maestro,
the settings.json backups, the `web_search` line, the Codex pins and pin files in ~/.codex, and
each repository's .git/maestro-* files.

--purge also deletes maestro's own state for good: ~/.maestro (the memory store, discussions,
plans, logs) and the settings.json backups maestro made. It asks first (y/N) on a terminal; --yes
confirms without asking (needed when stdin is not a terminal). It never touches ~/.codex: the
Codex config is yours, and the lines maestro added there are printed for you to delete.
"""

import sys

from maestro.errors import Exit, MaestroError
from maestro.install.ui import fail, log

USAGE = "usage: maestro uninstall [--purge [--yes]]"
OPTIONS = ("--purge", "--yes")


def _confirmed(targets) -> bool:
    """Ask on the terminal whether to delete `targets` for good; refuse (exit 3) without one."""
    if not sys.stdin.isatty():
        raise MaestroError("[maestro] WARN: uninstall --purge deletes maestro's state for good and asks first, but "
                           "stdin is not a terminal: add --yes to confirm (nothing was removed)\n" + USAGE, Exit.USAGE)
    log("uninstall --purge will delete, for good:")
    for path, what in targets:
        log(f"  {path} ({what})")
    log("  and the settings.json backup this uninstall makes; ~/.codex is left alone. Close Claude Code first.")
    sys.stdout.write("[maestro] delete them? [y/N] ")
    sys.stdout.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def main(argv) -> int:
    argv = list(argv)
    if argv in (["--help"], ["-h"]):
        sys.stdout.write(__doc__.strip() + f"\n\n{USAGE}\n")
        return Exit.OK
    unknown = [arg for arg in argv if arg not in OPTIONS]
    if unknown:
        fail(f"unknown option: {', '.join(unknown)}\n{USAGE}")
    purge = "--purge" in argv
    if "--yes" in argv and not purge:
        fail(f"--yes confirms --purge; without --purge there is nothing to confirm\n{USAGE}")
    from maestro.install import uninstall

    if purge and "--yes" not in argv and not _confirmed(uninstall.purge_targets()):
        log("nothing was removed")
        return Exit.ERROR
    return uninstall.run(purge=purge)
