"""Discussion transcripts on disk (spec §2.6): where they live, their `.state` sidecar, and the
few byte-level edits a turn makes.

`~/.maestro/discussions/` (0700, never a symlink) holds `<readable>-<hash12>-<slug>.md` (0600).
The name is the original Maestro's, so a debate started there continues here: `readable` is the
workspace root's basename with every byte outside [A-Za-z0-9] turned into `-`, plus one more `-`
(the original's `tr` also translated basename's trailing newline); `hash12` starts the
`git hash-object` id of the root path, which tells apart roots that read the same (`a-b` and
`a/b`). The sidecar `<T>.state` holds exactly `turns=`, `awaiting_reply=0|1` and
`rollback_bytes=`; turn counting trusts only it, never headings inside the transcript.
"""

import hashlib
import os
import re
import stat
from dataclasses import dataclass

from maestro import paths
from maestro.util import atomic
from maestro.locks import lockdir as claimlib
from maestro.util import git as gitscope

SLUG = re.compile(r"[a-zA-Z0-9_-]+")
STATE_KEYS = ("turns", "awaiting_reply", "rollback_bytes")
MAX_STATE_BYTES = 4096


class TranscriptError(Exception):
    """The transcript or its sidecar cannot be used as it is (the caller fails with rc 3)."""


def discussions_dir() -> str:
    return os.path.join(paths.maestro_dir(), "discussions")


def workspace_root(cwd: str = None) -> str:
    """The innermost repository toplevel, else the directory itself — canonical either way."""
    cwd = os.path.realpath(cwd or os.getcwd())
    return gitscope.toplevel(cwd) or cwd


def workspace_prefix(root: str) -> str:
    raw = os.fsencode(root)
    base = os.fsencode(os.path.basename(root) or root)
    readable = "".join(chr(b) if chr(b).isascii() and chr(b).isalnum() else "-" for b in base) + "-"
    digest = hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()  # what `git hash-object --stdin` prints
    return f"{readable}-{digest[:12]}-"


def ensure_dir() -> str:
    directory = discussions_dir()
    try:
        atomic.ensure_private_dir(paths.maestro_dir())
        atomic.ensure_private_dir(directory)
    except OSError as exc:
        raise TranscriptError(f"could not prepare the private discussions directory {directory}: {exc}") from None
    return directory


def transcript_path(slug: str, root: str = None) -> str:
    return os.path.join(discussions_dir(), workspace_prefix(root or workspace_root()) + slug + ".md")


def state_path(transcript: str) -> str:
    return transcript + ".state"


@dataclass(frozen=True)
class State:
    turns: int
    awaiting: bool
    rollback: int

    def render(self) -> bytes:
        return f"turns={self.turns}\nawaiting_reply={int(self.awaiting)}\nrollback_bytes={self.rollback}\n".encode()


def read_bytes(path: str, limit: int = None) -> bytes:
    """A regular file's bytes, refusing symlinks and special files."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError(f"{path} is not a regular file")
        return handle.read() if limit is None else handle.read(limit)


def read_state(transcript: str) -> State:
    path = state_path(transcript)
    try:
        raw = read_bytes(path, MAX_STATE_BYTES + 1)
    except OSError as exc:
        raise TranscriptError(f"transcript state is missing or unreadable: {path} ({exc.strerror or exc})") from None
    fields = claimlib.parse_record(raw.decode("ascii", "replace")) if len(raw) <= MAX_STATE_BYTES else None
    if (fields is None or sorted(fields) != sorted(STATE_KEYS)
            or not all(value.isascii() and value.isdigit() for value in fields.values())
            or fields["awaiting_reply"] not in ("0", "1")):
        raise TranscriptError(f"transcript state is malformed: {path} (expected exactly turns=, awaiting_reply=0|1, "
                              "rollback_bytes=)")
    state = State(int(fields["turns"]), fields["awaiting_reply"] == "1", int(fields["rollback_bytes"]))
    if state.awaiting and state.turns < 1:
        raise TranscriptError(f"transcript state is malformed: {path} (awaiting a reply with no turn taken)")
    return state


def write_state(transcript: str, state: State) -> None:
    atomic.write_atomic(state_path(transcript), state.render(), 0o600)


def create(transcript: str, topic: str) -> None:
    """A new transcript and its sidecar; refuses to replace either."""
    if os.path.lexists(transcript) or os.path.lexists(state_path(transcript)):
        raise TranscriptError(f"transcript already exists: {transcript} (pick another slug, or continue it with "
                              "--turn)")
    heading = " ".join(topic.split())
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(transcript, flags, 0o600)
    except FileExistsError:
        raise TranscriptError(f"transcript already exists: {transcript}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(f"# Discussion: {heading}\n\n".encode())
            handle.flush()
            os.fsync(handle.fileno())
        write_state(transcript, State(0, False, 0))
    except BaseException:
        for path in (transcript, state_path(transcript)):
            try:
                os.unlink(path)
            except OSError:
                pass
        raise


def replace(transcript: str, data: bytes) -> None:
    atomic.write_atomic(transcript, data, 0o600)


@dataclass(frozen=True)
class Entry:
    slug: str
    path: str
    topic: str
    state: object  # State, or the TranscriptError text
    updated: float
    outcome: str  # CONVERGED | ESCALATE | CONTINUE | PENDING | NEW | UNKNOWN


def last_marker(reply: str) -> str:
    """CONVERGED / ESCALATE from the reply's last `^(CONVERGED|ESCALATE):\\s` line, else ''."""
    marker = ""
    for line in reply.splitlines():
        match = re.match(r"(CONVERGED|ESCALATE):\s", line + "\n")
        if match:
            marker = match.group(1)
    return marker


def _outcome(data: bytes, state) -> str:
    if not isinstance(state, State):
        return "UNKNOWN"
    if state.awaiting:
        return "PENDING"
    if state.turns == 0:
        return "NEW"
    heading = f"\n### Codex (turn {state.turns} ".encode()
    at = data.rfind(heading, min(state.rollback, len(data)))
    if at < 0:
        return "UNKNOWN"
    return last_marker(data[at:].decode("utf-8", "replace").split("\n", 2)[-1]) or "CONTINUE"


def entries(root: str = None):
    """This workspace's discussions (every workspace's when root is ''), newest first."""
    directory = discussions_dir()
    prefix = "" if root == "" else workspace_prefix(root or workspace_root())
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    found = []
    for name in names:
        if not name.endswith(".md") or name.startswith(".") or not name.startswith(prefix):
            continue
        path = os.path.join(directory, name)
        slug = name[len(prefix):-3]
        if not prefix:  # `<readable>-<hash12>-<slug>`: readable always ends in `-`, so `--<hash12>-` splits it
            match = re.search(r"--[0-9a-f]{12}-(.+)$", slug)
            slug = match.group(1) if match else slug
        try:
            data = read_bytes(path)
            updated = os.lstat(path).st_mtime
        except OSError:
            continue
        try:
            state = read_state(path)
        except TranscriptError as exc:
            state = str(exc)
        first = data.split(b"\n", 1)[0].decode("utf-8", "replace")
        topic = first.removeprefix("# Discussion: ")
        found.append(Entry(slug, path, topic, state, updated, _outcome(data, state)))
    return sorted(found, key=lambda entry: entry.updated, reverse=True)
