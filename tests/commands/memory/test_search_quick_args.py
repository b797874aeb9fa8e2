"""`memory search` parses its ordinary command lines without argparse (quick_args): whatever it accepts
must parse exactly as argparse does, and whatever argparse would refuse or read differently goes to it."""

import random

import pytest

from maestro.commands.memory import search as command
from maestro.errors import UsageError

pytestmark = pytest.mark.in_process


def by_argparse(argv):
    quick = command.quick_args
    command.quick_args = lambda argv: None
    try:
        return command._parsed(argv)
    except UsageError:
        return "usage error"
    finally:
        command.quick_args = quick


ACCEPTED = [
    ["sqlite"], ["sqlite", "index", "--json"], ["--limit", "3", "a", "b"], ["a", "--limit=7"],
    ["a", "--track", "key", "--track=daily", "--cwd", "/p", "--branch", "feat/x", "--since", "2024-05-01"],
    ["a", "--archived", "--json", "--limit", " 4"], ["--cwd=", "x"], ["a", "--limit", "+2"], ["a", "--limit", "0"],
    ["--branch", "b", "--branch", "c", "q"], ["naïve", "東京"], ["a", "--limit", "5_0"],
]
REFERRED = [  # each one goes to argparse, which refuses it or reads it its own way
    [], ["--json"], ["a", "--limit", "x"], ["a", "--lim", "3"], ["a", "--", "-b"], ["-h"], ["a", "--help"],
    ["a", "--json=1"], ["a", "--cwd"], ["a", "--cwd", "-x"], ["-5"],
    ["a", "--json", "b"], ["a", "--unknown"], ["a", "-t", "key"], ["a", "--limit="],
]


@pytest.mark.parametrize("argv", ACCEPTED)
def test_an_ordinary_command_line_parses_as_argparse_parses_it(argv):
    assert command.quick_args(argv) is not None
    assert command.quick_args(argv) == by_argparse(argv)


@pytest.mark.parametrize("argv", REFERRED)
def test_anything_else_is_left_to_argparse(argv):
    assert command.quick_args(argv) is None


def test_random_command_lines_never_parse_otherwise_than_argparse():
    rng = random.Random(9)
    pieces = ["q", "w", "-x", "--json", "--archived", "--limit", "3", "-1", "x", "--track", "key", "--cwd=/d",
              "--since", "2024-01-02", "--branch=b", "--", "--li", "=", ""]
    for _ in range(3000):
        argv = [rng.choice(pieces) for _ in range(rng.randint(0, 7))]
        quick = command.quick_args(argv)
        if quick is not None:
            assert quick == by_argparse(argv), argv


def test_a_search_process_never_imports_argparse_for_an_ordinary_command_line(tmp_path):
    import os
    import pathlib
    import subprocess
    import sys

    root = str(pathlib.Path(command.__file__).parents[3])
    code = (f"import sys; sys.path.insert(0, {root!r}); from maestro.cli import main; "
            "rc = main(['memory', 'search', 'lease', '--limit', '3', '--cwd', sys.argv[1]]); "
            "print(rc, 'argparse' in sys.modules, 'subprocess' in sys.modules)")
    env = dict(os.environ, HOME=str(tmp_path), MAESTRO_MEMORY_DIR=str(tmp_path / "memory"))
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(tmp_path)], capture_output=True, text=True,
                         env=env, check=True)
    assert out.stdout.split() == ["1", "False", "False"]  # no entry matches (exit 1), argparse never loaded
