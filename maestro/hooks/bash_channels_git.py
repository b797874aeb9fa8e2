"""git's write channels (part of the bash_channels table).

Paths are taken against `-C DIR` (cumulative) and the work tree is `--work-tree`/$GIT_WORK_TREE or
the directory holding `.git` above it. What writes (decided with issue 14):
- apply (not --check/--stat/--numstat/--summary alone, not --cached alone) and am: the files the
  patch names: a tree target on the directory it applies in (git refuses paths outside the work
  tree; with --unsafe-paths one more unresolved target).
- checkout `-- PATHS`, `REF -- PATHS`, `PATHS` (an operand that is an existing path, a pathspec
  with glob magic, or a path-shaped name — under an existing directory, or `name.ext` — that is
  not a branch/tag/remote branch of the repository), `.`; `-f`/`-p` without paths: the work tree.
  restore (not --staged alone), rm (not --cached), mv, clean (not -n), reset --hard/--keep/--merge,
  stash push/save/pop/apply/branch, checkout-index, read-tree -u, merge-file (not -p), switch
  -f/--discard-changes, worktree add/remove, clone, submodule add/update/deinit, sparse-checkout,
  mergetool, archive -o, bundle create, diff/log/show --output.
- allowed: creating and switching branches (checkout -b/-B, switch), merge, pull, rebase,
  cherry-pick, revert, bisect: like switch, they move the work tree to commits that already exist
  (their content was written and committed by someone allowed to); commit, add, log, diff, status,
  show, fetch, push, branch, tag.
- runs commands: `-c alias.X='!cmd'` then `git X`, `-c core.pager=…`-style command settings,
  rebase --exec, bisect run, submodule foreach, filter-branch filters, difftool -x.
"""

import os

from maestro.hooks.bash_channels import chdir, has, into_dir, resolve, scan, target, values
from maestro.hooks.targets import Run, Script, Target, Word

GLOBAL_ARG = ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env",
              "--list-cmds", "--attr-source")
COMMAND_KEYS = ("pager", "editor", "sshcommand", "external", "textconv", "command", "driver", "clean",
                "smudge", "process", "fsmonitor", "askpass", "program", "cmd")


class Repo:
    """Where a git command acts: `where` (cwd after -C), the work tree root, aliases from -c."""

    __slots__ = ("where", "work_tree", "work_tree_given", "aliases")

    def __init__(self, where):
        self.where = where
        self.work_tree = None
        self.work_tree_given = False
        self.aliases = {}

    def root(self):
        if self.work_tree_given:
            return self.work_tree
        if self.where is None:
            return None
        directory = self.where
        for _ in range(64):
            if os.path.exists(os.path.join(directory, ".git")):
                return directory
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
        return self.where

    def tree(self, channel, action="change"):
        root = self.root()
        return Target(channel, action, root, "the work tree", self.where, True)

    def here(self, channel, word, action="change"):
        return Target(channel, action, ".", word, self.where, True)


def _git(name, argv, cwd, env, home, depth):
    args = argv[1:]
    repo = Repo(cwd)
    if env and env.get("GIT_WORK_TREE"):
        repo.work_tree = os.path.join(cwd, env["GIT_WORK_TREE"]) if cwd else (
            env["GIT_WORK_TREE"] if env["GIT_WORK_TREE"].startswith("/") else None)
        repo.work_tree_given = True
    out = []
    i = 0
    while i < len(args):
        word = args[i]
        value = word.value
        if value is None:
            return out + [Target("git", "run", None, word.raw, cwd)]
        if not value.startswith("-"):
            break
        i += 1
        key, eq, attached = value.partition("=")
        if key in GLOBAL_ARG:
            argument = Word(attached, attached, word.literal) if eq else (args[i] if i < len(args) else None)
            i += 0 if eq else 1
            if argument is None:
                return out
            if key == "-C":
                repo.where = chdir(repo.where, argument) if argument.value != "" else repo.where
            elif key == "--work-tree":
                repo.work_tree = chdir(repo.where, argument)
                repo.work_tree_given = True
            elif key in ("-c", "--config-env"):
                out += _config(repo, argument, key)
        elif value in ("--version", "-v", "--help", "-h", "--html-path", "--man-path", "--info-path"):
            return out
    if i >= len(args):
        return out
    sub, rest = args[i].value, list(args[i + 1:])
    for _ in range(8):  # alias chains
        alias = repo.aliases.get(sub)
        if alias is None:
            break
        if alias.startswith("!"):
            return out + [Script("sh", alias[1:] + "".join(" " + _quote(w) for w in rest), alias)]
        words = [Word(part, part, True) for part in alias.split()]
        if not words:
            return out
        sub, rest = words[0].value, words[1:] + rest
    if sub is None:
        return out + [Target("git", "run", None, args[i].raw, cwd)]
    handler = SUBCOMMANDS.get(sub)
    if handler is not None:
        out += handler(sub, rest, repo, env)
    if sub in OUTPUT_OPTION:
        opts, _ = scan(rest, "", ("output",))
        out += [target("git " + sub + " --output", "write", w, repo.where) for w in values(opts, "output")]
    return out


