"""A linear scanner for inline Node, Perl and Ruby code (hooks/inline_code.py): each string
literal becomes a numbered placeholder (OPEN n CLOSE) and comments vanish, so what is left is
code only, and an API name inside a string is data.

Heuristic where the languages are context-sensitive (a `/` starts a regex after an operator, a
Perl `s`/`q`… followed by a delimiter quotes, `<<ID` is a heredoc in Perl/Ruby, `%(`…`)` a Ruby
literal). A literal left unterminated marks the source `broken`; the caller fails closed on it.
Every loop advances; no regular expression here, so no backtracking.
"""

OPEN, CLOSE = "\ue000", "\ue001"  # placeholder brackets (private use; blanked in the code itself)
REGEX_AFTER = frozenset("(,=:[!&|?{};+-*%<>~^")
REGEX_WORDS = frozenset({"return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw",
                         "and", "or", "not", "if", "unless", "when", "split", "grep", "map", "join", "until",
                         "while", "yield", "await", "x", "lt", "gt", "le", "ge", "eq", "ne", "cmp"})
PERL_QUOTES = frozenset({"q", "qq", "qw", "qx", "m", "qr", "s", "tr", "y"})
PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}


class Source:
    """The code with each string literal replaced by OPEN n CLOSE and comments removed."""

    def __init__(self, code, lang):
        self.code, self.lang = code, lang
        self.values, self.raws, self.kinds = [], [], []  # per literal: value (None: interpolated)
        self.inner = []         # code inside interpolations (`${…}`, `#{…}`, `@{[…]}`)
        self.broken = False     # an unterminated literal or comment
        self.out, self.prev, self.prev_word = [], None, None
        self.scan()
        self.text = "".join(self.out)

    def emit(self, text, word=None):
        self.out.append(text)
        if text.strip():
            self.prev, self.prev_word = text.rstrip()[-1], word

    def literal(self, value, raw, kind="str"):
        self.values.append(value)
        self.raws.append(raw)
        self.kinds.append(kind)
        self.emit(f"{OPEN}{len(self.values) - 1}{CLOSE}")

    def scan(self):
        code, lang, n = self.code, self.lang, len(self.code)
        i, heredocs = self.line_start(0), []
        while i < n:
            c = code[i]
            if c == "\n":
                self.out.append("\n")
                i = self.heredoc_bodies(i + 1, heredocs) if heredocs else i + 1
                heredocs = []
                i = self.line_start(i)
            elif c.isalpha() or c == "_" or (c == "$" and lang == "node"):
                j = i + 1
                while j < n and (code[j].isalnum() or code[j] in "_$"):
                    j += 1
                word = code[i:j]
                if lang == "perl" and word in PERL_QUOTES and (i == 0 or code[i - 1] not in "$@%&*:>'-{"):
                    end = self.perl_quote(word, j)
                    if end is not None:
                        i = end
                        continue
                self.emit(word, word)
                i = j
            elif c in (OPEN, CLOSE):
                self.emit(" ")
                i += 1
            elif lang == "node" and code.startswith("//", i) or lang != "node" and c == "#" and not (
                    lang == "perl" and i and code[i - 1] == "$"):
                end = code.find("\n", i)
                i = n if end < 0 else end
            elif lang == "node" and code.startswith("/*", i):
                end = code.find("*/", i + 2)
                self.broken |= end < 0
                i = n if end < 0 else end + 2
                self.emit(" ")
            elif c in "'\"`":
                start = i
                body, i = self.delimited(i + 1, c)
                self.quoted(c, body, code[start:i])
            elif c == "/" and (self.prev is None or self.prev in REGEX_AFTER or self.prev_word in REGEX_WORDS):
                body, i = self.delimited(i + 1, "/", classes=True)
                self.literal(None, "/" + body + "/", "regex")
            elif lang == "ruby" and c == "%" and self.percent(i):
                i = self.percent_end
            elif lang != "node" and code.startswith("<<", i) and self.heredoc_start(i, heredocs) is not None:
                i = heredocs[-1][-1]
            else:
                self.emit(c)
                i += 1

    def line_start(self, i):
        code = self.code
        for marker in ("__END__", "__DATA__") if self.lang == "perl" else ("__END__",):
            if code.startswith(marker, i) and code[i + len(marker):i + len(marker) + 1] in ("", "\n", "\r"):
                return len(code)  # the rest is data
        marker = "\n=cut" if self.lang == "perl" else "\n=end" if code.startswith("=begin", i) else None
        if marker and code.startswith("=", i) and code[i + 1:i + 2].isalpha():
            end = code.find(marker, i)
            end = code.find("\n", end + 1) if end >= 0 else -1
            return len(code) if end < 0 else end
        return i

    def delimited(self, i, opener, classes=False):
        """The body from i to the closing delimiter (nesting brackets, skipping escapes), and the
        index after it. An unterminated body runs to the end and marks the source broken."""
        code, n = self.code, len(self.code)
        closer = PAIRS.get(opener, opener)
        depth, j, in_class = 1, i, False
        while j < n:
            c = code[j]
            if c == "\\":
                j += 2
                continue
            if classes and c == "[":
                in_class = True
            elif classes and c == "]":
                in_class = False
            elif in_class:
                pass
            elif c == closer:
                depth -= 1
                if depth == 0:
                    return code[i:j], j + 1
            elif c == opener and closer != opener:
                depth += 1
            j += 1
        self.broken = True
        return code[i:], n

    def quoted(self, quote_char, body, raw):
        lang = self.lang
        if lang == "node":
            if quote_char == "`" and "${" in body:
                found, still_open = interpolations(body, "${")
                self.broken = self.broken or still_open
                self.inner.extend(found)
                return self.literal(None, raw)
            return self.literal(unescape(body, True), raw)
        if quote_char == "'":
            return self.literal(unescape(body, False), raw)
        self.literal(self.interpolated(body), raw, "cmd" if quote_char == "`" else "str")

    def interpolated(self, body):
        """The value of an interpolating (double-quoted) body, or None when it interpolates."""
        if self.lang == "ruby":
            if "#{" in body or "#@" in body or "#$" in body:
                found, still_open = interpolations(body, "#{")
                self.broken = self.broken or still_open
                self.inner.extend(found)
                return None
        else:
            for index, c in enumerate(body):
                if c in "$@" and index + 1 < len(body) and (body[index + 1].isalnum() or body[index + 1] in "_{:$")\
                        and (index == 0 or body[index - 1] != "\\"):
                    if "@{[" in body or "${\\" in body:
                        self.inner.append(body)  # @{[ code ]} runs code
                    return None
        return unescape(body, True)

    def perl_quote(self, op, j):
        """q qq qw qx m qr s tr y with their delimiters; None when `op` is a plain word here."""
        code, n = self.code, len(self.code)
        k = j
        while k < n and code[k] in " \t":
            k += 1
        if k >= n or code[k].isalnum() or code[k].isspace() or code[k] in "_,;=)}]>" or (code[k] == "#" and k > j):
            return None
        delimiter = code[k]
        body, end = self.delimited(k + 1, delimiter)
        if op in ("s", "tr", "y"):
            if delimiter in PAIRS:
                while end < n and code[end].isspace():
                    end += 1
                _, end = self.delimited(end + 1, code[end]) if end < n else ("", n)
            else:
                _, end = self.delimited(end, delimiter)
        raw = code[j - len(op):end]
        while end < n and code[end].isalpha():
            end += 1  # modifiers
        if op == "qw":
            self.emit("(")
            for index, item in enumerate(body.split()):
                self.emit(",") if index else None
                self.literal(item, item)
            self.emit(")")
        elif op == "q":
            self.literal(unescape(body, False), raw)
        elif op in ("qq", "qx"):
            value = unescape(body, False) if delimiter == "'" else self.interpolated(body)
            self.literal(value, raw, "cmd" if op == "qx" else "str")
        else:
            self.literal(None, raw, "regex")
        return end

    def percent(self, i) -> bool:
        """A Ruby %-literal at i (%q %Q %w %W %i %I %x %r %s %(…)): scanned, `percent_end` after it."""
        code = self.code
        kind, k = code[i + 1:i + 2], i + 2
        if kind in ("(", "[", "{", "<", "|", "!") and (self.prev is None or self.prev in REGEX_AFTER or (
                code[i - 1:i].isspace() and not code[i + 2:i + 3].isspace() and self.prev_word)):
            kind, k = "Q", i + 1
        elif not (kind and kind in "qQwWiIxrs" and code[k:k + 1] and not code[k].isalnum()
                  and not code[k].isspace()):
            return False
        body, end = self.delimited(k + 1, code[k])
        raw = code[i:end]
        if kind in "wWiI":
            self.emit("[")
            for index, item in enumerate(body.split()):
                self.emit(",") if index else None
                self.literal(item if kind in "wi" or "#{" not in item else None, item)
            self.emit("]")
        elif kind == "r":
            self.literal(None, raw, "regex")
        else:
            value = unescape(body, False) if kind in "qs" else self.interpolated(body)
            self.literal(value, raw, "cmd" if kind == "x" else "str")
        self.percent_end = end
        return True

    def heredoc_start(self, i, pending):
        """`<<"EOF"`, `<<'EOF'`, `<<EOF`, `<<~EOF` (Ruby also `<<-EOF`): its placeholder now, its
        body after the line ends. None when `<<` is a shift or an append here."""
        code, n = self.code, len(self.code)
        j = i + 2
        indented = j < n and (code[j] == "~" or code[j] == "-" and self.lang == "ruby")
        j += indented
        if j < n and code[j] in "'\"`":
            end = code.find(code[j], j + 1, j + 200)  # a delimiter is short: the search stays bounded
            if end < 0 or "\n" in code[j:end]:
                return None
            tag, quote_char, after = code[j + 1:end], code[j], end + 1
        else:
            k = j
            while k < n and (code[k].isalnum() or code[k] == "_"):
                k += 1
            first = code[j:j + 1]
            if not (first.isalpha() or first == "_") or (self.lang == "ruby" and not indented and not first.isupper()):
                return None
            tag, quote_char, after = code[j:k], '"', k
        self.literal(None, code[i:after], "cmd" if quote_char == "`" else "str")
        pending.append((len(self.values) - 1, tag, indented, quote_char, after))
        return after

    def heredoc_bodies(self, i, pending):
        code, n = self.code, len(self.code)
        for index, tag, indented, quote_char, _ in pending:
            lines = []
            while True:
                end = code.find("\n", i)
                line = code[i:n if end < 0 else end]
                if (line.strip() if indented else line.rstrip("\r")) == tag:
                    break
                lines.append(line)
                if end < 0:
                    self.broken = True
                    break
                i = end + 1
            i = n if end < 0 else end + 1
            body = "\n".join(lines) + "\n"
            self.values[index] = unescape(body, False) if quote_char == "'" else self.interpolated(body)
        return i

    def unmask(self, text):
        """Masked text back as written (for messages)."""
        pieces = text.split(OPEN)
        for index in range(1, len(pieces)):
            number, _, rest = pieces[index].partition(CLOSE)
            pieces[index] = (self.raws[int(number)] if number.isdigit() else "") + rest
        return "".join(pieces)


def unescape(body, full):
    """A literal's value: backslash pairs resolved (`full`) or only \\\\ and \\' (single quotes)."""
    if "\\" not in body:
        return body
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if full:
                out.append({"n": "\n", "t": "\t", "r": "\r", "0": "\0"}.get(nxt, nxt))
            else:
                out.append(nxt if nxt in "\\'" else c + nxt)
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def interpolations(body, opener):
    """(the code inside each `${…}` / `#{…}` of a string body, braces nested; whether the last one is
    still open where the string's quote closed it). An open one matters: the language lets the code
    inside an interpolation hold quotes (`"#{puts "#{…}"}"`), which this scanner reads as the end of
    the string, so what follows is not what the interpreter sees."""
    found, start, still_open = [], body.find(opener), False
    while start >= 0:
        depth, j = 1, start + 2
        while j < len(body) and depth:
            depth += {"{": 1, "}": -1}.get(body[j], 0)
            j += 1
        found.append(body[start + 2:j - 1])
        still_open = bool(depth)  # only the last can be: an open one runs to the end of the body
        start = body.find(opener, j)
    return found, still_open
