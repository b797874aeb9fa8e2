"""Archive maintenance (spec memory.md §2.9; §4 scenarios 39–40): a pure plan, a dry run that
changes nothing, and `--confirm` that backs up, appends to the archive and rewrites the file."""

import datetime
import json
import os

import pytest
from testing.memory import all_files, key_file

from maestro.memory.store import maintenance
from maestro.memory.store.errors import StoreError

TODAY = datetime.datetime.now(datetime.UTC).date()
OLD = "[id:0000000a] [2020-01-01 09:00] [summary:old] old decision"
NEW = f"[id:0000000b] [{TODAY.isoformat()} 09:00] [summary:new] new decision"




@pytest.fixture
def key_store(mem_root, project):
    path = key_file(mem_root, project)
    path.parent.mkdir(parents=True)
    path.write_bytes(f"{OLD}\n§\n{NEW}\n".encode())
    return path


def snapshot_tree(root):
    return {str(p): (p.read_bytes(), os.stat(p).st_mtime_ns) for p in all_files(root)}


# ------------------------------------------------------------------------------------ 39


def test_39_dry_run_changes_nothing_then_confirm_archives_with_a_backup(maestro, mem_root, project, key_store):
    before = snapshot_tree(mem_root)
    dry = maestro("memory", "maintenance", "--track", "key", "--dry-run", "--cwd", str(project))
    assert dry.rc == 0, dry.err
    assert "key: would archive 1 of 2 entries" in dry.out and "age: " in dry.out
    assert snapshot_tree(mem_root) == before

    done = maestro("memory", "maintenance", "--track", "key", "--confirm", "--cwd", str(project))
    assert done.rc == 0, done.err
    assert "key: archived 1 of 2 entries" in done.out
    assert key_store.read_bytes() == f"{NEW}\n".encode()
    archive = key_store.parent / "KEY-archive.md"
    assert archive.read_bytes() == f"{OLD}\n".encode()
    backups = [p for p in key_store.parent.iterdir() if p.name.startswith("KEY.md.bak.")]
    assert len(backups) == 1 and backups[0].read_bytes() == f"{OLD}\n§\n{NEW}\n".encode()


def test_39_confirm_appends_to_an_existing_archive_without_repeating(maestro, mem_root, project, key_store):
    archive = key_store.parent / "KEY-archive.md"
    archive.write_bytes(b"[2019-01-01] ancient\n")
    assert maestro("memory", "maintenance", "--track", "key", "--confirm", "--cwd", str(project)).rc == 0
    assert archive.read_bytes() == f"[2019-01-01] ancient\n§\n{OLD}\n".encode()
    again = maestro("memory", "maintenance", "--track", "key", "--confirm", "--cwd", str(project))
    assert again.rc == 0 and "archived 0" not in again.out and "would archive 0 of 1" in again.out
    assert archive.read_bytes() == f"[2019-01-01] ancient\n§\n{OLD}\n".encode()


# ------------------------------------------------------------------------------------ 40


def test_40_undated_entry_never_ages_out():
    result = maintenance.plan(["undated note", "[2020-01-01] dated note"], keep_bytes=10_000, max_age_days=1,
                              now=datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC))
    assert [d.entry for d in result.keep] == ["undated note"] and result.keep[0].reason == "undated"
    assert [(d.entry, d.reason) for d in result.archive] == [("[2020-01-01] dated note", "age")]


def test_40_size_walk_archives_only_the_entry_that_would_exceed_and_continues():
    entries = ["a" * 10, "b" * 300, "c" * 10]
    result = maintenance.plan(entries, keep_bytes=100, max_age_days=180)
    assert [d.entry for d in result.archive] == ["b" * 300] and result.archive[0].reason == "size"
    assert [d.entry for d in result.keep] == ["a" * 10, "c" * 10]  # file order kept


