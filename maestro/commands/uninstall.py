"""`uninstall`: remove exactly what install published, and restore settings.json.

Only manifest entries whose bytes are still the recorded ones are deleted; a file the user
changed is kept and named. Only maestro's exactly-marked hook commands — in the current
fail-closed shape or an older one (settings.LEGACY_SHAPES) — and the original Maestro's are stripped; when nothing else changed settings.json, its pre-install bytes come back
byte-for-byte. Codex pins and `web_search` stay: they are the user's settings now.
"""

import sys

from maestro.errors import Exit
from maestro.install.ui import fail

USAGE = "usage: maestro uninstall"


def main(argv) -> int:
    if list(argv) in (["--help"], ["-h"]):
        sys.stdout.write(__doc__.strip() + f"\n\n{USAGE}\n")
        return Exit.OK
    if argv:
        fail(f"unknown option: {', '.join(argv)}\n{USAGE}")
    from maestro.install.uninstall import run

    return run()
