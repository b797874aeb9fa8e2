"""The archive's compiled code, for the interpreter that runs it: build.py assembles the archive with
this, and install re-assembles the copy it publishes when the installing interpreter has another bytecode
version than the builder's.

The archive is the shebang line, the code bundle (maestro/bundle.py: every module's code object), then
the zip: the sources, the payload, shiv's parts, and unchecked-hash .pyc files for what zipimport itself
loads (COMPILED). A bundle and .pyc files of another bytecode version are not used (a Python 3.12
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
    return importlib.util.MAGIC_NUMBER + flags.to_bytes(4, "little") + importlib.util.source_hash(source) \
        + marshal.dumps(code)


def code_bundle(sources: dict) -> bytes:
    """maestro/bundle.py's bytes for `sources` ({'maestro/…py': source bytes}): every module's code but
    those zipimport loads, in path order."""
    index, blobs, offset = {}, [], 0
    for path in sorted(sources):
        if _PACKAGE + path in COMPILED:
            continue
        module = path[:-len(".py")].replace("/", ".")
        package = module.endswith(".__init__")
        if package:
            module = module[:-len(".__init__")]
        blob = marshal.dumps(compile(sources[path], path, "exec", dont_inherit=True, optimize=0))
        index[module] = (offset, len(blob), package, path)
        blobs.append(blob)
        offset += len(blob)
    head = marshal.dumps(index)
    return bundle.TAG + importlib.util.MAGIC_NUMBER + len(head).to_bytes(4, "little") + head + b"".join(blobs)


def assemble(shebang: bytes, entries, stamp) -> bytes:
    """The archive of `entries` ([(ZipInfo, bytes)], no .pyc), compiled by this interpreter; `stamp` is the
    date of the .pyc entries."""
    sources = {info.filename[len(_PACKAGE):]: data for info, data in entries
               if info.filename.startswith(_PACKAGE + "maestro/") and info.filename.endswith(".py")}
    compiled = []
    for info, data in entries:
        if info.filename in COMPILED:
            made = zipfile.ZipInfo(info.filename + "c", date_time=stamp)
            made.external_attr = info.external_attr
            path = info.filename[len(_PACKAGE):] if info.filename.startswith(_PACKAGE) else info.filename
            compiled.append((made, pyc(path, data)))
    buffer = io.BytesIO()
    buffer.write(shebang)
    buffer.write(code_bundle(sources))  # zip readers skip what precedes the zip, as they skip the shebang
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for info, data in sorted(entries + compiled, key=lambda item: item[0].filename):
            info.compress_type = zipfile.ZIP_STORED
            archive.writestr(info, data)
    return buffer.getvalue()


def compiled_for_this_python(data: bytes) -> bool:
    """Whether the archive `data` runs its bundle on this interpreter (True too without a bundle: an
    archive of an older build, whose .pyc files zipimport checks itself)."""
    start = data.find(b"\n") + 1
    at = start + len(bundle.TAG)
    return not start or data[start:at] != bundle.TAG or data[at:at + 4] == bundle.bytecode_magic()


def for_this_python(data: bytes) -> bytes:
    """The archive `data` with its code compiled by this interpreter: the same bytes when it already is
    (or when it has no bundle: an archive of an older build), else re-assembled from its sources."""
    if compiled_for_this_python(data):
        return data
    start = data.find(b"\n") + 1
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        entries = [(info, archive.read(info)) for info in archive.infolist() if not info.filename.endswith(".pyc")]
    stamp = min(info.date_time for info, _data in entries)
    return assemble(data[:start], entries, stamp)
