"""Write APIs in inline Node (`node -e`), Perl (`perl -e`) and Ruby (`ruby -e`) code, found in the
scanned text (hooks/inline_scan.py: string literals are placeholders, comments are gone) by
regular expressions without nested quantifiers. Imported only when such code appears.

A write API whose path is a literal string (or literals joined, path.join/File.join of literals)
yields a Target with that path; anything else yields path None and the argument as written. Names
too generic to be sure of (`rename`, `open`, `exec`) count only on a receiver bound to the module
(`fs`, `require('fs')`, destructured or imported names); distinctive ones (`writeFileSync`) count
on any receiver, and passed around uncalled (`.forEach(fs.unlinkSync)`) they are unresolved.
"""

import re

from maestro.hooks.inline_code import MAX_WORD, UNKNOWN_SHELL_WORD, after_chdir, join_path, looks_like_directory, quote
from maestro.hooks.inline_scan import Source
from maestro.hooks.targets import Script, Target

PH = "\ue000(\\d+)\ue001"  # a string literal's placeholder in the scanned text
MAX_DEPTH = 4  # code interpolated into strings, analysed recursively
MAX_ARGS = 1024
MAX_SCANNED = 200_000  # argument characters scanned per analysis (overlapping nested calls count again)
MAX_INNER = 100  # interpolations worth analysing per string level; past it the code fails closed  # characters of one call's arguments
ALL = -1  # every argument (unlink LIST, FileUtils.rm [a, b])
# what ends or nests an argument list: brackets, commas, and (without parentheses) `;`, newline, low-precedence words
PAREN_TOKEN = re.compile(r"[()\[\]{},]")
ARG_TOKEN = re.compile(r"[()\[\]{},;\n]|(?<![\w$@%:.])(?:or|and|if|unless|while|until|foreach|for|do|then)(?![\w])")
_MOVE = ((0, "move", "tree"), (1, "move onto", ""))
_MOVE_INTO = ((0, "move", "tree"), (1, "move onto", "into"))

# Node fs (and fs-extra): base name -> ((argument, action, how), …) or "open"; the *Sync forms too
NODE_FS = {"writeFile": ((0, "write", ""),), "appendFile": ((0, "change", ""),), "createWriteStream": ((0, "write", ""),),
           "outputFile": ((0, "write", ""),), "writeJson": ((0, "write", ""),), "writeJSON": ((0, "write", ""),),
           "outputJson": ((0, "write", ""),), "ensureFile": ((0, "create", ""),), "rename": _MOVE, "move": _MOVE,
           "rm": ((0, "delete", "tree"),), "remove": ((0, "delete", "tree"),), "unlink": ((0, "delete", ""),),
           "rmdir": ((0, "delete", "tree"),), "emptyDir": ((0, "delete", "tree"),), "copyFile": ((1, "write", ""),),
           "cp": ((1, "write", "tree"),), "copy": ((1, "write", "tree"),), "truncate": ((0, "truncate", ""),),
           "symlink": ((1, "create", ""),), "link": ((1, "create", ""),), "open": "open"}
# names no other common API uses: a call counts whatever the receiver (fs.promises.writeFile, fse.outputFile)
NODE_SPECIFIC = frozenset({"writeFile", "appendFile", "createWriteStream", "copyFile", "outputFile", "writeJson",
                           "writeJSON", "outputJson", "ensureFile", "emptyDir", "execSync", "spawnSync",
                           "execFileSync"} | {name + "Sync" for name in NODE_FS})
NODE_CP = {"exec": "shell", "execSync": "shell", "spawn": "argv", "spawnSync": "argv", "execFile": "argv",
           "execFileSync": "argv"}
FS_MODULES = frozenset({"fs", "node:fs", "fs/promises", "node:fs/promises", "fs-extra", "graceful-fs"})
CP_MODULES = frozenset({"child_process", "node:child_process"})

