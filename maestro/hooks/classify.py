"""Where a write lands, as the gate judges it: FREE, SOURCE or PROTECTED (spec §4, issue 14 part 3).

FREE       scratch roots (/tmp, /private/tmp, a canonical $TMPDIR, ~/Desktop), `.claude`/`.codex`
           directories, non-executable non-code files (docs, config, data).
SOURCE     everything else — and also hard links (nlink > 1: the other name may be source), files
           under `.git/hooks/` (code git runs), `.envrc`/`.env.sh` (code direnv/shells source).
PROTECTED  the files that control the gate itself: every Claude Code settings file (user, project,
           local, managed), `~/.claude/hooks/**` (the installed archive), maestro's grant
           directory, install manifest and pre-install settings snapshot. Checked first, on the
           path as written AND on its canonical form, so neither a symlink nor a scratch location
           launders them.
Both SOURCE and PROTECTED block; only the user's "edit it yourself" grant opens them.

Hot path: os/stat/posixpath only (preloaded by the interpreter).
"""

import os
import stat

from maestro.hooks import policy

FREE = "free"
SOURCE = "source"
PROTECTED = "protected"

SETTINGS_NAMES = frozenset(("settings.json", "settings.local.json"))
MANAGED_ROOTS = ("/etc/claude-code", "/Library/Application Support/ClaudeCode")
MAESTRO_CONTROL_FILES = ("install-manifest.json", "install-manifest.lock", "settings-before-install.json")
# `.env` and `.env.<stage>` are data; these suffixes make a shell/interpreter source it as code.
_ENV_CODE_SUFFIXES = frozenset(("sh", "bash", "zsh", "fish", "ksh", "ps1", "py", "js", "mjs", "cjs", "ts", "rb", "pl"))
NEVER_TARGETS = frozenset(("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"))


def never_a_target(path: str) -> bool:
    """/dev/null and friends: writing there changes no file."""
    return path in NEVER_TARGETS or (path.startswith("/dev/fd/") and path[8:].isdigit())


def windows_only(path: str) -> bool:
    """A drive path with a backslash (`C:\\x`) or a UNC path: forms a POSIX payload never sends.
    `a:/x/../src/y.py` is a valid relative POSIX path and is judged as one."""
    return (len(path) >= 3 and path[0].isalpha() and path[1] == ":" and path[2] == "\\") or path.startswith("\\\\")


def canonical_path(absolute: str) -> str:
    """realpath of the deepest existing ancestor + the missing tail (spec §4).

    A symlink anywhere on the existing part is resolved, so a scratch-named link into the
    repository is classified by where it points; the missing tail cannot contain links.
    """
    cursor = absolute
    missing = []
    while True:
        try:
            st = os.lstat(cursor)
        except FileNotFoundError:
            parent = os.path.dirname(cursor)
            if parent == cursor:
                raise
            missing.append(os.path.basename(cursor))
            cursor = parent
            continue
        if stat.S_ISLNK(st.st_mode) or stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
            base = os.path.realpath(cursor, strict=True)
        else:
            base = cursor
        return os.path.join(base, *reversed(missing)) if missing else base


def usable_home(home: str) -> str:
    """HOME as a root for Desktop and maestro's own files, or '' when it is empty, relative or `/`."""
    home = (home or "").rstrip("/")
    return home if home.startswith("/") else ""


def _ancestor_or_same(path: str, other: str) -> bool:
    return path == other or policy.is_under(other, path)


def scratch_roots(home: str):
    roots = ["/tmp", "/private/tmp"]
    tmpdir = os.environ.get("TMPDIR", "")
    if tmpdir.startswith("/"):
        tmpdir = tmpdir.rstrip("/")
        # Only a canonical TMPDIR counts (a symlinked one would make its target scratch), and never
        # `/`, HOME or an ancestor of either: TMPDIR=/ would otherwise make every file scratch.
        if tmpdir and os.path.realpath(tmpdir) == tmpdir and not (
            home and (_ancestor_or_same(tmpdir, home) or _ancestor_or_same(tmpdir, os.path.realpath(home)))
        ):
            roots.append(tmpdir)
    if home:
        roots.append(canonical_path(os.path.join(home, "Desktop")))
    return roots


def _protected_segments(segments) -> bool:
    """`.claude/settings.json` and `.claude/settings.local.json` in any directory (project settings)."""
    return len(segments) >= 2 and segments[-2] == ".claude" and segments[-1] in SETTINGS_NAMES