def _config(repo, argument, key):
    setting = argument.value
    if setting is None:
        # `-c "user.name=$NAME"`: a literal key that runs nothing may keep an unknown value
        key, eq, _ = argument.raw.lstrip("'\"").partition("=")
        key = key.lower()
        if eq and key.replace(".", "").replace("-", "").isalnum() and not key.startswith(("alias.", "pager.")) \
                and key.rpartition(".")[2] not in COMMAND_KEYS:
            return []
        return [Target("git -c", "run", None, argument.raw, repo.where)]
    name, _, value = setting.partition("=")
    name = name.lower()
    if name.startswith("alias."):
        repo.aliases[name[6:]] = value
        return []
    if name.rpartition(".")[2] in COMMAND_KEYS or name.startswith("pager."):
        if key == "--config-env":
            return [Target("git --config-env", "run", None, argument.raw, repo.where)]
        return [Script("sh", value, setting)] if value else []
    return []


def _quote(word):
    if word.value is None:
        return word.raw
    return "'" + word.value.replace("'", "'\\''") + "'"


def split_dashes(words):
    """(before, after, had_dashes) around the first `--`."""
    for k, word in enumerate(words):
        if word.value == "--":
            return words[:k], words[k + 1:], True
    return words, [], False


def path_targets(channel, words, repo, action="change"):
    out = []
    for word in words:
        value = word.value
        if value is not None and (value in (".", "./", ":/") or any(c in value for c in "*?[") or
                                  value.startswith(":(")):
            out.append(repo.here(channel, word.raw, action) if value != ":/" else repo.tree(channel, action))
            continue
        full = resolve(value, repo.where)
        out.append(target(channel, action, word, repo.where, full is not None and os.path.isdir(full)))
    return out


def _apply(sub, rest, repo, env):
    opts, operands = scan(rest, "pCx", ("exclude", "include", "directory", "whitespace", "build-fake-ancestor"))
    if has(opts, "check", "stat", "numstat", "summary") and not has(opts, "apply"):
        return []
    if sub == "am" and has(opts, "abort", "quit", "show-current-patch"):
        return []
    if has(opts, "cached") and not has(opts, "index"):
        return []
    out = [repo.here("git " + sub, "the files named in the patch")]
    if has(opts, "unsafe-paths"):  # paths outside the work tree are allowed too
        out.append(Target("git " + sub + " --unsafe-paths", "change", None, "the files named in the patch",
                          repo.where))
    return out


def looks_like_path(word, repo):
    """`git checkout X`: is X a path (restored from the index) rather than a branch or commit?"""
    value = word.value
    if value is None:
        return True  # unknown: fail closed
    where = repo.where
    full = resolve(value, where)
    if full is not None and os.path.lexists(full):
        return True
    if any(c in value for c in "*?[") or value.startswith((":", "./", "../")) or value in (".", ".."):
        return True
    head, _, tail = value.rpartition("/")
    parent = resolve(head, where) if head else None
    shaped = (parent is not None and os.path.isdir(parent)) or ("." in tail and tail.rpartition(".")[2].isalpha())
    return shaped and not is_ref(value, repo)  # a deleted file under an existing directory, `name.py`


def is_ref(name, repo):
    """True when the repository has a branch, tag or remote branch called `name` (loose or packed)."""
    root = repo.root()
    if root is None:
        return False
    git_dir = os.path.join(root, ".git")
    try:
        if os.path.isfile(git_dir):  # a linked worktree or submodule: "gitdir: …", refs in its commondir
            with open(git_dir, encoding="utf-8", errors="replace") as handle:
                git_dir = os.path.join(root, handle.read(4096).partition("gitdir:")[2].strip())
        common = os.path.join(git_dir, "commondir")
        if os.path.isfile(common):
            with open(common, encoding="utf-8", errors="replace") as handle:
                git_dir = os.path.join(git_dir, handle.read(4096).strip())
        candidates = ["refs/heads/" + name, "refs/tags/" + name, "refs/remotes/" + name]
        remotes = os.path.join(git_dir, "refs", "remotes")
        if os.path.isdir(remotes):
            candidates += ["refs/remotes/" + remote + "/" + name for remote in os.listdir(remotes)]
        if any(os.path.isfile(os.path.join(git_dir, ref)) for ref in candidates):
            return True
        packed = os.path.join(git_dir, "packed-refs")
        if os.path.isfile(packed):
            with open(packed, encoding="utf-8", errors="replace") as handle:
                text = handle.read(4 << 20)
            return any(" " + ref + "\n" in text or text.endswith(" " + ref) for ref in candidates)
    except OSError:
        pass
    return False


