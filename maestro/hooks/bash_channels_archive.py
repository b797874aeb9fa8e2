"""Write channels of archivers, compressors and downloaders (part of the bash_channels table).

- tar -x/--extract (also old-style `tar xzf a.tgz`): the -C/--directory directory or the cwd, as a
  tree ("extract into"); -O/--to-stdout writes nothing; -P/--absolute-names may write anywhere
  (unresolved). -c/-r/-u/-A/--delete write the -f archive (not `-`). -t/-d read.
- unzip (-d DIR or the cwd as a tree; -l/-t/-p/-c/-Z/-v read), zip (the archive; -m deletes what it
  moves in), 7z x/e (-oDIR) and a/u/d/rn, cpio -i/-p.
- gzip/gunzip/bzip2/bunzip2/xz/unxz/lzma/unlzma/zstd/unzstd: the output beside each file (its
  suffix added or removed) is written and the input deleted (not with -k/--keep, zstd only with
  --rm); -c/--stdout, -t, -l write nothing; zstd -o FILE.
- curl -o FILE / --output, -O/--remote-name (basename of the URL path; --remote-name-all),
  --output-dir DIR, -J (the server names it: the directory as a tree), -D/-c/--trace/--stderr/
  --libcurl/--etag-save files; -K config: unresolved. A bare `curl URL` writes to stdout: nothing.
- wget: -O FILE (`-O -` is stdout); -P DIR; the basename of each URL (index.html for a directory)
  in DIR or the cwd; recursive/mirror/page-requisites/-i/--content-disposition: the directory as a
  tree; -o/-a log files, --save-cookies; `-e output_document=…` like -O.
"""

import os

from maestro.hooks.bash_channels_common import has, is_dir, scan, target, values
from maestro.hooks.targets import Script, Target, Word

TAR_ARG_LETTERS = "bCfFgHIKLNTVX"
TAR_LONG_ARG = ("file", "directory", "blocking-factor", "info-script", "new-volume-script", "listed-incremental",
                "format", "use-compress-program", "starting-file", "tape-length", "after-date", "newer",
                "newer-mtime", "files-from", "label", "exclude-from", "exclude", "transform", "xform", "to-command",
                "owner", "group", "mode", "mtime", "index-file", "checkpoint-action", "rsh-command", "volno-file",
                "record-size", "warning", "strip-components", "sort", "quoting-style", "exclude-tag",
                "exclude-tag-all", "exclude-tag-under", "hole-detection", "level", "pax-option", "group-map",
                "owner-map", "add-file")
TAR_LONG_OPT = ("backup", "occurrence", "atime-preserve", "checkpoint", "suffix")
TAR_MODES = {"x": "x", "extract": "x", "get": "x", "c": "w", "create": "w", "r": "w", "append": "w", "u": "w",
             "update": "w", "A": "w", "catenate": "w", "concatenate": "w", "delete": "w", "t": "r", "list": "r",
             "d": "r", "diff": "r", "compare": "r", "test-label": "r"}


