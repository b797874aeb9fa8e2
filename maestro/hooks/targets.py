"""What a tool call would write, as the gate judges it: one `Target` per file (or tree) touched.

Shared by the Bash analysis (hooks/bash_*.py, hooks/inline_code.py), the MCP analysis
(hooks/mcp_gate.py) and the gate that classifies each target with the Edit gate's rules.
Plain classes with __slots__: this module is on the hook's hot path (no dataclasses import).
"""


class Target:
    """One write the command would make.

    channel  how it writes, as the block message names it: "sed -i", "redirection >", "cp",
             "python -c open(…, 'w')", "mcp__filesystem__write_file"
    action   the verb of the message: "change", "write", "create", "delete", "truncate", "move onto"
    path     the target after expansion (relative paths are taken against `cwd`), or None when it
             cannot be resolved statically — the gate then fails closed and names `word`
    word     the target as written in the command (for the message), e.g. "$OUT" or "src/app.py"
    cwd      the directory a relative `path` is taken against (after any `cd` earlier in the
             command); None when that directory itself is unknown (then a relative path is unresolved)
    tree     True when the target is a directory whose contents are written or deleted
             (`rm -r dir`, `tar -x -C dir`, `find dir -delete`, `git clean`): judged as a tree
    """

    __slots__ = ("channel", "action", "path", "word", "cwd", "tree")

    def __init__(self, channel: str, action: str, path, word: str, cwd=None, tree: bool = False):
        self.channel = channel
        self.action = action
        self.path = path
        self.word = word
        self.cwd = cwd
        self.tree = tree

    def __repr__(self) -> str:
        extra = ", tree=True" if self.tree else ""
        return f"Target({self.channel!r}, {self.action!r}, {self.path!r}, {self.word!r}, cwd={self.cwd!r}{extra})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Target) and all(
            getattr(self, name) == getattr(other, name) for name in self.__slots__
        )

    __hash__ = None


class Word:
    """One shell word after expansion, as a command's argument.

    value    the expanded text, or None when it cannot be known statically (an unknown variable,
             `$(cmd)` output, `$1`, text read from stdin)
    raw      the word as written in the command (quotes included), for messages
    literal  True when the word had no expansion at all (plain or quoted text only)
    """

    __slots__ = ("value", "raw", "literal")

    def __init__(self, value, raw: str, literal: bool = True):
        self.value = value
        self.raw = raw
        self.literal = literal

    def __repr__(self) -> str:
        return f"Word({self.value!r}, {self.raw!r}, literal={self.literal})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Word) and (self.value, self.raw, self.literal) == (other.value, other.raw, other.literal)

    __hash__ = None


class Run:
    """A command that this command runs: a wrapper's command (`sudo`, `env`, `timeout`, `xargs`),
    `find -exec …`'s command. `argv` is a list of Word; `stdin_targets_unknown` is True for `xargs`
    (its extra arguments come from stdin and cannot be known)."""

    __slots__ = ("argv", "stdin_targets_unknown")

    def __init__(self, argv, stdin_targets_unknown: bool = False):
        self.argv = argv
        self.stdin_targets_unknown = stdin_targets_unknown

    def __repr__(self) -> str:
        return f"Run({self.argv!r}, stdin_targets_unknown={self.stdin_targets_unknown})"


class Script:
    """Program text that this command runs: `bash -c STRING`, `eval …` (lang "sh"), `python -c
    CODE` ("python"), `node -e` ("node"), `perl -e` ("perl"), `ruby -e` ("ruby").

    code is the text, or None when the program comes from stdin (`python -`, `bash <<'EOF'`,
    `echo '…' | sh`): the caller supplies the heredoc / here-string / literal pipe text.
    word is the program word as written (for messages when it cannot be resolved)."""

    __slots__ = ("lang", "code", "word")

    def __init__(self, lang: str, code, word: str):
        self.lang = lang
        self.code = code
        self.word = word

    def __repr__(self) -> str:
        return f"Script({self.lang!r}, {self.code!r}, {self.word!r})"


class BashSyntaxError(ValueError):
    """The command is not something bash would run as written (unterminated quote, unbalanced
    parenthesis, missing heredoc delimiter, nesting past the limit). The gate fails closed."""
