"""The bash tokenizer, for bash_parse: words as bash splits them, with their quoting structure.

A word is a Word whose parts are tuples:
  (LIT, text)                          unquoted text: brace, tilde, glob expansion and splitting apply
  (QLIT, text)                         quoted or escaped text: taken as is
  (PARAM, name, index, op, arg, quoted, raw)   $X ${X} ${X:-arg} ${a[i]}; op "other" = not resolvable
  (CMDSUB, list_or_None, quoted, raw)  $(…) and `…` (None: backtick text that does not parse)
  (ARITH, Word, quoted, raw)           $((…)) and $[…]; the Word holds its inner expansions
  (PROCSUB, "<" or ">", list, raw)     <(…) >(…)
  (ARRAY, [Word…], raw)                the (…) of `declare -a x=(…)` arguments
Lexer reads blanks and comments, tells redirection and assignment tokens, and reads words
(quotes, escapes, `$` forms). It is the base class of bash_parse._Parser, whose grammar it calls
back for the commands inside `$(…)`. The forms most command lines do not have are read by modules
imported when a command has one: backquotes, `<(…)` and `$'…'` (bash_lex_rare), here-document
bodies (bash_heredoc), arithmetic text (bash_arith).
No `re`: this module is imported for every Bash payload.
"""

from maestro.hooks.bash_syntax import (DIGITS, META, NAME_CHARS, NAME_START, ARITH, BRACE, BRACE_DQ, CMDSUB, DQUOTE,
                                       HEREDOC, LIT, NORMAL, PARAM, QLIT, SUBSCRIPT, Word)
from maestro.hooks.targets import BashSyntaxError

MAX_WORDS = 100000  # words + expansions + 8 per command: the hook must answer in time, whatever the input

_SPECIAL_PARAMS = frozenset("@*#?-$!0123456789")

# word modes (bash_syntax): what ends a word and which characters are special inside it
_STOP = (META, frozenset('"'), frozenset("}"), frozenset("}"), frozenset(), frozenset("]"), frozenset(" \t\n()"))
_SPECIAL = tuple(stop | frozenset(extra) for stop, extra in zip(
    _STOP, ("'\"\\$`<>", "\\$`", "'\"\\$`", "\"\\$`", "\\$`", "'\"\\$`", "'\"\\$`()")))
_QUOTED_MODES = (False, True, False, True, True, False, False)
_ESCAPABLE = {DQUOTE: frozenset('$`"\\'), BRACE_DQ: frozenset('$`"\\}'), HEREDOC: frozenset("$`\\")}


