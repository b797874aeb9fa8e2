"""One locked unit of work on the store's files. Every write to a track file goes through here, so
the safety rules live in one place:

    with Transaction(layout) as tx:      # flock; refused while write-block.json says blocked
        entries = tx.read(path)          # drift guard: a non-canonical file is backed up, write refused
        tx.stage(path, entries + [new])  # must re-parse into exactly these entries
        tx.commit()                      # per file: temp + fsync + os.replace + dir fsync, re-read

Nothing reaches disk before `commit`, so a rule that fails half-way through a batch leaves every
file as it was. Files are committed in the order first staged (an archive before the live file it
is moved out of: a crash between the two leaves the entry in both, never in neither); when one
file's write fails, the files already written are restored. A writer killed mid-write leaves at
most its `.<file>.maestro-tmp-<pid>` temp file, which the next writer of that file removes.
A commit also refreshes the search index for the files it wrote (index.py; the index is a cache:
its failure never fails the write, and the next search's stat check repairs what it missed).
"""

import json
import os
import time

from maestro.util.atomic import make_private_dirs, write_all, write_atomic
from maestro.memory.store import entry as grammar
from maestro.memory.store.errors import StoreError
from maestro.memory.store.lock import StoreLock

TEMP_MARK = ".maestro-tmp-"  # maestro.util.atomic's temp-file infix


def check_write_block(layout) -> None:
    """Refuse while `.maestro-memory/write-block.json` says `"blocked": true`. An unreadable or
    malformed block file also refuses (fail closed): it exists because someone wanted writes held."""
    path = layout.write_block
    try:
        with open(path, "rb") as handle:
            raw = handle.read(65536)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"memory writes are blocked: cannot read {path}: {exc.strerror}; nothing was written",
                         "blocked") from None
    try:
        value = json.loads(raw.decode("utf-8"))
    except ValueError:
        value = None
    if not isinstance(value, dict) or not isinstance(value.get("blocked", False), bool):
        raise StoreError(f"memory writes are blocked: {path} is malformed (want {{\"blocked\": true|false}}); "
                         "fix or remove it; nothing was written", "blocked")
    if value.get("blocked"):
        raise StoreError(f"memory writes are blocked by {path} (\"blocked\": true); reads still work; "
                         "nothing was written", "blocked")


def read_entries(path: str) -> list:
    """Lenient read for listing: a missing file is empty; undecodable bytes become U+FFFD."""
    data = read_bytes(path)
    return grammar.parse_entries(data.decode("utf-8", "replace")) if data is not None else []


