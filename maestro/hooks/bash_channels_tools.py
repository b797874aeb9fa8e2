"""Utilities that write a file named on their command line (part of the bash_channels table).

- shuf -o F, sdiff -o F, openssl … -out/-keyout F, logsave F CMD (and CMD is run).
- csplit -f PREFIX, split … [PREFIX]: the piece names are generated (split's alphabetic suffixes
  reach `py`; csplit's -b format is free), so the write is a tree target on PREFIX's directory
  (cwd by default); split --filter=CMD runs CMD instead.
- ar x (into cwd or --output DIR: a tree), ar r/q/d/m (the archive file).
- mktemp [-p DIR | --tmpdir[=DIR] | -t] [TEMPLATE] [--suffix=S]: creates DIR/TEMPLATE+S (the X's
  random; random characters in the extension → a tree target on the directory); -u and -d write no file.
- gio remove|trash (delete), save (write), copy|move (the destination; move deletes sources), rename.
- perl -MExtUtils::Command -e rm_f|rm_rf|touch|mkpath|chmod|cp|mv|dos2unix FILES (extutils_command).
- python -m json.tool IN OUT, zipfile/tarfile -c/-e, gzip, lib2to3 -w (python_module_writes).
"""

import os

from maestro.hooks.bash_channels_common import has, into_dir, is_dir, scan, target, values
from maestro.hooks.targets import Run, Script, Target, Word


def _shuf(name, argv, cwd, env, home, depth):
    opts, _ = scan(argv[1:], "nio", ("head-count", "input-range", "output", "random-source"), "", (),
                   ("echo", "repeat", "zero-terminated", "help", "version"))
    return [target("shuf -o", "write", w, cwd) for w in values(opts, "o", "output")]


def _sdiff(name, argv, cwd, env, home, depth):
    opts, _ = scan(argv[1:], "oIw", ("output", "ignore-matching-lines", "width", "diff-program", "tabsize"))
    out = [target("sdiff -o", "write", w, cwd) for w in values(opts, "o", "output")]
    for word in values(opts, "diff-program"):
        out.append(Run([word]))
    return out


OPENSSL_OUTPUTS = frozenset(("out", "keyout", "certout", "writerand", "sigout", "outdir", "CAcreateserial",
                             "CAserial", "text_out"))


def _openssl(name, argv, cwd, env, home, depth):
    out = []
    args = argv[1:]
    for k, word in enumerate(args):
        value = word.value
        if value is None or not value.startswith("-"):
            continue
        option = value.lstrip("-")
        if option in OPENSSL_OUTPUTS and k + 1 < len(args):
            out.append(target("openssl -" + option, "write", args[k + 1], cwd, option == "outdir"))
    return out


def _logsave(name, argv, cwd, env, home, depth):
    opts, operands = scan(argv[1:], "", (), "", (), (), False)
    if not operands:
        return []
    return [target("logsave", "write", operands[0], cwd)] + ([Run(operands[1:])] if len(operands) > 1 else [])


def _prefix_dir(channel, prefix, cwd):
    """The directory generated names land in: PREFIX's directory (a tree target)."""
    if prefix is None:
        return Target(channel, "write", ".", "the current directory", cwd, True)
    if prefix.value is None:
        return Target(channel, "write", None, prefix.raw, cwd)
    head = os.path.dirname(prefix.value) or "."
    return Target(channel, "write", head, prefix.raw, cwd, True)


def _csplit(name, argv, cwd, env, home, depth):
    opts, operands = scan(argv[1:], "bfn", ("suffix-format", "prefix", "digits"), "", (),
                          ("keep-files", "suppress-matched", "quiet", "silent", "elide-empty-files", "help",
                           "version"))
    if has(opts, "help", "version") or not operands:
        return []
    prefixes = values(opts, "f", "prefix")
    return [_prefix_dir("csplit", prefixes[-1] if prefixes else None, cwd)]


def _split(name, argv, cwd, env, home, depth):
    opts, operands = scan(argv[1:], "abClnt", ("suffix-length", "bytes", "line-bytes", "lines", "number",
                                                "separator", "additional-suffix", "filter"),
                          "", ("numeric-suffixes", "hex-suffixes"), ("elide-empty-files", "unbuffered", "verbose",
                                                                       "help", "version"))
    if has(opts, "help", "version"):
        return []
    filters = values(opts, "filter")
    if filters:  # the pieces go to the command's stdin ($FILE names them)
        return [Script("sh", w.value, w.raw) if w.value is not None else Target("split --filter", "run", None,
                                                                                   w.raw, cwd) for w in filters]
    return [_prefix_dir("split", operands[1] if len(operands) > 1 else None, cwd)]


