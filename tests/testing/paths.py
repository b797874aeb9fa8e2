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
