"""Every `--help` stands on its own: it says what the verb does without sending the reader to a
document the archive does not ship (a spec section, a source file, another tool's format).

The verb list is cli.VERBS and the memory subcommands are commands/memory/main.SUBCOMMANDS, so a
verb added later is checked without touching this file.
"""

import re

import pytest

from maestro.cli import VERBS
from maestro.commands.memory.main import SUBCOMMANDS

# Subcommands of a memory subcommand that have a parser of their own.
NESTED = (("memory", "outcome", "save"), ("memory", "outcome", "list"))

HELP_COMMANDS = (
    [("--help",)]
    + [(verb, "--help") for verb in VERBS]
    + [("memory", sub, "--help") for sub in SUBCOMMANDS]
    + [(*nested, "--help") for nested in NESTED]
)

# What a help text must not lean on, with why each is a pattern here.
UNSHIPPED_REFERENCES = {
    "a spec section (§2.5)": re.compile(r"§\s*\d"),
    "the spec": re.compile(r"\bspec\b", re.IGNORECASE),
    "a source file (snapshot.py)": re.compile(r"[\w/]+\.py\b"),
    "a source directory (maestro/…)": re.compile(r"(?<![.\w/~])maestro/\w"),
    "another tool's format": re.compile(r"dsh-maestro-memory", re.IGNORECASE),
    "a repository document": re.compile(r"\b(README|ARCHITECTURE)\b"),
}


def _ids(command):
    return " ".join(command)


@pytest.mark.parametrize("command", HELP_COMMANDS, ids=_ids)
def test_help_stands_on_its_own(maestro, command):
    result = maestro(*command)
    assert result.rc == 0, result.err
    assert result.out.strip(), f"`maestro {' '.join(command)}` printed no help"
    assert "Traceback" not in result.out + result.err
    found = {what: pattern.search(result.out).group(0)
             for what, pattern in UNSHIPPED_REFERENCES.items() if pattern.search(result.out)}
    assert not found, f"`maestro {' '.join(command)}` refers the reader elsewhere: {found}"


def test_the_patterns_catch_what_the_help_texts_used_to_say():
    """The patterns above, checked on the phrases the help texts carried before they were rewritten."""
    old_phrases = [
        "Print the tree-v3 digest of the current worktree: `tree-v3:<hex>` (spec §2.5).",
        "The sections of spec memory.md §2.6 in order",
        "see maestro/memory/store/snapshot.py.",
        "(hooks/classify.py)",
        "are in doctor_checks.py.",
        "§-delimited entries (dsh-maestro-memory's format) under ~/.maestro/memory",
    ]
    for phrase in old_phrases:
        assert any(p.search(phrase) for p in UNSHIPPED_REFERENCES.values()), phrase
    fine = "entries separated by a line holding only § under ~/.maestro/memory or $MAESTRO_MEMORY_DIR"
    assert not any(p.search(fine) for p in UNSHIPPED_REFERENCES.values())


def test_top_level_help_lists_every_verb(maestro):
    result = maestro("--help")
    assert result.rc == 0
    listed = {line.split()[0] for line in result.out.splitlines() if line.startswith("  ") and line.strip()}
    assert set(VERBS) <= listed, sorted(set(VERBS) - listed)


def test_memory_help_lists_every_subcommand(maestro):
    result = maestro("memory", "--help")
    assert result.rc == 0
    listed = {line.split()[0] for line in result.out.splitlines() if line.startswith("  ") and line.strip()}
    assert set(SUBCOMMANDS) <= listed, sorted(set(SUBCOMMANDS) - listed)