def _ar(name, argv, cwd, env, home, depth):
    args = [w for w in argv[1:]]
    output = None
    k = 0
    while k < len(args) and args[k].value is not None and args[k].value.startswith("--"):
        key, eq, attached = args[k].value.partition("=")
        if key in ("--plugin", "--target", "--output") and not eq:
            k += 1
            attached_word = args[k] if k < len(args) else None
        else:
            attached_word = Word(attached, attached, args[k].literal)
        if key == "--output":
            output = attached_word
        k += 1
    if k >= len(args):
        return []
    key_word = args[k]
    if key_word.value is None:
        return [Target("ar", "write", None, key_word.raw, cwd)]
    letters = key_word.value.lstrip("-")
    rest = []
    words = args[k + 1:]
    j = 0
    while j < len(words):  # long options may follow the key too
        value = words[j].value or ""
        if value == "--output" or value.startswith("--output="):
            output = words[j + 1] if value == "--output" and j + 1 < len(words) else Word(
                value[9:], value[9:], words[j].literal)
            j += 2 if value == "--output" else 1
            continue
        rest.append(words[j])
        j += 1
    if "x" in letters:
        if output is not None:
            return [target("ar x --output", "extract into", output, cwd, True)]
        return [Target("ar x", "extract into", ".", "the current directory", cwd, True)]
    if any(c in letters for c in "rqdms"):
        skip = (1 if any(c in letters for c in "abi") else 0) + (1 if "N" in letters else 0)
        if len(rest) > skip:
            return [target("ar", "write", rest[skip], cwd)]
    return []


def _mktemp(name, argv, cwd, env, home, depth):
    opts, operands = scan(argv[1:], "p", ("suffix",), "", ("tmpdir",), ("directory", "dry-run", "quiet",
                                                                         "help", "version"))
    if has(opts, "d", "directory", "u", "dry-run", "help", "version"):
        return []
    dirs = [w for key, w in opts if key in ("p", "tmpdir")]
    directory = dirs[-1] if dirs else None
    tmpdir = (env or {}).get("TMPDIR") or "/tmp"
    if directory is None and has(opts, "tmpdir"):
        directory = Word(tmpdir, tmpdir, True)
    template = operands[0] if operands else Word("tmp.XXXXXXXXXX", "tmp.XXXXXXXXXX", True)
    if directory is None and (not operands or has(opts, "t")):
        directory = Word(tmpdir, tmpdir, True)
    suffix = values(opts, "suffix")
    if template.value is None or (directory is not None and directory.value is None) or (
            suffix and suffix[-1].value is None):
        unknown = template if template.value is None else (directory if directory and directory.value is None
                                                           else suffix[-1])
        return [Target("mktemp", "create", None, unknown.raw, cwd)]
    path = os.path.join(directory.value, template.value) if directory is not None else template.value
    path += suffix[-1].value if suffix else ""
    base = os.path.basename(path)
    if "X" in base.rpartition(".")[2] or "." not in base and base.endswith("X"):
        return [Target("mktemp", "create", os.path.dirname(path) or ".", path, cwd, True)]  # random extension
    return [Target("mktemp", "create", path, path, cwd)]


def _gio(name, argv, cwd, env, home, depth):
    args = argv[1:]
    if not args or args[0].value not in ("remove", "rm", "trash", "save", "move", "mv", "copy", "cp", "rename"):
        return [Target("gio", "run", None, args[0].raw, cwd)] if args and args[0].value is None else []
    verb = args[0].value
    words = []
    for word in args[1:]:
        value = word.value
        if value is not None and value.startswith("-") and value != "-":
            continue
        if value is not None and "://" in value:
            if not value.startswith("file://"):
                continue  # another host or a virtual file system
            value = value[7:]
            word = Word(value, word.raw, word.literal)
        words.append(word)
    channel = "gio " + verb
    if verb in ("remove", "rm", "trash"):
        return [target(channel, "delete", w, cwd, is_dir(w, cwd) is not False) for w in words]
    if verb == "save":
        return [target(channel, "write", w, cwd) for w in words[:1]]
    if verb == "rename":
        if len(words) < 2 or words[0].value is None or words[1].value is None:
            return [target(channel, "change", w, cwd) for w in words[:1]] + (
                [Target(channel, "write", None, words[1].raw, cwd)] if len(words) > 1 else [])
        new = os.path.join(os.path.dirname(words[0].value), words[1].value)
        return [target(channel, "delete", words[0], cwd), Target(channel, "write", new, new, cwd)]
    if len(words) < 2:
        return []
    sources, dest = words[:-1], words[-1]
    dest_is_dir = len(sources) > 1 or is_dir(dest, cwd)
    out = [into_dir(channel, "write", dest, s, cwd) if dest_is_dir else target(channel, "write", dest, cwd)
           for s in sources]
    if verb in ("move", "mv"):
        out += [target(channel, "delete", s, cwd, is_dir(s, cwd) is not False) for s in sources]
    return out


