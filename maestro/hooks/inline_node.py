"""Write APIs in inline Node code (`node -e`, hooks/inline_scripts.py): fs, fs-extra and child_process.

A name counts on a receiver bound to the module (`fs.rename`, `require('fs').rmSync`, an imported
or destructured name) or, when no other common API uses it (`writeFileSync`), on any receiver;
passed around uncalled (`.forEach(fs.unlinkSync)`) its paths are unknown. Split out of
inline_scripts.py (which holds the shared scanner, Finder) so that Perl and Ruby code does not load
the Node tables; imported on the first Node code seen.
"""

import re

from maestro.hooks.inline_paths import quote
from maestro.hooks.inline_scripts import MOVE, PH, Finder
from maestro.hooks.targets import Target

# Node fs (and fs-extra): base name -> ((argument, action, how), …) or "open"; the *Sync forms too
NODE_FS = {"writeFile": ((0, "write", ""),), "appendFile": ((0, "change", ""),), "createWriteStream": ((0, "write", ""),),
           "outputFile": ((0, "write", ""),), "writeJson": ((0, "write", ""),), "writeJSON": ((0, "write", ""),),
           "outputJson": ((0, "write", ""),), "ensureFile": ((0, "create", ""),), "rename": MOVE, "move": MOVE,
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
HINTS = {"node": ("fs", "exec", "spawn", "process")}  # words without which code cannot write


class NodeFinder(Finder):
    """Finder for Node code: `node()` fills `out`."""

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
        self.computed_members(fs_names | cp_names)
        # code built from strings at run time (`eval("…")`, `Function("…")`, `vm.runIn…`) is not analysed
        if re.search(r"(?<![\w$.])(?:eval|Function)\s*\(", text) or any(v in ("vm", "node:vm") for v in values):
            self.out.append(Target("node eval", "run", None, "code built from a string at run time"))
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

    def computed_members(self, module_names):
        """`require("child_process")["exec" + "Sync"](…)`, `fs[name](…)`: a member chosen at run time
        of fs/child_process may be any of their write APIs → fail closed."""
        text, values = self.text, self.source.values
        for m in re.finditer(r"(?:require|import)\s*\(\s*" + PH + r"\s*\)\s*(?:\?\.)?\s*\[", text):
            module = values[int(m.group(1))]
            if module in FS_MODULES or module in CP_MODULES:
                self.out.append(Target("node " + module, "run", None, "a member computed at run time"))
                return
        names = [name for name in module_names if name]
        if not names:
            return
        pattern = r"(?<![\w$.])(" + "|".join(map(re.escape, sorted(names))) + r")\s*(?:\?\.)?\s*\["
        for m in re.finditer(pattern, text):
            self.out.append(Target("node " + m.group(1), "run", None, "a member computed at run time"))
            return

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


def fs_base(name):
    return name[:-4] if name.endswith("Sync") and name[:-4] in NODE_FS else name
