"""awk's write channels (part of the bash_channels table): what an awk program writes or runs.

- `print … > FILE`, `print … >> FILE`, `printf … > FILE`: a redirection only when the `>` follows a
  print/printf at the statement's own parenthesis depth (`if ($1 > 3)`, `print (a > b)` compare).
  A string-literal file → Target for it; any other expression → Target with path None.
- `print … | CMD`, `CMD | getline`, `system(CMD)`: a literal command → Script("sh", CMD); any other
  → unresolved (fail closed).
- `gawk -i inplace` / `--include=inplace` / `@include "inplace"`: every file operand is changed.
- `-o[FILE]`/`--pretty-print`, `-p[FILE]`/`--profile`, `-d[FILE]`/`--dump-variables` write a file.
The program is tokenised as awk does: strings, regex literals (`/…/` where an operand cannot
stand), comments and line continuations are data.
"""

from maestro.hooks.bash_channels_common import has, read_program_file, scan, target, unresolved_code, values
from maestro.hooks.targets import Script, Target

OPERAND_END = ("name", "number", "string", ")", "]", "$")  # after these a `/` divides
KEYWORDS = frozenset(("print", "printf", "getline", "if", "else", "while", "for", "do", "in", "return",
                      "delete", "next", "nextfile", "exit", "BEGIN", "END", "function", "func"))


def awk_writes(argv, cwd):
    opts, operands = scan(argv[1:], "FvfiEelW", ("field-separator", "assign", "file", "include", "source",
                                                  "exec", "load"), "opdDL",
                          ("pretty-print", "profile", "dump-variables", "debug", "lint"),
                          ("help", "version", "posix", "traditional", "sandbox", "characters-as-bytes",
                           "copyright", "gen-pot", "non-decimal-data", "optimize", "no-optimize", "re-interval",
                           "use-lc-numeric", "bignum"), permute=False)
    if has(opts, "help", "version", "copyright"):
        return []
    out = []
    programs = []
    for key, word in opts:
        if key in ("f", "file", "E", "exec") and word is not None:
            text = read_program_file("awk -f", word, cwd)
            if isinstance(text, str):
                programs.append(text)
            else:
                out.append(text)
        elif key in ("e", "source") and word is not None:
            if word.value is None:
                out.append(unresolved_code("awk --source", word))
            else:
                programs.append(word.value)
    if not any(key in ("f", "file", "E", "exec", "e", "source") for key, _ in opts):
        if not operands:
            return out
        if operands[0].value is None:
            out.append(unresolved_code("awk", operands[0]))
        else:
            programs.append(operands[0].value)
        operands = operands[1:]
    for key, default in (("o", "awkprof.out"), ("pretty-print", "awkprof.out"), ("p", "awkprof.out"),
                         ("profile", "awkprof.out"), ("d", "awkvars.out"), ("dump-variables", "awkvars.out")):
        for given, word in opts:
            if given == key:
                if word is None:
                    out.append(Target("awk -" + key, "write", default, default, cwd))
                elif word.value != "-" and word.value != "/dev/stdout":
                    out.append(target("awk -" + key, "write", word, cwd))
    sandbox = has(opts, "sandbox")
    in_place = any((w.value or "").partition(".")[0] == "inplace" for w in values(opts, "i", "include"))
    for program in programs:
        effects = awk_program_effects(program)
        for kind, literal, text in effects:
            if kind == "inplace":
                in_place = True
            elif sandbox:
                continue  # --sandbox disables redirections, pipes and system()
            elif kind == "file":
                out.append(Target("awk print >", "write", literal, literal if literal is not None else text, cwd))
            elif literal is not None and _runs_program_text(literal):
                # `print "…" | "sh"`: the printed text is a program for that interpreter
                out.append(Target("awk " + kind, "run", None, text, cwd))
            elif literal is not None:
                out.append(Script("sh", literal, literal))
            else:
                out.append(Target("awk " + kind, "run", None, text, cwd))
    if in_place:
        files = [w for w in operands if not _is_assignment(w.value)]
        out = [target("awk -i inplace", "change", word, cwd) for word in files if word.value != "-"] + out
    return out


INTERPRETERS = frozenset(("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "rbash", "python", "python3",
                          "node", "perl", "ruby", "php", "lua", "awk", "gawk", "sed", "xargs", "source", "eval",
                          "env", "sudo"))


def _runs_program_text(command):
    """True when a piped-into command reads a program (or file names) from its stdin."""
    words = command.split()
    if not words:
        return False
    first = words[0].rpartition("/")[2]
    return first in INTERPRETERS or first.rstrip("0123456789.") in INTERPRETERS


def _is_assignment(value):
    if value is None:
        return False
    name, eq, _ = value.partition("=")
    return bool(eq) and name.replace("_", "a").isalnum() and not name[:1].isdigit()


