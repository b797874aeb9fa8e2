"""git's subcommands that write the work tree (part of the bash_channels git table).

checkout/restore of paths, rm, mv, clean, reset --hard, stash, apply/am, the plumbing that
checks files out (checkout-index, read-tree -u, merge-file, switch --discard-changes, mergetool),
worktree add/remove and clone: which files each writes, given the `repo` (bash_channels_git.Repo:
where git acts and its work tree root). Split out of bash_channels_git.py, which parses git's
global options and aliases, finds the commands git runs and dispatches here through SUBCOMMANDS;
the rules are listed in its docstring.
"""

import os

from maestro.hooks.bash_channels_common import has, into_dir, resolve, scan, target, values
from maestro.hooks.targets import Target


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


# long options git's parse-options also accepts by unique prefix (`--for` is --force)
CHECKOUT_FLAGS = ("force", "patch", "quiet", "merge", "detach", "ignore-skip-worktree-bits", "ignore-other-worktrees",
                  "overwrite-ignore", "no-overwrite-ignore", "progress", "no-progress", "guess", "no-guess",
                  "overlay", "no-overlay", "pathspec-file-nul", "ours", "theirs", "no-track",
                  "no-recurse-submodules")


def _checkout(sub, rest, repo, env):
    before, after, dashes = split_dashes(rest)
    opts, operands = scan(before, "bBU", ("orphan", "conflict", "pathspec-from-file", "unified"), "t",
                          ("track", "recurse-submodules"), CHECKOUT_FLAGS)
    channel = "git " + sub
    if values(opts, "pathspec-from-file"):
        return [Target(channel, "change", None, "--pathspec-from-file", repo.where)]
    if has(opts, "b", "B", "orphan") and not after and not has(opts, "f", "force"):
        return []  # a new branch keeps the work tree (checkout --orphan too; switch --orphan empties it)
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
    opts, _ = scan(rest, "", ("pathspec-from-file",), "", ("recurse-submodules",),
                   ("hard", "soft", "mixed", "keep", "merge", "quiet", "no-quiet", "refresh", "no-refresh",
                    "intent-to-add", "patch", "pathspec-file-nul", "no-recurse-submodules"))
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
        opts, _ = scan(rest, "cC", ("orphan", "conflict", "create", "force-create"), "t",
                       ("track", "recurse-submodules"), CHECKOUT_FLAGS + ("discard-changes",))
        if has(opts, "orphan"):  # an empty work tree: every tracked file is removed
            return [repo.tree("git switch --orphan")]
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


WORKTREE_SUBCOMMANDS = {
    "apply": _apply, "am": _apply, "checkout": _checkout, "restore": _restore, "rm": _rm, "mv": _mv,
    "clean": _clean, "reset": _reset, "stash": _stash, "checkout-index": _plumbing, "read-tree": _plumbing,
    "merge-file": _plumbing, "switch": _plumbing, "mergetool": _plumbing, "worktree": _worktree,
    "clone": _clone,
}