def _tar(name, argv, cwd, env, home, depth):
    args = list(argv[1:])
    opts = []
    if args and args[0].value and not args[0].value.startswith("-") and args[0].value.isalpha():
        bundle, args = args[0].value, args[1:]  # old style: `tar czf out.tgz src`, arguments in order
        for letter in bundle:
            if letter in TAR_ARG_LETTERS:
                opts.append((letter, args[0] if args else None))
                args = args[1:]
            else:
                opts.append((letter, None))
    found, operands = scan(args, TAR_ARG_LETTERS, TAR_LONG_ARG, "", TAR_LONG_OPT, ("remove-files",))
    opts += found
    modes = [TAR_MODES[key] for key, _ in opts if key in TAR_MODES]
    if not modes:
        unknown = [w for w in argv[1:] if w.value is None]
        return [Target("tar", "write", None, unknown[0].raw, cwd)] if unknown else []
    out = [Script("sh", w.value, w.raw) if w.value is not None else Target("tar", "run", None, w.raw, cwd)
           for w in values(opts, "to-command", "I", "use-compress-program")]
    for word in values(opts, "checkpoint-action"):
        if word.value is None or word.value.startswith("exec="):
            out.append(Script("sh", word.value[5:], word.raw) if word.value else
                       Target("tar", "run", None, word.raw, cwd))
    out += [target("tar", "write", w, cwd) for w in values(opts, "g", "listed-incremental", "index-file",
                                                           "volno-file")]
    if has(opts, "remove-files"):  # deletes every file it archived, wherever the option stands
        moved = values(opts, "C", "directory")  # operands are taken under -C: not followed here
        out += [target("tar --remove-files", "delete", w, cwd, is_dir(w, cwd) is not False) if not moved else
                Target("tar --remove-files", "delete", None, w.raw, cwd) for w in operands]
    if "x" in modes:
        if has(opts, "O", "to-stdout") or values(opts, "to-command"):
            return out
        dirs = values(opts, "C", "directory")
        if dirs:  # each -C is taken relative to the previous one (links restored: see bash_writes)
            path = None if any(w.value is None for w in dirs) else os.path.join(*[w.value for w in dirs])
            out.append(Target("tar -x", "extract into", path, dirs[-1].raw, cwd, True))
        else:
            out.append(Target("tar -x", "extract into", ".", "the current directory", cwd, True))
        if has(opts, "P", "absolute-names"):
            out.append(Target("tar -xP", "extract into", None, "any directory (absolute member names)", cwd))
    elif "w" in modes:
        out += [target("tar", "write", w, cwd) for w in values(opts, "f", "file") if w.value != "-"]
    return out


def _unzip(name, argv, cwd, env, home, depth):
    args = argv[1:]
    flags = ""
    dest = None
    operands = []
    excluding = False
    i = 0
    while i < len(args):
        word = args[i]
        value = word.value
        i += 1
        # after -x the words are exclude patterns up to the next unzip option; `--help` is not one
        # (`-x --help` excludes a file named --help and still extracts)
        if value is not None and value.startswith("-") and len(value) > 1 and not (
                excluding and value.startswith("--")):
            excluding = False
            letters = value[1:]
            for k, letter in enumerate(letters):
                if letter == "d":
                    dest = Word(letters[k + 1:], letters[k + 1:], word.literal) if letters[k + 1:] else (
                        args[i] if i < len(args) else None)
                    i += 0 if letters[k + 1:] else 1
                    break
                if letter == "P":
                    i += 0 if letters[k + 1:] else 1
                    break
                if letter == "x":
                    excluding = True
                flags += letter
        elif not excluding:
            operands.append(word)
    if not operands or any(letter in flags for letter in "ltpcZvzh"):
        return []
    if dest is not None:
        return [Target("unzip", "extract into", dest.value, dest.raw, cwd, True)]
    return [Target("unzip", "extract into", ".", "the current directory", cwd, True)]


def _zip(name, argv, cwd, env, home, depth):
    from maestro.hooks.bash_channels_interp import code_script

    commands = []
    for k, word in enumerate(argv[1:], start=1):
        key, eq, attached = (word.value or word.raw).partition("=")
        if key in ("-TT", "--unzip-command", "--unzip-comman", "--unzip-comma"):
            # zip -T tests the archive with this command, run by the shell
            command = Word(attached, attached, word.literal) if eq else (argv[k + 1] if k + 1 < len(argv) else None)
            if command is not None:
                commands.append(code_script("sh", "zip -TT", command))
    return commands + _zip_writes(argv, cwd)


def _zip_writes(argv, cwd):
    # -T tests the archive after writing it: still a write; -TT/--unzip-command take a word
    opts, operands = scan(argv[1:], "bnOPstZ", ("out", "password", "split-size", "suffixes", "temp-path",
                                                 "compression-method", "unzip-command"))
    if not operands or has(opts, "h", "help", "v", "version"):
        return []
    out = [target("zip", "write", w, cwd) for w in values(opts, "O", "out") or operands[:1] if w.value != "-"]
    if has(opts, "m", "move"):
        recursive = has(opts, "r", "R", "recurse-paths")
        out += [target("zip -m", "delete", w, cwd, recursive) for w in operands[1:] if w.value != "-"]
    return out