# ------------------------------------------------------------------------ perl -MExtUtils::Command

EXTUTILS_WRITERS = ("rm_f", "rm_rf", "touch", "mkpath", "chmod", "cp", "mv", "dos2unix", "eqtime")


def extutils_command(codes, operands, cwd):
    """`perl -MExtUtils::Command -e FUNC FILES`: FUNC takes its files from @ARGV."""
    code = "\n".join(w.value for w in codes if w.value is not None).strip().rstrip(";").strip()
    if code.endswith("()"):
        code = code[:-2]
    channel = "perl ExtUtils::Command " + code
    files = [w for w in operands if w.value != "--"]
    if code in ("rm_f", "rm_rf"):
        return [target(channel, "delete", w, cwd, code == "rm_rf") for w in files]
    if code in ("touch", "mkpath", "dos2unix"):
        return [target(channel, "change" if code != "mkpath" else "write", w, cwd, code == "mkpath")
                for w in files]
    if code in ("chmod", "eqtime"):
        return [target(channel, "change", w, cwd) for w in files[1:]]
    if code in ("cp", "mv"):
        if len(files) < 2:
            return []
        sources, dest = files[:-1], files[-1]
        out = [into_dir(channel, "write", dest, s, cwd) if len(sources) > 1 else
               target(channel, "write", dest, cwd, True) for s in sources]
        return out + ([target(channel, "delete", s, cwd) for s in sources] if code == "mv" else [])
    if any(name in code for name in EXTUTILS_WRITERS) or any(w.value is None for w in codes):
        # code calling the functions some other way: any file named may be written
        return [target("perl ExtUtils::Command", "change", w, cwd) for w in files] or [
            Target("perl ExtUtils::Command", "change", None, codes[0].raw, cwd)]
    return []


# ------------------------------------------------------------------------ python -m <stdlib module>


def python_module_writes(module, rest, cwd):
    """Stdlib modules whose command line names a file they write; other modules write nothing here."""
    name = module.value
    channel = "python -m " + name
    opts_words = [w for w in rest if w.value is not None and w.value.startswith("-") and w.value != "-"]
    flags = {w.value for w in opts_words}
    operands = [w for w in rest if w.value is None or not w.value.startswith("-") or w.value == "-"]
    if name == "json.tool":
        operands = [w for k, w in enumerate(rest) if (w.value is None or not w.value.startswith("-"))
                    and not (k and rest[k - 1].value == "--indent")]
        return [target(channel, "write", w, cwd) for w in operands[1:2] if w.value != "-"]
    if name in ("zipfile", "tarfile"):
        if flags & {"-c", "--create"} and operands:
            return [target(channel + " -c", "write", operands[0], cwd)]
        if flags & {"-e", "--extract"} and operands:
            if len(operands) > 1:
                return [target(channel + " -e", "extract into", operands[1], cwd, True)]
            return [Target(channel + " -e", "extract into", ".", "the current directory", cwd, True)]
        return []
    if name == "gzip":
        decompress = bool(flags & {"-d", "--decompress"})
        out = []
        for w in operands:
            if w.value is None:
                out.append(Target(channel, "write", None, w.raw, cwd))
            elif decompress:
                out.append(Target(channel, "write", w.value[:-3] if w.value.endswith(".gz") else w.value, w.raw,
                                  cwd))
            else:
                out.append(Target(channel, "write", w.value + ".gz", w.raw + ".gz", cwd))
        return out
    if name in ("lib2to3", "2to3") and flags & {"-w", "--write"}:
        return [target(channel + " -w", "change", w, cwd, is_dir(w, cwd) is not False) for w in operands]
    return []


HANDLERS = {"shuf": _shuf, "sdiff": _sdiff, "openssl": _openssl, "logsave": _logsave, "csplit": _csplit,
            "split": _split, "ar": _ar, "mktemp": _mktemp, "gio": _gio}
