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
This module parses the global options, `-c` settings and aliases, and judges the subcommands that
run commands or write an output file; the subcommands that write the work tree (checkout, restore,
rm, mv, clean, reset, stash, apply, plumbing, worktree, clone) live in bash_channels_git_tree.py.
"""

import os

from maestro.hooks.bash_channels_common import chdir, has, scan, target, values
from maestro.hooks.bash_channels_git_tree import WORKTREE_SUBCOMMANDS
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
    from maestro.hooks.bash_channels_git_config import environment_commands

    out = environment_commands(env, cwd)
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
    if sub in COMMAND_OPTIONS and handler is not _commands:  # clone -u, fetch/push --upload/receive-pack
        out += _option_commands(sub, rest, repo)
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
    if key == "--config-env":  # KEY=ENVVAR: the value comes from the environment, unknown here
        from maestro.hooks.bash_channels_git_config import runs_command

        return [Target("git --config-env", "run", None, argument.raw, repo.where)] if runs_command(name) else []
    if name.startswith(("include.", "includeif.")) or name.rpartition(".")[2] in ("hookspath", "helper",
                                                                                  "worktree"):
        return [Target("git -c", "run", None, argument.raw, repo.where)]  # other settings, hooks, work tree
    if name.startswith("alias."):
        repo.aliases[name[6:]] = value
        return []
    if name.rpartition(".")[2] in COMMAND_KEYS or name.startswith("pager."):
        if key == "--config-env":
            return [Target("git --config-env", "run", None, argument.raw, repo.where)]
        return [Script("sh", value, setting)] if value else []
    return []


def _config_command(sub, rest, repo, env):
    from maestro.hooks.bash_channels_git_config import git_config

    return git_config(sub, rest, repo, env)


def _quote(word):
    if word.value is None:
        return word.raw
    return "'" + word.value.replace("'", "'\\''") + "'"


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
    out += _option_commands(sub, rest, repo)
    if sub == "archive":
        opts, _ = scan(rest, "o", ("output", "format", "prefix", "remote", "exec"))
        out += [target("git archive -o", "write", w, repo.where) for w in values(opts, "o", "output")]
    if sub == "bundle" and len(rest) >= 2 and rest[0].value == "create":
        out.append(target("git bundle create", "write", rest[1], repo.where))
    return out


def _option_commands(sub, rest, repo):
    return [Script("sh", command.value, command.raw) if command.value is not None else
            Target("git " + sub + " " + (word.value or "").partition("=")[0], "run", None, command.raw, repo.where)
            for word, command in _command_options(sub, rest)]


COMMAND_OPTIONS = {  # subcommand -> options whose argument is a shell command (git runs it via the shell)
    "fetch": ("--upload-pack",), "pull": ("--upload-pack",), "ls-remote": ("-u", "--upload-pack", "--exec"),
    "clone": ("-u", "--upload-pack"), "fetch-pack": ("--upload-pack", "--exec"),
    "push": ("--receive-pack", "--exec"), "send-pack": ("--receive-pack", "--exec"), "archive": ("--exec",),
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
        elif key in names or (len(key) > 3 and key[:2] == "--" and any(n.startswith(key) for n in names)):
            if eq:
                found.append((word, Word(attached, attached, word.literal)))
            elif k + 1 < len(rest):
                found.append((word, rest[k + 1]))
        elif value[:1] == "-" and value[1:2] != "-" and value[:2] in names and len(value) > 2:
            found.append((word, Word(value[2:], value[2:], word.literal)))  # `-ucmd`, `-xcmd`: attached
    return found


OUTPUT_OPTION = frozenset(("diff", "log", "show", "range-diff", "diff-tree", "diff-files", "diff-index",
                           "whatchanged", "format-patch"))

def _format_patch(sub, rest, repo, env):
    """format-patch writes NNNN-subject.patch files into -o DIR (default: where it runs); only a
    --suffix other than .patch makes the default place matter (`--suffix=.py` in src/)."""
    opts, _ = scan(rest, "ov", ("output-directory", "suffix", "start-number", "subject-prefix", "signature-file",
                                "in-reply-to", "to", "cc", "from", "base", "interdiff", "range-diff",
                                "creation-factor", "filename-max-length", "reroll-count", "add-header",
                                "signature", "description-file", "cover-from-description", "notes"),
                   "", (), ("stdout", "numbered", "no-numbered", "keep-subject", "signoff", "attach", "inline",
                            "thread", "cover-letter", "numbered-files", "no-stat", "zero-commit", "root",
                            "progress", "quiet", "no-binary", "no-signature"))
    if has(opts, "stdout"):
        return []
    dirs = values(opts, "o", "output-directory")
    if dirs:
        return [target("git format-patch -o", "write", dirs[-1], repo.where, True)]
    suffix = values(opts, "suffix")
    if suffix and suffix[-1].value != ".patch":
        return [Target("git format-patch", "write", ".", "the current directory", repo.where, True)]
    return []


SUBCOMMANDS = {
    **WORKTREE_SUBCOMMANDS, "submodule": _commands, "sparse-checkout": _commands, "bisect": _commands,
    "rebase": _commands, "difftool": _commands, "filter-branch": _commands, "grep": _commands,
    "archive": _commands, "bundle": _commands, "config": _config_command, "format-patch": _format_patch,
}


HANDLERS = {"git": _git}