PERL = {"open": "open", "sysopen": "sysopen", "unlink": ((ALL, "delete", ""),), "rename": _MOVE,
        "rmdir": ((0, "delete", ""),), "truncate": "truncate", "symlink": ((1, "create", ""),),
        "link": ((1, "create", ""),), "copy": ((1, "write", "into"),), "cp": ((1, "write", "into"),),
        "move": _MOVE_INTO, "mv": _MOVE_INTO, "rmtree": ((ALL, "delete", "tree"),),
        "remove_tree": ((ALL, "delete", "tree"),), "write_file": ((0, "write", ""),),
        "append_file": ((0, "change", ""),), "system": "argv", "exec": "argv", "readpipe": "shell", "chdir": "chdir"}
PERL_PACKAGES = ("File::Copy::", "File::Path::", "File::Slurp::", "CORE::", "CORE::GLOBAL::")

_WRITE0 = ((0, "write", ""),)
_DELETE_ALL = ((ALL, "delete", ""),)
_TREE_ALL = ((ALL, "delete", "tree"),)
RUBY = {"File.write": _WRITE0, "File.binwrite": _WRITE0, "IO.write": _WRITE0, "IO.binwrite": _WRITE0,
        "File.open": "open", "File.new": "open", "IO.sysopen": "open", "open": "open", "Kernel.open": "open",
        "File.delete": _DELETE_ALL, "File.unlink": _DELETE_ALL, "File.rename": _MOVE,
        "File.truncate": ((0, "truncate", ""),), "File.symlink": ((1, "create", ""),),
        "File.link": ((1, "create", ""),), "File.mkfifo": ((0, "create", ""),),
        "FileUtils.cp": ((1, "write", "into"),), "FileUtils.copy": ((1, "write", "into"),),
        "FileUtils.cp_r": ((1, "write", "tree"),), "FileUtils.cp_lr": ((1, "write", "tree"),),
        "FileUtils.copy_entry": ((1, "write", "tree"),), "FileUtils.copy_file": ((1, "write", ""),),
        "FileUtils.install": ((1, "write", "into"),), "FileUtils.mv": _MOVE_INTO, "FileUtils.move": _MOVE_INTO,
        "FileUtils.rm": _DELETE_ALL, "FileUtils.rm_f": _DELETE_ALL, "FileUtils.remove": _DELETE_ALL,
        "FileUtils.remove_file": _DELETE_ALL, "FileUtils.safe_unlink": _DELETE_ALL, "FileUtils.rmdir": _DELETE_ALL,
        "FileUtils.rm_r": _TREE_ALL, "FileUtils.rm_rf": _TREE_ALL, "FileUtils.rmtree": _TREE_ALL,
        "FileUtils.remove_dir": _TREE_ALL, "FileUtils.remove_entry": _TREE_ALL,
        "FileUtils.remove_entry_secure": _TREE_ALL, "FileUtils.touch": ((ALL, "create", ""),),
        "FileUtils.ln": ((1, "create", "into"),), "FileUtils.link": ((1, "create", "into"),),
        "FileUtils.ln_s": ((1, "create", "into"),), "FileUtils.symlink": ((1, "create", "into"),),
        "FileUtils.ln_sf": ((1, "create", "into"),), "FileUtils.ln_sr": ((1, "create", "into"),),
        "Dir.rmdir": ((0, "delete", ""),), "Dir.delete": ((0, "delete", ""),), "Dir.unlink": ((0, "delete", ""),),
        "Dir.chdir": "chdir", "system": "argv", "exec": "argv", "spawn": "argv", "Kernel.system": "argv",
        "Kernel.exec": "argv", "Kernel.spawn": "argv", "Process.spawn": "argv", "Process.exec": "argv",
        "IO.popen": "argv", "Open3.capture2": "argv", "Open3.capture2e": "argv", "Open3.capture3": "argv",
        "Open3.popen2": "argv", "Open3.popen2e": "argv", "Open3.popen3": "argv"}
PATHNAME = {"write": "write", "binwrite": "write", "delete": "delete", "unlink": "delete", "rmtree": "delete",
            "rename": "move", "truncate": "truncate", "make_symlink": "create", "make_link": "create", "open": "open"}
