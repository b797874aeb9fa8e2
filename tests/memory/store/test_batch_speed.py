"""`memory batch` is linear in its size (issue 11 §5: 10,000 entries ≤ 10 s; it was 5,882 entries in 223 s
because every add re-read, re-keyed and re-staged the whole file) and writes the same bytes as adding the
same entries one by one. Speed is checked by counting work, never by the wall clock."""

import itertools

import pytest

from maestro.memory.store import compose, tracks
from maestro.memory.store.tracks import AddRequest

pytestmark = pytest.mark.in_process


@pytest.fixture
def ids(monkeypatch):
    """Entry ids from a counter, so two runs give the same bytes."""

    def reset():
        counter = itertools.count()
        monkeypatch.setattr(tracks, "token_hex", lambda n: f"{next(counter):0{2 * n}x}")

    reset()
    return reset


def requests(project):
    out = []
    for i in range(30):
        out.append(AddRequest("global", f"decision {i % 22}: keep the cache"))  # 8 duplicates inside the batch
        out.append(AddRequest("key", f"rule {i} for the release", cwd=str(project), branches=("main",)))
        out.append(AddRequest("daily", f"note {i}", date=f"2024-04-0{1 + i % 3}"))
    out.append(AddRequest("daily", "idle"))
    return out


def test_a_batch_writes_the_bytes_adding_one_by_one_writes(mem_root, tmp_path, clock, project, ids):
    first = tracks.Store(str(mem_root), clock=clock)
    first.add("global", "decision 3: keep the cache")  # a duplicate of one already on disk
    results = first.batch(requests(project))
    ids()
    other = tmp_path / "one-by-one"
    second = tracks.Store(str(other), clock=clock)
    second.add("global", "decision 3: keep the cache")
    singles = [second.add(r.track, r.text, r.cwd, r.branches, r.summary, r.date) for r in requests(project)]
    assert [(r.entry, r.id, r.duplicate, r.reason) for r in results] == \
        [(r.entry, r.id, r.duplicate, r.reason) for r in singles]
    assert sum(r.duplicate for r in results) == 10
    files = sorted(p.relative_to(mem_root) for p in mem_root.rglob("*.md"))
    assert files == sorted(p.relative_to(other) for p in other.rglob("*.md")) and len(files) == 5
    for rel in files:
        assert (mem_root / rel).read_bytes() == (other / rel).read_bytes()


def test_a_batch_keys_each_stored_entry_once_not_once_per_add(mem_root, clock, monkeypatch):
    store = tracks.Store(str(mem_root), clock=clock)
    store.batch([AddRequest("global", f"existing entry {i}") for i in range(100)])
    keyed = []
    real = compose.same_entry_key
    monkeypatch.setattr(compose, "same_entry_key", lambda entry: keyed.append(1) or real(entry))
    store.batch([AddRequest("global", f"new entry {i}") for i in range(300)])
    assert len(keyed) <= 2 * (100 + 300)  # was 100·300 + 300·299/2 ≈ 75,000
