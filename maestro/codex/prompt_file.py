"""The private prompt file (issue 17): a prompt too large for one argv element, or blank, reaches
the companion through `--prompt-file`, written where nobody else can swap or edit it."""

import os
import tempfile

from maestro import paths


def write_prompt_file(data: bytes) -> str:
    """A new file holding `data` in the private prompts directory (`paths.private_prompts_dir`):
    created exclusively (O_EXCL, no symlink followed) under a random name, mode 0600, so nothing
    planted there is written through or reused. The caller removes it after the call."""
    fd, path = tempfile.mkstemp(prefix="maestro-prompt.", suffix=".md", dir=paths.private_prompts_dir())
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    except BaseException:
        remove_quietly(path)
        raise
    return path


def remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
