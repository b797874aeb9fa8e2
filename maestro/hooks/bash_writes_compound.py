"""Compound commands, for the Bash analysis: ( ), { }, if, while/until, for/select, `for ((…))`,
case, [[ ]], (( )), coproc and function definitions. Functions of the Analyzer (`self` is a
bash_writes.Analyzer) kept out of its class so that this module is imported only when a command
line has one (Analyzer.run_command dispatches on the node's kind).
"""

from maestro.hooks import bash_expand as bx
from maestro.hooks.bash_run import MAX_STEPS

MAX_LOOP_VALUES = 64
LOOP_PASSES = 4


def run_subshell(self, cmd, st, stdin):
    self.run_list(cmd.body, st.copy(), stdin)
    return st, st

def run_group(self, cmd, st, stdin):
    return self.run_list(cmd.body, st, stdin)

def run_coproc(self, cmd, st, stdin):
    self.run_command(cmd.body, st.copy(), None)
    return st, st

def run_if(self, cmd, st, stdin):
    outcomes, current = [], st
    for cond, body in cmd.arms:
        succ, fail = self.run_list(cond, current, stdin)
        if succ is fail:
            succ = succ.copy()
        outcomes.append(bx.join(*self.run_list(body, succ, stdin)))
        current = fail
    outcomes.append(bx.join(*self.run_list(cmd.body, current, stdin)) if cmd.body is not None else current)
    final = bx.join_all(outcomes)
    return final, final

def run_while(self, cmd, st, stdin, until=False):
    cond, body = cmd.arms[0]
    return loop(self, st, stdin, cond, body, until)

def run_until(self, cmd, st, stdin):
    return run_while(self, cmd, st, stdin, True)

def loop(self, st, stdin, cond, body, until, before=None):
    """A loop body runs 0..n times: iterate until the joined state stops changing."""
    entry, exits = st, []
    for attempt in range(LOOP_PASSES + 1):
        if attempt == LOOP_PASSES:
            entry = entry.copy()
            entry.poisoned, entry.cwd = True, None
        state = entry.copy()
        if before is not None:
            before(state)
        if cond is not None:
            succ, fail = self.run_list(cond, state, stdin)
            body_state, exit_state = (fail, succ) if until else (succ, fail)
            if body_state is exit_state:
                body_state = body_state.copy()
        else:
            body_state, exit_state = state, state.copy()
        exits.append(exit_state)
        self.loops.append(exits)
        try:
            after = bx.join(*self.run_list(body, body_state, stdin))
        finally:
            self.loops.pop()
        merged = bx.join(entry, after)
        if merged.same(entry) or attempt == LOOP_PASSES:
            break
        entry = merged
    final = bx.join_all(exits + [entry])
    return final, final

def run_for(self, cmd, st, stdin):
    values = None
    if cmd.words is not None:
        values = []
        for word in cmd.words:
            values.extend(w.value for w in bx.expand(word, st, self))
        if None in values or len(values) > MAX_LOOP_VALUES or len(values) * 8 > MAX_STEPS - self.steps:
            values = None
    if values is None or cmd.kind == "select":
        def bind(state):
            state.vars[cmd.name] = None
        return loop(self, st, stdin, None, cmd.body, False, bind)
    ends = [st.copy()]
    current = st
    for value in values:
        current.vars[cmd.name] = value
        self.loops.append(ends)
        try:
            current = bx.join(*self.run_list(cmd.body, current, stdin))
        finally:
            self.loops.pop()
        ends.append(current.copy())
    final = bx.join_all(ends)
    return final, final

run_select = run_for

def run_arith_for(self, cmd, st, stdin):
    bx.expand_text(cmd.words[0], st, self, tilde=False)
    self.arithmetic(cmd.words[0], st)
    return loop(self, st, stdin, None, cmd.body, False)

def run_case(self, cmd, st, stdin):
    bx.expand_text(cmd.words[0], st, self)
    outcomes, previous = [st], None
    for patterns, body, terminator in cmd.arms:
        for pattern in patterns:
            bx.expand_text(pattern, st, self)
        entry = st.copy() if previous is None else bx.join(st.copy(), previous)
        post = bx.join(*self.run_list(body, entry, stdin)) if body is not None else entry
        outcomes.append(post)
        previous = post if terminator in (";&", ";;&") else None
    final = bx.join_all(outcomes)
    return final, final

def run_cond(self, cmd, st, stdin):
    for word in cmd.words:
        value = bx.expand_text(word, st, self)
        if type(value) is str and "[" in value and ("$(" in value or "`" in value):
            from maestro.hooks import bash_hazards  # `-eq`, `-v`: a[$(cmd)] is evaluated, cmd runs

            bash_hazards.subscript(self, word.raw, st.cwd)
    return st, st

def run_arith(self, cmd, st, stdin):
    bx.expand_text(cmd.words[0], st, self, tilde=False)
    self.arithmetic(cmd.words[0], st)
    return st, st

def define_function(self, cmd, st):
    """Analyse the body where it is defined; a later call makes what it changes unknown."""
    state = st.copy()
    self.loops.append(None)
    try:
        after = bx.join(*self.run_command(cmd.body, state, None))
    finally:
        self.loops.pop()
    changed = frozenset(k for k in after.vars.keys() | st.vars.keys()
                        if after.vars.get(k, bx.ABSENT) != st.vars.get(k, bx.ABSENT))
    st.funcs[cmd.name] = (changed, after.cwd != st.cwd, after.poisoned, "function")
