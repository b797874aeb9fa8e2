"""A bash parser for the gate: enough of the grammar to see every command, word, redirection and
substitution a command line would run, as bash itself would split it.

`parse(command)` returns a CommandList. Words keep their quoting structure as parts (LIT, QLIT,
PARAM, CMDSUB, ARITH, PROCSUB, ARRAY: described in bash_lex; they, Word and the tree's node
classes live in bash_syntax and are re-exported here).
Malformed input raises BashSyntaxError. Recursion is bounded by `max_depth` nesting levels, the
work by the input length (one pass; a failed `((` guess is re-read at most a few times).

_Parser (lists, pipelines, commands, redirections, assignments) extends the tokenizer
bash_lex.Lexer. What most command lines do not have is imported on first use: compound
commands (bash_parse_compound), here-documents (bash_heredoc), arithmetic (bash_arith),
backquotes and `<(…)` (bash_lex_rare).
No `re`: this module is imported for every Bash payload.
"""

import gc

from maestro.hooks.bash_lex import Lexer
from maestro.hooks.bash_syntax import (  # noqa: F401 (the parse tree's names, re-exported)
    META, NAME_START, ARITH, ARRAY, CMDSUB, LIT, PARAM, PROCSUB, QLIT, SUBSCRIPT, AndOr, Assign, CommandList,
    Compound, Pipeline, Redir, Simple, Word)
from maestro.hooks.targets import BashSyntaxError

MAX_LENGTH = 1 << 20
MAX_NESTING = 32
_REDIRECTION_START = frozenset("<>&{0123456789")
_RESERVED = frozenset(("if", "then", "elif", "else", "fi", "do", "done", "case", "esac", "while", "until", "for",
                       "select", "function", "time", "{", "}", "!", "[[", "]]", "in", "coproc"))
_NOT_A_COMMAND = frozenset(("then", "elif", "else", "fi", "do", "done", "esac", "}"))
_DECLARATIONS = frozenset(("declare", "typeset", "local", "export", "readonly"))


def parse(command: str, max_depth: int = MAX_NESTING) -> CommandList:
    if len(command) > MAX_LENGTH:
        raise BashSyntaxError("command too long to analyse")
    collecting = gc.isenabled()
    gc.disable()  # the tree is acyclic; collections while building it cost more than the parse
    try:
        return _Parser(command, max_depth, [0, 0]).top()
    finally:
        if collecting:
            gc.enable()