def _checkout(sub, rest, repo, env):
    before, after, dashes = split_dashes(rest)
    opts, operands = scan(before, "bBU", ("orphan", "conflict", "pathspec-from-file", "unified"), "t",
                          ("track", "recurse-submodules"))
    channel = "git " + sub
    if values(opts, "pathspec-from-file"):
        return [Target(channel, "change", None, "--pathspec-from-file", repo.where)]
    if has(opts, "b", "B", "orphan") and not after:
        return []
    paths = list(after)
    if operands and not dashes:
        paths += operands if looks_like_path(operands[0], repo) else operands[1:]
    elif dashes:
        paths += []  # before `--`: the tree-ish
    out = path_targets(channel, paths, repo)
    if has(opts, "f", "force", "p", "patch") and not paths:
        out.append(repo.tree(channel))
    return out


def _restore(sub, rest, repo, env):
    opts, operands = scan(rest, "sU", ("source", "conflict", "pathspec-from-file", "unified",
                                       "inter-hunk-context"))
    if has(opts, "S", "staged") and not has(opts, "W", "worktree"):
        return []
    if values(opts, "pathspec-from-file"):
        return [Target("git restore", "change", None, "--pathspec-from-file", repo.where)]
    return path_targets("git restore", operands, repo)


def _rm(sub, rest, repo, env):
    opts, operands = scan(rest, "", ("pathspec-from-file",))
    if has(opts, "cached", "n", "dry-run"):
        return []
    return path_targets("git rm", operands, repo, "delete")


def _mv(sub, rest, repo, env):
    opts, operands = scan(rest)
    if has(opts, "n", "dry-run") or len(operands) < 2:
        return []
    sources, dest = operands[:-1], operands[-1]
    full = resolve(dest.value, repo.where)
    dest_is_dir = len(sources) > 1 or (full is not None and os.path.isdir(full))
    out = [into_dir("git mv", "move onto", dest, s, repo.where) if dest_is_dir else
           target("git mv", "move onto", dest, repo.where) for s in sources]
    return out + path_targets("git mv", sources, repo, "delete")


def _clean(sub, rest, repo, env):
    opts, operands = scan(rest, "e", ("exclude",))
    if has(opts, "n", "dry-run"):
        return []
    if not operands:
        return [repo.here("git clean", "the untracked files", "delete")]
    return [Target("git clean", "delete", w.value, w.raw, repo.where, True) for w in operands]


def _reset(sub, rest, repo, env):
    opts, _ = scan(rest, "", ("pathspec-from-file",))
    return [repo.tree("git reset --hard")] if has(opts, "hard", "keep", "merge") else []


def _stash(sub, rest, repo, env):
    verb = rest[0].value if rest and rest[0].value and not rest[0].value.startswith("-") else "push"
    if rest and rest[0].value == verb:
        rest = rest[1:]
    if verb in ("push", "save"):
        before, after, _ = split_dashes(rest)
        opts, operands = scan(before, "m", ("message", "pathspec-from-file"))
        paths = after + (operands if verb == "push" else [])
        return path_targets("git stash", paths, repo) if paths else [repo.tree("git stash")]
    if verb in ("pop", "apply", "branch"):
        return [repo.tree("git stash " + verb)]
    return []


def _plumbing(sub, rest, repo, env):
    opts, operands = scan(rest, "L", ("prefix", "marker-size", "stage", "index-output", "exclude-per-directory",
                                      "super-prefix"))
    if sub == "checkout-index":
        prefixes = values(opts, "prefix")
        if prefixes:
            return [Target("git checkout-index", "write", p.value, p.raw, repo.where, True) for p in prefixes]
        if has(opts, "a", "all", "stdin"):
            return [repo.tree("git checkout-index", "write")]
        return path_targets("git checkout-index", operands, repo, "write")
    if sub == "read-tree":
        return [repo.tree("git read-tree -u")] if has(opts, "u") else []
    if sub == "merge-file":  # writes the merge into its first file unless --stdout
        return [] if has(opts, "p", "stdout") or not operands else [target("git merge-file", "change",
                                                                          operands[0], repo.where)]
    if sub == "switch":
        return [repo.tree("git switch --discard-changes")] if has(opts, "f", "force", "discard-changes") else []
    if sub == "mergetool":
        return [repo.tree("git mergetool")]
    return []