def _7z(name, argv, cwd, env, home, depth):
    words = [w for w in argv[1:] if not (w.value or "").startswith("-")]
    switches = [w.value for w in argv[1:] if (w.value or "").startswith("-")]
    if not words or words[0].value is None:
        return [Target(name, "write", None, words[0].raw, cwd)] if words else []
    command = words[0].value
    if command in ("x", "e"):
        for switch in switches:
            if switch.startswith("-o") and len(switch) > 2:
                return [Target(name + " " + command, "extract into", switch[2:], switch[2:], cwd, True)]
        return [Target(name + " " + command, "extract into", ".", "the current directory", cwd, True)]
    if command in ("a", "u", "d", "rn") and len(words) > 1:
        return [target(name + " " + command, "write", words[1], cwd)]
    return []


def _cpio(name, argv, cwd, env, home, depth):
    opts, operands = scan(argv[1:], "DEFHIMORs", ("directory", "file", "format", "pattern-file", "message",
                                                  "owner", "block-size", "io-size", "rsh-command", "to-command"))
    if has(opts, "t", "list", "to-stdout"):
        return []
    out = [target("cpio", "write", w, cwd) for w in values(opts, "O", "F", "file") if has(opts, "o", "create")]
    if has(opts, "i", "extract"):
        dirs = values(opts, "D", "directory")
        out.append(Target("cpio -i", "extract into", dirs[-1].value, dirs[-1].raw, cwd, True) if dirs else
                   Target("cpio -i", "extract into", ".", "the current directory", cwd, True))
    if has(opts, "p", "pass-through"):
        out += [Target("cpio -p", "write", w.value, w.raw, cwd, True) for w in operands[:1]]
    return out


COMPRESSORS = {  # name -> (decompresses by default, keeps its input by default, suffixes: compressed → plain)
    "gzip": (False, False, ((".tgz", ".tar"), (".taz", ".tar"), (".gz", ""), ("-gz", ""), (".z", ""), ("-z", ""),
                            ("_z", ""), (".Z", ""))),
    "bzip2": (False, False, ((".tbz2", ".tar"), (".tbz", ".tar"), (".bz2", ""), (".bz", ""))),
    "xz": (False, False, ((".txz", ".tar"), (".xz", ""), (".tlz", ".tar"), (".lzma", ""))),
    "lzma": (False, False, ((".tlz", ".tar"), (".lzma", ""))),
    "zstd": (False, True, ((".tzst", ".tar"), (".zst", ""))),
}
DEFAULT_SUFFIX = {"gzip": ".gz", "bzip2": ".bz2", "xz": ".xz", "lzma": ".lzma", "zstd": ".zst"}
UNCOMPRESSORS = {"gunzip": "gzip", "bunzip2": "bzip2", "unxz": "xz", "unlzma": "lzma", "unzstd": "zstd"}


def _compressor(name, argv, cwd, env, home, depth):
    family = UNCOMPRESSORS.get(name, name)
    decompress, keep, suffixes = COMPRESSORS[family]
    opts, operands = scan(argv[1:], "SbTLo#", ("suffix", "threads", "memlimit", "format", "block-size",
                                                "output", "files-with-names", "patch-from"))
    decompress = (decompress or name in UNCOMPRESSORS or has(opts, "d", "decompress", "uncompress")) and \
        not has(opts, "z", "compress")
    keep = (keep or has(opts, "k", "keep")) and not has(opts, "rm")
    if has(opts, "c", "stdout", "to-stdout", "t", "test", "l", "list", "h", "help", "V", "version", "L"):
        return []
    custom = [w.value for w in values(opts, "S", "suffix") if w.value]
    if custom:
        suffixes = tuple((s, "") for s in custom) + suffixes
    default = custom[0] if custom else DEFAULT_SUFFIX[family]
    outputs = values(opts, "o", "output")
    recursive = has(opts, "r", "recursive")
    channel = name + (" -d" if decompress and name not in UNCOMPRESSORS else "")
    out = [target(channel, "write", w, cwd) for w in outputs if w.value != "-"]
    for word in operands:
        value = word.value
        if value == "-":
            continue
        if value is None or recursive:
            out.append(target(channel, "write", word, cwd, recursive))
        elif not outputs:
            if decompress:
                plain = next((value[:-len(s)] + p for s, p in suffixes if value.endswith(s) and len(value) > len(s)),
                             None)
                if plain is None:
                    continue  # "unknown suffix -- ignored"
                out.append(Target(channel, "write", plain, plain, cwd))
            else:
                out.append(Target(channel, "write", value + default, word.raw + default, cwd))
        if not keep:
            out.append(target(channel, "delete", word, cwd, recursive))
    return out


