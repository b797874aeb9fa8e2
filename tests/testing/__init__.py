"""Shared test helpers (not tests, not fixtures): `tests/` is on sys.path (pytest.ini `pythonpath = tests`),
so test modules and conftest.py files import them as `from testing import ROOT` / `from testing.git import git_repo`.

  paths      where the source tree and the archive under test are, and which target runs (source or pyz)
  git        the one git runner and committed-repository builder
  processes  maestro as a real process (start, finish, wait_for) for the workflow verbs
  companion  the fake Codex companion's knobs and call log
  memory     the memory store's clock, real-process runner and on-disk probes
  install    what install publishes and registers, and settings/tree snapshots

Fixtures live in conftest.py files; the modules here define none.
"""

from testing.paths import PYZ, ROOT, TARGET

__all__ = ["PYZ", "ROOT", "TARGET"]
