"""`python -m maestro` entry point (from a source checkout).

The version check comes first and parses on Python 3.6+, like the archive's launchers (build.py):
an older interpreter gets one line instead of a traceback from the first 3.11-only import.
"""

import sys

if sys.version_info < (3, 11):
    sys.stderr.write("maestro needs Python 3.11 or newer, found Python %s (%s): run it with another "
                     "interpreter, e.g. python3.11 -m maestro %s\n" % (
                         ".".join(str(part) for part in sys.version_info[:3]), sys.executable or "?",
                         sys.argv[1] if len(sys.argv) > 1 else "--help"))
    raise SystemExit(6)  # maestro.errors.Exit.PYTHON_TOO_OLD (maestro cannot be imported on this Python)

from maestro.cli import main  # noqa: E402 (after the version check on purpose)

raise SystemExit(main(sys.argv[1:]))