def _url_basename(url):
    path = url.partition("?")[0].partition("#")[0]
    scheme, sep, rest = path.partition("://")
    path = rest if sep else scheme
    return path.partition("/")[2].rpartition("/")[2]


CURL_SHORT_ARG = "AbcCdDeEFHKmoPQrtTuUwxXYyz"
CURL_LONG_ARG = (
    "output", "output-dir", "user-agent", "cookie", "cookie-jar", "continue-at", "data", "data-ascii",
    "data-binary", "data-raw", "data-urlencode", "json", "dump-header", "referer", "cert", "cacert", "capath",
    "key", "form", "form-string", "header", "proxy-header", "config", "max-time", "connect-timeout", "ftp-port",
    "quote", "range", "telnet-option", "upload-file", "user", "proxy-user", "write-out", "proxy", "request",
    "speed-time", "speed-limit", "time-cond", "trace", "trace-ascii", "stderr", "libcurl", "etag-save",
    "etag-compare", "hsts", "alt-svc", "retry", "retry-delay", "retry-max-time", "max-filesize", "max-redirs",
    "limit-rate", "resolve", "connect-to", "interface", "dns-servers", "url", "oauth2-bearer", "aws-sigv4",
    "unix-socket", "abstract-unix-socket", "noproxy", "preproxy", "socks5", "socks5-hostname", "socks4",
    "socks4a", "local-port", "keepalive-time", "expect100-timeout", "variable", "url-query", "create-file-mode",
    "pinnedpubkey", "ciphers", "tls-max", "cert-type", "key-type", "pass", "netrc-file", "parallel-max", "rate",
    "request-target", "proto", "proto-redir", "proto-default", "mail-from", "mail-rcpt", "proxy-cacert")
CURL_WRITES = ("D", "dump-header", "c", "cookie-jar", "trace", "trace-ascii", "stderr", "libcurl", "etag-save",
               "hsts", "alt-svc")


def _curl(name, argv, cwd, env, home, depth):
    opts, urls = scan(argv[1:], CURL_SHORT_ARG, CURL_LONG_ARG, "", (), (
        "remote-name", "remote-name-all", "remote-header-name", "create-dirs", "location", "silent"))
    if has(opts, "h", "help", "V", "version", "M", "manual"):
        return []
    out = [target("curl", "write", w, cwd) for w in values(opts, *CURL_WRITES) if w.value not in ("-", "%")]
    out += [Target("curl -K", "write files named in", None, w.raw, cwd) for w in values(opts, "K", "config")]
    urls = urls + values(opts, "url")
    dirs = values(opts, "output-dir")
    directory = dirs[-1] if dirs else Word(".", "the current directory", True)
    outputs = [(key, word) for key, word in opts if key in ("o", "output", "O", "remote-name")]
    if has(opts, "remote-name-all"):
        outputs += [("O", None)] * max(0, len(urls) - len(outputs))
    header_named = has(opts, "J", "remote-header-name")
    for k, (key, word) in enumerate(outputs):
        if key in ("o", "output"):
            if word is not None and word.value != "-":
                out.append(_in_dir("curl -o", word, directory if dirs else None, cwd))
            continue
        url = urls[k] if k < len(urls) else None
        if url is None:
            continue
        base = _url_basename(url.value) if url.value is not None else None
        if header_named or base is None or any(c in base for c in "[]{}"):
            out.append(Target("curl -O", "write", directory.value, directory.raw, cwd, True))
        elif base:
            out.append(_in_dir("curl -O", Word(base, base, True), directory, cwd))
    return out


