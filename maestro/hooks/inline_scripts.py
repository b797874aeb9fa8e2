"""Write APIs in inline Node (`node -e`), Perl (`perl -e`) and Ruby (`ruby -e`) code, found in the
scanned text (hooks/inline_scan.py: string literals are placeholders, comments are gone) by
regular expressions without nested quantifiers. Imported only when such code appears.

A write API whose path is a literal string (or literals joined, path.join/File.join of literals)
yields a Target with that path; anything else yields path None and the argument as written. Names
too generic to be sure of (`rename`, `open`, `exec`) count only on a receiver bound to the module
(`fs`, `require('fs')`, destructured or imported names); distinctive ones (`writeFileSync`) count
on any receiver, and passed around uncalled (`.forEach(fs.unlinkSync)`) they are unresolved.
This module holds what the languages share: the argument splitter, and Finder, which turns a
call's arguments into Targets and shell commands; each language's tables and call matching live in
a Finder subclass, imported on first use: hooks/inline_node.py, hooks/inline_perl_ruby.py; which
one reads the code, and the code interpolated into strings, is decided in hooks/inline_languages.py.
"""

import re

from maestro.hooks.inline_paths import MAX_WORD, UNKNOWN_SHELL_WORD, join_path, looks_like_directory, quote
from maestro.hooks.targets import Script, Target

PH = "\ue000(\\d+)\ue001"  # a string literal's placeholder in the scanned text
MAX_ARGS = 1024  # characters of one call's arguments
MAX_SCANNED = 200_000  # argument characters scanned per analysis (overlapping nested calls count again)
ALL = -1  # every argument (unlink LIST, FileUtils.rm [a, b])
# what ends or nests an argument list: brackets, commas, and (without parentheses) `;`, newline, low-precedence words
PAREN_TOKEN = re.compile(r"[()\[\]{},]")
ARG_TOKEN = re.compile(r"[()\[\]{},;\n]|(?<![\w$@%:.])(?:or|and|if|unless|while|until|foreach|for|do|then)(?![\w])")
MOVE = ((0, "move", "tree"), (1, "move onto", ""))  # (argument, action, how) specs the languages share
MOVE_INTO = ((0, "move", "tree"), (1, "move onto", "into"))


class TooLong(Exception):
    pass


def split_args(text, start, paren):
    """Top-level comma-separated argument texts from `start` to the closing bracket — or, for a
    Perl/Ruby call without parentheses, to `;`, a newline, a stray closer or a low-precedence word.
    Scans at most MAX_ARGS characters (nested calls stay linear); a cut-off last argument is
    marked so that it never reads as a literal."""
    limit, depth, mark, parts, stop = min(len(text), start + MAX_ARGS), 0, start, [], None
    for token in (PAREN_TOKEN if paren else ARG_TOKEN).finditer(text, start, limit):
        c = token.group()
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                stop = token.start()
                break
            depth -= 1
        elif depth == 0 and c == ",":
            parts.append(text[mark:token.start()])
            mark = token.end()
        elif depth == 0 and not paren and c not in ",":  # `;`, a newline or a low-precedence word
            stop = token.start()
            break
    if stop is None:
        stop = limit
        parts.append(text[mark:stop] if limit == len(text) else "…" + text[mark:stop])
    else:
        parts.append(text[mark:stop])
    parts = [part.strip() for part in parts]
    return ([] if parts == [""] else parts), stop