def test_40_cutoff_is_the_utc_date_minus_max_age():
    now = datetime.datetime(2026, 3, 10, 23, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=-5)))
    result = maintenance.plan(["[2026-03-10] a", "[2026-03-09 08:00] b", "[2024-13-45] c"], 10_000, 1, now=now)
    assert result.cutoff == "2026-03-10"  # 04:30 UTC on the 11th
    assert [d.entry for d in result.archive] == ["[2026-03-09 08:00] b"]
    assert [d.entry for d in result.keep] == ["[2026-03-10] a", "[2024-13-45] c"]  # not a day: undated


def test_plan_sums_utf8_bytes_newest_first():
    result = maintenance.plan(["é" * 40, "x" * 60], keep_bytes=100, max_age_days=180)
    assert [d.entry for d in result.archive] == ["é" * 40]  # 80 B, over once the newest 60 B are kept


def test_apply_refuses_an_empty_list(store, mem_root):
    (mem_root).mkdir(parents=True)
    (mem_root / "MEMORY.md").write_bytes(b"[2099-01-01] future\n")
    with pytest.raises(StoreError, match="nothing to archive"):
        maintenance.apply(store, "memory")


# ----------------------------------------------------------------- dry run, json, write-block


def test_dry_run_leaves_bytes_and_mtimes_identical_and_creates_nothing(maestro, mem_root, project):
    mem_root.mkdir(parents=True)
    (mem_root / "MEMORY.md").write_text("[2001-01-01] old\n§\n[2099-01-01] kept\n", encoding="utf-8")
    (mem_root / "USER.md").write_bytes(("u" * 9000 + "\n§\nshort\n").encode())
    before = snapshot_tree(mem_root)
    dirs_before = sorted(str(p) for p in mem_root.rglob("*"))
    result = maestro("memory", "maintenance", "--cwd", str(project))
    assert result.rc == 0, result.err
    assert "memory: would archive" in result.out and "user: would archive 1 of 2" in result.out
    assert snapshot_tree(mem_root) == before
    assert sorted(str(p) for p in mem_root.rglob("*")) == dirs_before  # no lock, no .maestro-memory/


def test_json_envelope(maestro, mem_root, project, key_store):
    result = maestro("memory", "maintenance", "--track", "key", "--json", "--cwd", str(project))
    assert result.rc == 0, result.err
    body = json.loads(result.out)
    assert (body["version"], body["command"], body["ok"], body["dryRun"]) == (1, "memory maintenance", True, True)
    assert body["wouldArchive"] == 1 and body["archived"] == 0
    (track,) = body["tracks"]
    assert track["track"] == "key" and track["applied"] is False and track["backup"] is None
    assert (track["keepBytes"], track["maxAgeDays"]) == (64 * 1024, 180)
    assert [d["entry"] for d in track["archive"]] == [OLD] and track["archive"][0]["reason"] == "age"
    assert [d["entry"] for d in track["keep"]] == [NEW]

    bad = maestro("memory", "maintenance", "--track", "daily", "--json")
    assert bad.rc == 3 and json.loads(bad.out)["ok"] is False


def test_write_block_prevents_confirm(maestro, mem_root, project, key_store):
    meta = mem_root / ".maestro-memory"
    meta.mkdir()
    (meta / "write-block.json").write_text('{"blocked": true}')
    before = snapshot_tree(mem_root)
    result = maestro("memory", "maintenance", "--track", "key", "--confirm", "--json", "--cwd", str(project))
    assert result.rc == 4
    assert json.loads(result.out)["error"]["reason"] == "blocked"
    assert snapshot_tree(mem_root) == before
    dry = maestro("memory", "maintenance", "--track", "key", "--cwd", str(project))
    assert dry.rc == 0 and "would archive 1" in dry.out  # reads still work


def test_confirm_refuses_a_drifted_file(maestro, mem_root, project, key_store):
    key_store.write_bytes(key_store.read_bytes().rstrip(b"\n"))
    result = maestro("memory", "maintenance", "--track", "key", "--confirm", "--cwd", str(project))
    assert result.rc == 4 and "drift" in result.err
    assert not (key_store.parent / "KEY-archive.md").exists()
