"""git settings that make git run a command or read more settings (part of the bash_channels table).

- `git config KEY VALUE` (and `set`, `--add`, `--replace-all`, …) storing a key that makes a later
  git run a command (alias.*, core.editor/pager/sshCommand/fsmonitor/hooksPath, diff.external,
  *.textconv, filter.*, credential.helper, sequence.editor, include.path, includeIf.*): the value
  is run by a later command the gate cannot connect to this one → fail closed. `--file FILE` writes FILE.
- the environment git reads: GIT_CONFIG_COUNT/GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n and
  GIT_CONFIG_PARAMETERS are the env spelling of `-c`; GIT_EXTERNAL_DIFF, GIT_SSH_COMMAND,
  GIT_EDITOR, EDITOR, VISUAL, GIT_PAGER, PAGER, … are commands git runs through the shell.
"""

from maestro.hooks.bash_channels_common import scan, target, values
from maestro.hooks.targets import Script, Target, Word

RUNS_PREFIXES = ("alias.", "filter.", "include.", "includeif.", "pager.", "credential", "url.")
RUNS_LAST = frozenset(("pager", "editor", "sshcommand", "external", "textconv", "command", "driver", "clean",
                       "smudge", "process", "fsmonitor", "askpass", "program", "cmd", "hookspath", "helper",
                       "worktree", "tool", "path", "trustexitcode", "gitproxy", "proxycommand"))
# variables whose value git runs through the shell
COMMAND_VARIABLES = ("GIT_EXTERNAL_DIFF", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
                     "EDITOR", "VISUAL", "GIT_PAGER", "PAGER", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_PROXY_COMMAND")
# variables that point git at other settings or hooks: unknown commands
CONFIG_FILE_VARIABLES = ("GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_EXEC_PATH",
                         "GIT_TEMPLATE_DIR")
READ_ONLY = frozenset(("get", "get-all", "get-regexp", "get-urlmatch", "list", "l", "get-color",
                       "get-colorbool", "show-origin", "show-scope", "help", "h", "name-only"))
FAIL = "git config would make git run a command"


def runs_command(name):
    """True when setting `name` (lower case) makes git run a command or read another config."""
    return name.startswith(RUNS_PREFIXES) or name.rpartition(".")[2] in RUNS_LAST


def git_config(sub, rest, repo, env):
    """`git config …` storing a setting."""
    opts, operands = scan(rest, "f", ("file", "blob", "type", "default", "comment", "value", "url"), "", (),
                          ("global", "system", "local", "worktree", "add", "replace-all", "unset", "unset-all",
                           "get", "get-all", "get-regexp", "get-urlmatch", "list", "null", "name-only",
                           "includes", "no-includes", "show-origin", "show-scope", "bool", "int", "path",
                           "expiry-date", "edit", "fixed-value", "all", "rename-section", "remove-section",
                           "help"))
    if any(key in READ_ONLY for key, _ in opts):
        return []
    out = [target("git config --file", "write", w, repo.where) for w in values(opts, "f", "file")]
    words = list(operands)
    if words and words[0].value in ("set", "unset", "rename-section", "remove-section", "edit"):
        words = words[1:]
    elif words and words[0].value in READ_ONLY:
        return out
    if any(key == "e" or key == "edit" for key, _ in opts) or (operands and operands[0].value == "edit"):
        return out + [Target("git config --edit", "run", None, "the editor", repo.where)]
    if not words:
        return out
    key = words[0]
    if key.value is None or runs_command(key.value.lower()):
        return out + [Target(FAIL, "run", None, key.raw, repo.where)]
    return out


def environment_commands(env, cwd):
    """What git runs or reads because of its environment (see the module docstring)."""
    if not env:
        return []
    out = []
    for name in COMMAND_VARIABLES:
        value = env.get(name)
        if value:
            out.append(Script("sh", value, "$" + name))
    for name in CONFIG_FILE_VARIABLES:
        if env.get(name):
            out.append(Target("git (" + name + ")", "run", None, "$" + name, cwd))
    count = env.get("GIT_CONFIG_COUNT")
    if count:
        if not count.isdigit() or int(count) > 64:
            return out + [Target("git (GIT_CONFIG_COUNT)", "run", None, "$GIT_CONFIG_COUNT", cwd)]
        for k in range(int(count)):
            key = env.get("GIT_CONFIG_KEY_" + str(k), "")
            value = env.get("GIT_CONFIG_VALUE_" + str(k), "")
            out += _setting(key + "=" + value, "$GIT_CONFIG_KEY_" + str(k), cwd)
    parameters = env.get("GIT_CONFIG_PARAMETERS")
    if parameters:
        entries = _parameters(parameters)
        if entries is None:
            return out + [Target("git (GIT_CONFIG_PARAMETERS)", "run", None, "$GIT_CONFIG_PARAMETERS", cwd)]
        for entry in entries:
            out += _setting(entry, "$GIT_CONFIG_PARAMETERS", cwd)
    return out


def _setting(setting, word, cwd):
    name, _, value = setting.partition("=")
    name = name.lower()
    if not runs_command(name):
        return []
    return [Target("git (" + word[1:] + ")", "run", None, word + " " + setting, cwd)]


def _parameters(text):
    """GIT_CONFIG_PARAMETERS: single-quoted entries separated by spaces ('a.b=c' 'd.e'='f'); None when
    the text is not in that shape."""
    entries, current, i, n = [], [], 0, len(text)
    while i < n:
        char = text[i]
        if char == " " and not current:
            i += 1
            continue
        if char == " ":
            entries.append("".join(current))
            current = []
            i += 1
            continue
        if char == "'":
            end = text.find("'", i + 1)
            if end < 0:
                return None
            current.append(text[i + 1:end])
            i = end + 1
            continue
        if char == "\\" and i + 1 < n:
            current.append(text[i + 1])
            i += 2
            continue
        current.append(char)
        i += 1
    if current:
        entries.append("".join(current))
    return entries
