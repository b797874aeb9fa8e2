"""The suggestion queue (spec memory.md §2.12), the domain under `memory suggest` and `memory queue`
(the commands: maestro/commands/memory/suggest.py and queue.py).

`SUGGESTIONS.jsonl` under the store root holds one JSON object a line, dsh-maestro-memory's fields
`{time, target, content, reason, cwd, sessionId, hits, firstSeen, lastSeen}` plus ours: `n`, the
suggestion's number, and `branches` (key only). A suggestion with the same target and the same
normalised content (whitespace collapsed, case folded; for project tracks, the same project)
raises `hits` instead of adding a line. Content and reason are sanitized before they are queued.

Numbers are stable: `n` is given once, when a suggestion is queued, and never reused (the next
number lives in `.maestro-memory/queue.json`), so `queue list` numbers do not shift when another
suggestion is decided, and two `queue approve 3` racing each other land once: the second finds
no suggestion 3. dsh lines without `n` are numbered in file order after the highest number.

    approve N [--text T]  writes through `Store.add` (sanitizer, stamp, key id, dedupe); an added
                          or duplicate entry leaves the queue, a failed write stays queued. For the
                          key track this is the only way a model-originated entry lands.
    reject N              removes the suggestion; no track is touched.
    archive N             appends the suggestion to its track's archive (<TRACK>-archive.md) and
                          removes it from the queue; the live track is not touched.

Every change runs inside `Store.transaction()` (the lock, the write-block), and the queue file is
rewritten atomically (temp + fsync + rename + re-read). A queue file with a line that is not a
JSON object is backed up and the write refused (the drift guard's rule).
"""

import json
import os
from dataclasses import dataclass

from maestro.util.atomic import write_atomic
from maestro.memory.store import compose
from maestro.memory.store import layout
from maestro.memory.store import entry as grammar
from maestro.memory.store.errors import StoreError
from maestro.memory.store.tracks import Store, clean_text, shown
from maestro.memory.store.txn import backup, check_write_block, make_private_dirs
from maestro.memory.store.txn import read_bytes as _read
from maestro.util.tokens import token_hex

QUEUE_FILE = "SUGGESTIONS.jsonl"
SEQ_FILE = "queue.json"
FIELDS = ("n", "time", "target", "content", "reason", "cwd", "sessionId", "hits", "firstSeen", "lastSeen",
          "branches")


@dataclass(frozen=True)
class Decision:
    action: str  # approved | duplicate | rejected | archived
    item: dict
    entry: str = None
    file: str = None


