"""index_files: which files a search reads — the daily files of a listing are exactly the real days."""

import os
import random

import pytest

from maestro.memory.store import index_files
from maestro.util import days

pytestmark = pytest.mark.in_process


def by_the_rule(names):
    return [name for name in names if name.endswith(".md") and days.is_day(name[:-3])]


def test_daily_names_keeps_exactly_the_real_days_in_their_order():
    names = ["2024-02-29.md", "2023-02-29.md", "2024-02-28.md", "2024-04-31.md", "2024-04-30.md", "2024-13-01.md",
             "2024-00-01.md", "2024-01-00.md", "0000-01-01.md", "0001-01-01.md", "9999-12-31.md", "2024-01-01.MD",
             "2024-01-01.md.tmp", "2024-01-01.todo.md", "2024-1-01.md", "2024-01-1.md", "2024-01-01md.",
             "２０２４-01-01.md", "2024-01-0١.md", "2024-01-١1.md", "2024_01-01.md", "2024-01_01.md", " 024-01-01.md",
             "2024-01-01", ".md", "", "2024-01-31.md", "2024-01-32.md", "1900-02-29.md", "2000-02-29.md"]
    assert index_files.daily_names(names) == by_the_rule(names)


def test_daily_names_agrees_with_the_day_rule_on_random_listings():
    rng = random.Random(7)
    alphabet = "0123456789-.md١x "
    for _ in range(300):
        names = [f"{rng.randint(0, 9999):04d}-{rng.randint(0, 13):02d}-{rng.randint(0, 32):02d}.md" for _ in range(20)]
        names += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(20)]
        rng.shuffle(names)
        assert index_files.daily_names(names) == by_the_rule(names)


def test_wanted_lists_the_real_daily_files_sorted(tmp_path):
    (tmp_path / "daily").mkdir()
    for name in ("2024-03-02.md", "2024-02-30.md", "2024-03-01.md", "notes.md", "2024-03-01.todo.md"):
        (tmp_path / "daily" / name).write_text("x\n")
    daily = [item for item in index_files.wanted(str(tmp_path)) if item.track == "daily"]
    assert daily == [("daily/2024-03-01.md", "daily", ""), ("daily/2024-03-02.md", "daily", "")]
    assert all(type(item) is index_files.TrackFile and item.rel.startswith("daily/") for item in daily)


def test_signatures_are_each_files_stat_whatever_its_folder_is(tmp_path):
    """index_rows.signatures (a directory opened once for its files) equals stat_of per file: present,
    absent, in an absent folder, under a folder that is a file, through symlinks, at the root."""
    from maestro.memory.store import index_rows

    (tmp_path / "daily").mkdir()
    (tmp_path / "projects" / "abc").mkdir(parents=True)
    (tmp_path / "MEMORY.md").write_text("a\n")
    (tmp_path / "daily" / "2024-01-01.md").write_text("bb\n")
    (tmp_path / "elsewhere.md").write_text("ccc\n")
    (tmp_path / "daily" / "2024-01-02.md").symlink_to(tmp_path / "elsewhere.md")
    (tmp_path / "projects" / "linked").symlink_to(tmp_path / "projects" / "abc")
    (tmp_path / "projects" / "abc" / "KEY.md").write_text("dddd\n")
    (tmp_path / "projects" / "file").write_text("not a folder\n")
    rels = ["MEMORY.md", "USER.md", "daily/2024-01-01.md", "daily/2024-01-02.md", "daily/2024-01-03.md",
            "projects/abc/KEY.md", "projects/linked/KEY.md", "projects/gone/KEY.md", "projects/file/KEY.md",
            "daily/2024-01-01.md"]
    open_fds = len(os.listdir("/proc/self/fd"))
    found = index_rows.signatures(str(tmp_path), rels)
    assert len(os.listdir("/proc/self/fd")) == open_fds  # every folder opened is closed
    assert found == [index_rows.stat_of(str(tmp_path), rel) for rel in rels]
    assert [value is not None for value in found] == [True, False, True, True, False, True, True, False, False, True]
    assert found[3][0] == 4 and found[6] == found[5]  # followed like a stat of the path


def test_runs_mask_is_the_union_of_each_runs_mask():
    from maestro.memory.store import index_bits

    rng = random.Random(9)
    cases = [[], [(0, 0)], [(5, 3), (4, 4)], [(3, 5), (6, 9)], [(0, 10), (2, 3)], [(7, 8), (0, 1), (2, 6)],
             [(10, 20), (21, 21), (23, 30), (5, 2)]]
    for _ in range(500):
        runs = []
        for _ in range(rng.randint(0, 12)):
            low = rng.randint(0, 300)
            runs.append((low, low + rng.randint(-3, 40)))
        cases.append(runs)
    for runs in cases:
        union = 0
        for low, high in runs:
            union |= index_bits.run_mask(low, high)
        assert index_bits.runs_mask(runs) == union, runs
    with pytest.raises(index_bits.Corrupt):
        index_bits.runs_mask([(0, 4), (5, index_bits.MAX_IDS)])
    with pytest.raises(index_bits.Corrupt):
        index_bits.runs_mask([(-1, 4)])