HINTS = {"node": ("fs", "exec", "spawn", "process"), "perl": tuple(PERL) + ("`",),
         "ruby": ("File", "IO", "Dir", "Open3", "Process", "Pathname", "open", "system", "exec", "spawn", "`", "%x")}




def script_writes(lang: str, code: str) -> list:
    """code_writes for "node", "perl" and "ruby" (may raise RecursionError: the caller fails closed)."""
    return _writes(lang, code, 0)


class TooLong(Exception):
    pass


def _writes(lang, code, depth):
    source = Source(code, lang)
    finder = Finder(source, lang)
    try:
        getattr(finder, lang)()
    except TooLong:
        finder.out.append(Target(f"inline {lang}", "run", None, "(code too long to analyse)"))
    for kind, value, raw in zip(source.kinds, source.values, source.raws):
        if kind == "cmd":  # `…`, qx{…}, %x{…}, <<`EOF`: a shell command
            finder.shell(f"{lang} `…`", value, raw)
    if source.broken and any(hint in code for hint in HINTS[lang]):
        finder.out.append(Target(f"inline {lang}", "run", None, "(code the gate could not tokenise)"))
    inner = [code for code in source.inner if any(hint in code for hint in HINTS[lang])]
    if inner and (depth >= MAX_DEPTH or len(inner) > MAX_INNER):
        finder.out.append(Target(f"inline {lang}", "run", None, "(interpolated code the gate could not analyse)"))
    else:
        for code in inner:  # code interpolated into a string runs too
            finder.out.extend(_writes(lang, code, depth + 1))
    return after_chdir(finder.out, finder.chdirs, "chdir")


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

    # ---- languages ------------------------------------------------------------------------
    def node(self):
        text, values = self.text, self.source.values
        fs_names, cp_names, local, spans = {"fs", "fsp", "fse", "promises", "fsPromises"}, {"child_process", "cp"}, {}, []
        for m in re.finditer(r"(?<![\w$])([A-Za-z_$][\w$]*)\s*=\s*(?:await\s+)?(?:require|import)\s*\(\s*" + PH
                             + r"\s*\)|import\s+(?:\*\s*as\s+)?([A-Za-z_$][\w$]*)\s+from\s*" + PH, text):
            module = values[int(m.group(2) or m.group(4))]
            (fs_names if module in FS_MODULES else cp_names if module in CP_MODULES else set()).add(m.group(1) or m.group(3))
        for m in re.finditer(r"\{([^{}]*)\}\s*=\s*(?:await\s+)?(?:require|import)\s*\(\s*" + PH
                             + r"\s*\)|import\s*\{([^{}]*)\}\s*from\s*" + PH, text):
            module = values[int(m.group(2) or m.group(4))]
            spans.append(m.span())
            for entry in (m.group(1) or m.group(3)).split(","):
                api, _, alias = entry.split("=")[0].replace(" as ", ":").partition(":")
                api, alias = api.strip(), alias.strip() or api.strip()
                if module in FS_MODULES and api == "promises":
                    fs_names.add(alias)
                elif module in FS_MODULES and fs_base(api) in NODE_FS or module in CP_MODULES and api in NODE_CP:
                    local[alias] = api
        mentions = any(v in FS_MODULES or v in CP_MODULES for v in values)
        names, passed = set(NODE_FS) | set(NODE_SPECIFIC) | set(NODE_CP) | set(local) | {"chdir"}, 0
        for m in re.finditer(r"(?<![\w$])(" + "|".join(sorted(map(re.escape, names), key=len, reverse=True))
                             + r")(?![\w$])", text):
            name, start = m.group(1), m.start()
            while passed < len(spans) and spans[passed][1] <= start:
                passed += 1  # matches come in order: a span already passed never matters again
            if passed < len(spans) and spans[passed][0] <= start or text[max(0, start - 12):start].rstrip().endswith("function"):
                continue
            receiver = self.receiver(start)
            if name == "chdir":
                if receiver == "process":
                    self.chdirs.append(self.value((self.call_args(m.end())[0] or [None])[0]))
                continue
            if receiver is None:
                api = local.get(name) or (name if name in NODE_SPECIFIC else None)
            else:
                owners = fs_names if fs_base(name) in NODE_FS else cp_names
                api = name if name in NODE_SPECIFIC or receiver in owners or receiver in ")]" and mentions else None
            if api is None:
                continue
            args, raw, called = self.call_args(m.end())
            if api in NODE_CP:
                if called:
                    self.node_child(f"node child_process.{api}", NODE_CP[api], args, raw)
                continue
            spec, channel = NODE_FS[fs_base(api)], f"node fs.{api}"
            if not called:  # the function passed around (`.forEach(fs.unlinkSync)`): its paths are unknown
                self.out.append(Target(channel, "write" if spec == "open" else spec[0][1], None, name))
            elif spec == "open":
                self.opened(channel, args[0] if args else None, args[1] if len(args) > 1 else None)
            else:
                self.paths(channel, spec, args)

    def receiver(self, start):
        """What a name is called on: None (a bare name), an identifier, or ")" / "]"."""
        before = self.text[max(0, start - 120):start].rstrip()
        if not before.endswith("."):
            return None
        before = before[:-1].rstrip("? \t")
        end = len(before)
        while end and (before[end - 1].isalnum() or before[end - 1] in "_$"):
            end -= 1
        return before[end:] or before[-1:]

    def node_child(self, channel, kind, args, raw):
        options = [a for a in args[1:] if a.startswith("{")]
        cwd = self.option(options, "cwd")
        if kind == "shell":
            return self.shell(channel, self.value(args[0]) if args else None, args[0] if args else raw, cwd)
        listed = args[1] if len(args) > 1 and args[1].startswith("[") else None
        if len(args) > 1 and listed is None and not args[1].startswith("{"):
            return self.out.append(Target(channel, "run", None, self.word(raw)))  # arguments from a variable
        items = args[:1] + (self.items(listed) if listed else [])
        shell_option = self.option(options, "shell")
        if shell_option not in (None, "false", "undefined", "null"):
            parts = [self.value(item) for item in items]
            return self.shell(channel, None if None in parts else " ".join(parts), raw, cwd)
        if len(items) > 1:
            return self.argv(channel, items, raw, cwd)
        program = self.value(items[0]) if items else None  # a program without arguments
        self.shell(channel, quote(program) if program is not None else None, raw, cwd)

    def perl(self):
        text = self.text
        for m in re.finditer(r"(?<![\w$@%])(" + "|".join(PERL) + r")(?![\w:])", text):
            name, start = m.group(1), m.start()
            before = text[max(0, start - 40):start]
            if before.endswith("->") or re.search(r"\bsub\s*$", before):
                continue
            if before.endswith("::") and not before.endswith(PERL_PACKAGES):
                continue
            args, raw, called = self.call_args(m.end())
            spec, channel = PERL[name], f"perl {name}"
            if not called:
                continue
            if spec == "open":
                self.perl_open(args, raw)
            elif spec == "sysopen":
                if len(args) > 2 and re.fullmatch(r"\s*(?:O_RDONLY|0)\s*", args[2]) is None:
                    self.target("perl sysopen", "write", args[1])
            elif spec == "truncate":
                if args and not re.fullmatch(r"[A-Za-z_]\w*", args[0]):  # a bareword is a filehandle
                    self.target(channel, "truncate", args[0])
            elif spec == "argv" and args and not args[0].startswith("{"):
                self.argv(channel, args, raw)
            elif spec == "argv":  # system { $program } @args, system(): unknown
                self.shell(channel, None, raw or name)
            elif spec == "shell":
                self.shell(channel, self.value(args[0]) if args else None, args[0] if args else name)
            elif spec == "chdir":
                self.chdirs.append(self.value(args[0]) if args else None)
            else:
                self.paths(channel, spec, args)

    def perl_open(self, args, raw):
        if len(args) >= 3:
            mode = self.value(args[1])
            if mode is None:
                return self.target("perl open(…, mode)", "write", args[2])
            mode = mode.split(":")[0].strip()
            if mode in ("-|", "|-"):
                return self.argv("perl open(…, '|-')", args[2:], raw)
            if "&" in mode or not any(c in mode for c in ">+"):
                return None  # reads, or duplicates a handle
            action = "change" if mode.startswith((">>", "+<")) else "write"
            return self.target(f"perl open(…, {mode!r})", action, args[2])
        if len(args) != 2:
            return None
        spec = self.value(args[1])
        if spec is None:
            written = re.sub(r"^(?:qq\s*.|[\"'`])", "", self.source.unmask(args[1]).strip())
            if written.startswith("<") and not written.startswith("<>"):
                return None  # open(FH, "<$file"): reads
            return self.target("perl open", "write", args[1])
        spec = spec.strip()
        if spec.startswith("|") or spec.endswith("|"):
            return self.shell("perl open(…, '|')", spec.strip("|").strip(), raw)
        for mode in ("+<", "+>", ">>", ">"):
            if spec.startswith(mode):
                path = spec[len(mode):].strip()
                if path.startswith("&") or path in ("-", ""):
                    return None  # a duplicated handle, stdout, or nothing to open
                action = "change" if mode in (">>", "+<") else "write"
                return self.out.append(Target(f"perl open(…, '{mode}')", action, path, path, None))
        return None

    def ruby(self):
        text = self.text
        pattern = (r"(?<![\w$@.:])(?:(File|IO|FileUtils|Dir|Open3|Kernel|Process)\s*(?:\.|::)\s*([a-z_]\w*[!?]?)"
                   r"|(open|system|exec|spawn)(?![\w!?])|Pathname(?:\s*\.\s*new)?\s*(?=\())")
        for m in re.finditer(pattern, text):
            if m.group(0).startswith("Pathname"):
                self.pathname(m.end())
                continue
            name = f"{m.group(1)}.{m.group(2)}" if m.group(1) else m.group(3)
            spec = RUBY.get(name)
            args, raw, called = self.call_args(m.end())
            if spec is None or not called:
                continue
            channel = f"ruby {name}"
            if spec == "open":
                self.ruby_open(channel, args, raw, name == "open" or name == "Kernel.open")
            elif spec == "argv":
                while args and args[0].startswith("{"):
                    args = args[1:]  # an environment hash
                cwd = self.option(args, "chdir")
                args = [a for a in args if not re.match(r":?\w+\s*(?::(?!:)|=>)", a)]
                if args:
                    self.argv(channel, args, raw, cwd)
            elif spec == "chdir":
                self.chdirs.append(self.value(args[0]) if args else None)
            else:
                self.paths(channel, spec, args)

    def ruby_open(self, channel, args, raw, kernel):
        if not args:
            return None
        path = self.value(args[0])
        if kernel and path is not None and path.startswith("|"):
            return self.shell(channel, path[1:].strip(), args[0])
        mode = self.option(args[1:], "mode")
        if mode is None and len(args) > 1 and not re.match(r":?\w+\s*(?::(?!:)|=>)", args[1]):
            mode = args[1]
        self.opened(channel, args[0], mode)

    def pathname(self, at):
        args, end = split_args(self.text, at + 1, True)
        found = re.match(r"\)\s*\.\s*(\w+)", self.text[end:end + 40])
        method = found.group(1) if found else None
        if method not in PATHNAME or not args:
            return None
        channel, action = f"ruby Pathname#{method}", PATHNAME[method]
        more, raw, _ = self.call_args(end + found.end())
        if action == "open":
            return self.opened(channel, args[0], more[0] if more else None)
        self.target(channel, action, args[0], "tree" if method in ("rmtree", "rename") else "")
        if method == "rename" and more:
            self.target(channel, "move onto", more[0])


def fs_base(name):
    return name[:-4] if name.endswith("Sync") and name[:-4] in NODE_FS else name