def awk_tokens(program):
    """[(kind, text, start, end)] with kind: name, number, string (text unescaped), regex, or the
    operator itself (`>`, `>>`, `|`, `(`, `;`, newline, …)."""
    tokens = []
    i, n = 0, len(program)
    while i < n:
        char = program[i]
        start = i
        if char in " \t\r":
            i += 1
            continue
        if char == "\\" and program.startswith("\n", i + 1):
            i += 2
            continue
        if char == "#":
            while i < n and program[i] != "\n":
                i += 1
            continue
        if char == '"':
            i += 1
            text = []
            while i < n and program[i] != '"':
                if program[i] == "\\" and i + 1 < n:
                    i += 1
                    text.append({"n": "\n", "t": "\t"}.get(program[i], program[i]))
                else:
                    text.append(program[i])
                i += 1
            tokens.append(("string", "".join(text), start, min(i + 1, n)))
            i += 1
            continue
        if char == "/" and (not tokens or tokens[-1][0] not in OPERAND_END or tokens[-1][1] in KEYWORDS):
            i += 1
            in_bracket = False
            while i < n and (program[i] != "/" or in_bracket) and program[i] != "\n":
                if program[i] == "\\":
                    i += 1
                elif program[i] == "[":
                    in_bracket = True
                elif program[i] == "]":
                    in_bracket = False
                i += 1
            i += 1
            tokens.append(("regex", program[start:i], start, min(i, n)))
            continue
        if char.isalpha() or char == "_" or char == "@":
            i += 1
            while i < n and (program[i].isalnum() or program[i] == "_"):
                i += 1
            tokens.append(("name", program[start:i], start, i))
            continue
        if char.isdigit() or (char == "." and program[i + 1:i + 2].isdigit()):
            while i < n and (program[i].isalnum() or program[i] == "."):
                i += 1
            tokens.append(("number", program[start:i], start, i))
            continue
        two = program[i:i + 2]
        if two in (">>", ">=", "<=", "==", "!=", "&&", "||", "|&", "++", "--", "+=", "-=", "*=", "/=", "%=",
                   "^=", "**"):
            i += 2
            tokens.append((two, two, start, i))
            continue
        i += 1
        tokens.append((char, char, start, i))
    return tokens


TERMINATORS = (";", "\n", "}", "{")
WORK_LIMIT = 200000  # tokens visited by the statement scans: hostile text stays linear, then fails closed
TOO_LONG = ("file", None, "<a program too long to analyse>")


def awk_program_effects(program):
    """[(kind, literal-or-None, source text)]: kind "file" (a print/printf redirection), "system()",
    "print |" / "| getline" (a command), "inplace" (`@include "inplace"`)."""
    tokens = awk_tokens(program)
    effects = []
    count = len(tokens)
    budget = [WORK_LIMIT]
    for k, (kind, text, _, _) in enumerate(tokens):
        if budget[0] <= 0:
            return effects + [TOO_LONG]
        if kind == "name" and text == "@include" and k + 1 < count and \
                tokens[k + 1][1].partition(".")[0] == "inplace":
            effects.append(("inplace", None, "@include"))
        elif kind == "name" and text in ("print", "printf"):
            depth = 0
            j = k + 1
            while j < count and (depth > 0 or tokens[j][0] not in TERMINATORS):
                budget[0] -= 1
                if budget[0] <= 0:
                    return effects + [TOO_LONG]
                token = tokens[j][0]
                if token in ("(", "["):
                    depth += 1
                elif token in (")", "]"):
                    depth = max(depth - 1, 0)
                elif depth == 0 and token in (">", ">>", "|", "|&"):
                    end = _expression_end(tokens, j + 1, (), budget)
                    effects.append(_literal_or_text(program, tokens, j + 1, end,
                                                    "file" if token[0] == ">" else "print |"))
                    break
                j += 1
        elif kind == "name" and text == "system" and k + 1 < count and tokens[k + 1][0] == "(":
            end = _expression_end(tokens, k + 2, (")", ","), budget)
            effects.append(_literal_or_text(program, tokens, k + 2, end, "system()"))
        elif kind in ("|", "|&") and k + 1 < count and tokens[k + 1][1] == "getline":
            begin = k
            while begin > 0 and tokens[begin - 1][0] in ("string", "name", "number", ")", "$") and \
                    tokens[begin - 1][1] not in KEYWORDS:
                begin -= 1
                budget[0] -= 1
                if tokens[begin][0] == ")" or budget[0] <= 0:
                    break  # a parenthesised command: not a literal
            effects.append(_literal_or_text(program, tokens, begin, k, "| getline"))
    return effects


def _expression_end(tokens, j, stops, budget):
    depth = 0
    while j < len(tokens) and budget[0] > 0:
        budget[0] -= 1
        token = tokens[j][0]
        if depth == 0 and (token in stops or token in TERMINATORS):
            return j
        if token in ("(", "["):
            depth += 1
        elif token in (")", "]"):
            depth -= 1
        j += 1
    return j


def _literal_or_text(program, tokens, begin, end, kind):
    """(kind, the string if tokens[begin:end] is one string literal else None, source text)."""
    if end == begin + 1 and tokens[begin][0] == "string":
        return (kind, tokens[begin][1], program[tokens[begin][2]:tokens[begin][3]])
    if end <= begin:
        return (kind, None, "<missing>")
    return (kind, None, program[tokens[begin][2]:tokens[end - 1][3]].strip() or "<expression>")
