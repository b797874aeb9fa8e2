"""Which project a checkout is, for `memory sync` (maestro/memory/store/sync.py): an identity taken
from the repository itself, so two clones of one project at different paths (on one machine or two)
meet on the same remote branch.

In order of preference:

  - `--project-id ID` given by the user: `id:ID` (ID a safe token: letters, digits, `.`, `_`, `-`,
    at most 64, starting with a letter or digit, no `..`, not ending in `.lock`);
  - the repository's root commit (of several roots the sorted first): `root:<sha>`; a shallow clone
    does not know its real root, so it falls through;
  - the URL of its `origin` remote, normalised (credentials, scheme, port, user and a trailing
    `.git` dropped, the host lowercased: `git@github.com:o/r.git` and `https://github.com/o/r` agree);
  - a directory outside git (or a repository with neither): its path, `path:<dir>`. That is the one
    identity that does not travel; two such directories at different paths need `--project-id`.

The identity's `key` names the remote branch (`maestro-memory/<key>`) and directory
(`projects/<key>/`): `id-ID`, `root-<20 hex>`, `origin-<20 hex of the sha256 of the URL>`, and for a
path the local storage hash (the name every sync used before, so such a project needs no migration).
The identity is pinned in the sync state at the first sync; only `--project-id` changes it later.
"""

import collections
import hashlib
import re

from maestro.util import process
from maestro.util.git import git_env
from maestro.memory.store.errors import StoreError

IDENTITY_TIMEOUT_SEC = 30
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", re.ASCII)
_SCHEME_URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^@/]*@)?(?P<host>[^/:]*)(?::[0-9]*)?(?P<path>/.*)?")
_SCP_URL = re.compile(r"(?:[^@/:]+@)?(?P<host>[^/:]+):(?P<path>.*)")
_SHA = re.compile(r"[0-9a-f]{40,64}", re.ASCII)


class Identity(collections.namedtuple("Identity", "kind value key")):
    """`kind` id|root|origin|path; `value` what it was taken from; `key` the remote name part."""

    __slots__ = ()

    @property
    def text(self) -> str:
        return f"{self.kind}:{self.value}"


def check_project_id(value: str) -> str:
    """The `--project-id` token, or a usage error saying what a token may hold (it names a git branch)."""
    if not isinstance(value, str) or not _TOKEN.fullmatch(value) or ".." in value or value.endswith(".lock"):
        shown = str(value)[:40]
        raise StoreError(f"invalid --project-id {shown!r} (1-64 letters, digits, '.', '_', '-'; starting with a "
                         "letter or digit; no '..'; not ending in '.lock')", "usage")
    return value


def normalise_url(url: str) -> str:
    """`host/path` of a remote URL without credentials, scheme, port and `.git`; a local path as given."""
    text = url.strip()
    match = _SCHEME_URL.fullmatch(text) or (None if "://" in text else _SCP_URL.fullmatch(text))
    host, path = (match.group("host").lower(), match.group("path") or "") if match else ("", text)
    path = path.strip("/")
    path = path[:-4] if path.endswith(".git") else path
    return f"{host}/{path.rstrip('/')}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:20]


def from_text(text: str, local_key: str) -> Identity:
    """An identity pinned in the sync state (`Identity.text`) read back; None when it does not parse."""
    kind, _, value = str(text).partition(":")
    if kind == "id" and _TOKEN.fullmatch(value):
        return Identity("id", value, f"id-{value}")
    if kind == "root" and _SHA.fullmatch(value):
        return Identity("root", value, f"root-{value[:20]}")
    if kind == "origin" and value:
        return Identity("origin", value, f"origin-{_digest(value)}")
    if kind == "path" and value:
        return Identity("path", value, local_key)
    return None


def _git(project_root: str, *args) -> str:
    env = git_env(drop=("GIT_INDEX_FILE",), GIT_TERMINAL_PROMPT="0")
    done = process.run(["git", *args], timeout=IDENTITY_TIMEOUT_SEC, cwd=project_root, env=env)
    return done.text.strip() if done.rc == 0 else ""


def discover(project_root: str, local_key: str) -> Identity:
    """The identity of the checkout at `project_root` (its root commit, else origin, else its path)."""
    if _git(project_root, "rev-parse", "--is-shallow-repository") == "false":
        roots = sorted(line for line in _git(project_root, "rev-list", "--max-parents=0", "HEAD").split()
                       if _SHA.fullmatch(line))
        if roots:
            return Identity("root", roots[0], f"root-{roots[0][:20]}")
    url = _git(project_root, "config", "--get", "remote.origin.url")
    if url:
        value = normalise_url(url)
        return Identity("origin", value, f"origin-{_digest(value)}")
    return Identity("path", project_root, local_key)


def explicit(project_id: str) -> Identity:
    token = check_project_id(project_id)
    return Identity("id", token, f"id-{token}")