def _worktree(sub, rest, repo, env):
    verb = rest[0].value if rest else None
    opts, operands = scan(rest[1:], "bB", ("reason", "orphan"))
    if verb == "add" and operands:
        return [target("git worktree add", "write", operands[0], repo.where, True)]
    if verb == "remove" and operands:
        return [target("git worktree remove", "delete", operands[0], repo.where, True)]
    return []


def _clone(sub, rest, repo, env):
    opts, operands = scan(rest, "obucj", ("origin", "branch", "upload-pack", "reference", "reference-if-able",
                                          "separate-git-dir", "depth", "shallow-since", "shallow-exclude",
                                          "config", "server-option", "filter", "template", "jobs", "bundle-uri",
                                          "ref-format"))
    if len(operands) >= 2:
        return [target("git clone", "write", operands[1], repo.where, True)]
    if operands and operands[0].value is not None:
        base = operands[0].value.rstrip("/").rpartition("/")[2].rpartition(":")[2]
        base = base[:-4] if base.endswith(".git") else base
        return [Target("git clone", "write", base, base, repo.where, True)] if base else []
    return [target("git clone", "write", w, repo.where, True) for w in operands]


def _commands(sub, rest, repo, env):
    """Subcommands that run a command given on the command line."""
    out = []
    if sub == "submodule":
        verb = next((w.value for w in rest if w.value and not w.value.startswith("-")), None)
        if verb == "foreach":
            words = rest[[w.value for w in rest].index("foreach") + 1:]
            words = [w for w in words if w.value not in ("--recursive", "-q", "--quiet")]
            raw = " ".join(w.raw for w in words)
            if all(w.value is not None for w in words):
                return [Script("sh", " ".join(w.value for w in words), raw)] if words else []
            return [Target("git submodule foreach", "run", None, raw, repo.where)]
        return [repo.tree("git submodule " + verb)] if verb in ("add", "update", "deinit") else []
    if sub == "sparse-checkout":
        verb = rest[0].value if rest else None
        return [repo.tree("git sparse-checkout")] if verb in ("set", "add", "reapply", "disable", "init") else []
    if sub == "bisect" and rest and rest[0].value == "run":
        return [Run(rest[1:])] if len(rest) > 1 else []
    for word, command in _command_options(sub, rest):
        out.append(Script("sh", command.value, command.raw) if command.value is not None else
                   Target("git " + sub + " " + (word.value or "").partition("=")[0], "run", None, command.raw,
                          repo.where))
    if sub == "archive":
        opts, _ = scan(rest, "o", ("output", "format", "prefix", "remote", "exec"))
        out += [target("git archive -o", "write", w, repo.where) for w in values(opts, "o", "output")]
    if sub == "bundle" and len(rest) >= 2 and rest[0].value == "create":
        out.append(target("git bundle create", "write", rest[1], repo.where))
    return out


COMMAND_OPTIONS = {  # subcommand -> options whose argument is a shell command
    "rebase": ("-x", "--exec"), "difftool": ("-x", "--extcmd"),
    "filter-branch": ("--tree-filter", "--index-filter", "--msg-filter", "--env-filter", "--commit-filter",
                      "--parent-filter", "--tag-name-filter"),
}


def _command_options(sub, rest):
    """[(option word, command Word)] for rebase --exec, difftool -x, filter-branch filters, and grep's
    -O<cmd>/--open-files-in-pager=<cmd> (its argument is attached only)."""
    found = []
    names = COMMAND_OPTIONS.get(sub, ())
    for k, word in enumerate(rest):
        value = word.value or ""
        key, eq, attached = value.partition("=")
        if sub == "grep":
            if key == "--open-files-in-pager" and eq:
                found.append((word, Word(attached, attached, word.literal)))
            elif value.startswith("-O") and len(value) > 2:
                found.append((word, Word(value[2:], value[2:], word.literal)))
        elif key in names:
            if eq:
                found.append((word, Word(attached, attached, word.literal)))
            elif k + 1 < len(rest):
                found.append((word, rest[k + 1]))
    return found


OUTPUT_OPTION = frozenset(("diff", "log", "show", "range-diff", "diff-tree", "diff-files", "diff-index",
                           "whatchanged", "format-patch"))

SUBCOMMANDS = {
    "apply": _apply, "am": _apply, "checkout": _checkout, "restore": _restore, "rm": _rm, "mv": _mv,
    "clean": _clean, "reset": _reset, "stash": _stash, "checkout-index": _plumbing, "read-tree": _plumbing,
    "merge-file": _plumbing, "switch": _plumbing, "mergetool": _plumbing, "worktree": _worktree,
    "clone": _clone, "submodule": _commands, "sparse-checkout": _commands, "bisect": _commands,
    "rebase": _commands, "difftool": _commands, "filter-branch": _commands, "grep": _commands,
    "archive": _commands, "bundle": _commands,
}


HANDLERS = {"git": _git}
