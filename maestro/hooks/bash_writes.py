"""The Bash analysis: every file a command line would write, as bash would run it.

`find_writes(command, cwd, env, home)` parses the command (bash_parse), walks it with the shell's
state (bash_expand.State: effective cwd, known variables) and collects a Target for every output
redirection and for every write that bash_channels.command_writes reports for a simple command,
following wrappers (Run) and nested programs (Script: `bash -c`, `eval`, heredoc-fed interpreters,
inline python/node/perl/ruby via inline_code.code_writes) up to MAX_NESTED levels.

Soundness rules (the gate fails closed on unresolved targets):
- where the shell may be in one of several states (an `if` branch, `a && b`, a loop that runs 0..n
  times, a `cd` that may fail) the states are joined: whatever differs becomes unknown;
- `( )`, pipeline stages, `&`, `$(…)` run in subshells: their `cd` and assignments do not leak;
- a child shell sees only exported variables; non-exported ones are unknown to it;
- a program read from stdin is judged when that stdin is literal text (heredoc, here-string,
  `echo`/`printf`/`cat` stage), and fails closed when it is another command's output.

The walk is split by how often it is needed: this module (lists, pipelines, simple commands,
redirections, substitutions) and bash_run (one expanded command: builtins, functions, programs);
imported on first use: bash_writes_compound (if, loops, case, functions…), bash_builtins_rare,
bash_output (echo/printf/mktemp output), bash_arith (arithmetic).
"""

import gc
import posixpath

from maestro.hooks import bash_expand as bx
from maestro.hooks.bash_parse import Simple, parse
from maestro.hooks.bash_run import (
    CODE_INITIALS, DECLARATIONS, MAX_STEPS, value_basename, Runner, declare, under_link)
from maestro.hooks.targets import BashSyntaxError, Target

MAX_NESTED = 8  # shells, wrappers and substitutions inside one another
# Opening these for writing reaches no file. /dev/stdin, /dev/fd/0 and /dev/fd/N (N ≥ 3),
# /proc/*/fd/N are different: on Linux they re-open the file behind the descriptor (which
# `0<src/app.py` or `exec 3<src/app.py` may have opened), so a write there is unresolved.
_DEVICES = frozenset(("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2"))
_OUTPUT_OPS = frozenset((">", ">>", ">|", "&>", "&>>", ">&", "<>"))


def find_writes(command: str, cwd: str, env, home: str) -> list:
    try:
        tree = parse(command)
    except RecursionError:  # not expected (nesting is bounded); never let it escape the gate
        raise BashSyntaxError("command nested too deeply to analyse") from None
    analyzer = Analyzer(home)
    # bash's own variables (SHLVL, RANDOM, OLDPWD…) differ in the Bash tool's shell: unknown
    variables = {k: v for k, v in env.items() if type(k) is str and type(v) is str and k not in bx.DYNAMIC}
    if "HOME" not in variables and home:
        variables["HOME"] = home
    variables["IFS"] = " \t\n"  # bash sets IFS on startup whatever the environment says
    variables.setdefault("PS4", "+ ")
    variables["PWD"] = cwd or None
    variables["OLDPWD"] = None
    state = bx.State(cwd or None, variables, set(variables))
    collecting = gc.isenabled()
    gc.disable()
    try:
        analyzer.run_list(tree, state, None)
    except RecursionError:
        raise BashSyntaxError("command nested too deeply to analyse") from None
    finally:
        if collecting:
            gc.enable()
    return analyzer.targets


def is_device(path, cwd):
    if not path.startswith("/"):
        if cwd is None:
            return False
        path = posixpath.join(cwd, path)
    return posixpath.normpath(path) in _DEVICES


def reopens_descriptor(path, cwd):
    """A path that re-opens an open descriptor's file (/dev/stdin, /dev/fd/N, /proc/PID/fd/N)."""
    if not path.startswith("/"):
        if cwd is None or not (cwd.startswith(("/dev", "/proc")) or ".." in path):
            return False
        path = posixpath.join(cwd, path)
    path = posixpath.normpath(path)
    if path == "/dev/stdin" or path.startswith("/dev/fd/"):
        return path not in _DEVICES
    return path.startswith("/proc/") and "/fd/" in path


