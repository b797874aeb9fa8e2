"""The memory store's one expected-error class: a reason name (stable, shown in `--json`) and the
exit code it maps to. Input problems are usage errors (3); a refused or failed write is 4."""

from maestro.errors import Exit, MaestroError

# reason -> exit code; the reasons are part of the `--json` contract.
REASONS = {
    "usage": Exit.USAGE,  # bad arguments: unknown track, bad date, option on the wrong track
    "invalid": Exit.USAGE,  # content that cannot be stored: empty, delimiter line, not UTF-8
    "sensitive": Exit.USAGE,  # nothing left after the sanitizer
    "malformed": Exit.USAGE,  # a file or input that does not parse
    "blocked": Exit.FAILED,  # write-block.json says blocked
    "drift": Exit.FAILED,  # the file on disk is not canonical; backed up, write refused
    "busy": Exit.FAILED,  # the store lock was not won in time
    "no_match": Exit.FAILED,
    "ambiguous": Exit.FAILED,
    "conflict": Exit.FAILED,  # the result would duplicate an entry or reuse an id
    "io": Exit.FAILED,  # the file system failed; nothing half-written is left
}


class StoreError(MaestroError):
    def __init__(self, message: str, reason: str = "invalid"):
        super().__init__(message, REASONS[reason])
        self.reason = reason
