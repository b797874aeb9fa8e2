"""Write channels of file tools (part of the bash_channels table): coreutils and friends, rsync, find.

Verbs read as "<channel> would <action> <word>":
- cp/install/scp/rsync destinations "write"; mv destinations "move onto" and each mv source is a
  "delete" (a move removes it); ln destinations "create", and a hard link's source is a
  "hard-link" (a second name for a source file is a way around the gate: it is judged as the
  source itself). A directory destination (an existing directory, a trailing `/`, several sources,
  `-t DIR`) receives DIR/basename(source) for each source.
- rm/unlink/rmdir/shred "delete" (`rm -r` a directory: tree), truncate "truncate", touch "create"
  only when the file does not exist yet, tee/dd of=/sort -o/uniq OUT/sponge/xxd OUT "write".
- patch: the file operand, else the files the patch names: a tree target on the directory it
  applies in (GNU patch refuses absolute and `..` names); `-o FILE` writes FILE; --dry-run: nothing.
- find: `-delete` deletes each starting point as a tree; `-exec/-execdir/-ok/-okdir CMD ;|+` runs
  CMD with `{}` unknown; `-fprint/-fprint0/-fprintf/-fls FILE` write FILE.
"""

import os

from maestro.hooks.bash_channels_common import (as_link_maker, chdir, has, into_dir, is_dir, resolve, scan, target,
                                                under_dir, values)
from maestro.hooks.targets import Run, Target, Word

COPY_LONG_ARG = ("target-directory", "suffix", "sparse", "no-preserve", "mode", "owner", "group",
                 "strip-program")
COPY_LONG_OPT = ("backup", "preserve", "reflink", "context", "update")
COPY_FLAGS = ("no-target-directory", "recursive", "force", "interactive", "no-clobber", "archive", "verbose",
              "link", "symbolic-link", "dereference", "no-dereference", "parents", "one-file-system",
              "remove-destination", "strip-trailing-slashes", "attributes-only", "copy-contents", "debug",
              "directory", "compare", "preserve-timestamps", "preserve-context", "strip", "exchange",
              "relative", "logical", "physical", "help", "version")


def _copy_like(name, argv, cwd, env, home, depth):
    """cp, mv, install, ln, link, scp: destination (and mv's sources, ln's hard-link sources)."""
    short_arg = {"cp": "tS", "mv": "tS", "install": "tSmog", "ln": "tS", "scp": "cFiJlPoSc", "link": ""}[name]
    opts, operands = scan(argv[1:], short_arg, COPY_LONG_ARG, "", COPY_LONG_OPT, COPY_FLAGS)
    if has(opts, "help", "version") or (name == "install" and has(opts, "d", "directory")):
        return []
    channel = name
    action = {"mv": "move onto", "ln": "create", "link": "create"}.get(name, "write")
    no_dir = has(opts, "T", "no-target-directory")
    operands = list(operands)
    if name == "scp":
        if operands and operands[-1].value is not None and _is_remote(operands[-1].value):
            return []  # an upload: the destination is on another host
        operands[:-1] = [Word(w.value.partition(":")[2], w.raw, w.literal) if w.value and _is_remote(w.value)
                         else w for w in operands[:-1]]
    into = values(opts, "t", "target-directory")
    if into:
        sources, dest = operands, into[-1]
    elif name == "ln" and len(operands) == 1:
        sources, dest = operands, Word(".", ".", True)  # `ln TARGET`: a link named basename(TARGET) here
    elif len(operands) >= 2:
        sources, dest = operands[:-1], operands[-1]
    else:
        return []  # a missing operand: the program fails
    recursive = has(opts, "r", "R", "a", "recursive", "archive")
    symbolic = name in ("ln", "cp") and has(opts, "s", "symbolic", "symbolic-link")
    hard_links = (name in ("ln", "link") and not symbolic) or (name == "cp" and has(opts, "l", "link"))
    out = []
    dest_is_dir = not no_dir and (bool(into) or len(sources) > 1 or
                                  (is_dir(dest, cwd) if not (name == "ln" and has(opts, "n", "no-dereference"))
                                   else dest.value is not None and dest.value.endswith("/")))
    for source in sources:
        # a directory copied or moved whole (or one made earlier in the command): the destination
        # is a tree, not judged by its name (`cp -r /tmp/x.md src/` creates src/x.md/app.py)
        tree = (name == "mv" or recursive) and _maybe_dir(source, cwd)
        if dest_is_dir:
            landed = into_dir(channel, action, dest, source, cwd)
            if tree and _is_dir(source, cwd):
                landed.tree = True  # an existing directory lands whole: its name says nothing
            elif tree and landed.path is not None:
                # a source that does not exist yet may be a directory made earlier in the command:
                # judged by where it lands (the destination directory's contents)
                out.append(Target(channel, action, dest.value, dest.raw, cwd, True))
            out.append(landed)
        else:
            tree = _is_dir(source, cwd) if name == "mv" else tree
            out.append(Target(channel, action, dest.value, dest.raw, cwd, tree))
        if name == "mv":
            out.append(target("mv", "delete", source, cwd, _is_dir(source, cwd)))
        elif hard_links:
            out.append(target(name, "hard-link", source, cwd, recursive and _maybe_dir(source, cwd)))
        elif symbolic:
            out += _link_target(name, source, dest, dest_is_dir, cwd, home)
    return out


