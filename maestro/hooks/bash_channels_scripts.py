"""Write channels of text processors and editors (part of the bash_channels table).

- sed: `-i[SUF]`/`--in-place[=SUF]` (any bundle: `-Ei`, `-ni`, `-i.bak`; BSD `-i ''`) changes every
  file operand; without -i a script still writes through `w FILE`, `W FILE` and `s///w FILE`, and
  runs commands through `e CMD` (→ Script "sh") and `s///e` / a bare `e` (the input as commands:
  fail closed). The script is parsed as sed parses it (addresses, regexes with any delimiter, a/i/c
  text, labels), so `s/w/x/` or `/w/d` are not writes. `-f FILE` is read from disk.
- awk: see bash_channels_awk.py (print/printf redirections, pipes, system(), `-i inplace`).
- perl/ruby: `-i[SUF]` changes the file operands; `-e`/`-E` code → Script (several joined by
  newlines, as the interpreter joins them); bare `perl`/`perl -` reads its program from stdin.
- ed, ex, vi/vim/nvim/view/vimdiff, nano, emacs: an editor session writes what its commands say,
  and those come from stdin, -c/+cmd or a script file: each file operand is "change"d and one
  more unresolved Target stands for the files its commands may name (fail closed). Only
  --version/--help pass.
- yq -i: changes its file operands.
"""

from maestro.hooks.bash_channels_common import has, read_program_file, scan, target, unresolved_code, values
from maestro.hooks.targets import Script, Target, Word

SED_LONG_ARG = ("expression", "file", "line-length")
SED_FLAGS = ("quiet", "silent", "regexp-extended", "separate", "unbuffered", "null-data", "zero-terminated",
             "posix", "debug", "sandbox", "follow-symlinks", "binary", "help", "version")


def _sed(name, argv, cwd, env, home, depth):
    args = list(argv[1:])
    for k, word in enumerate(args[:-1]):
        if word.value == "-i" and args[k + 1].value == "":
            del args[k + 1]  # BSD `sed -i '' …`: the empty suffix is its own word
            break
    opts, operands = scan(args, "efl", SED_LONG_ARG, "i", ("in-place",), SED_FLAGS)
    if has(opts, "help", "version"):
        return []
    out = []
    pieces = []
    for key, word in opts:
        if word is None:
            continue
        if key in ("e", "expression"):
            if word.value is None:
                out.append(unresolved_code("sed -e", word))
            else:
                pieces.append(word.value)
        elif key in ("f", "file"):
            text = read_program_file("sed -f", word, cwd)
            if isinstance(text, str):
                pieces.append(text)
            else:
                out.append(text)
    if not any(key in ("e", "expression", "f", "file") for key, _ in opts):
        if not operands:
            return []  # no script: sed fails
        script_word, operands = operands[0], operands[1:]
        if script_word.value is None:
            out.append(unresolved_code("sed", script_word))
        else:
            pieces.append(script_word.value)
    if has(opts, "i", "in-place"):
        out += [target("sed -i", "change", word, cwd) for word in operands if word.value != "-"]
    if not has(opts, "sandbox"):
        for kind, text in sed_script_effects("\n".join(pieces)):
            if kind == "w":
                out.append(Target("sed w", "write", text, text, cwd))
            elif text:
                out.append(Script("sh", text, text))
            else:
                out.append(Target("sed e", "run", None, "the input lines as commands", cwd))
    return out