def _is_fd(text):
    return text.isdigit() and text.isascii()  # `>&٣` names a file: bash reads ASCII digits only


def _describe(cmd):
    if type(cmd) is Simple:
        text = " ".join(w.raw for w in cmd.words) or "command"
    else:
        text = cmd.kind
    return text if len(text) <= 80 else text[:77] + "..."


class Analyzer(Runner):
    """The walk: lists, pipelines, simple commands, redirections, substitutions (here); what an
    expanded command runs (bash_run.Runner); compound commands (bash_writes_compound)."""

    __slots__ = ("home", "targets", "seen", "steps", "loops", "level", "depth", "last_simple", "quiet", "programs_ran",
                 "links")

    def __init__(self, home):
        self.home = home
        self.targets, self.seen = [], set()
        self.steps = self.level = self.depth = self.quiet = 0
        self.loops = []
        self.last_simple = None
        self.programs_ran = False
        self.links = []  # absolute paths `ln` creates: what is written through them is not known here

    def add(self, target):
        if self.quiet or (target.path is not None and is_device(target.path, target.cwd)):
            return
        if target.path == "/dev/fd/63" and target.word[:2] in (">(", "<("):
            return  # `tee >(cmd)`: the pipe of a process substitution (bash_expand names it /dev/fd/63)
        if target.path is not None and reopens_descriptor(target.path, target.cwd):
            target = Target(target.channel, target.action, None, target.word or target.path, target.cwd, target.tree)
        if target.path is not None and (target.path.startswith("/") or target.cwd is not None):
            full = posixpath.normpath(posixpath.join(target.cwd or "/", target.path))
            if target.channel in ("ln", "link") and target.action == "create":
                self.links.append(full)
            elif self.links and under_link(self, full):
                target = Target(target.channel, target.action, None, target.word or target.path, target.cwd,
                                target.tree)
            if target.action == "extract into" or target.channel.endswith(" (keeping symlinks)"):
                self.links.append(full)  # `tar -x`, `unzip`, `cp -a`, `rsync -l`: links restored or copied
        key = (target.channel, target.action, target.path, target.word, target.cwd, target.tree)
        if key not in self.seen:
            self.seen.add(key)
            self.targets.append(target)

    def nested(self, word):
        """Enter one more level of shells/wrappers/substitutions; past the limit, fail closed."""
        if self.depth >= MAX_NESTED:
            self.add(Target("nested shell", "write", None, word))
            return False
        self.depth += 1
        return True

    # ------------------------------------------------------------------ lists

    def run_list(self, node, st, stdin):
        """Returns (state if the last command succeeded, state if it failed)."""
        self.level += 1
        pair = (st, st)
        for andor, background in node.items:
            if background:
                self.run_andor(andor, st.copy(), None)
                pair = (st, st)
                continue
            succ, fail = self.run_andor(andor, st, stdin)
            st = bx.join(succ, fail)
            pair = (succ, fail)
        self.level -= 1
        return pair

    def run_andor(self, andor, st, stdin):
        succ, fail = self.run_pipeline(andor.pipelines[0], st, stdin)
        for op, pipeline in zip(andor.ops, andor.pipelines[1:]):
            enter, skipped = (succ, fail) if op == "&&" else (fail, succ)
            if enter is skipped:
                enter = enter.copy()
            s2, f2 = self.run_pipeline(pipeline, enter, stdin)
            if op == "&&":
                succ, fail = s2, bx.join(skipped, f2)
            else:
                succ, fail = bx.join(skipped, s2), f2
        return succ, fail

    def run_pipeline(self, pipeline, st, stdin):
        cmds = pipeline.cmds
        if len(cmds) == 1:
            succ, fail = self.run_command(cmds[0], st, stdin)
        else:
            feed = stdin
            for cmd in cmds:
                self.last_simple = None
                self.run_command(cmd, st.copy(), feed)
                feed = self.stage_output(cmd)
            succ = fail = st
        return (fail, succ) if pipeline.negated else (succ, fail)

    def stage_output(self, cmd):
        """What the next pipeline stage reads: literal text when this stage prints only known text."""
        last = self.last_simple
        if last is None or last[0] is not cmd:
            return ("unknown", "the output of " + _describe(cmd))
        argv, stdin = last[1], last[2]
        for r in cmd.redirs:
            if r.op in ("&>", "&>>") or (r.op in _OUTPUT_OPS and r.fd in ("", "1") and r.op != "<>"):
                return ("text", "")
        values = [w.value for w in argv]
        text = None
        if values and None not in values:
            name = value_basename(values[0])
            if name == "echo":
                from maestro.hooks.bash_output import echo_output

                text = echo_output(values[1:])
            elif name == "printf":
                from maestro.hooks.bash_output import printf_output

                text = printf_output(values[1:])
            elif name == "cat" and all(v == "-" for v in values[1:]) and stdin is not None and stdin[0] == "text":
                text = stdin[1]
        return ("unknown", "the output of " + _describe(cmd)) if text is None else ("text", text)

    # ------------------------------------------------------------------ commands

    def run_command(self, cmd, st, stdin):
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise BashSyntaxError("command too complex to analyse")
        if type(cmd) is Simple:
            return self.run_simple(cmd, st, stdin)
        from maestro.hooks import bash_writes_compound as compound  # imported by the first compound command

        if cmd.kind == "function":
            compound.define_function(self, cmd, st)
            return st, st
        stdin = self.redirections(cmd.redirs, st, stdin)
        return getattr(compound, "run_" + cmd.kind)(self, cmd, st, stdin)

    def run_simple(self, cmd, st, stdin):
        words = cmd.words
        if words and words[0].literal_text() in DECLARATIONS and words[0].parts[0][0] <= 1:
            stdin = self.redirections(cmd.redirs, st, stdin)
            declare(self, words[0].literal_text(), words[1:], st)
            self.last_simple = (cmd, [], stdin)
            return st, st
        argv = []
        for word in words:
            argv.extend(bx.expand(word, st, self))
        stdin = self.redirections(cmd.redirs, st, stdin)
        if not argv:
            for assign in cmd.assigns:
                self.assign(assign, st)
            self.last_simple = (cmd, argv, stdin)
            return st, st
        extra = None
        if cmd.assigns:
            scratch = st.copy()
            extra = {}
            for assign in cmd.assigns:
                self.assign(assign, scratch)
                extra[assign.name] = scratch.vars.get(assign.name)
        pair = self.run_argv(argv, st, stdin, extra, None)
        self.last_simple = (cmd, argv, stdin)
        return pair

    def assign(self, assign, st):
        name = assign.name
        if assign.array is not None:
            values = []
            for element in assign.array:
                if element.raw.startswith("["):
                    values = None  # [key]=value elements: not followed
                    if "$(" in element.raw or "`" in element.raw:  # the key is evaluated (and expanded again)
                        from maestro.hooks import bash_hazards

                        bash_hazards.subscript(self, name, st.cwd)
                    break
                values.extend(w.value for w in bx.expand(element, st, self))
            value = None if values is None or None in values else tuple(values)
        else:
            value = bx.expand_text(assign.value, st, self)
        old = st.lookup(name)
        index = None
        if assign.index is not None:
            index = bx.expand_text(assign.index, st, self, tilde=False)
            index = index.strip() if index is not None else ""
            if type(old) is tuple and index.isdigit() and int(index) < len(old) and type(value) is str:
                items = list(old)
                items[int(index)] = value
                value = tuple(items)
            else:
                value = None
        elif assign.append:
            if old is bx.UNSET:
                pass
            elif old is None or value is None:
                value = None
            elif type(old) is tuple:
                value = old + (value if type(value) is tuple else (value,))
            else:
                value = old + (value if type(value) is str else " ".join(value))
        if name[:1] in CODE_INITIALS or (type(value) is str and "[" in value) or assign.index is not None:
            from maestro.hooks.bash_hazards import assignment_hazards

            assignment_hazards(self, assign, name, value, index)
        st.vars[name] = value

    # ------------------------------------------------------------------ redirections and substitutions

    def redirections(self, redirs, st, stdin):
        """Record the files the redirections write; return the stdin the command then reads."""
        for r in redirs:
            op = r.op
            if op in ("<<", "<<-"):
                if type(r.body) is str:
                    stdin = ("text", r.body)
                else:
                    text = bx.expand_text(r.body, st, self, tilde=False)
                    stdin = ("text", text) if text is not None else (
                        "unknown", "a here-document with unresolved expansions")
                continue
            if op == "<<<":
                text = bx.expand_text(r.target, st, self)
                stdin = ("text", text + "\n") if text is not None else ("unknown", r.target.raw)
                continue
            words = bx.expand(r.target, st, self)
            if r.fd.startswith("{"):
                st.vars[r.fd[1:-1]] = None
            if not words:
                continue  # an empty target is an "ambiguous redirect": bash does not run the command
            reads_stdin = r.fd in ("", "0")
            if op == "<":
                if reads_stdin:
                    path = words[0].value
                    if path in ("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"):
                        continue  # the same stdin again
                    stdin = ("file", path) if path is None or path == "/dev/null" or not path.startswith(
                        ("/dev/", "/proc/")) else ("unknown", "the input " + r.target.raw)
                else:  # `3<f`: /dev/fd/3 (or `>&3` after `exec 3<>…`) can re-open f for writing
                    for word in words:
                        self.add(Target("redirection " + r.fd + "<", "write", word.value, word.raw, st.cwd))
                continue
            if op == "<&":
                if reads_stdin and words[0].value != "0":
                    stdin = ("unknown", "the input " + r.target.raw)
                continue
            if op == ">&" and len(words) == 1 and words[0].value is not None and (
                    _is_fd(words[0].value.rstrip("-")) or words[0].value == "-"):
                continue  # duplicating or closing a descriptor
            channel = "redirection " + (r.fd if r.fd.isdigit() else "") + op
            for word in words:
                self.add(Target(channel, "write", word.value, word.raw, st.cwd))
            if op == "<>" and reads_stdin:
                stdin = ("file", words[0].value)
        return stdin

    def substitution(self, node, st, raw):
        """`$(…)` / backticks: analyse the commands (in a subshell); the value, when known."""
        if node is None:
            self.add(Target("command substitution", "run", None, raw))
            return None
        value, cmds = None, node.items[0][0].pipelines[0].cmds if len(node.items) == 1 and not node.items[0][1] and len(
            node.items[0][0].pipelines) == 1 else ()
        if len(cmds) == 1 and type(cmds[0]) is Simple and not cmds[0].assigns and cmds[0].words and value_basename(
                cmds[0].words[0].literal_text()) == "mktemp":
            from maestro.hooks.bash_output import mktemp_path  # `F=$(mktemp)`: the path, when known

            args = []
            for word in cmds[0].words[1:]:
                args.extend(w.value for w in bx.expand(word, st.copy(), self))
            value = mktemp_path(args, st)
        if self.nested(raw):
            try:
                self.last_simple = None
                self.run_list(node, st.copy(), None)
                if value is None and len(node.items) == 1 and not node.items[0][1] and len(
                        node.items[0][0].pipelines) == 1 and node.items[0][0].pipelines[0].cmds:
                    # `$(cat <<'EOF' … EOF)`, `$(echo …)`, `$(printf …)`: known text
                    output = self.stage_output(node.items[0][0].pipelines[0].cmds[-1])
                    if output[0] == "text":
                        value = output[1].rstrip("\n")
            finally:
                self.depth -= 1
        return value

    def process_substitution(self, node, st, direction):
        if self.nested(direction + "(…)"):
            try:
                self.run_list(node, st.copy(), ("unknown", "the input of " + direction + "(…)") if direction == ">"
                              else None)
            finally:
                self.depth -= 1

    def arithmetic(self, word, st):
        """Variables an arithmetic expression assigns become unknown. Bash evaluates a variable's
        value as an expression, where `a[$(cmd)]` runs cmd: a known value like that fails closed."""
        from maestro.hooks.bash_arith import arith_names

        assigned, referenced = arith_names("".join(p[1] for p in word.parts if p[0] <= 1))
        for name in referenced:
            value = st.lookup(name)
            if type(value) is str and ("$(" in value or "`" in value):
                self.add(Target("arithmetic evaluation", "run", None, name))
        for name in assigned:
            st.vars[name] = None