def _link_target(name, source, dest, dest_is_dir, cwd, home):
    """`ln -s SRC LINK`, `cp -s SRC LINK`: a write through LINK later in the command writes SRC, so
    the link is judged as a write to what it points to (relative SRC is taken from LINK's directory)."""
    channel = name + " -s"
    if source.value is None or dest.value is None:
        return [Target(channel, "link to", None, source.raw, cwd)]
    link_dir = dest.value if dest_is_dir else os.path.dirname(dest.value.rstrip("/"))
    if _in_scratch(link_dir, cwd, home):
        return []  # a link in scratch (`ln -s src/a.py /tmp/link`) is free; the engine follows writes through it
    path = source.value
    if not path.startswith("/"):
        path = os.path.join(link_dir, path) if link_dir else path
    full = resolve(path, cwd)
    tree = full is None or os.path.isdir(full)
    return [Target(channel, "link to", path, source.raw, cwd, tree)]


def _in_scratch(directory, cwd, home):
    full = resolve(directory or ".", cwd)
    if full is None:
        return False
    from maestro.hooks.classify import scratch_roots

    full = os.path.realpath(full)
    return any(full == root or full.startswith(root.rstrip("/") + "/") for root in scratch_roots(home))


def _maybe_dir(word, cwd):
    """True when the word names an existing directory or something not known to be a regular file."""
    full = resolve(word.value, cwd)
    return full is None or not os.path.isfile(full)


def _is_dir(word, cwd):
    full = resolve(word.value, cwd)
    return full is not None and os.path.isdir(full)


def _is_remote(value):
    """`host:path`, `user@host:path`, `host::module`, `rsync://…` (no `/` before the first `:`)."""
    head, colon, _ = value.partition(":")
    return bool(colon) and bool(head) and "/" not in head


