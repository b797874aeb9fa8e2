"""Arithmetic, read and judged: the text of `((…))`, `$((…))` up to the closing `))` (the parser
calls `arith(parser)`; `self` below is a bash_parse._Parser), and the names an arithmetic
expression assigns and reads (the analysis: `(( ))`, `$(( ))`, `let`). Imported only when a
command has arithmetic.
"""

from maestro.hooks.bash_syntax import NAME_START, DQUOTE, QLIT, Word

MAX_REREADS = 16  # `((` that turns out to be two subshells is parsed twice; cap the retries


def arith(self):
    """Arithmetic text after `((` up to the matching `))`, or None when the parentheses do not
    close that way (then the caller re-reads it as subshells)."""
    s, n = self.s, self.n
    start, depth, out = self.i, 0, []
    pending = len(self.pending)
    self.enter()
    try:
        while True:
            if self.i >= n:
                return reread(self, pending)
            c = s[self.i]
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    if s.startswith("))", self.i):
                        self.i += 2
                        return Word(out, s[start:self.i - 2])
                    return reread(self, pending)
                depth -= 1
            if c in "()":
                out.append((QLIT, c))
                self.i += 1
            elif c in "$`\"\\":
                out.extend(parts_one(self))
            else:
                j = self.i + 1
                while j < n and s[j] not in "()$`\"\\":
                    j += 1
                out.append((QLIT, s[self.i:j]))
                self.i = j
    finally:
        self.depth -= 1

def parts_one(self):
    """One quoted string, escape or substitution inside arithmetic text."""
    s, i, out = self.s, self.i, []
    c = s[i]
    if c == "$":
        self.dollar(out, True, DQUOTE)
    elif c == "`":
        from maestro.hooks import bash_lex_rare

        bash_lex_rare.backtick(self, out, True)
    elif c == "\\":
        out.append((QLIT, s[i + 1:i + 2]))
        self.i = min(i + 2, self.n)
    else:
        self.i = i + 1
        inner = self.parts(DQUOTE)
        if not s.startswith('"', self.i):
            self.fail("unterminated double quote")
        self.i += 1
        out.extend(inner)
    return out

def reread(self, pending):
    self.rereads[0] += 1
    if self.rereads[0] > MAX_REREADS:
        self.fail("command too complex to analyse")
    del self.pending[pending:]
    return None


def arith_assigned(text):
    return arith_names(text)[0]


def arith_names(text):
    """(names an arithmetic expression assigns (`x=…`, `x+=…`, `x++`, `--x`), names it reads)."""
    names, referenced, i, n = [], [], 0, len(text)
    while i < n:
        c = text[i]
        if c in NAME_START:
            j = i + 1
            while j < n and (text[j] in NAME_START or text[j].isdigit()):
                j += 1
            name = text[i:j]
            k = j
            while k < n and text[k] in " \t":
                k += 1
            if k < n and text[k] == "[":
                close = text.find("]", k)
                k = n if close < 0 else close + 1
                while k < n and text[k] in " \t":
                    k += 1
            after = text[k:k + 3]
            before = text[max(0, i - 2):i]
            if (after[:1] == "=" and after[1:2] != "=") or after[:2] in ("++", "--") or before in ("++", "--") or (
                    after[:2] in ("+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=")) or after in ("<<=", ">>="):
                names.append(name)
            referenced.append(name)
            i = j
        elif c.isdigit():
            while i < n and (text[i].isalnum() or text[i] == "_"):
                i += 1
        else:
            i += 1
    return names, referenced
