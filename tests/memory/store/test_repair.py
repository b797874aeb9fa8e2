"""Repair (spec memory.md §2.10; §4 scenario 41): a pure, idempotent plan; a dry run that writes
nothing; `--confirm` with a `.bak.<ms>` backup; the versioned flag `delimiter-repaired-v3`.

In scenario 41 `A` and `B` stand for dated entries: a line opening with `[YYYY-MM-DD…]` starts a
new entry, which is what splits the glued `A\\nB`."""

import json
import os

import pytest
from testing.memory import all_files

from maestro.memory.store import entry as grammar
from maestro.memory.store import repair
from maestro.memory.store.errors import StoreError

A = "[2026-01-01 10:00] [summary:alpha] alpha"
B = "[id:0badcafe] [2026-01-02 11:00] beta"
MALFORMED = f"{A}\n{B}\n§\n{A}\n"
REPAIRED = f"{A}\n§\n{B}\n"


def tree(root):
    return {str(p): (p.read_bytes(), os.stat(p).st_mtime_ns) for p in all_files(root)}


@pytest.fixture
def malformed(mem_root):
    mem_root.mkdir(parents=True)
    path = mem_root / "MEMORY.md"
    path.write_text(MALFORMED, encoding="utf-8")
    return path


def flag(mem_root):
    return mem_root / ".maestro-memory" / "delimiter-repaired-v3"


# ------------------------------------------------------------------------------------ 41


def test_41_dry_run_reports_changed_1_and_writes_nothing(maestro, mem_root, malformed):
    before = tree(mem_root)
    result = maestro("memory", "repair", "--dry-run")
    assert result.rc == 0, result.err
    assert "changed 1" in result.out and "would repair" in result.out
    assert tree(mem_root) == before and not flag(mem_root).exists()
    assert maestro("memory", "repair").out == result.out  # dry run is the default


def test_41_confirm_rewrites_with_a_backup_then_changed_0_and_the_flag(maestro, mem_root, malformed):
    result = maestro("memory", "repair", "--confirm")
    assert result.rc == 0, result.err
    assert "changed 1" in result.out and "split 1" in result.out and "deduped 1" in result.out
    assert malformed.read_text(encoding="utf-8") == REPAIRED
    (backup,) = [p for p in mem_root.iterdir() if p.name.startswith("MEMORY.md.bak.")]
    assert backup.read_text(encoding="utf-8") == MALFORMED
    body = json.loads(flag(mem_root).read_text())
    assert body["at"] and body["report"]["changed"] == 1
    flag_bytes = flag(mem_root).read_bytes()

    again = maestro("memory", "repair", "--confirm")
    assert again.rc == 0 and "changed 0" in again.out
    assert malformed.read_text(encoding="utf-8") == REPAIRED
    assert flag(mem_root).read_bytes() == flag_bytes  # written once, by the first run
    assert len([p for p in mem_root.iterdir() if ".bak." in p.name]) == 1


def test_41_repair_once_runs_only_while_the_flag_is_missing(mem_root, malformed):
    first = repair.repair_once_if_flag_missing(str(mem_root))
    assert first.changed == 1 and first.flag == str(flag(mem_root))
    assert malformed.read_text(encoding="utf-8") == REPAIRED
    malformed.write_text(MALFORMED, encoding="utf-8")  # drift again: the boot repair does not rerun
    assert repair.repair_once_if_flag_missing(str(mem_root)) is None
    assert malformed.read_text(encoding="utf-8") == MALFORMED


def test_41_repair_once_never_raises_and_keeps_the_flag_absent_when_blocked(mem_root, malformed):
    (mem_root / ".maestro-memory").mkdir()
    (mem_root / ".maestro-memory" / "write-block.json").write_text('{"blocked": true}')
    result = repair.repair_once_if_flag_missing(str(mem_root))
    assert "blocked" in result["error"]
    assert not flag(mem_root).exists() and malformed.read_text(encoding="utf-8") == MALFORMED


def test_41_session_start_runs_the_repair_once_while_the_flag_is_missing(maestro, mem_root, malformed):
    from maestro.hooks import session_start

    assert session_start.REPAIR_FLAG == os.path.relpath(flag(mem_root), mem_root)
    first = maestro("session-start", stdin=b'{"session_id": "s1", "source": "startup"}')
    assert first.rc == 0 and "alpha" in first.out and "beta" in first.out
    assert malformed.read_text(encoding="utf-8") == REPAIRED and flag(mem_root).exists()
    assert len(list(mem_root.glob("MEMORY.md.bak.*"))) == 1
    malformed.write_text(MALFORMED, encoding="utf-8")  # drift again: later sessions leave it alone
    assert maestro("session-start", stdin=b'{"session_id": "s2", "source": "startup"}').rc == 0
    assert malformed.read_text(encoding="utf-8") == MALFORMED