def sed_script_effects(script):
    """[("w", FILE) | ("e", COMMAND or "")] for the writing/executing commands of a sed script."""
    effects = []
    i, n = 0, len(script)
    while i < n:
        while i < n and script[i] in " \t\n;":
            i += 1
        if i >= n:
            break
        if script[i] == "#":
            i = _line_end(script, i)
            continue
        i = _skip_address(script, i)
        while i < n and script[i] in " \t":
            i += 1
        if i < n and script[i] == ",":
            i = _skip_address(script, _skip_blanks(script, i + 1))
        i = _skip_blanks(script, i)
        while i < n and script[i] == "!":
            i = _skip_blanks(script, i + 1)
        if i >= n:
            break
        command = script[i]
        i += 1
        if command in "{}=dDgGhHnNpPxzF":
            continue
        if command in "aic":
            i = _text_end(script, i)
        elif command in ":btTv":
            # GNU sed ends a label at whitespace too: `:x w FILE` is a label, then a `w` command
            i = _skip_blanks(script, i)
            while i < n and script[i] not in ";\n \t":
                i += 1
        elif command in "rRwWe":
            end = _line_end(script, i)
            argument = script[i:end].strip(" \t")
            i = end
            if command in "wW":
                effects.append(("w", argument))
            elif command == "e":
                effects.append(("e", argument))
        elif command in "sy":
            if i >= n or script[i] in "\n\\":
                break
            delimiter = script[i]
            i = _delimited(script, _delimited(script, i + 1, delimiter), delimiter)
            if command == "s":
                while i < n and script[i] not in ";\n}#" and script[i] not in " \t":
                    flag = script[i]
                    i += 1
                    if flag in "wW":
                        end = _line_end(script, i)
                        effects.append(("w", script[i:end].strip(" \t")))
                        i = end
                    elif flag == "e":
                        effects.append(("e", ""))
        elif command in "qQlL":
            while i < n and script[i] in " \t0123456789":
                i += 1
        else:
            while i < n and script[i] not in ";\n":  # unknown: sed rejects the script; skip it
                i += 1
    return effects


def _skip_blanks(text, i):
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


def _line_end(text, i):
    end = text.find("\n", i)
    return len(text) if end < 0 else end


def _text_end(text, i):
    """The end of a/i/c text: the line, continued by a trailing backslash (GNU one-liners too)."""
    i = _skip_blanks(text, i)
    if text.startswith("\\\n", i):
        i += 2
    while True:
        end = _line_end(text, i)
        if end >= len(text) or not text[i:end].endswith("\\"):
            return end
        i = end + 1


def _delimited(text, i, delimiter):
    """The index after the closing delimiter of a regex/replacement starting at i."""
    n = len(text)
    while i < n:
        char = text[i]
        if char == "\\":
            i += 2
            continue
        i += 1
        if char == delimiter:
            return i
    return n


def _skip_address(text, i):
    n = len(text)
    if i < n and text[i] in "/\\":
        if text[i] == "\\":
            i += 1
            if i >= n:
                return n
        i = _delimited(text, i + 1, text[i])
        while i < n and text[i] in "IM":
            i += 1
        return i
    while i < n and (text[i] in "0123456789$~+" or (text[i] == " " and False)):
        i += 1
    return i