class _Parser(Lexer):
    __slots__ = ()

    def top(self):
        node = self.parse_list(())
        self.skip(True)
        if self.i < self.n:
            self.unexpected()
        if self.pending:
            self.fail(f"unterminated here-document (wanted {self.pending[0].target.raw!r})")
        return node

    def peek_reserved(self):
        s, n, i = self.s, self.n, self.i
        j = i
        while j < n and s[j] not in META and s[j] not in "'\"\\$`":
            j += 1
            if j - i > 8:
                return None
        word = s[i:j]
        if word in _RESERVED and (j >= n or s[j] in META):
            return word
        return None

    def expect(self, word):
        self.skip(True)
        if self.peek_reserved() != word:
            self.fail(f"expected {word!r}" + (f" near {self.s[self.i:self.i + 10]!r}" if self.i < self.n else ""))
        self.i += len(word)

    # ------------------------------------------------------------------ lists and pipelines

    def parse_list(self, stops, case_item=False):
        self.enter()
        s, items = self.s, []
        while True:
            self.skip(True)
            if self.i >= self.n:
                break
            c = s[self.i]
            if c == ")" or (c == ";" and case_item and s.startswith((";;", ";&"), self.i)):
                break
            if stops and self.peek_reserved() in stops:
                break
            andor = self.parse_andor()
            self.skip(False)
            background = False
            if self.i < self.n:
                c = s[self.i]
                if c == "&":
                    background = True
                    self.i += 1
                elif c == ";":
                    if s.startswith((";;", ";&"), self.i):
                        if not case_item:
                            self.unexpected()
                        items.append((andor, False))
                        break
                    self.i += 1
                elif c != "\n":
                    items.append((andor, False))
                    break
            items.append((andor, background))
        self.depth -= 1
        return CommandList(items)

    def body(self, stops):
        node = self.parse_list(stops)
        if not node.items:
            self.unexpected()
        return node

    def parse_andor(self):
        s = self.s
        pipelines, ops = [self.parse_pipeline()], []
        while True:
            self.skip(False)
            if s.startswith(("&&", "||"), self.i):
                ops.append(s[self.i:self.i + 2])
                self.i += 2
                self.skip(True)
                pipelines.append(self.parse_pipeline())
            else:
                return AndOr(pipelines, ops)

    def parse_pipeline(self):
        s, negated, timed = self.s, False, False
        while True:
            self.skip(False)
            word = self.peek_reserved()
            if word == "!":
                negated = not negated
                self.i += 1
            elif word == "time":
                self.i += 4
                timed = True
                self.skip(False)
                while s.startswith(("-p", "--"), self.i) and (self.i + 2 >= self.n or s[self.i + 2] in META):
                    self.i += 2
                    self.skip(False)
            else:
                break
        if self.i >= self.n or s[self.i] in ";&\n)" or (s[self.i] == "|" and not s.startswith("||", self.i)):
            if not (negated or timed):
                self.unexpected()
            return Pipeline([], negated)
        cmds = [self.parse_command()]
        while True:
            self.skip(False)
            if s.startswith("|", self.i) and not s.startswith("||", self.i):
                self.i += 2 if s.startswith("|&", self.i) else 1
                self.skip(True)
                cmds.append(self.parse_command())
            else:
                return Pipeline(cmds, negated)

    # ------------------------------------------------------------------ commands

    def parse_command(self):
        self.skip(False)
        s, i = self.s, self.i
        if i >= self.n:
            self.unexpected()
        c = s[i]
        if c == "(":
            node = None
            if s.startswith("((", i):
                self.i = i + 2
                from maestro.hooks import bash_arith  # only a command with arithmetic

                arith = bash_arith.arith(self)
                if arith is not None:
                    node = Compound("arith", words=[arith])
                else:
                    self.i = i
            if node is None:
                self.enter()
                self.i = i + 1
                node = Compound("subshell", body=self.body(()))
                self.skip(True)
                if not s.startswith(")", self.i):
                    self.unexpected()
                self.i += 1
                self.depth -= 1
            return self.trailing_redirs(node)
        word = self.peek_reserved()
        if word in _NOT_A_COMMAND or c in ");&|":
            self.unexpected()
        if word is None or word in ("in", "]]", "time", "!"):
            return self.parse_simple()
        self.enter()
        self.i += len(word)
        from maestro.hooks import bash_parse_compound  # imported by the first compound command

        node = getattr(bash_parse_compound, "cmd_" + {"{": "group", "[[": "cond"}.get(word, word))(self)
        self.depth -= 1
        return node if node.kind in ("function", "coproc") else self.trailing_redirs(node)

    def trailing_redirs(self, node):
        while True:
            self.skip(False)
            if self.at_redirection():
                node.redirs.append(self.parse_redirection())
            elif self.i < self.n and self.s[self.i] not in META and self.peek_reserved() is None:
                self.unexpected()
            else:
                return node

    # ------------------------------------------------------------------ simple commands

    def parse_redirection(self):
        s, i = self.s, self.i
        j = i
        while j < self.n and s[j] not in "<>&":
            j += 1
        fd = s[i:j]
        for op in ("<<<", "<<-", "<<", "<>", "<&", "<", "&>>", "&>", ">>", ">|", ">&", ">"):
            if s.startswith(op, j):
                break
        self.i = j + len(op)
        self.skip(False)
        target = self.word()
        if not target.parts:
            self.fail(f"missing target after {op}")
        redir = Redir(fd, op, target)
        if op in ("<<", "<<-"):
            from maestro.hooks.bash_heredoc import heredoc_delimiter  # only a command with a here-document

            redir.body = heredoc_delimiter(target)
            self.pending.append(redir)
        return redir

    def parse_simple(self):
        s = self.s
        assigns, words, redirs = [], [], []
        declaration = False
        while True:
            self.skip(False)
            if self.i >= self.n:
                break
            c = s[self.i]
            if c in _REDIRECTION_START and self.at_redirection():
                redirs.append(self.parse_redirection())
                continue
            if c == "(" and len(words) == 1 and not assigns and not redirs:
                j = self.i + 1
                while j < self.n and s[j] in " \t":
                    j += 1
                if not s.startswith(")", j):
                    self.unexpected()
                self.i = j + 1
                from maestro.hooks import bash_parse_compound  # `name() …`: a function definition

                return bash_parse_compound.function_body(self, words[0].raw)
            if c in META and not (c in "<>" and s.startswith("(", self.i + 1)):
                break
            length = self.assignment_length() if (c in NAME_START and (not words or declaration)) else 0
            if length:
                start = self.i
                head = s[start:start + length]
                self.i += length
                if s.startswith("(", self.i):
                    array_start = self.i
                    array = self.array()
                    if declaration:
                        words.append(Word([(LIT, head), (ARRAY, array, s[array_start:self.i])], s[start:self.i]))
                        continue
                    value = None
                else:
                    array = None
                    value = self.word()
                if declaration:
                    words.append(Word([(LIT, head)] + value.parts, s[start:self.i]))
                    continue
                name, _, index = head.rstrip("=+").partition("[")
                if index:
                    sub = _Parser(index[:-1], self.limit - self.depth, self.rereads)
                    index = Word(sub.parts(SUBSCRIPT), index[:-1])
                    if sub.i < sub.n:
                        self.fail("malformed array subscript")
                assigns.append(Assign(name, index or None, head.endswith("+="), value, array, s[start:self.i]))
                continue
            word = self.word()
            if not word.parts:
                self.unexpected()
            words.append(word)
            if len(words) == 1 and word.literal_text() in _DECLARATIONS:
                declaration = True
        if not (assigns or words or redirs):
            self.unexpected()
        self.rereads[1] += 8  # a command costs the analysis far more than a word
        return Simple(assigns, words, redirs)

    def array(self):
        self.i += 1  # "("
        elements = []
        while True:
            self.skip(True)
            if self.i >= self.n:
                self.fail("unterminated array assignment")
            if self.s[self.i] == ")":
                self.i += 1
                return elements
            word = self.word()
            if not word.parts:
                self.unexpected()
            elements.append(word)
