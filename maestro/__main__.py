"""`python -m maestro` entry point."""

import sys

from maestro.cli import main

raise SystemExit(main(sys.argv[1:]))