def read_bytes(path: str, note: str = ""):
    """A file's bytes, None when it is absent; any other failure is an `io` StoreError (`note` is
    appended to its message, e.g. what a failed write left untouched)."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}{note}", "io") from None


def _read_bytes(path: str):
    return read_bytes(path, "; nothing was written")


def backup(path: str, data: bytes) -> str:
    """`<file>.bak.<ms>` (0600, never overwritten); the same bytes already backed up are not copied again."""
    directory, base = os.path.split(path)
    for name in sorted(os.listdir(directory)):
        if name.startswith(base + ".bak."):
            other = os.path.join(directory, name)
            try:
                if os.path.getsize(other) == len(data) and _read_bytes(other) == data:
                    return other
            except (OSError, StoreError):
                continue
    stamp = int(time.time() * 1000)
    while True:
        candidate = f"{path}.bak.{stamp}"
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            stamp += 1
            continue
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        return candidate


def _sweep_temps(directory: str, base: str) -> None:
    prefix = f".{base}{TEMP_MARK}"
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if name.startswith(prefix):
            try:
                os.unlink(os.path.join(directory, name))
            except OSError:
                pass


def _write(path: str, data: bytes) -> None:
    directory = os.path.dirname(path)
    make_private_dirs(directory)
    _sweep_temps(directory, os.path.basename(path))
    write_atomic(path, data, 0o600)
    if _read_bytes(path) != data:
        raise StoreError(f"re-reading {path} after the write did not give back what was written", "io")


def _refresh_index(layout, paths) -> None:
    """Bring the search index (index.py) up to date with the files just written, still under the lock.
    Only when an index exists (the next search builds one), and never failing the committed write."""
    if not os.path.exists(os.path.join(layout.meta_dir, "index.sqlite3")):
        return
    from maestro.memory.store import index

    index.refresh_written(layout.root, paths)


class Transaction:
    def __init__(self, layout, timeout: float = None):
        self.layout = layout
        self.lock = StoreLock(layout.lock_file, timeout)
        self._files = {}  # path -> (bytes on disk or None, entries)
        self._staged = {}  # path -> entries; insertion order is commit order

    def __enter__(self):
        try:
            make_private_dirs(self.layout.meta_dir)
        except OSError as exc:
            raise StoreError(f"cannot create {self.layout.meta_dir}: {exc.strerror}; nothing was written",
                             "io") from None
        self.lock.__enter__()
        try:
            check_write_block(self.layout)
        except BaseException:
            self.lock.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        self._staged.clear()
        return self.lock.__exit__(*exc)

    def read(self, path: str) -> list:
        if path in self._staged:
            return list(self._staged[path])
        if path not in self._files:
            self.lock.respect_legacy(os.path.dirname(path))
            original = _read_bytes(path)
            self._files[path] = (original, self._checked(path, original))
        return list(self._files[path][1])

    def adopt(self, path: str, original, entries) -> None:
        """Take a file as it is on disk, past the drift guard: only repair, which exists to clear
        drift, does this. Commit then compares with and rolls back to exactly these bytes."""
        self.lock.respect_legacy(os.path.dirname(path))
        self._files[path] = (original, list(entries))

    @staticmethod
    def _checked(path: str, original) -> list:
        if not original:
            return []
        try:
            text = grammar.decode(original)
            why = None if grammar.is_canonical(text) else "not in canonical form"
        except grammar.EntryError:
            why = "not UTF-8"
        if why:
            try:
                saved = f"backed up to {backup(path, original)}"
            except OSError as exc:
                saved = f"could not back it up ({exc.strerror})"
            raise StoreError(f"drift: {path} is {why} (entries joined by a line holding only §, one trailing "
                             f"newline); {saved}; nothing was written", "drift")
        return grammar.parse_entries(text)

    def stage(self, path: str, entries) -> None:
        entries = list(entries)
        self.read(path)  # the drift guard covers every file written, not only those read first
        bad = [entry for entry in entries if not grammar.is_storable(entry)]
        if bad or grammar.parse_entries(grammar.serialize_entries(entries)) != entries:
            raise StoreError(f"refusing to write {path}: an entry would not read back as itself", "invalid")
        self._staged[path] = entries

    def commit(self) -> list:
        """Write every staged file that changed; return their paths."""
        written = []
        try:
            for path, entries in self._staged.items():
                original = self._files[path][0]
                data = grammar.serialize_entries(entries).encode("utf-8")
                if data == (original or b""):
                    continue
                _write(path, data)
                written.append((path, original, data, entries))
        except BaseException as exc:
            failed = self._rollback(written)
            if isinstance(exc, StoreError) and not failed:
                raise
            detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            restored = "; could not restore " + ", ".join(failed) if failed else "; nothing was changed"
            raise StoreError(f"write failed: {detail}{restored}", "io") from None
        for path, _original, data, entries in written:
            self._files[path] = (data, entries)
        self._staged.clear()
        paths = [item[0] for item in written]
        if paths:
            _refresh_index(self.layout, paths)
        return paths

    @staticmethod
    def _rollback(written) -> list:
        failed = []
        for path, original, _data, _entries in reversed(written):
            try:
                if original is None:
                    os.unlink(path)
                else:
                    _write(path, original)
            except (OSError, StoreError):
                failed.append(path)
        return failed