def test_41_a_blocked_session_start_repair_keeps_the_context_and_retries_later(maestro, mem_root, malformed):
    (mem_root / ".maestro-memory").mkdir()
    (mem_root / ".maestro-memory" / "write-block.json").write_text('{"blocked": true}')
    result = maestro("session-start", stdin=b'{"session_id": "s1", "source": "startup"}')
    assert result.rc == 0 and "Codex pin" in result.out and "alpha" in result.out
    assert not flag(mem_root).exists() and malformed.read_text(encoding="utf-8") == MALFORMED


# ------------------------------------------------------------------------- canonical, idempotent


def test_a_canonical_store_reports_changed_0(maestro, store, mem_root, tmp_path):
    store.add("memory", "likes tea")
    store.add("daily", "shipped it", date="2026-01-02")
    store.add("key", "use pnpm", cwd=str(tmp_path))
    before = tree(mem_root)
    result = maestro("memory", "repair", "--confirm", "--json")
    assert result.rc == 0, result.err
    body = json.loads(result.out)
    assert (body["command"], body["ok"], body["dryRun"], body["changed"]) == ("memory repair", True, False, 0)
    assert len(body["files"]) == 3 and all(f["backup"] is None for f in body["files"])
    after = tree(mem_root)
    lock = str(mem_root / ".maestro-memory" / "store.lock")  # the permanent lock file is touched, nothing else
    assert {k: v for k, v in after.items() if k in before and k != lock} == {k: v for k, v in before.items()
                                                                           if k != lock}
    assert set(after) - set(before) == {str(flag(mem_root))}


@pytest.mark.parametrize("text", [
    MALFORMED,
    f"{A}\n{B}",  # glued, no trailing newline
    f"{A}\n §  \n{B}\n§",  # stray delimiters
    f"{A}\r\n§\r\n{B}\r\n",
    "[2026-01-01] body text [summary:moved]\n§\n[2026-01-01] [summary:x] body   text\n",
    "[id:12345678] [2026-01-01] x\n§\n[id:87654321] [2026-01-01] x\n",
    "not dated\nmid-line [2026-01-01] date stays\n",
    "",
])
def test_plan_is_idempotent(text):
    first = repair.plan_repair(text)
    second = repair.plan_repair(grammar.serialize_entries(first.entries))
    assert second.changed is False and second.entries == first.entries


def test_plan_details():
    plan = repair.plan_repair("[2026-01-01] body text [summary:moved]\n§\n[2026-01-01] [summary:x] body   text\n")
    assert plan.entries == ["[2026-01-01] [summary:moved] body text"]
    assert (plan.relocated, plan.deduped, plan.changed) == (1, 1, True)
    plan = repair.plan_repair(f"{A}\n §  \n{B}")
    assert plan.entries == [A, B] and plan.split == 1 and plan.before == 1 and plan.after == 2
    plan = repair.plan_repair("intro\nmid-line [2026-01-01] no split\n")
    assert plan.entries == ["intro\nmid-line [2026-01-01] no split"] and plan.changed is False
    assert repair.plan_repair("").changed is False and repair.plan_repair("  \n").changed is False


def test_utf8_archives_are_left_alone_and_a_non_utf8_file_is_recoded(maestro, mem_root):
    """Issue 10 §3: a file that is not UTF-8 used to be skipped forever; now --confirm recodes it
    (more in test_damaged_files.py). A UTF-8 archive is still never split or deduped."""
    mem_root.mkdir(parents=True)
    (mem_root / "MEMORY-archive.md").write_text(MALFORMED, encoding="utf-8")
    (mem_root / "USER.md").write_bytes(b"\xff\xfe broken\n")
    before = tree(mem_root)
    result = maestro("memory", "repair", "--confirm")
    assert result.rc == 0, result.err
    assert "changed 1" in result.out and "not UTF-8 (byte 0): each undecodable byte becomes U+FFFD" in result.out
    assert (mem_root / "MEMORY-archive.md").read_text(encoding="utf-8") == MALFORMED
    assert (mem_root / "USER.md").read_text(encoding="utf-8") == "\ufffd\ufffd broken\n"
    (backup,) = mem_root.glob("USER.md.bak.*")
    assert backup.read_bytes() == before[str(mem_root / "USER.md")][0]


def test_write_block_prevents_confirm(maestro, mem_root, malformed):
    (mem_root / ".maestro-memory").mkdir()
    (mem_root / ".maestro-memory" / "write-block.json").write_text('{"blocked": true}')
    result = maestro("memory", "repair", "--confirm")
    assert result.rc == 4 and "blocked" in result.err
    assert malformed.read_text(encoding="utf-8") == MALFORMED and not flag(mem_root).exists()


def test_repair_api_refuses_when_blocked(store, mem_root, malformed):
    (mem_root / ".maestro-memory").mkdir()
    (mem_root / ".maestro-memory" / "write-block.json").write_text('{"blocked": true}')
    with pytest.raises(StoreError):
        repair.repair(store, confirm=True)