def _rsync(name, argv, cwd, env, home, depth):
    opts, operands = scan(argv[1:], "efBTM@", (
        "rsh", "rsync-path", "filter", "exclude", "include", "exclude-from", "include-from", "files-from",
        "block-size", "backup-dir", "suffix", "temp-dir", "compare-dest", "copy-dest", "link-dest", "log-file",
        "partial-dir", "chmod", "chown", "usermap", "groupmap", "timeout", "contimeout", "port", "password-file",
        "bwlimit", "max-size", "min-size", "max-delete", "modify-window", "out-format", "log-file-format",
        "remote-option", "iconv", "protocol", "checksum-choice", "compress-choice", "compress-level",
        "skip-compress", "sockopts", "info", "debug", "stop-after", "stop-at", "write-batch",
        "only-write-batch", "read-batch", "address", "outbuf", "early-input", "checksum-seed"))
    out = [target("rsync", "write", word, cwd) for word in values(
        opts, "log-file", "write-batch", "only-write-batch")]
    out += [target("rsync --backup-dir", "write", word, cwd, True) for word in values(opts, "backup-dir")]
    if has(opts, "dry-run", "n", "list-only", "help", "version") or len(operands) < 2:
        return out if not has(opts, "n", "dry-run") else []
    sources, dest = operands[:-1], operands[-1]
    if dest.value is None or not _is_remote(dest.value):
        out.append(target("rsync", "write", dest, cwd, bool(is_dir(dest, cwd) is not False or len(sources) > 1
                                                          or has(opts, "r", "a", "recursive", "archive"))))
    if has(opts, "remove-source-files", "remove-sent-files"):
        out += [target("rsync --remove-source-files", "delete", word, cwd, _maybe_dir(word, cwd))
                for word in sources if word.value is None or not _is_remote(word.value)]
    return out


def _remove(name, argv, cwd, env, home, depth):
    opts, operands = scan(argv[1:], "", (), "", ("interactive", "preserve-root", "remove", "random-source",
                                                  "iterations", "size"),
                          ("force", "recursive", "dir", "verbose", "one-file-system", "no-preserve-root",
                           "ignore-fail-on-non-empty", "parents", "exact", "zero", "help", "version"))
    if name == "shred":
        opts, operands = scan(argv[1:], "ns", ("iterations", "size", "random-source", "remove"), "",
                              ("remove",), ("force", "exact", "zero", "verbose", "help", "version"))
    if has(opts, "help", "version"):
        return []
    recursive = name == "rm" and has(opts, "r", "R", "recursive")
    out = []
    for word in operands:
        tree = name == "rmdir" or (recursive and _maybe_dir(word, cwd))
        out.append(target(name, "delete", word, cwd, tree))
        if name == "rmdir" and has(opts, "p", "parents") and word.value:
            parent = os.path.dirname(word.value.rstrip("/"))
            while parent and parent not in ("/", ".", "//") and len(out) < 256:
                out.append(Target(name, "delete", parent, parent, cwd, True))
                parent, previous = os.path.dirname(parent), parent
                if parent == previous:
                    break
    return out


def _touch(name, argv, cwd, env, home, depth):
    opts, operands = scan(argv[1:], "drt", ("date", "reference", "time"), "", (),
                          ("no-create", "no-dereference", "help", "version"))
    if has(opts, "c", "no-create", "help", "version"):
        return []
    out = []
    for word in operands:
        full = resolve(word.value, cwd)
        if full is None or not os.path.lexists(full):
            out.append(target("touch", "create", word, cwd))
    return out


def _truncate(name, argv, cwd, env, home, depth):
    opts, operands = scan(argv[1:], "sr", ("size", "reference"), "", (),
                          ("no-create", "io-blocks", "help", "version"))
    return [target("truncate", "truncate", word, cwd) for word in operands]


def _tee(name, argv, cwd, env, home, depth):
    opts, operands = scan(argv[1:], "", (), "", ("output-error",), ("append", "ignore-interrupts", "help",
                                                                    "version"))
    return [target("tee", "write", word, cwd) for word in operands if word.value != "-"]


def _dd(name, argv, cwd, env, home, depth):
    out = []
    for word in argv[1:]:
        if word.value is not None and word.value.startswith("of="):
            path = word.value[3:]
            out.append(Target("dd of=", "write", path, path, cwd))
        elif word.value is None and word.raw.lstrip("'\"").startswith("of="):
            out.append(Target("dd of=", "write", None, word.raw, cwd))
    return out


