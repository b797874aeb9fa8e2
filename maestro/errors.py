"""Named exit codes, the one expected-error class and its one usage-error subclass.

Every verb returns one of these codes; the vocabulary is the original Maestro's (spec §1.0) so a
script written against the Bash adapters reads maestro's exit codes the same way.
"""


class Exit:
    OK = 0
    ERROR = 1  # installer/doctor: something failed, nothing half-done
    NOT_FOUND = 1  # memory search: nothing matched (grep's 1)
    HOOK_BLOCK = 2  # Claude Code hook protocol: block the tool call / reject the prompt
    USAGE = 3  # bad arguments, or the work could not start
    FAILED = 4  # failed or interrupted
    CAP = 5  # discussion turn cap reached (ESCALATE)
    PYTHON_TOO_OLD = 6  # started by a Python below 3.11 (mirrored by number in build.py's launchers and __main__.py)
    NEEDS_ANSWERS = 10
    BLOCKED = 11
    STUCK = 12
    HUNG = 124  # read-only job hung
    POISONED = 125  # write job cancelled without confirmed quiescence


class MaestroError(Exception):
    """An expected failure: printed as one line on stderr, mapped to a named exit code."""

    def __init__(self, message: str, code: int = Exit.USAGE):
        super().__init__(message)
        self.message = message
        self.code = code


class UsageError(MaestroError):
    """Bad arguments (from a parser or a verb's own checks): exit 3, before anything is locked.

    The one usage-error class: `commands.support.Parser` raises it with the `maestro <verb>: … (see --help)`
    line, the adapters' `commands.entry.adapter_main` prints it as `<SCOPE>_ERROR: <message>`.
    """

    def __init__(self, message: str):
        super().__init__(message, Exit.USAGE)
