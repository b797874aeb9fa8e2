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
# /dev/stdin and /dev/fd/N (N = 0 or ≥ 3) are missing on purpose: on Linux they reopen whatever
# file is behind that descriptor (`exec 3<src/app.py; echo x > /dev/fd/3`), so they are judged.
NEVER_TARGETS = frozenset(("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/fd/1", "/dev/fd/2", "/dev/tty", "/dev/zero"))
TREE_WALK_LIMIT = 2000  # entries one tree target may cost
DECISION_WALK_BUDGET = 2 * TREE_WALK_LIMIT  # entries all tree targets of one decision may cost together

_decision = {}  # per-decision state: the walk budget left and the scratch roots (see begin_decision)


def begin_decision() -> None:
    """Start one gate decision: a fresh walk budget, scratch roots computed once. One command can
    name the same big tree many times (`find /usr/* … -delete`); without a shared budget the hook
    would outlive its timeout, which Claude Code treats as an allow."""
    _decision.clear()
    _decision["budget"] = DECISION_WALK_BUDGET


def never_a_target(path: str) -> bool:
    """/dev/null and friends: writing there changes no file."""
    return path in NEVER_TARGETS


def windows_only(path: str) -> bool:
    """A drive path with a backslash (`C:\\x`) or a UNC path: forms a POSIX payload never sends.
    `a:/x/../src/y.py` is a valid relative POSIX path and is judged as one."""
    return (len(path) >= 3 and path[0].isalpha() and path[1] == ":" and path[2] == "\\") or path.startswith("\\\\")


def canonical_path(absolute: str) -> str:
    """realpath of the deepest existing ancestor + the missing tail (spec §4).

    A symlink anywhere on the existing part is resolved, so a scratch-named link into the
    repository is classified by where it points; the missing tail cannot contain links. A path
    through a file (`src/app.py/x`) raises NotADirectoryError: the Edit gate fails closed on it as a
    malformed path, the Bash gate (gate._offending) as that one unresolvable target.
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
    key = ("roots", home, os.environ.get("TMPDIR", ""))
    if key not in _decision:
        _decision[key] = _scratch_roots(home)
    return _decision[key]


def _scratch_roots(home: str):
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


def _lexical_and_canonical(raw: str, cwd: str):
    """(the path normalised as written, the path the kernel opens). The kernel resolves a symlink
    before the `..` after it (`/tmp/into-src/../src/app.py` is `<repo>/src/app.py` when into-src
    links to <repo>/src), so the canonical form resolves the unnormalised path."""
    joined = raw if os.path.isabs(raw) else os.path.join(cwd, raw)
    return os.path.normpath(joined), os.path.normpath(canonical_path(joined))


def judge(raw: str, cwd: str, home: str) -> str:
    """FREE, SOURCE or PROTECTED for one target path (relative paths taken against `cwd`)."""
    home = usable_home(home)
    if os.sep == "/" and (windows_only(raw) or (windows_only(cwd) and not raw.startswith("/"))):
        return _windows_judgement(raw, cwd)
    absolute, canonical = _lexical_and_canonical(raw, cwd)
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
    absolute, root = _lexical_and_canonical(raw, cwd)
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
    _decision.setdefault("budget", DECISION_WALK_BUDGET)
    for directory, subdirs, files in os.walk(root, onerror=_raise):
        for name in subdirs + files:
            seen += 1
            _decision["budget"] -= 1
            if seen > TREE_WALK_LIMIT or _decision["budget"] < 0:
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
