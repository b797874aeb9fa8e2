"""The vocabulary the Bash analysis's modules share: what a parsed word and the parse tree are made
of, and the few bounds and sentinels word expansion shares with its rare parts.

The main modules (bash_lex, bash_parse, bash_expand) and the parts they load only when a command
needs them (bash_lex_rare, bash_heredoc, bash_arith, bash_parse_compound, bash_patterns, bash_tilde)
all import from here, so that a rare part never imports its main module back (no import circle).
One module rather than one per layer: it is on the hook's hot path, where each module costs.
A word is a Word whose parts are tuples (see bash_lex for their fields):
LIT, QLIT, PARAM, CMDSUB, ARITH, PROCSUB, ARRAY.
No imports: this module is loaded for every Bash payload.
"""

LIT, QLIT, PARAM, CMDSUB, ARITH, PROCSUB, ARRAY = range(7)

META = frozenset(" \t\n;&|<>()")
DIGITS = frozenset("0123456789")
NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
NAME_CHARS = NAME_START | DIGITS

# word modes (the tokenizer's): what ends a word and which characters are special inside it
NORMAL, DQUOTE, BRACE, BRACE_DQ, HEREDOC, SUBSCRIPT, REGEX = range(7)


class Word:
    __slots__ = ("parts", "raw")

    def __init__(self, parts, raw):
        self.parts = parts
        self.raw = raw

    def literal_text(self):
        """The text when the word is plain or quoted text only, else None."""
        if all(p[0] <= QLIT for p in self.parts):
            return "".join(p[1] for p in self.parts)
        return None

    def __repr__(self):
        return f"Word({self.raw!r})"


# ------------------------------------------------------------------------------------------ parse tree


class Assign:
    __slots__ = ("name", "index", "append", "value", "array", "raw")

    def __init__(self, name, index, append, value, array, raw):
        self.name, self.index, self.append, self.value, self.array, self.raw = name, index, append, value, array, raw


class Redir:
    """fd: "" (default), digits, or "{name}"; body: heredoc text (quoted delimiter) or a Word."""
    __slots__ = ("fd", "op", "target", "body")

    def __init__(self, fd, op, target, body=None):
        self.fd, self.op, self.target, self.body = fd, op, target, body


class Simple:
    __slots__ = ("assigns", "words", "redirs")

    def __init__(self, assigns, words, redirs):
        self.assigns, self.words, self.redirs = assigns, words, redirs


class Compound:
    """kind: subshell group if while until for select arith_for case cond arith function coproc.
    if: arms [(cond, body)…] + body (else or None); while/until: arms [(cond, body)]; for/select:
    name, words (None: "$@"), body; arith_for: words [Word…], body; case: words [subject], arms
    [(patterns, body or None, terminator)…]; cond/arith: words; function/coproc: name, body (a command)."""
    __slots__ = ("kind", "body", "arms", "words", "name", "redirs")

    def __init__(self, kind, body=None, arms=None, words=None, name=None):
        self.kind, self.body, self.arms, self.words, self.name, self.redirs = kind, body, arms, words, name, []


class Pipeline:
    __slots__ = ("cmds", "negated")

    def __init__(self, cmds, negated):
        self.cmds, self.negated = cmds, negated


class AndOr:
    __slots__ = ("pipelines", "ops")

    def __init__(self, pipelines, ops):
        self.pipelines, self.ops = pipelines, ops


class CommandList:
    __slots__ = ("items",)  # [(AndOr, background)]

    def __init__(self, items):
        self.items = items


# ------------------------------------------------------------------------------------------ expansion

MAX_FIELDS = 256  # brace alternatives / glob matches / loop values beyond which a word is unknown
UNSET = object()  # a variable known to be unset (`unset X`, or one of DEFAULT_UNSET absent from env)


def has_glob(text):
    """Whether unquoted text holds a glob bash would expand (`*`, `?`, a closed `[…]`)."""
    if "*" in text or "?" in text:
        return True
    k = text.find("[")
    return k >= 0 and "]" in text[k + 2:]


def is_int(text):
    """A decimal integer as brace ranges (`{1..3}`) and `printf %d` take one."""
    body = text[1:] if text[:1] in "+-" else text
    return body.isdigit() and body.isascii() and len(body) < 12
