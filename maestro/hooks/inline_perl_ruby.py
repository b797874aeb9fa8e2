"""Write APIs in inline Perl (`perl -e`) and Ruby (`ruby -e`) code (hooks/inline_scripts.py).

Perl: open/sysopen modes, unlink, rename, File::Copy, File::Path, File::Slurp, system/exec/qx.
Ruby: File, IO, FileUtils, Dir, Pathname, open, system/exec/spawn, Open3, Process. Both languages
call without parentheses and share the `mode` reading of open, so they live together; split out of
inline_scripts.py (which holds the shared scanner, Finder) so that Node code does not load them.
Imported on the first Perl or Ruby code seen.
"""

import re

from maestro.hooks.inline_scripts import ALL, MOVE, MOVE_INTO, Finder, split_args
from maestro.hooks.targets import Target

PERL = {"open": "open", "sysopen": "sysopen", "unlink": ((ALL, "delete", ""),), "rename": MOVE,
        "rmdir": ((0, "delete", ""),), "truncate": "truncate", "symlink": ((1, "create", ""),),
        "link": ((1, "create", ""),), "copy": ((1, "write", "into"),), "cp": ((1, "write", "into"),),
        "move": MOVE_INTO, "mv": MOVE_INTO, "rmtree": ((ALL, "delete", "tree"),),
        "remove_tree": ((ALL, "delete", "tree"),), "write_file": ((0, "write", ""),),
        "append_file": ((0, "change", ""),), "system": "argv", "exec": "argv", "readpipe": "shell", "chdir": "chdir"}
PERL_PACKAGES = ("File::Copy::", "File::Path::", "File::Slurp::", "CORE::", "CORE::GLOBAL::")

_WRITE0 = ((0, "write", ""),)
_DELETE_ALL = ((ALL, "delete", ""),)
_TREE_ALL = ((ALL, "delete", "tree"),)
RUBY = {"File.write": _WRITE0, "File.binwrite": _WRITE0, "IO.write": _WRITE0, "IO.binwrite": _WRITE0,
        "File.open": "open", "File.new": "open", "IO.sysopen": "open", "open": "open", "Kernel.open": "open",
        "File.delete": _DELETE_ALL, "File.unlink": _DELETE_ALL, "File.rename": MOVE,
        "File.truncate": ((0, "truncate", ""),), "File.symlink": ((1, "create", ""),),
        "File.link": ((1, "create", ""),), "File.mkfifo": ((0, "create", ""),),
        "FileUtils.cp": ((1, "write", "into"),), "FileUtils.copy": ((1, "write", "into"),),
        "FileUtils.cp_r": ((1, "write", "tree"),), "FileUtils.cp_lr": ((1, "write", "tree"),),
        "FileUtils.copy_entry": ((1, "write", "tree"),), "FileUtils.copy_file": ((1, "write", ""),),
        "FileUtils.install": ((1, "write", "into"),), "FileUtils.mv": MOVE_INTO, "FileUtils.move": MOVE_INTO,
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
# words without which code cannot write
HINTS = {"perl": tuple(PERL) + ("`",),
         "ruby": ("File", "IO", "Dir", "Open3", "Process", "Pathname", "open", "system", "exec", "spawn", "`", "%x")}


class PerlRubyFinder(Finder):
    """Finder for Perl and Ruby code: `perl()` or `ruby()` fills `out`."""

    def perl(self):
        text = self.text
        # string eval (`eval q{…}`, `eval "…"`, `eval $code`, bare `eval` of $_) runs text the analysis
        # never sees; only the block form `eval { … }` is code it reads
        if re.search(r"(?<![\w$@%:>])eval\b(?!\s*\{)", text):
            self.out.append(Target("perl eval", "run", None, "a string evaluated at run time"))
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
        if re.search(r"(?<![\w$@:])(?:instance_|class_|module_)?eval\b(?!\s*(?:\{|do\b))", text):
            self.out.append(Target("ruby eval", "run", None, "a string evaluated at run time"))
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