class Lexer:
    """Blanks, tokens and words; the grammar is in the subclass, bash_parse._Parser."""

    __slots__ = ("s", "i", "n", "depth", "limit", "pending", "rereads")

    def __init__(self, s, limit, rereads):
        self.s, self.i, self.n, self.depth, self.limit = s, 0, len(s), 0, limit
        self.pending = []  # heredoc Redirs waiting for the next newline
        self.rereads = rereads  # shared [rereads of `((`, words and commands read]

    def fail(self, what):
        raise BashSyntaxError(what)

    def unexpected(self):
        if self.i >= self.n:
            self.fail("unexpected end of input")
        self.fail(f"syntax error near {self.s[self.i:self.i + 10]!r}")

    def enter(self):
        self.depth += 1
        if self.depth > self.limit:
            self.fail("nesting too deep to analyse")

    # ------------------------------------------------------------------ blanks, newlines

    def skip(self, newlines):
        s, n, i = self.s, self.n, self.i
        while i < n:
            c = s[i]
            if c == " " or c == "\t":
                i += 1
            elif c == "\\" and s.startswith("\n", i + 1):
                i += 2
            elif c == "#":
                j = s.find("\n", i)
                i = n if j < 0 else j
            elif c == "\n" and newlines:
                i += 1
                if self.pending:
                    from maestro.hooks import bash_heredoc  # only a line with a here-document

                    self.i = i
                    bash_heredoc.read_heredocs(self)
                    i = self.i
            else:
                break
        self.i = i

    # ------------------------------------------------------------------ redirection and assignment tokens

    def at_redirection(self):
        s, i, n = self.s, self.i, self.n
        if i >= n:
            return False
        c = s[i]
        if c in "<>":
            return not s.startswith("(", i + 1)
        if c == "&":
            return s.startswith(">", i + 1)
        j = i
        if c in DIGITS:
            while j < n and s[j] in DIGITS:
                j += 1
        elif c == "{" and i + 1 < n and s[i + 1] in NAME_START:
            j = i + 1
            while j < n and s[j] in NAME_CHARS:
                j += 1
            if not s.startswith("}", j):
                return False
            j += 1
        else:
            return False
        return j < n and s[j] in "<>" and not s.startswith("(", j + 1)

    def assignment_length(self):
        """Length of `name=` / `name+=` / `name[sub]=` at the cursor, or 0."""
        s, n, i = self.s, self.n, self.i
        if i >= n or s[i] not in NAME_START:
            return 0
        j = i + 1
        while j < n and s[j] in NAME_CHARS:
            j += 1
        if s.startswith("[", j):
            depth = parens = 0
            while j < n:
                c = s[j]
                if c == "[":
                    depth += 1
                elif c == "]":
                    depth -= 1
                    if depth == 0:
                        break
                elif c == "(":
                    parens += 1
                elif c == ")":
                    parens -= 1
                elif c == "\n" or (parens <= 0 and c in " \t;&|<>"):
                    return 0
                j += 1
                if j - i > 4096:
                    return 0
            j += 1
        if s.startswith("=", j):
            return j + 1 - i
        if s.startswith("+=", j):
            return j + 2 - i
        return 0

    # ------------------------------------------------------------------ words

    def word(self):
        start = self.i
        self.rereads[1] += 1
        if self.rereads[1] > MAX_WORDS:
            self.fail("command too complex to analyse")
        return Word(self.parts(NORMAL), self.s[start:self.i])

    def parts(self, mode):
        s, n = self.s, self.n
        stop, special, quoted = _STOP[mode], _SPECIAL[mode], _QUOTED_MODES[mode]
        unquoted_text = QLIT if quoted else LIT
        out, i = [], self.i
        while i < n:
            c = s[i]
            if c in stop:
                if mode == NORMAL and c in "<>" and s.startswith("(", i + 1):
                    self.i = i
                    from maestro.hooks import bash_lex_rare  # only a word with <(…) or >(…)

                    bash_lex_rare.procsub(self, out)
                    i = self.i
                    continue
                break
            if c == "\\":
                nxt = s[i + 1:i + 2]
                if nxt == "\n":
                    i += 2
                elif quoted and nxt not in _ESCAPABLE[mode]:
                    out.append((QLIT, "\\"))
                    i += 1
                else:
                    out.append((QLIT, nxt or "\\"))
                    i += 2 if nxt else 1
            elif c == "$":
                self.i = i
                self.dollar(out, quoted, mode)
                i = self.i
            elif c == "`":
                self.i = i
                from maestro.hooks import bash_lex_rare  # only a word with a backquote

                bash_lex_rare.backtick(self, out, quoted)
                i = self.i
            elif c == "'" and not quoted:
                j = s.find("'", i + 1)
                if j < 0:
                    self.fail("unterminated single quote")
                out.append((QLIT, s[i + 1:j]))
                i = j + 1
            elif c == '"' and mode != DQUOTE and mode != HEREDOC:
                self.i = i + 1
                self.enter()
                inner = self.parts(DQUOTE)
                self.depth -= 1
                if not s.startswith('"', self.i):
                    self.fail("unterminated double quote")
                out.extend(inner or [(QLIT, "")])
                i = self.i + 1
            else:
                j = i + 1
                while j < n and s[j] not in special:
                    j += 1
                out.append((unquoted_text, s[i:j]))
                i = j
        self.i = i
        return out

    def dollar(self, out, quoted, mode):
        s, i = self.s, self.i
        self.rereads[1] += 1
        if self.rereads[1] > MAX_WORDS:
            self.fail("command too complex to analyse")
        nxt = s[i + 1:i + 2]
        if nxt == "\\" and s.startswith("\n", i + 2):
            self.fail("a line continuation right after $ is not analysed")
        if nxt == "(":
            if s.startswith("((", i + 1):
                self.i = i + 3
                from maestro.hooks import bash_arith  # only a command with arithmetic

                arith = bash_arith.arith(self)
                if arith is not None:
                    out.append((ARITH, arith, quoted, s[i:self.i]))
                    return
            self.i = i + 2
            body = self.parse_list(())
            self.skip(True)
            if not s.startswith(")", self.i):
                self.fail("unterminated command substitution $(")
            self.i += 1
            out.append((CMDSUB, body, quoted, s[i:self.i]))
        elif nxt == "{":
            self.param(out, quoted)
        elif nxt == "[":
            self.i = i + 2
            self.enter()
            inner = self.parts(SUBSCRIPT)
            self.depth -= 1
            if not s.startswith("]", self.i):
                self.fail("unterminated $[")
            self.i += 1
            out.append((ARITH, Word(inner, ""), quoted, s[i:self.i]))
        elif nxt == "'" and not quoted:
            j, n = i + 2, self.n
            while j < n and s[j] != "'":
                j += 2 if s[j] == "\\" else 1
            if j >= n:
                self.fail("unterminated $'")
            from maestro.hooks.bash_lex_rare import ansi_c  # only a word with $'…'

            out.append((QLIT, ansi_c(s[i + 2:j])))
            self.i = j + 1
        elif nxt == '"' and not quoted:
            self.i = i + 2
            self.enter()
            inner = self.parts(DQUOTE)
            self.depth -= 1
            if not s.startswith('"', self.i):
                self.fail("unterminated $\"")
            out.extend(inner or [(QLIT, "")])
            self.i += 1
        elif nxt and nxt in NAME_START:
            j = i + 2
            while j < self.n and s[j] in NAME_CHARS:
                j += 1
            out.append((PARAM, s[i + 1:j], None, None, None, quoted, s[i:j]))
            self.i = j
        elif nxt and nxt in _SPECIAL_PARAMS:
            out.append((PARAM, nxt, None, None, None, quoted, s[i:i + 2]))
            self.i = i + 2
        else:
            out.append((QLIT if quoted else LIT, "$"))
            self.i = i + 1

    def param(self, out, quoted):
        s, start = self.s, self.i
        self.enter()
        j = start + 2
        op, index = None, None
        if s.startswith(("#", "!"), j) and not s.startswith("}", j + 1):
            op = "other"  # ${#x} length, ${!x} indirection: not resolvable
            j += 1
        k = j
        while k < self.n and s[k] in NAME_CHARS:
            k += 1
        if k == j and k < self.n and s[k] in _SPECIAL_PARAMS:
            k += 1
        name = s[j:k]
        if not name or (name[0] in DIGITS and not name.isdigit()):
            self.fail(f"bad substitution {s[start:start + 12]!r}")
        self.i = k
        if s.startswith("[", k):
            self.i = k + 1
            index = Word(self.parts(SUBSCRIPT), "")
            if not s.startswith("]", self.i):
                self.fail("unterminated subscript")
            index.raw = s[k + 1:self.i]
            self.i += 1
        arg = None
        if not s.startswith("}", self.i):
            for candidate in (":-", ":=", ":+", ":?", "-", "=", "+", "?"):
                if s.startswith(candidate, self.i):
                    break
            else:
                candidate = None
            if candidate and op is None:
                op = candidate
                self.i += len(candidate)
            else:
                op = "other"
            arg_start = self.i
            arg = Word(self.parts(BRACE_DQ if quoted else BRACE), "")
            arg.raw = s[arg_start:self.i]
        if not s.startswith("}", self.i):
            self.fail("unterminated ${")
        self.i += 1
        self.depth -= 1
        out.append((PARAM, name, index, op, arg, quoted, s[start:self.i]))
