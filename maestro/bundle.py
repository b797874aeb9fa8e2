"""maestro's modules from the code bundle of the built archive (build.py writes it between the shebang
line and the zip; maestro/__init__.py installs this when imported from an archive).

Importing a module out of a zip costs zipimport a lookup, an open of the archive and a read; and zipimport
first reads the archive's whole directory, one entry at a time, in Python: with a .pyc beside each .py
that directory was ~480 entries, ~2.5 ms of every hook before its first line. The bundle holds every
module's code object (all of maestro's but this one and the package itself, which zipimport loads), so the
zip keeps only the sources (~250 entries) and each import is one positioned read of an already open file:

    <shebang line> TAG MAGIC(4) SIZE(4, little-endian) marshal({module: (offset, length, is_package, path)})
    <code objects, marshal'd, at offset from the end of the index> <the zip>

Used only when MAGIC is this interpreter's bytecode version (the Python that built the archive, or one of
the same minor version); otherwise nothing is installed and zipimport compiles the .py sources, as it
would for any zip. A bundle that does not read back whole is not used either. The file stays open for the
process: a long-lived command keeps reading the archive it started from even if an upgrade replaces it.
"""

import marshal
import os
import sys

TAG = b"maestro-bundle 1\n"
MAX_INDEX = 1 << 20  # the index of ~240 modules is ~20 KB


def bytecode_magic() -> bytes:
    """This interpreter's .pyc magic number (importlib.util.MAGIC_NUMBER, without importing importlib.util)."""
    external = sys.modules.get("_frozen_importlib_external")
    magic = getattr(external, "MAGIC_NUMBER", None)
    if magic is None:  # pragma: no cover - an interpreter that names it otherwise
        from importlib.util import MAGIC_NUMBER as magic
    return magic


class Bundle:
    """A meta path finder and loader of the modules the bundle holds (none else)."""

    def __init__(self, package_spec, fd: int, index: dict, base: int):
        self.fd, self.index, self.base = fd, index, base
        self.site = package_spec.submodule_search_locations[0].rpartition("/")[0]  # <archive>/site-packages
        self.sources = package_spec.loader  # a zipimporter: its type reads .py sources for tracebacks
        self.spec_type = type(package_spec)  # ModuleSpec, without importing importlib.machinery

    def find_spec(self, name, path=None, target=None):
        entry = self.index.get(name)
        if entry is None:
            return None
        spec = self.spec_type(name, self, origin=f"{self.site}/{entry[3]}", is_package=entry[2])
        spec.has_location = True  # __file__: where the source sits in the archive, as zipimport would say
        if entry[2]:
            spec.submodule_search_locations = [f"{self.site}/{entry[3].rpartition('/')[0]}"]
        return spec

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(self.get_code(module.__spec__.name), module.__dict__)

    def get_code(self, name):
        offset, length, _package, _path = self.index[name]
        data = os.pread(self.fd, length, self.base + offset)
        if len(data) != length:
            raise ImportError(f"maestro's code bundle is cut short at {name}", name=name)
        return marshal.loads(data)

    def get_source(self, name):
        """The module's .py in the archive (tracebacks show its lines), through a zipimporter of the
        folder that holds it (zipimport looks a name up by its last part, in its own folder)."""
        path, package = self.index[name][3], self.index[name][2]
        folder = path.rpartition("/")[0]
        if package:
            folder = folder.rpartition("/")[0]
        return type(self.sources)(f"{self.site}/{folder}/").get_source(name)

    def is_package(self, name) -> bool:
        return self.index[name][2]


def read_index(fd: int):
    """(index, offset of the code) of the bundle in the open archive, or None when there is none this
    interpreter can run (no tag, another magic, a damaged index)."""
    head = os.pread(fd, 4096, 0)
    start = head.find(b"\n") + 1
    at = start + len(TAG)
    if not start or head[start:at] != TAG or head[at:at + 4] != bytecode_magic():
        return None
    size = int.from_bytes(head[at + 4:at + 8], "little")
    if not 0 < size <= MAX_INDEX:
        return None
    data = os.pread(fd, size, at + 8)
    try:
        index = marshal.loads(data) if len(data) == size else None
    except (EOFError, ValueError, TypeError):
        return None
    if type(index) is not dict or not all(type(entry) is tuple and len(entry) == 4 for entry in index.values()):
        return None
    return index, at + 8 + size


def install(package_spec) -> bool:
    """Serve maestro's modules from the bundle of the archive `package_spec` (maestro's, as zipimport
    made it) was loaded from; False (nothing installed) when there is no usable bundle."""
    archive = getattr(package_spec.loader, "archive", None)
    if not archive or not package_spec.submodule_search_locations:
        return False
    try:
        fd = os.open(archive, os.O_RDONLY)
    except OSError:
        return False
    try:
        found = read_index(fd)
    except OSError:
        found = None
    if found is None:
        os.close(fd)
        return False
    sys.meta_path.insert(0, Bundle(package_spec, fd, *found))
    return True