def _sort(name, argv, cwd, env, home, depth):
    opts, operands = scan(argv[1:], "kotST", ("key", "output", "field-separator", "buffer-size",
                                              "temporary-directory", "batch-size", "compress-program",
                                              "files0-from", "parallel", "random-source", "sort"))
    return [target("sort -o", "write", word, cwd) for word in values(opts, "o", "output")]


def _second_operand(name, argv, cwd, env, home, depth):
    """uniq IN OUT, xxd IN OUT: the second operand is written."""
    short_arg = {"uniq": "fsw", "xxd": "cglosn"}[name]  # uniq -D is a flag (--all-repeated)
    opts, operands = scan(argv[1:], short_arg, ("skip-fields", "skip-chars", "check-chars", "group",
                                                 "all-repeated", "cols", "groupsize", "len", "seek", "name"))
    return [target(name, "write", operands[1], cwd)] if len(operands) >= 2 else []


def _sponge(name, argv, cwd, env, home, depth):
    opts, operands = scan(argv[1:])
    return [target("sponge", "write", word, cwd) for word in operands[:1]]


def _iconv(name, argv, cwd, env, home, depth):
    opts, operands = scan(argv[1:], "fto", ("from-code", "to-code", "output"))
    return [target("iconv -o", "write", word, cwd) for word in values(opts, "o", "output")]


def _dos2unix(name, argv, cwd, env, home, depth):
    opts, operands = scan(argv[1:], "c", ("convmode", "from-code"), "", (), ("newfile", "oldfile"))
    if has(opts, "n", "newfile"):  # -n IN OUT pairs: the OUTs are written
        return [target(name, "write", word, cwd) for word in operands[1::2]]
    return [target(name, "change", word, cwd) for word in operands]


def _fallocate(name, argv, cwd, env, home, depth):
    opts, operands = scan(argv[1:], "lo", ("length", "offset"))
    return [target("fallocate", "write", word, cwd) for word in operands]


def _rename(name, argv, cwd, env, home, depth):
    """rename/prename: every file operand moves to a name computed by an expression: fail closed."""
    opts, operands = scan(argv[1:], "e", ("expr",), "", (), ("no-act", "help", "version", "verbose", "force"))
    if has(opts, "n", "no-act", "help", "version") or len(operands) < 2:
        return []
    files = operands[1:] if not values(opts, "e", "expr") else operands
    if name == "rename" and not values(opts, "e", "expr") and len(operands) >= 3 and "/" not in (
            operands[0].value or "/"):
        files = operands[2:]  # util-linux: rename FROM TO FILES…
    out = [target(name, "delete", word, cwd) for word in files]
    return out + [Target(name, "write", None, "<the new names>", cwd)]


FIND_ONE_ARG = frozenset((
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname", "-ilname",
    "-newer", "-anewer", "-cnewer", "-perm", "-type", "-xtype", "-user", "-group", "-uid", "-gid", "-size",
    "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-used", "-inum", "-links", "-samefile",
    "-maxdepth", "-mindepth", "-fstype", "-context", "-printf", "-regextype", "-files0-from", "-D", "-O",
))


