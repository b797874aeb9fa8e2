"""What echo, printf and mktemp print, when it is known without running them: the analysis
follows that text into pipes and substitutions (`echo x | bash`, `F=$(mktemp)`). Imported only
when a pipeline stage or a substitution is one of those programs.
"""

import posixpath

from maestro.hooks.bash_syntax import UNSET, is_int

# ---------------------------------------------------------------------------------------- programs


def mktemp_path(args, st):
    """The path `mktemp ARGS` names, its X's left as written: None when it cannot be known."""
    template, tmpdir, use_tmpdir, t_flag = None, None, False, False
    k = 0
    while k < len(args):
        arg = args[k]
        if arg is None:
            return None
        if arg == "--":
            template = args[k + 1] if k + 1 < len(args) else None
            break
        if arg.startswith("--"):
            if arg.startswith("--tmpdir"):
                use_tmpdir = True
                tmpdir = arg[9:] if arg.startswith("--tmpdir=") else tmpdir
            elif arg.startswith("--suffix") and "=" not in arg:
                k += 1
        elif arg.startswith("-") and len(arg) > 1:
            flags = arg[1:]
            for j, flag in enumerate(flags):
                if flag == "p":
                    use_tmpdir = True
                    tmpdir = flags[j + 1:] or (args[k + 1] if k + 1 < len(args) else None)
                    if not flags[j + 1:]:
                        k += 1
                    break
                if flag == "t":
                    t_flag = True
        else:
            template = arg
        k += 1
    env_tmp = st.lookup("TMPDIR")
    if env_tmp is None or type(env_tmp) is tuple:
        env_tmp_known, env_tmp = False, None
    else:
        env_tmp_known, env_tmp = True, (env_tmp if env_tmp not in (UNSET, "") else None)
    if template is None:
        template, use_tmpdir = "tmp.XXXXXXXXXX", True
    if t_flag:
        if not env_tmp_known:
            return None
        base = env_tmp or tmpdir or "/tmp"
    elif use_tmpdir:
        if tmpdir:
            base = tmpdir
        elif not env_tmp_known:
            return None
        else:
            base = env_tmp or "/tmp"
    else:
        return template
    return posixpath.join(base, template)


def echo_output(args):
    newline, escapes, k = True, False, 0
    while k < len(args) and len(args[k]) > 1 and args[k][0] == "-" and all(c in "neE" for c in args[k][1:]):
        for c in args[k][1:]:
            if c == "n":
                newline = False
            else:
                escapes = c == "e"
        k += 1
    text = " ".join(args[k:])
    if not escapes and "\\" in text:
        return None  # dash's echo (and bash's with xpg_echo) decodes escapes: \076 is '>'
    if escapes:
        cut = text.find("\\c")
        if cut >= 0:
            return _escapes(text[:cut])
        text = _escapes(text)
    return text + "\n" if newline else text


def printf_output(args):
    """printf FORMAT ARGS for the simple formats (%s %b %d %i %c %%), else None."""
    if not args:
        return None
    if "\\c" in args[0]:
        return None
    fmt, rest, out = _escapes(args[0]), list(args[1:]), []
    while True:
        used, k, n = 0, 0, len(fmt)
        while k < n:
            c = fmt[k]
            if c != "%":
                out.append(c)
                k += 1
                continue
            j = k + 1
            while j < n and fmt[j] in "-+ #0123456789.":
                j += 1
            if j >= n:
                return None
            conv = fmt[j]
            if conv == "%":
                out.append("%")
            elif conv in "sbdic":
                arg = rest.pop(0) if rest else ("0" if conv in "di" else "")
                used += 1
                if conv == "b":
                    if "\\c" in arg:
                        return None  # %b's \c ends all output
                    arg = _escapes(arg)
                elif conv in "di" and not is_int(arg.strip()):
                    return None
                elif conv == "c":
                    arg = arg[:1]
                spec = fmt[k + 1:j]
                if "." in spec:
                    precision = spec.partition(".")[2]
                    if conv not in "sb" or not (precision.isdigit() or precision == "") or len(precision) > 4:
                        return None
                    arg = arg[:int(precision or "0")]
                width = spec.lstrip("-+ #0").split(".")[0]
                if width.isdigit() and int(width) < 4096:
                    arg = arg.ljust(int(width)) if "-" in spec else arg.rjust(int(width))
                out.append(arg)
            else:
                return None
            k = j + 1
        if not rest or not used:
            return "".join(out)


def _escapes(text):
    if "\\" not in text:
        return text
    from maestro.hooks.bash_lex_rare import ansi_c

    return ansi_c(text.replace("\\0", "\\"))
