"""Installer output: `[maestro] …` lines on stdout, `[maestro] WARN: …` on stderr."""

import sys

from maestro.errors import Exit, MaestroError


def log(message: str) -> None:
    sys.stdout.write(f"[maestro] {message}\n")
    sys.stdout.flush()


def warn(message: str) -> None:
    sys.stderr.write(f"[maestro] WARN: {message}\n")
    sys.stderr.flush()


def fail(message: str):
    raise MaestroError(f"[maestro] WARN: {message}", Exit.ERROR)