def normalise(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def parse(data, path: str = QUEUE_FILE, strict: bool = True) -> list:
    """The queued items in file order. Strict: a bad line is an error; lenient: it is skipped."""
    items = []
    text = (data or b"").decode("utf-8", "strict" if strict else "replace") if data else ""
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            item = None
        if not isinstance(item, dict) or not isinstance(item.get("target"), str) \
                or not isinstance(item.get("content"), str):
            if strict:
                raise StoreError(f"{path} line {number} is not a suggestion (a JSON object with target and "
                                 "content)", "drift")
            continue
        items.append(item)
    return items


def serialize(items) -> bytes:
    return "".join(json.dumps(item, ensure_ascii=False, separators=(",", ":")) + "\n" for item in items).encode()


def _number(items, next_n: int) -> int:
    """Give `n` to the items without one (dsh's), in file order; return the next free number."""
    top = max([next_n - 1] + [i["n"] for i in items if isinstance(i.get("n"), int) and i["n"] > 0])
    for item in items:
        if not (isinstance(item.get("n"), int) and item["n"] > 0):
            top += 1
            item["n"] = top
    return top + 1


def suggestion_fields(item) -> dict:
    """A queued item with every field of FIELDS, in that order (absent ones None): the `--json` shape."""
    return {name: item.get(name) for name in FIELDS}


class Queue:
    def __init__(self, store: Store = None):
        self.store = store or Store()

    @property
    def path(self) -> str:
        return os.path.join(self.store.root, QUEUE_FILE)

    @property
    def seq_path(self) -> str:
        return os.path.join(self.store.layout.meta_dir, SEQ_FILE)

    def _next(self) -> int:
        try:
            value = json.loads((_read(self.seq_path) or b"{}").decode("utf-8")).get("next", 1)
        except (ValueError, AttributeError, UnicodeDecodeError):
            value = 1
        return value if isinstance(value, int) and value > 0 else 1

    def items(self) -> list:
        """Lenient, unlocked read for listing: the numbers are the ones a decision would use."""
        items = parse(_read(self.path), self.path, strict=False)
        _number(items, self._next())
        return items

    def _load(self):
        data = _read(self.path)
        try:
            items = parse(data, self.path)
        except (StoreError, UnicodeDecodeError) as exc:
            saved = backup(self.path, data)
            message = exc.message if isinstance(exc, StoreError) else f"{self.path} is not UTF-8"
            raise StoreError(f"drift: {message}; backed up to {saved}; nothing was written", "drift") from None
        next_n = _number(items, self._next())
        return data, items, next_n

    def _save(self, original, items, next_n: int) -> None:
        data = serialize(items)
        make_private_dirs(self.store.root)
        if data != (original or b""):
            write_atomic(self.path, data, 0o600)
            if _read(self.path) != data:
                raise StoreError(f"re-reading {self.path} after the write did not give back what was written", "io")
        write_atomic(self.seq_path, json.dumps({"next": next_n}).encode(), 0o600)

    # --- suggest ---------------------------------------------------------------------------

    def suggest(self, track: str, text, cwd: str = None, branches=(), reason: str = None,
                session_id: str = None):
        """(the queued item, whether it was already queued and only its hits were raised)."""
        check_write_block(self.store.layout)
        track = layout.track_name(track)
        content = clean_text(text)
        reason = clean_text(reason, "reason") if reason else None
        branches = [b.strip() for b in branches or () if b and b.strip()]
        if branches and track != "key":
            raise StoreError(f"--branch applies to the key track only (not {track})", "usage")
        for name in branches:
            if not compose.BRANCH_NAME.fullmatch(name):
                raise StoreError(f"invalid branch name {shown(name)!r}", "usage")
        if track in layout.PROJECT_TRACKS:
            where = layout.project_root(cwd)
        else:
            where = os.path.realpath(cwd) if cwd else None
        now = self.store.clock().isoformat(timespec="seconds")
        with self.store.transaction():
            original, items, next_n = self._load()
            key = (track, normalise(content), where if track in layout.PROJECT_TRACKS else None)
            for item in items:
                other = (layout.ALIASES.get(item["target"], item["target"]), normalise(item["content"]),
                         item.get("cwd") if track in layout.PROJECT_TRACKS else None)
                if other == key and (item.get("branches") or []) == branches:
                    item["hits"] = (item.get("hits") if isinstance(item.get("hits"), int) else 1) + 1
                    item["lastSeen"] = now
                    self._save(original, items, next_n)
                    return item, True
            item = {"n": next_n, "time": now, "target": track, "content": content, "reason": reason, "cwd": where,
                    "sessionId": session_id, "hits": 1, "firstSeen": now, "lastSeen": now}
            if branches:
                item["branches"] = branches
            self._save(original, items + [item], next_n + 1)
        return item, False

    # --- decisions -------------------------------------------------------------------------

    def _decide(self, n, action: str, text: str = None) -> Decision:
        check_write_block(self.store.layout)
        try:
            n = int(n)
        except (TypeError, ValueError):
            raise StoreError(f"invalid suggestion number {str(n)[:20]!r} (see `memory queue list`)", "usage") from None
        with self.store.transaction() as tx:
            original, items, next_n = self._load()
            hits = [i for i in items if i["n"] == n]
            if not hits:
                raise StoreError(f"no suggestion {n} in the queue (see `memory queue list`)", "no_match")
            item = hits[0]
            rest = [i for i in items if i is not item]
            if action == "reject":
                decision = Decision("rejected", item)
            elif action == "approve":
                result = self.store.add(item["target"], text if text is not None else item["content"],
                                        cwd=item.get("cwd"), branches=item.get("branches") or ())
                decision = Decision("duplicate" if result.duplicate else "approved", item, result.entry, result.file)
            else:
                decision = self._archive(tx, item)
            self._save(original, rest, next_n)
        return decision

    def _archive(self, tx, item) -> Decision:
        track = layout.track_name(item["target"])
        target = self.store.target(track, item.get("cwd"))
        if target.archive is None:
            raise StoreError(f"the {track} track has no archive; reject the suggestion instead", "usage")
        entries = tx.read(target.archive)
        ids = {grammar.entry_id(e) for e in entries} - {None}
        new_id = token_hex(4)
        while new_id in ids:
            new_id = token_hex(4)
        stored = compose.compose(track, clean_text(item["content"]), self.store.clock(), new_id,
                                 tuple(item.get("branches") or ()))
        if compose.dedupe_key(stored) not in {compose.dedupe_key(e) for e in entries}:
            tx.stage(target.archive, entries + [stored])
            tx.commit()
        return Decision("archived", item, stored, target.archive)

    def approve(self, n, text: str = None) -> Decision:
        return self._decide(n, "approve", text)

    def reject(self, n) -> Decision:
        return self._decide(n, "reject")

    def archive(self, n) -> Decision:
        return self._decide(n, "archive")