class Finder:
    """The write APIs in one scanned source: fills `out` with Target/Script, `chdirs` with the
    directories the code changes into (None when not literal)."""

    def __init__(self, source, lang):
        self.source, self.lang, self.text = source, lang, source.text
        self.out, self.chdirs, self.scanned = [], [], 0

    # ---- values ---------------------------------------------------------------------------
    def value(self, arg, depth=0):
        """The literal string an argument evaluates to (literals joined by + or .), or None."""
        arg = arg.strip() if arg is not None else ""
        if arg in ("__dirname", "process.cwd()", "Dir.pwd", "getcwd", "getcwd()", "cwd()"):
            return "."
        if re.fullmatch(PH + r"(?:\s*[+.]\s*" + PH + r")*", arg):
            parts = [self.source.values[int(number)] for number in re.findall(PH, arg)]
            return None if None in parts else "".join(parts)
        joiner = re.match(r"(?:path|require\s*\(\s*" + PH + r"\s*\))\s*\.\s*(?:join|resolve)\s*\(|File\s*\.\s*"
                          r"(?:join|expand_path)\s*\(|File::Spec\s*->\s*(?:catfile|catdir)\s*\(", arg)
        if joiner and depth < 8:
            parts, end = split_args(arg, joiner.end(), True)
            values = [self.value(part, depth + 1) for part in parts]
            if arg[end:].strip() == ")" and values and None not in values:
                return join_path(values)
        return None

    def word(self, arg) -> str:
        text = " ".join(self.source.unmask(arg or "").split()) or "(no argument)"
        return text if len(text) <= MAX_WORD else text[:MAX_WORD - 1] + "…"

    def items(self, arg):
        """The elements of a literal list argument (`[a, b]`, `qw(a b)`, `%w[a b]`), else [arg]."""
        arg = arg.strip()
        if arg[:1] in "([" and arg[-1:] in ")]":
            parts, end = split_args(arg, 1, True)
            if end == len(arg) - 1:
                return parts
        return [arg]

    # ---- what a call writes ---------------------------------------------------------------
    def target(self, channel, action, arg, how=""):
        value = self.value(arg)
        word = value or self.word(arg)
        self.out.append(Target(channel, action, value, word, None, how == "tree"))
        return value

    def paths(self, channel, spec, args):
        for position, action, how in spec:
            chosen = [i for a in args for i in self.items(a)] if position == ALL else args[position:position + 1]
            if position == ALL and not chosen:
                chosen = ["$_"] if self.lang == "perl" else []
            for arg in chosen:
                dst = self.target(channel, action, arg, how)
                if how == "into" and dst is not None and looks_like_directory(dst):
                    source = self.value(args[0]) if args else None
                    into = join_path((dst, source.rstrip("/").rpartition("/")[2])) if source else None
                    self.out.append(Target(channel, action, into, into or f"{dst}/…", None))

    def opened(self, channel, path, mode):
        """A file opened with `mode` (None: no mode given, it reads; text None: unknown, a write)."""
        if mode is None:
            return None
        value = self.value(mode)
        if value is None and re.search(r"WRONLY|RDWR|CREAT|TRUNC|APPEND", mode) is None and (
                re.search(r"RDONLY", mode) is not None):
            return None
        if value is not None and not any(c in value for c in "wax+"):
            return None
        action = "write" if value is None or "w" in value else "create" if "x" in value else "change"
        self.target(channel + (f"(…, {value!r})" if value is not None else "(…, mode)"), action, path)

    def shell(self, channel, command, raw, cwd=None):
        if command is None:
            return self.out.append(Target(channel, "run", None, self.word(raw)))
        if cwd is not None:
            directory = self.value(cwd)
            command = f"cd {quote(directory) if directory is not None else UNKNOWN_SHELL_WORD} && {command}"
        self.out.append(Script("sh", command, self.word(raw)))

    def argv(self, channel, args, raw, cwd=None):
        """A program with arguments (no shell); one string argument is a shell command line."""
        if len(args) == 1 and not args[0].startswith(("[", "@", "*")):
            return self.shell(channel, self.value(args[0]), args[0], cwd)
        if len(args) == 1 and args[0].startswith("[") and self.lang != "perl":
            args = self.items(args[0])
        program = self.value(args[0]) if args else None
        if program is None:
            return self.out.append(Target(channel, "run", None, self.word(raw)))
        words = [quote(program)] + [quote(v) if v is not None else UNKNOWN_SHELL_WORD for v in map(self.value, args[1:])]
        self.shell(channel, " ".join(words), raw, cwd)

    def call_args(self, at):
        """The arguments of a call whose name ends at `at`: (args, raw text, True when it is a call)."""
        text, n = self.text, len(self.text)
        j, blanks = at, " \t\r\n" if self.lang == "node" else " \t"
        while j < n and text[j] in blanks:
            j += 1
        paren = j < n and text[j] == "("
        if not paren and (self.lang == "node" or text.startswith("=>", j) or j < n and text[j] in "=}.):"):
            return [], "", False  # a reference, a hash key or a method: not a call
        args, end = split_args(text, j + paren, paren)
        self.scanned += end - j
        if self.scanned > MAX_SCANNED:
            raise TooLong  # thousands of nested or repeated calls: no real command; fail closed
        return args, text[j + paren:end] if paren else text[at:end], True

    def option(self, args, key):
        """The text of an option `key: value` / `:key => value` among the arguments, or None."""
        for arg in args:
            found = re.search(r"(?<![\w$])" + key + r"\s*(?::|=>)\s*([^,}]*)", arg)
            if found:
                return found.group(1).strip()
        return None

    # ---- languages: node() in inline_node.NodeFinder, perl() and ruby() in inline_perl_ruby.PerlRubyFinder
