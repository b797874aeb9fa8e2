"""The word forms most command lines do not have, for the bash tokenizer (bash_lex): backquoted
command substitution, process substitution `<(…)` / `>(…)`, and the text of ANSI-C quotes `$'…'`
(ansi_c, also the escapes of `echo -e` and `printf`). `procsub` and `backtick` are functions of
the parser (`self` is a bash_parse._Parser), kept out of its class so that this module is
imported only when a command has one of these forms.
"""

from maestro.hooks.bash_syntax import CMDSUB, PROCSUB
from maestro.hooks.targets import BashSyntaxError

_ANSI = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
         "\\": "\\", "'": "'", '"': '"', "?": "?"}


def ansi_c(text: str) -> str:
    """The value of $'…' text (escapes decoded)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        e = text[i + 1]
        i += 2
        if e in _ANSI:
            out.append(_ANSI[e])
        elif e in "01234567":
            j = i
            while j < n and j < i + 2 and text[j] in "01234567":
                j += 1
            out.append(chr(int(text[i - 1:j], 8) & 0xFF))
            i = j
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            j = i
            while j < n and j < i + width and text[j] in "0123456789abcdefABCDEF":
                j += 1
            if j == i:
                out.append("\\" + e)
            else:
                code = int(text[i:j], 16)
                out.append(chr(code) if code < 0x110000 else "\ufffd")
                i = j
        elif e == "c" and i < n:
            out.append(chr(ord(text[i]) & 0x1F))
            i += 1
        else:
            out.append("\\" + e)
    return "".join(out)


def procsub(self, out):
    start, direction = self.i, self.s[self.i]
    self.i += 2
    body = self.parse_list(())
    self.skip(True)
    if not self.s.startswith(")", self.i):
        self.fail("unterminated process substitution")
    self.i += 1
    out.append((PROCSUB, direction, body, self.s[start:self.i]))


def backtick(self, out, quoted):
    s, n, start = self.s, self.n, self.i
    i, chunks = start + 1, []
    escapable = '$`\\"' if quoted else "$`\\"
    while True:
        if i >= n:
            self.fail("unterminated backquote")
        c = s[i]
        if c == "`":
            break
        if c == "\\" and i + 1 < n and s[i + 1] in escapable:
            chunks.append(s[i + 1])
            i += 2
        else:
            j = i + 1
            while j < n and s[j] not in "`\\":
                j += 1
            chunks.append(s[i:j])
            i = j
    self.i = i + 1
    try:
        self.enter()
        body = type(self)("".join(chunks), self.limit - self.depth, self.rereads).top()
        self.depth -= 1
    except BashSyntaxError:
        self.depth -= 1
        body = None  # bash parses `…` when it runs it: text that does not parse runs nothing
        if self.depth >= self.limit:
            raise
    out.append((CMDSUB, body, quoted, s[start:self.i]))
