"""A big track file is parsed from its end only (maestro/memory/store/tail.py): session-start at 20,000
entries was 12× the bare interpreter because every entry of every track was split and trimmed. The
snapshot must not change: same text and stats as parsing the whole file."""

import datetime
import hashlib

import pytest

from maestro.memory.store import snapshot, tail

pytestmark = pytest.mark.in_process
TODAY = datetime.date(2024, 5, 2)


def write(path, entries):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(("\n§\n".join(entries) + "\n").encode())


def entries(tag, count, size=300):
    return [f"[2024-04-01 09:00] [summary:{tag} {n}] {tag} entry {n} " + "é" * size for n in range(count)]


@pytest.fixture
def big_store(mem_root, tmp_path):
    project = str(tmp_path.resolve())
    directory = mem_root / "projects" / hashlib.sha1(project.encode()).hexdigest()[:12]
    write(mem_root / "MEMORY.md", entries("global", 2000))
    write(mem_root / "USER.md", entries("user", 30))  # small: parsed whole
    write(directory / "KEY.md", [f"[id:{n:08x}] [2024-04-01] [branch:{'main' if n % 3 else 'other'}] key {n} "
                                 + "k" * 400 for n in range(2000)])
    write(directory / "MEMORY.md", entries("project", 2000))
    return mem_root, project


def test_a_big_store_renders_exactly_as_a_whole_parse(big_store, monkeypatch):
    root, project = big_store
    fast = snapshot.render(str(root), project=project, branch="main", today=TODAY)
    monkeypatch.setattr(tail, "TAIL_BYTES", 1 << 40)  # everything parsed whole: the reference
    whole = snapshot.render(str(root), project=project, branch="main", today=TODAY)
    assert fast.text == whole.text
    for a, b in zip(fast.sections, whole.sections):
        if a.key == "key":  # with a branch, the unparsed head's entries of other branches count as dropped too
            assert (a.entries, a.bytes) == (b.entries, b.bytes) and a.dropped >= b.dropped
        else:
            assert a.as_dict() == b.as_dict()


def test_the_tail_grows_until_enough_visible_entries(tmp_path, monkeypatch):
    monkeypatch.setattr(tail, "TAIL_BYTES", 1024)
    path = tmp_path / "KEY.md"
    # the newest 50 entries are all another branch's: the reader must look further back
    write(path, [f"[id:{n:08x}] [branch:main] main {n}" for n in range(20)]
          + [f"[id:{n:08x}] [branch:other] other {n} " + "o" * 100 for n in range(20, 70)])
    found, before = tail.tail_entries(str(path), 12, [], lambda es: [e for e in es if "[branch:main]" in e])
    assert [e.split()[-1] for e in found] == [str(n) for n in range(8, 20)]
    assert before >= 8


def test_one_entry_bigger_than_the_chunk(tmp_path, monkeypatch):
    monkeypatch.setattr(tail, "TAIL_BYTES", 1024)
    path = tmp_path / "MEMORY.md"
    write(path, ["first", "huge " + "h" * 10_000, "last"])
    assert tail.tail_entries(str(path), 2, []) == (["huge " + "h" * 10_000, "last"], 1)
    assert tail.tail_entries(str(path), 5, []) == (["first", "huge " + "h" * 10_000, "last"], 0)


def test_a_bad_byte_in_the_tail_is_named_with_its_offset_in_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(tail, "TAIL_BYTES", 1024)
    path = tmp_path / "MEMORY.md"
    write(path, [f"entry {n} " + "x" * 100 for n in range(40)])
    data = bytearray(path.read_bytes())
    offset = len(data) - 20
    data[offset] = 0xFF
    path.write_bytes(bytes(data))
    damaged = []
    found, _ = tail.tail_entries(str(path), 3, damaged)
    assert damaged == [(str(path), f"not UTF-8 (byte {offset})")]
    assert "\ufffd" in found[-1]


def test_a_missing_file_is_empty(tmp_path):
    assert tail.tail_entries(str(tmp_path / "none.md"), 4, []) == ([], 0)


def test_without_counting_the_head_is_not_read(tmp_path, monkeypatch):
    monkeypatch.setattr(tail, "TAIL_BYTES", 1024)
    path = tmp_path / "MEMORY.md"
    write(path, [f"entry {n} " + "x" * 100 for n in range(40)])
    counted = tail.tail_entries(str(path), 3, [])
    uncounted = tail.tail_entries(str(path), 3, [], count=False)
    assert counted[0] == uncounted[0] and counted[1] == 37 and uncounted[1] < 37