def is_protected(absolute: str, home: str) -> bool:
    """One absolute, normalised path: does it control the gate?"""
    from maestro import paths

    if _protected_segments(absolute.split("/")):
        return True
    claude = os.path.normpath(paths.claude_dir()) if usable_home(home) or os.environ.get("CLAUDE_CONFIG_DIR") else ""
    if claude.startswith("/") and (
        os.path.dirname(absolute) == claude and os.path.basename(absolute) in SETTINGS_NAMES
        or policy.is_under(absolute, os.path.join(claude, "hooks"))
    ):
        return True
    if any(absolute == root or policy.is_under(absolute, root) for root in MANAGED_ROOTS):
        return True
    if home:
        maestro = os.path.join(home, ".maestro")
        direct_edit = os.path.join(maestro, "direct-edit")
        if absolute == direct_edit or policy.is_under(absolute, direct_edit):
            return True
        if os.path.dirname(absolute) == maestro and os.path.basename(absolute) in MAESTRO_CONTROL_FILES:
            return True
    return False


def _code_by_nature(canonical: str) -> bool:
    """Files that run although their names look like data or live in a free place."""
    segments = canonical.split("/")
    for index in range(len(segments) - 2):
        if segments[index] == ".git" and segments[index + 1] == "hooks":
            return True
    name = segments[-1].lower()
    if name == ".envrc":
        return True
    if name.startswith(".env.") and policy.extension_of(name) in _ENV_CODE_SUFFIXES:
        return True
    try:
        st = os.lstat(canonical)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_nlink > 1


def _is_executable_file(path: str) -> bool:
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    return stat.S_ISREG(st.st_mode) and bool(st.st_mode & 0o111)


def _windows_judgement(raw: str, cwd: str) -> str:
    """Lexical classification of a Windows path received on a POSIX host (nothing to stat)."""
    import ntpath

    joined = ntpath.normpath(raw if windows_only(raw) else ntpath.join(cwd, raw))
    segments = [s for s in joined.replace("/", "\\").split("\\") if s]
    lowered = [s.lower() for s in segments]
    if _protected_segments(lowered):
        return PROTECTED
    if policy.has_harness_segment(lowered):
        return FREE
    return FREE if policy.is_noncode(segments[-1] if segments else "") else SOURCE


def judge(raw: str, cwd: str, home: str) -> str:
    """FREE, SOURCE or PROTECTED for one target path (relative paths taken against `cwd`)."""
    home = usable_home(home)
    if os.sep == "/" and (windows_only(raw) or (windows_only(cwd) and not raw.startswith("/"))):
        return _windows_judgement(raw, cwd)
    absolute = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(cwd, raw))
    canonical = canonical_path(absolute)
    if is_protected(absolute, home) or (canonical != absolute and is_protected(canonical, home)):
        return PROTECTED
    if _code_by_nature(canonical):
        return SOURCE
    if any(policy.is_under(canonical, root, os.sep) for root in scratch_roots(home)):
        return FREE
    if policy.has_harness_segment(canonical.split(os.sep)):
        return FREE
    if not _is_executable_file(canonical) and policy.is_noncode(os.path.basename(canonical)):
        return FREE
    return SOURCE


TREE_WALK_LIMIT = 2000


def judge_tree(raw: str, cwd: str, home: str) -> str:
    """A directory whose contents a command writes or deletes (`rm -r d`, `tar -x -C d`).

    FREE when the directory lies in a free place (scratch, harness); otherwise an existing
    directory is walked (bounded) and is FREE only when every entry below it is (a name like
    `notes.md` does not make a directory free); anything else (a missing directory, an unreadable
    one, one past the walk limit) is SOURCE: its future contents are unknown.
    """
    home = usable_home(home)
    if os.sep == "/" and (windows_only(raw) or (windows_only(cwd) and not raw.startswith("/"))):
        verdict = _windows_judgement(raw, cwd)
        return SOURCE if verdict == FREE and not _windows_free_location(raw, cwd) else verdict
    absolute = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(cwd, raw))
    root = canonical_path(absolute)
    if is_protected(absolute, home) or is_protected(root, home):
        return PROTECTED
    if any(root == scratch or policy.is_under(root, scratch, os.sep) for scratch in scratch_roots(home)):
        return FREE
    if policy.has_harness_segment(root.split(os.sep)):
        return FREE
    try:
        if not stat.S_ISDIR(os.lstat(root).st_mode):
            return judge(raw, cwd, home)
    except OSError:
        return SOURCE
    try:
        return _walk(root, home)
    except OSError:
        return SOURCE


def _walk(root: str, home: str) -> str:
    seen = 0
    worst = FREE
    for directory, subdirs, files in os.walk(root, onerror=_raise):
        for name in subdirs + files:
            seen += 1
            if seen > TREE_WALK_LIMIT:
                return SOURCE
            path = os.path.join(directory, name)
            if name in subdirs and not os.path.islink(path):
                if is_protected(path, home):
                    return PROTECTED
                continue
            entry = judge(path, directory, home)
            if entry == PROTECTED:
                return PROTECTED
            if entry != FREE:
                worst = entry
    return worst


def _windows_free_location(raw: str, cwd: str) -> bool:
    import ntpath

    joined = ntpath.normpath(raw if windows_only(raw) else ntpath.join(cwd, raw))
    return policy.has_harness_segment(s.lower() for s in joined.replace("/", "\\").split("\\") if s)


def _raise(error):
    raise error
