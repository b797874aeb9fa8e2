"""Here-documents, for the bash parser: the delimiter of `<<WORD` / `<<-WORD` and the bodies read
after the newline that ends the command's line (data when the delimiter is quoted, else a word
with its expansions). Functions of the parser (`self` is a bash_parse._Parser), kept out of its
class so that this module is imported only when a command has a here-document.
"""

from maestro.hooks.bash_syntax import HEREDOC, LIT, QLIT, Word


def read_heredocs(self):
    """Read the bodies of the pending here-documents, after the newline that ends their line."""
    s, n = self.s, self.n
    for redir in self.pending:
        delim = redir.body
        if redir.op == "<<":
            text = heredoc_text(self, delim)
        else:  # "<<-": leading tabs are stripped from every line, the delimiter's too
            i, lines = self.i, []
            while True:
                if i >= n:
                    self.fail(f"unterminated here-document (wanted {delim!r})")
                j = s.find("\n", i)
                end = n if j < 0 else j
                line = s[i:end].lstrip("\t")
                if line == delim:
                    self.i = end + 1 if j >= 0 else n
                    break
                lines.append(line)
                i = end + 1
            text = "\n".join(lines) + "\n" if lines else ""
        if any(p[0] == QLIT for p in redir.target.parts):
            redir.body = text  # quoted delimiter: the body is data
        else:
            sub = type(self)(text, self.limit - self.depth, self.rereads)
            redir.body = Word(sub.parts(HEREDOC), text)
            if sub.pending:
                self.fail("here-document inside a here-document substitution")
    self.pending = []

def heredoc_text(self, delim):
    """The body up to the first line that is exactly `delim` (str.find: linear, in C)."""
    s, n, i = self.s, self.n, self.i
    k = s.find(delim, i)
    while k >= 0 and not ((k == i or s[k - 1] == "\n") and (k + len(delim) == n or s[k + len(delim)] == "\n")):
        k = s.find(delim, k + 1)
    if k < 0:
        self.fail(f"unterminated here-document (wanted {delim!r})")
    self.i = min(k + len(delim) + 1, n)
    return s[i:k]


def heredoc_delimiter(word):
    """A heredoc delimiter with quotes removed (substitutions are taken literally, as bash does)."""
    text = []
    for part in word.parts:
        if part[0] in (LIT, QLIT):
            text.append(part[1])
        else:
            text.append(part[-1])
    return "".join(text)