def _in_dir(channel, word, directory, cwd):
    if directory is None or word.value is None or word.value.startswith("/") or directory.value == ".":
        return target(channel, "write", word, cwd)
    if directory.value is None:
        return Target(channel, "write", None, directory.raw, cwd)
    joined = os.path.join(directory.value, word.value)
    return Target(channel, "write", joined, joined, cwd)


WGET_SHORT_ARG = "OoaPitTwQUeBlARDIX"
WGET_LONG_ARG = (
    "output-document", "output-file", "append-output", "directory-prefix", "input-file", "tries", "timeout",
    "wait", "quota", "user-agent", "execute", "base", "level", "accept", "reject", "domains",
    "include-directories", "exclude-directories", "header", "post-data", "post-file", "body-data", "body-file",
    "method", "user", "password", "http-user", "http-password", "load-cookies", "save-cookies", "cut-dirs",
    "default-page", "referer", "limit-rate", "restrict-file-names", "ca-certificate", "certificate",
    "private-key", "bind-address", "dns-timeout", "connect-timeout", "read-timeout", "waitretry",
    "proxy-user", "proxy-password", "local-encoding", "remote-encoding", "warc-file", "config", "progress",
    "accept-regex", "reject-regex", "regex-type", "rejected-log", "exclude-domains", "ftp-user",
    "ftp-password", "secure-protocol", "ca-directory", "certificate-type", "private-key-type", "backups")
WGET_TREE = ("r", "recursive", "m", "mirror", "p", "page-requisites", "content-disposition", "x",
             "force-directories", "i", "input-file", "trust-server-names")


def _wget(name, argv, cwd, env, home, depth):
    args = [w for w in argv[1:] if w.value not in ("-nd", "-nH", "-nc", "-nv", "-np")]
    opts, urls = scan(args, WGET_SHORT_ARG, WGET_LONG_ARG)
    if has(opts, "h", "help", "V", "version"):
        return []
    documents = values(opts, "O", "output-document")
    prefixes = values(opts, "P", "directory-prefix")
    out = [target("wget", "write", w, cwd) for w in values(opts, "o", "output-file", "a", "append-output",
                                                            "save-cookies", "rejected-log", "warc-file")]
    out += [Target("wget --config", "write files named in", None, w.raw, cwd) for w in values(opts, "config")]
    for word in values(opts, "e", "execute"):
        key, _, setting = (word.value or "").partition("=")
        key = key.strip().lower().replace("_", "").replace("-", "")
        if word.value is None:
            out.append(Target("wget -e", "write", None, word.raw, cwd))
        elif key == "outputdocument":
            documents.append(Word(setting.strip(), setting.strip(), True))
        elif key == "dirprefix":
            prefixes.append(Word(setting.strip(), setting.strip(), True))
        elif key in ("logfile", "savecookies"):
            out.append(Target("wget -e", "write", setting.strip(), setting.strip(), cwd))
    if has(opts, "spider"):
        return out
    if documents:
        return out + [target("wget -O", "write", w, cwd) for w in documents[-1:] if w.value != "-"]
    directory = prefixes[-1] if prefixes else Word(".", "the current directory", True)
    if has(opts, *WGET_TREE):
        return out + [Target("wget", "write", directory.value, directory.raw, cwd, True)]
    for url in urls:
        base = _url_basename(url.value) if url.value is not None else None
        if base is None:
            out.append(Target("wget", "write", directory.value, directory.raw, cwd, True))
        else:
            out.append(_in_dir("wget", Word(base or "index.html", base or "index.html", True), directory, cwd))
    return out


HANDLERS = {"tar": _tar, "unzip": _unzip, "zip": _zip, "7z": _7z, "7za": _7z, "7zr": _7z, "cpio": _cpio,
            "curl": _curl, "wget": _wget}
HANDLERS.update({name: _compressor for name in list(COMPRESSORS) + list(UNCOMPRESSORS)})
