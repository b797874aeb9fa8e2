"""The `in_process` marker: a test module that imports maestro and calls it in-process only, never through the
selected target. Against the archive (MAESTRO_TEST_TARGET=pyz) such a test would run the same source code a
second time, so that run deselects it (tests/conftest.py) — about a third of the suite, mostly parser tables.

A wrong marker would silently drop a test of the archive, so the source run checks every marked test: it must
not name the archive or the target (PYZ, TARGET, built_pyz, testing.processes) and must not launch maestro
(testing.paths.note_launch, called by the `maestro` fixture and the process runners) — a violation fails it.
"""

import re

MARKER = "in_process"
_NAMES_A_TARGET = re.compile(r"\b(PYZ|TARGET|built_pyz)\b|testing\.processes|from testing import processes")


def violation(module_text: str, launches: int, fixturenames) -> str:
    """Why a test marked `in_process` is not one ("" when it is)."""
    if _NAMES_A_TARGET.search(module_text):
        return "its module names the archive or the test target (PYZ, TARGET, built_pyz, testing.processes)"
    if "built_pyz" in fixturenames:
        return "it uses the built_pyz fixture"
    if launches:
        return f"it ran maestro through the selected target {launches} time(s) (the `maestro` fixture or a process runner)"
    return ""