def _perl_like(name, argv, cwd, env, home, depth):
    """perl/ruby switches: bundles (`-pi.bak`, `-lne`), `-i[SUF]` takes the rest of its word,
    `-e CODE` the rest of its word or the next word."""
    args = argv[1:]
    if name == "perl":  # letters whose value is the rest of the word (some: the next word if empty)
        # -V prints the configuration and still runs the program; only -v and -h exit
        rest_letters, next_when_empty, exits, digits = "CdDFiImMx", "IMm", "vh", "0l"
        for variable in ("PERL5OPT", "PERL5DB"):
            if env and env.get(variable):  # switches / debugger code from the environment
                return [Target(name + " (" + variable + ")", "run", None, "$" + variable, cwd)]
    else:
        rest_letters, next_when_empty, exits, digits = "CEFiIKrTWx", "CEIr", "h", "0"
    in_place = False
    codes = []
    modules = []
    i = 0
    while i < len(args):
        word = args[i]
        value = word.value
        if value is None and word.raw.lstrip("'\"").startswith("-"):
            return [unresolved_code(name, word)]  # `"-e$CODE"`: unknown switches may carry code
        if value is None or not value.startswith("-") or value == "-":
            break
        i += 1
        if value == "--":
            break
        if value.startswith("--"):
            if value in ("--help", "--version"):
                return []
            continue
        j = 1
        while j < len(value):
            letter = value[j]
            j += 1
            if letter == "e" or (letter == "E" and name == "perl"):
                if j < len(value):
                    codes.append(Word(value[j:], word.raw, word.literal))
                elif i < len(args):
                    codes.append(args[i])
                    i += 1
                break
            if letter in exits:
                return []
            if letter in digits:  # -0[octal/hex], perl -l[octal]: digits only, then more switches
                while j < len(value) and value[j] in "0123456789abcdefxABCDEF":
                    j += 1
                continue
            if letter == "i":
                in_place = True
                break
            if letter in rest_letters:
                module = Word(value[j:], word.raw, word.literal) if j < len(value) else None
                if j >= len(value) and letter in next_when_empty:
                    module = args[i] if i < len(args) else None
                    i += 1
                if name == "perl" and letter in "Mm" and module is not None and (
                        module.value is None or ";" in module.value or "(" in module.value):
                    return [unresolved_code(name + " -" + letter, module)]  # `-MPOSIX;system(…)` is code
                if letter in "Mm" and module is not None:
                    modules.append(module.value)
                break
    operands = args[i:]
    out = []
    if codes and any(m.startswith("ExtUtils::Command") for m in modules):
        from maestro.hooks.bash_channels_tools import extutils_command

        out += extutils_command(codes, operands, cwd)
    if not codes:
        if not operands or operands[0].value == "-":
            out.append(Script(name, None, argv[0].raw))
        operands = operands[1:]  # the program file (or `-`); the rest are its arguments
    elif any(word.value is None for word in codes):
        out += [unresolved_code(name + " -e", word) for word in codes if word.value is None]
    else:
        out.append(Script(name, "\n".join(word.value for word in codes), codes[0].raw))
    if in_place:
        out = [target(name + " -i", "change", word, cwd) for word in operands if word.value != "-"] + out
    return out


INFO_ONLY = ("--version", "--help", "-h", "-V")
EDITOR_ARG_OPTIONS = {"ed": "p", "nano": "CoQrsTXY", "emacs": "lfLdt"}  # others: vi's -c -S -u -U -i -T -w -W -t -q
EDITOR_LONG_ARG = ("--cmd", "--servername", "--remote-expr", "--startuptime", "--listen", "--eval", "--load",
                   "--script", "--funcall", "--chdir", "--insert", "--file", "--find-file", "--directory",
                   "--visit", "--user", "--operlay", "--speedup")


def _editor(name, argv, cwd, env, home, depth):
    args = argv[1:]
    if len(args) == 1 and args[0].value in INFO_ONLY:
        return []
    arg_options = EDITOR_ARG_OPTIONS.get(name, "cSuUiTwWtq")
    files = []
    i = 0
    while i < len(args):
        word = args[i]
        value = word.value
        i += 1
        if value in ("--version", "--help"):
            return []  # an option itself (not an option's argument, not after `--`): prints and exits
        if value is None:
            files.append(word)
        elif value == "--":
            files += args[i:]
            break
        elif value.startswith("+") or value == "-":
            continue
        elif value.startswith("--"):
            i += value in EDITOR_LONG_ARG
        elif value.startswith("-") and len(value) > 1:
            i += len(value) == 2 and value[1] in arg_options
        else:
            files.append(word)
    out = [target(name, "change", word, cwd) for word in files]
    return out + [Target(name, "change", None, "the files its commands name", cwd)]


def _yq(name, argv, cwd, env, home, depth):
    opts, operands = scan(argv[1:], "IopP", ("indent", "output-format", "input-format", "from-file",
                                              "expression", "front-matter", "split-exp"), "", (),
                          ("inplace", "null-input", "exit-status", "help", "version"))
    if not has(opts, "i", "inplace"):
        return []
    files = operands[1:] if operands and not values(opts, "from-file", "expression") else operands
    return [target("yq -i", "change", word, cwd) for word in files]


def _awk(name, argv, cwd, env, home, depth):
    from maestro.hooks.bash_channels_awk import awk_writes

    return awk_writes(argv, cwd)


HANDLERS = {"sed": _sed, "perl": _perl_like, "ruby": _perl_like, "yq": _yq, "awk": _awk}
HANDLERS.update({name: _editor for name in ("ed", "ex", "vi", "vim", "nvim", "view", "vimdiff", "rvim", "gvim",
                                            "nano", "emacs")})
