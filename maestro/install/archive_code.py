"""The archive's compiled code, for the interpreter that runs it: build.py assembles the archive with
this, and install re-assembles the copy it publishes when the installing interpreter has another bytecode
version than the builder's.

The archive is the shebang line, the bundle (maestro/bundle.py: every module's code object and source),
then the zip: the payload, shiv's parts, and what zipimport itself loads (COMPILED: the source and an
unchecked-hash .pyc of each). A bundle and .pyc files of another bytecode version are not used (a Python 3.12
refuses 3.11's): every hook would then compile every module it imports from source, ~100 ms of a gate
call. The hooks run with the interpreter install ran with (install records it in their commands), so
the copy it publishes carries code compiled by that interpreter.
"""

import importlib.util
import io
import marshal
import zipfile

from maestro import bundle

# What zipimport loads from the zip (each gets a .pyc beside its source): the package, whose __init__
# installs the bundle, the bundle's reader, and the hooks' launcher at the archive's root.
COMPILED = ("site-packages/maestro/__init__.py", "site-packages/maestro/bundle.py", "maestro_hook.py")
_PACKAGE = "site-packages/"


def pyc(path: str, source: bytes) -> bytes:
    """A .pyc zipimport accepts without comparing timestamps (deterministic bytes)."""
    code = compile(source, path, "exec", dont_inherit=True, optimize=0)
    flags = 0b01  # hash-based, unchecked: the archive is immutable, so the source cannot drift
    return bundle.bytecode_magic() + flags.to_bytes(4, "little") + importlib.util.source_hash(source) \
        + marshal.dumps(code)


def code_bundle(sources: dict) -> bytes:
    """maestro/bundle.py's bytes for `sources` ({'maestro/…py': source bytes}, none of COMPILED): every
    module's code object and source, in path order."""
    index, codes, offset = {}, [], 0
    for path in sorted(sources):
        module = path[:-len(".py")].replace("/", ".")
        package = module.endswith(".__init__")
        if package:
            module = module[:-len(".__init__")]
        blob = marshal.dumps(compile(sources[path], path, "exec", dont_inherit=True, optimize=0))
        index[module] = [offset, len(blob), package, path]
        codes.append(blob)
        offset += len(blob)
    for module, entry in index.items():
        source = sources[entry[3]]
        index[module] = (*entry, offset, len(source))
        codes.append(source)
        offset += len(source)
    head = marshal.dumps(index)
    return bundle.TAG + bundle.bytecode_magic() + len(head).to_bytes(4, "little") + head + b"".join(codes)


def _bundled(name: str) -> bool:
    """A module whose source goes into the bundle rather than the zip."""
    return name.startswith(_PACKAGE + "maestro/") and name.endswith(".py") and name not in COMPILED \
        and "/payload/" not in name


def assemble(shebang: bytes, entries, stamp) -> bytes:
    """The archive of `entries` ([(ZipInfo, bytes)], no .pyc), compiled by this interpreter: maestro's
    modules in the bundle, the rest in the zip with a .pyc beside each of COMPILED; `stamp` is the date of
    the .pyc entries."""
    sources = {info.filename[len(_PACKAGE):]: data for info, data in entries if _bundled(info.filename)}
    kept = [(info, data) for info, data in entries if not _bundled(info.filename)]
    for info, data in list(kept):
        if info.filename in COMPILED:
            made = zipfile.ZipInfo(info.filename + "c", date_time=stamp)
            made.external_attr = info.external_attr
            path = info.filename[len(_PACKAGE):] if info.filename.startswith(_PACKAGE) else info.filename
            kept.append((made, pyc(path, data)))
    buffer = io.BytesIO()
    buffer.write(shebang)
    buffer.write(code_bundle(sources))  # zip readers skip what precedes the zip, as they skip the shebang
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for info, data in sorted(kept, key=lambda item: item[0].filename):
            info.compress_type = zipfile.ZIP_STORED
            archive.writestr(info, data)
    return buffer.getvalue()


def _found(data: bytes):
    return bundle.read_index(lambda length, offset: data[offset:offset + length])


def code_magic(path: str):
    """The bytecode version (magic number) of the code in the archive at `path`, or None (unreadable, or
    no bundle)."""
    try:
        with open(path, "rb") as handle:
            found = _found(handle.read())
    except OSError:
        return None
    return found[0] if found is not None else None


def bytecode_of(python: str):
    """The bytecode version (magic number) interpreter `python` runs, or None when it cannot say."""
    import subprocess

    try:
        done = subprocess.run([python, "-I", "-S", "-c", "import sys, importlib.util; "
                               "sys.stdout.buffer.write(importlib.util.MAGIC_NUMBER)"], capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 and len(done.stdout) == 4 else None


def for_this_python(data: bytes) -> bytes:
    """The archive `data` with its code compiled by this interpreter: the same bytes when it already is
    (or when it has no bundle: an archive of an older build), else re-assembled from its sources."""
    found = _found(data)
    if found is None or found[0] == bundle.bytecode_magic():
        return data
    _magic, index, base = found
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        entries = [(info, archive.read(info)) for info in archive.infolist() if not info.filename.endswith(".pyc")]
    stamp = min(info.date_time for info, _data in entries)
    for _offset, _length, _package, path, source_offset, source_length in index.values():
        info = zipfile.ZipInfo(_PACKAGE + path, date_time=stamp)
        info.external_attr = 0o100644 << 16
        entries.append((info, data[base + source_offset:base + source_offset + source_length]))
    return assemble(data[:data.index(b"\n") + 1], entries, stamp)
