"""Where things are: the repository root, the archive under test, and the selected target.

The same tests run against two targets (MAESTRO_TEST_TARGET):
  source (default) — `maestro.cli.main(argv)` in-process, so coverage sees it;
  pyz              — the built archive as a real process: python3 -I -S dist/maestro.pyz …
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # `import maestro` from the source tree

TARGET = os.environ.get("MAESTRO_TEST_TARGET", "source")
PYZ = Path(os.environ.get("MAESTRO_TEST_PYZ", ROOT / "dist" / "maestro.pyz")).resolve()
FAKE_COMPANION = ROOT / "tests" / "fixtures" / "fake_companion.py"

_LAUNCHES = [0]


def note_launch() -> None:
    """Called by every helper that runs `maestro` on the selected target (the `maestro` fixture, the process
    runners): an `in_process` test must never get here (tests/testing/in_process.py)."""
    _LAUNCHES[0] += 1


def launch_count() -> int:
    return _LAUNCHES[0]