def _find(name, argv, cwd, env, home, depth):
    args = argv[1:]
    i = 0
    while i < len(args):
        value = args[i].value or ""
        if value in ("-H", "-L", "-P") or (value[:2] in ("-O", "-D") and len(value) > 2):
            i += 1
        elif value == "-D":
            i += 2
        else:
            break
    starts = []
    while i < len(args) and (args[i].value is None or (args[i].value[:1] not in ("-", "(", "!")
                                                         and args[i].value not in (")", ","))):
        starts.append(args[i])
        i += 1
    if not starts and not any(w.value == "-files0-from" for w in args):
        starts = [Word(".", ".", True)]
    out = []
    while i < len(args):
        value = args[i].value
        i += 1
        if value is None:
            continue
        if value == "-delete":
            out += [target("find -delete", "delete", word, cwd, True) for word in starts]
            if any(w.value == "-files0-from" for w in args):
                out.append(Target("find -delete", "delete", None, "-files0-from", cwd))
        elif value in ("-exec", "-execdir", "-ok", "-okdir"):
            inner = []
            after_braces = False
            while i < len(args):
                word = args[i]
                i += 1
                if word.value == ";" or (word.value == "+" and after_braces):
                    break
                after_braces = word.value == "{}"
                if word.value is not None and "{}" in word.value:
                    word = Word(None, word.raw, False)  # the found file's name: unknown here
                inner.append(word)
            if inner and value in ("-execdir", "-okdir"):
                out += under_dir(inner, None)  # runs in each file's own directory
            elif inner:
                out.append(Run(inner))
        elif value in ("-fprint", "-fprint0", "-fls", "-fprintf") and i < len(args):
            out.append(target("find " + value, "write", args[i], cwd))
            i += 2 if value == "-fprintf" else 1
        elif value in FIND_ONE_ARG or value.startswith("-newer"):
            i += 1
    return out


def _patch(name, argv, cwd, env, home, depth):
    opts, operands = scan(argv[1:], "iodpBDFrVYzg", (
        "input", "output", "directory", "strip", "prefix", "ifdef", "fuzz", "reject-file", "version-control",
        "basename-prefix", "suffix", "get", "quoting-style", "reject-format", "read-only"), "", ("backup-if-mismatch",
                                                                                               "merge"),
        ("dry-run", "help", "version"))
    if has(opts, "dry-run", "help", "version"):
        return []
    out = [target("patch -r", "write", w, cwd) for w in values(opts, "r", "reject-file") if w.value != "-"]
    outputs = values(opts, "o", "output")
    if outputs:
        return out + [target("patch -o", "write", w, cwd) for w in outputs if w.value != "-"]
    if operands:
        return out + [target("patch", "change", operands[0], cwd)]
    dirs = values(opts, "d", "directory")
    where = chdir(cwd, dirs[-1]) if dirs else cwd
    return out + [Target("patch", "change", ".", "the files named in the patch", where, True)]


def _link_copier(name, argv, cwd, env, home, depth):
    """cp -a/-P/-d/-r/-R/--no-dereference and rsync -a/-l copy symlinks as symlinks: what they write
    may be a link leading anywhere, so a later write under it is unresolved (LinkTarget)."""
    found = _copy_like(name, argv, cwd, env, home, depth) if name == "cp" else _rsync(name, argv, cwd, env,
                                                                                        home, depth)
    letters, longs = ("aPdrR", ("archive", "no-dereference", "recursive")) if name == "cp" else (
        "al", ("archive", "links", "copy-unsafe-links", "safe-links"))
    for word in argv[1:]:
        value = word.value or ""
        if value == "--":
            break
        if value.startswith("--") and len(value) > 3 and any(
                known.startswith(value[2:].partition("=")[0]) for known in longs):
            return as_link_maker(found)
        if value.startswith("-") and not value.startswith("--") and any(c in letters for c in value[1:]):
            return as_link_maker(found)
    return found


HANDLERS = {name: _copy_like for name in ("mv", "install", "ln", "link", "scp")}
HANDLERS["cp"] = _link_copier
HANDLERS.update({name: _remove for name in ("rm", "unlink", "rmdir", "shred")})
HANDLERS.update({
    "touch": _touch, "truncate": _truncate, "tee": _tee, "dd": _dd, "sort": _sort, "uniq": _second_operand,
    "xxd": _second_operand, "sponge": _sponge, "iconv": _iconv, "dos2unix": _dos2unix, "unix2dos": _dos2unix,
    "fallocate": _fallocate, "rsync": _link_copier, "rename": _rename, "prename": _rename, "file-rename": _rename,
    "find": _find, "patch": _patch,
})
