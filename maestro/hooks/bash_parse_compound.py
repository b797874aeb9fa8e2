"""Compound commands, for the bash parser: `{ }`, if, while/until, for/select (and `for ((…))`),
case, function definitions, coproc and `[[ ]]`. Functions of the parser (`self` is a
bash_parse._Parser) kept out of its class so that this module is imported only when a command
line has one: most are simple commands and pipelines, parsed on the hook's hot path.
"""

from maestro.hooks.bash_syntax import META, NAME_CHARS, NAME_START, LIT, REGEX, Compound, Word


def cmd_group(self):
    node = Compound("group", body=self.body(("}",)))
    self.expect("}")
    return node

def cmd_if(self):
    arms, other = [], None
    while True:
        cond = self.body(("then",))
        self.expect("then")
        arms.append((cond, self.body(("elif", "else", "fi"))))
        self.skip(True)
        word = self.peek_reserved()
        self.i += len(word or "")
        if word == "elif":
            continue
        if word == "else":
            other = self.body(("fi",))
            self.expect("fi")
        elif word != "fi":
            self.unexpected()
        return Compound("if", body=other, arms=arms)

def cmd_while(self, kind="while"):
    cond = self.body(("do",))
    self.expect("do")
    node = Compound(kind, arms=[(cond, self.body(("done",)))])
    self.expect("done")
    return node

def cmd_until(self):
    return cmd_while(self, "until")

def loop_body(self):
    self.skip(True)
    if self.peek_reserved() == "{":
        self.i += 1
        node = self.body(("}",))
        self.expect("}")
        return node
    self.expect("do")
    node = self.body(("done",))
    self.expect("done")
    return node

def cmd_for(self, kind="for"):
    self.skip(False)
    s = self.s
    if kind == "for" and s.startswith("((", self.i):
        self.i += 2
        from maestro.hooks import bash_arith

        arith = bash_arith.arith(self)
        if arith is None:
            self.fail("malformed for (( … ))")
        self.skip(False)
        if s.startswith(";", self.i):
            self.i += 1
        return Compound("arith_for", body=loop_body(self), words=[arith])
    name = self.word().literal_text()
    if not name or name[0] not in NAME_START or any(ch not in NAME_CHARS for ch in name):
        self.fail(f"bad {kind} loop variable")
    self.skip(True)
    words = None
    if self.peek_reserved() == "in":
        self.i += 2
        words = []
        while True:
            self.skip(False)
            if self.i >= self.n:
                self.unexpected()
            c = s[self.i]
            if c == ";" or c == "\n":
                self.i += 1
                if c == "\n" and self.pending:
                    from maestro.hooks import bash_heredoc

                    bash_heredoc.read_heredocs(self)
                break
            if c in META:
                self.unexpected()
            words.append(self.word())
    elif s.startswith(";", self.i):
        self.i += 1
    return Compound(kind, body=loop_body(self), words=words, name=name)

def cmd_select(self):
    return cmd_for(self, "select")

def cmd_case(self):
    self.skip(False)
    subject = self.word()
    if not subject.parts:
        self.unexpected()
    self.expect("in")
    s, arms = self.s, []
    while True:
        self.skip(True)
        if self.peek_reserved() == "esac":
            self.i += 4
            return Compound("case", arms=arms, words=[subject])
        if s.startswith("(", self.i):
            self.i += 1
        patterns = []
        while True:
            self.skip(False)
            pattern = self.word()
            if not pattern.parts:
                self.unexpected()
            patterns.append(pattern)
            self.skip(False)
            if s.startswith("|", self.i):
                self.i += 1
            elif s.startswith(")", self.i):
                self.i += 1
                break
            else:
                self.unexpected()
        body = self.parse_list(("esac",), case_item=True)
        self.skip(True)
        for term in (";;&", ";;", ";&"):
            if s.startswith(term, self.i):
                self.i += len(term)
                break
        else:
            term = ""
            if self.peek_reserved() != "esac":
                self.unexpected()
        arms.append((patterns, body if body.items else None, term))

def cmd_function(self):
    self.skip(False)
    name = self.word()
    if not name.parts:
        self.unexpected()
    self.skip(False)
    if self.s.startswith("(", self.i):
        self.i += 1
        self.skip(False)
        if not self.s.startswith(")", self.i):
            self.unexpected()
        self.i += 1
    return function_body(self, name.raw)

def function_body(self, name):
    self.skip(True)
    body = self.parse_command()
    if not isinstance(body, Compound) or body.kind in ("function", "coproc"):
        self.fail(f"function {name}: body is not a compound command")
    return Compound("function", body=body, name=name)

def cmd_coproc(self):
    self.skip(False)
    if self.peek_reserved() is not None or self.s.startswith("(", self.i):
        return Compound("coproc", body=self.parse_command(), name="COPROC")
    start = self.i
    name = self.word()
    self.skip(False)
    if name.parts and (self.peek_reserved() is not None or self.s.startswith("(", self.i)):
        return Compound("coproc", body=self.parse_command(), name=name.raw)
    self.i = start
    return Compound("coproc", body=self.parse_simple(), name="COPROC")

def cmd_cond(self):
    s, words, regex = self.s, [], False
    while True:
        self.skip(True)
        if self.i >= self.n:
            self.unexpected()
        if self.peek_reserved() == "]]":
            self.i += 2
            if not words:
                self.unexpected()
            return Compound("cond", words=words)
        c = s[self.i]
        if regex:
            words.append(regex_word(self))
            regex = False
        elif s.startswith(("&&", "||"), self.i):
            self.i += 2
        elif c in "()<>":
            self.i += 1
        elif c in ";&|":
            self.unexpected()
        else:
            word = self.word()
            regex = word.raw == "=~"
            words.append(word)

def regex_word(self):
    start, depth, parts = self.i, 0, []
    s = self.s
    while self.i < self.n:
        c = s[self.i]
        if c in " \t\n":
            if depth == 0:
                break
            parts.append((LIT, c))
            self.i += 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                break
            depth -= 1
        if c in "()":
            parts.append((LIT, c))
            self.i += 1
            continue
        parts.extend(self.parts(REGEX))
    return Word(parts, s[start:self.i])
