"""maestro's modules from the bundle of the built archive (maestro/install/archive_code.py writes it
between the shebang line and the zip; maestro/__init__.py installs this when imported from an archive).

Importing a module out of a zip costs zipimport a lookup, an open of the archive and a read; and zipimport
first reads the archive's whole directory, one entry at a time, in Python, before a hook's first line:
with a .py and a .pyc per module that was ~480 entries, ~2.5 ms of every hook. The bundle holds every
module's source and code object (all of maestro's but this one and the package itself, which zipimport
loads), so the zip keeps ~17 entries and each import is one positioned read of an already open file:

    <shebang line> TAG MAGIC(4) SIZE(4, little-endian)
    marshal({module: (code offset, code length, is_package, path, source offset, source length)})
    <code objects, marshal'd, and sources, at offsets from the end of the index> <the zip>

The code objects serve when MAGIC is this interpreter's bytecode version (install publishes the archive
compiled by the Python the hooks run with); otherwise each module is compiled from its source as it is
imported, as zipimport would. Tracebacks read the sources from here too. The file stays open for the
process: a long-lived command keeps reading the archive it started from even if an upgrade replaces it.
"""

import marshal
import os
import sys
from _imp import _fix_co_filename

TAG = b"maestro-bundle 2\n"
MAX_INDEX = 1 << 20  # the index of ~240 modules is ~25 KB
ENTRY_FIELDS = 6


def bytecode_magic() -> bytes:
    """This interpreter's .pyc magic number (importlib.util.MAGIC_NUMBER, without importing importlib.util)."""
    external = sys.modules.get("_frozen_importlib_external")
    magic = getattr(external, "MAGIC_NUMBER", None)
    if magic is None:  # pragma: no cover - an interpreter that names it otherwise
        from importlib.util import MAGIC_NUMBER as magic
    return magic


class Bundle:
    """A meta path finder and loader of the modules the bundle holds (none else)."""

    def __init__(self, archive: str, fd: int, index: dict, base: int, compiled: bool, spec_type):
        self.fd, self.index, self.base, self.compiled = fd, index, base, compiled
        self.archive, self.site = archive, f"{archive}/site-packages"
        self.spec_type = spec_type  # ModuleSpec, without importing importlib.machinery

    def find_spec(self, name, path=None, target=None):
        entry = self.index.get(name)
        if entry is None:
            return None
        spec = self.spec_type(name, self, origin=f"{self.site}/{entry[3]}", is_package=entry[2])
        spec.has_location = True  # __file__: where the source would sit in the archive, as zipimport says it
        if entry[2]:
            spec.submodule_search_locations = [f"{self.site}/{entry[3].rpartition('/')[0]}"]
        return spec

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(self.get_code(module.__spec__.name), module.__dict__)

    def _read(self, name, offset: int, length: int) -> bytes:
        data = os.pread(self.fd, length, self.base + offset)
        if len(data) != length:
            raise ImportError(f"maestro's code bundle is cut short at {name}", name=name)
        return data

    def get_code(self, name):
        offset, length, _package, path, source_offset, source_length = self.index[name]
        if self.compiled:
            code = marshal.loads(self._read(name, offset, length))
        else:
            code = compile(self._read(name, source_offset, source_length), path, "exec", dont_inherit=True)
        # The code names its file relatively ('maestro/…py', as built); a traceback's line would then be
        # read from that path under the current directory — a hook's cwd is the user's repository. Named
        # where the module lives, linecache asks this loader (get_source) instead, as importlib does it.
        _fix_co_filename(code, f"{self.site}/{path}")
        return code

    def get_source(self, name):
        _offset, _length, _package, _path, source_offset, source_length = self.index[name]
        return self._read(name, source_offset, source_length).decode("utf-8")

    def is_package(self, name) -> bool:
        return self.index[name][2]


def read_index(read):
    """(magic, index, offset of the code and sources) of the bundle of an archive whose bytes `read(length,
    offset)` returns, or None when there is none (no tag: an archive of an older build; a damaged index)."""
    head = read(4096, 0)
    start = head.find(b"\n") + 1
    at = start + len(TAG)
    if not start or head[start:at] != TAG:
        return None
    size = int.from_bytes(head[at + 4:at + 8], "little")
    if not 0 < size <= MAX_INDEX:
        return None
    data = read(size, at + 8)
    try:
        index = marshal.loads(data) if len(data) == size else None
    except (EOFError, ValueError, TypeError):
        return None
    if type(index) is not dict or not all(
            type(entry) is tuple and len(entry) == ENTRY_FIELDS for entry in index.values()):
        return None
    return head[at:at + 4], index, at + 8 + size


LOW_FDS = 10


def _above_low_numbers(fd: int) -> int:
    """`fd` moved to the lowest free number from LOW_FDS up: the archive is opened before any command runs,
    and a low number is someone's — fd 3 open at the start is the caller's progress channel (util/progress.py
    looks whether it is), and 0-2 are the standard streams a caller may have started us without."""
    if fd >= LOW_FDS:
        return fd
    for number in range(LOW_FDS, 1024):
        try:
            os.fstat(number)
        except OSError:  # free (EBADF): nothing else runs while the package is first imported
            os.dup2(fd, number, inheritable=False)
            os.close(fd)
            return number
    return fd  # pragma: no cover - a thousand descriptors open at start-up


def installed():
    """The Bundle serving maestro's modules in this process, or None (a source tree, an older archive)."""
    return next((finder for finder in sys.meta_path if type(finder) is Bundle), None)


def install(archive: str, spec_type) -> bool:
    """Serve maestro's modules from the bundle of `archive` (its code objects when they are this
    interpreter's bytecode version, else compiled from its sources); False (nothing installed) when the
    archive has no readable bundle."""
    try:
        fd = _above_low_numbers(os.open(archive, os.O_RDONLY))
    except OSError:
        return False
    try:
        found = read_index(lambda length, offset: os.pread(fd, length, offset))
    except OSError:
        found = None
    if found is None:
        os.close(fd)
        return False
    magic, index, base = found
    sys.meta_path.insert(0, Bundle(archive, fd, index, base, magic == bytecode_magic(), spec_type))
    return True
