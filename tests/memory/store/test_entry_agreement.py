"""Issue 10 §3: `add` and `repair` agree on what one entry is.

`add` used to store a multi-line entry holding a `[YYYY-MM-DD]` line or a lone ` § ` line, and two
entries differing only in inner whitespace; the one-time repair at the first session-start then
split or deleted them. The choice: `add` refuses the first two (exit 3, one line saying which line
and why; nothing written) and reports the third as a duplicate — repair's rules are the ones the
files on disk have always been repaired by (dsh compatibility, the v3 flag), while a stored entry
is new, so the narrower rule goes on the way in. Then add-then-repair changes nothing.
"""

import random

import pytest
from testing.memory import all_files

from maestro.memory.store import repair
from maestro.memory.store.errors import StoreError
from maestro.memory.store.tracks import Store

SPLIT_AT_A_STAMP = "notes\n[2024-01-02] the second line opens with a date"


@pytest.mark.parametrize("text, line, why", [
    (SPLIT_AT_A_STAMP, 2, "[YYYY-MM-DD] stamp"),
    ("notes\n[id:0123abcd] [2024-01-02 10:00] glued", 2, "[YYYY-MM-DD] stamp"),
    ("one\n \u00a7 \ntwo", 2, "holds only §"),
    ("one\ntwo\n\t§", 3, "holds only §"),
])
def test_add_refuses_text_repair_would_cut_in_two(maestro, mem_root, text, line, why):
    result = maestro("memory", "add", "memory", text)
    assert result.rc == 3, result
    (message,) = result.err.strip().splitlines()
    assert f"line {line} " in message and why in message and "two entries" in message
    assert not (mem_root / "MEMORY.md").exists()


def test_todo_add_refuses_text_repair_would_cut_in_two(maestro, mem_root):
    result = maestro("memory", "todo", "add", "call bob\n[2024-05-01] notes from the meeting", "--list", "work")
    assert result.rc == 3, result
    assert "line 2 " in result.err and "two entries" in result.err
    assert not (mem_root / "TODOS-work.md").exists()


@pytest.mark.parametrize("text", [
    "[2024-01-02] a first line may open with its own date",
    "a date in the middle [2024-01-02] of a line is fine\nand so is a § inside a line",
    "line one\n  indented [2024-01-02] is not at the start",
])
def test_add_keeps_text_repair_leaves_whole(store, mem_root, text):
    store.add("memory", text)
    assert repair.repair(store).changed == 0


def test_replace_refuses_the_same_text(store):
    store.add("user", "likes tea")
    with pytest.raises(StoreError, match="line 2 .*two entries") as caught:
        store.replace("user", "tea", SPLIT_AT_A_STAMP)
    assert caught.value.reason == "invalid"
    assert [e.endswith("likes tea") for e in store.list("user").entries] == [True]


def test_an_entry_differing_only_in_whitespace_is_a_duplicate(maestro, mem_root):
    assert maestro("memory", "add", "memory", "use  pnpm,\tnot npm").rc == 0
    before = (mem_root / "MEMORY.md").read_bytes()
    again = maestro("memory", "add", "memory", "use pnpm,\u00a0not\n npm")
    assert again.rc == 0 and "duplicate" in again.out, again
    assert (mem_root / "MEMORY.md").read_bytes() == before


def test_replace_refuses_a_whitespace_twin_of_another_entry(store):
    store.add("user", "likes tea")
    store.add("user", "likes coffee")
    with pytest.raises(StoreError, match="would duplicate"):
        store.replace("user", "coffee", "likes  tea")


PIECES = ["word", "x", "[2024-01-02]", "[id:0123abcd]", "[summary:s]", "§", " § ", "\n", "\n\n", "  ", "\t",
          "\u00a0", "\u3000", "[10:00]", "[branch:main]", "[git abc]", "\n§\n", "\n \u00a7\n", "[tag]", "é", "🎉"]


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.in_process
def test_add_then_repair_changes_nothing(mem_root, clock, project, seed):
    """Seeded: random texts built from the pieces repair reacts to, added to every entry track
    (some refused, some duplicates); afterwards repair plans no change anywhere."""
    rng = random.Random(seed)
    store = Store(str(mem_root), clock=clock)
    stored = 0
    for _ in range(100):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 8)))
        track = rng.choice(["memory", "user", "project", "key", "daily"])
        try:
            result = store.add(track, text, cwd=str(project))
        except StoreError as exc:
            assert exc.reason in ("invalid", "sensitive", "conflict"), exc.message  # conflict: a reused [id:]
            continue
        stored += not result.duplicate
    assert stored > 15
    report = repair.repair(store)
    assert [item.file for item in report.files if item.changed or item.error] == []
    before = {p: p.read_bytes() for p in all_files(mem_root)}
    assert repair.repair(store, confirm=True).changed == 0
    assert {p: p.read_bytes() for p in all_files(mem_root) if p in before} == before
