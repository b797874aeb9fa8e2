"""The store's write rules, black-box where possible (spec memory.md §4, scenarios 12–26 adapted).

`maestro memory …` runs against the selected target (in-process source, or the built archive);
tests that need a fixed clock call the store API with an injected one.
"""

import hashlib
import json
import os
import re
import subprocess
import sys
import time

import pytest
from testing.git import git
from testing.memory import STAMP_RE, all_files, key_file, leftovers, spawn

from maestro.memory.store import entry as grammar
from testing.pids import dead_pid


def secret_anywhere(root, needle: bytes):
    return [p for p in all_files(root) if needle in p.read_bytes()]


# --------------------------------------------------------------------------------- 12–14 adds


def test_12_add_to_an_empty_store_writes_one_stamped_summarised_entry(maestro, mem_root):
    result = maestro("memory", "add", "memory", "likes tea")
    assert result.rc == 0, result.err
    assert result.out.startswith("added memory: [")
    assert re.fullmatch(STAMP_RE + r" \[summary:likes tea\] likes tea\n", (mem_root / "MEMORY.md").read_text())


def test_12_stamp_is_the_local_time_of_the_write(store, mem_root):
    store.add("global", "likes tea")
    assert (mem_root / "MEMORY.md").read_bytes() == b"[2024-05-01 10:07] [summary:likes tea] likes tea\n"


def test_13_same_add_again_or_with_another_summary_is_a_duplicate(store, mem_root, clock):
    first = store.add("memory", "likes tea")
    again = store.add("global", "likes tea")
    other = store.add("memory", "likes tea", summary="another summary")
    tagged = store.add("memory", "[summary:tea fact] likes tea")
    assert not first.duplicate and first.entry == "[2024-05-01 10:07] [summary:likes tea] likes tea"
    assert (again.duplicate, again.reason, other.duplicate, tagged.duplicate) == (True, "exists", True, True)
    assert (mem_root / "MEMORY.md").read_bytes() == b"[2024-05-01 10:07] [summary:likes tea] likes tea\n"


def test_13_cli_duplicate_ignores_ids_and_summaries_and_writes_nothing(maestro, mem_root):
    assert maestro("memory", "add", "memory", "[2024-05-01 10:07] likes tea").rc == 0
    before = (mem_root / "MEMORY.md").read_bytes()
    for text, extra in (("[2024-05-01 10:07] likes tea", ["--summary", "other"]),
                        ("[id:0123abcd] [2024-05-01 10:07] [summary:x] likes tea", [])):
        result = maestro("memory", "add", "memory", text, *extra)
        assert (result.rc, result.out) == (0, "duplicate memory: already stored; nothing written\n"), result.err
    assert (mem_root / "MEMORY.md").read_bytes() == before


def test_14_key_entry_has_id_date_branch_and_summary_and_is_branch_scoped(maestro, mem_root, project):
    result = maestro("memory", "add", "key", "use pnpm", "--cwd", str(project), "--branches", "main", "--summary", "s")
    assert result.rc == 0, result.err
    text = key_file(mem_root, project).read_text()
    assert re.fullmatch(r"\[id:[0-9a-f]{8}\] " + STAMP_RE + r" \[branch:main\] \[summary:s\] use pnpm\n", text)
    assert re.search(r"id=[0-9a-f]{8}", result.out)
    assert maestro("memory", "add", "key", "untagged rule", "--cwd", str(project)).rc == 0

    def listed(*extra):
        out = maestro("memory", "list", "key", "--cwd", str(project), *extra)
        assert out.rc == 0, out.err
        return grammar.parse_entries(out.out)

    assert [e.endswith("untagged rule") for e in listed("--branch", "dev")] == [True]
    assert len(listed("--branch", "main")) == 2 and len(listed()) == 2


def test_14_key_summary_is_cleaned_and_a_given_id_is_kept(store, project):
    result = store.add("key", "[id:ABCDEF12] decide\nmore", cwd=str(project), branches=["main", "dev"],
                       summary="two\tlines\nand ] bracket " + "x" * 200)
    parts = grammar.split(result.entry)
    assert parts.entry_id == "abcdef12" and result.id == "abcdef12"
    assert parts.branches == ("main", "dev")
    assert parts.summary_text.startswith("two lines and bracket x") and len(parts.summary_text) == 120


def test_key_and_project_tracks_belong_to_the_git_toplevel(store, tmp_path, mem_root):
    repo = tmp_path / "repo"
    (repo / "sub" / "dir").mkdir(parents=True)
    git(repo, "init", "-q")
    result = store.add("project", "shipped the parser", cwd=str(repo / "sub" / "dir"))
    digest = hashlib.sha1(os.path.realpath(repo).encode()).hexdigest()[:12]
    assert result.file == str(mem_root / "projects" / digest / "MEMORY.md")


def test_branches_and_dates_apply_only_to_their_tracks(maestro, mem_root):
    assert maestro("memory", "add", "memory", "x y", "--branch", "main").rc == 3
    assert maestro("memory", "add", "user", "x y", "--date", "2024-05-01").rc == 3
    bad = maestro("memory", "add", "key", "x y", "--branch", "a]b")
    assert bad.rc == 3 and "invalid branch name" in bad.err
    assert maestro("memory", "add", "nope", "x").rc == 3
    assert not mem_root.exists() or not [p for p in all_files(mem_root) if p.suffix == ".md"]


def test_auto_summary_is_the_first_line_cut_at_80_characters(store):
    long = store.add("memory", "a" * 100 + "\nsecond line")
    assert grammar.split(long.entry).summary_text == "a" * 79 + "…"
    moved = store.add("memory", "body text here [summary:the trailing one]")
    assert moved.entry == "[2024-05-01 10:07] [summary:the trailing one] body text here"
    daily = store.add("daily", "[12:00] [deploy] shipped v2")
    assert daily.entry == "[12:00] [summary:shipped v2] [deploy] shipped v2"


# ------------------------------------------------------------------------------ 15–17 secrets


def test_15_a_password_in_a_daily_entry_is_filtered_and_never_on_disk(maestro, mem_root):
    result = maestro("memory", "add", "daily", "password: hunter2 and ship friday")
    assert result.rc == 0, result.err
    (daily,) = (mem_root / "daily").iterdir()
    assert "[Filtered:password] and ship friday" in daily.read_text()
    assert "hunter2" not in result.out + result.err
    assert secret_anywhere(mem_root.parent.parent, b"hunter2") == []


def test_16_a_pure_secret_is_refused_and_no_file_is_created(maestro, mem_root):
    result = maestro("memory", "add", "user", "sk-abcdefgh12345678")
    assert result.rc == 3
    assert result.err == "maestro memory add: content filtered (sensitive-only)\n"
    assert not (mem_root / "USER.md").exists()
    assert secret_anywhere(mem_root.parent.parent, b"abcdefgh12345678") == []


@pytest.mark.parametrize("secret,label", [
    ("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl", "token"),
    ("api_key=X", "API key"),
    ("11010119900307789X", "ID number"),
    ("13800138000", "phone number"),
    ("密码：abc123", "password"),
])
def test_17_each_original_secret_shape_is_replaced_by_its_label(maestro, mem_root, secret, label):
    result = maestro("memory", "add", "memory", f"note {secret} end")
    assert result.rc == 0, result.err
    text = (mem_root / "MEMORY.md").read_text()
    assert f"note [Filtered:{label}] end" in text and secret not in text


def test_secrets_in_summaries_replacements_and_match_strings_are_filtered(maestro, mem_root):
    assert maestro("memory", "add", "memory", "deploy notes", "--summary", "about token=abc123def").rc == 0
    assert maestro("memory", "replace", "memory", "--match", "deploy", "new password=hunter2 notes").rc == 0
    missing = maestro("memory", "remove", "memory", "--match", "sk-abcdefgh12345678")
    assert missing.rc == 4 and "[Filtered:API key]" in missing.err and "abcdefgh1234" not in missing.err
    stray = maestro("memory", "add", "memory", "unquoted", "text", "password=hunter2", "--json")
    assert stray.rc == 3 and "hunter2" not in stray.err + stray.out
    assert secret_anywhere(mem_root, b"hunter2") == [] and secret_anywhere(mem_root, b"abc123def") == []


# ------------------------------------------------------------------------ 18–19 no-ops, dates


def test_18_idle_text_is_a_duplicate_and_nothing_is_written(maestro, mem_root, store):
    result = maestro("memory", "add", "daily", "Idle — no change")
    assert (result.rc, result.out) == (0, "duplicate daily: idle/no-change text carries no information; "
                                          "nothing written\n"), result.err
    assert not (mem_root / "daily").exists()
    assert store.add("daily", "[12:00] waiting for CI").reason == "idle"
    assert not store.add("daily", "idleness metrics moved to the dashboard").duplicate
    assert not store.add("daily", "idle " + "x" * 150).duplicate


def test_19_a_traversal_date_is_refused_by_add_and_lists_nothing(maestro, mem_root, home):
    added = maestro("memory", "add", "daily", "x y", "--date", "../../x")
    assert added.rc == 3 and "invalid date" in added.err
    listed = maestro("memory", "list", "daily", "--date", "../../x")
    assert (listed.rc, listed.out) == (3, "") and "invalid date '../../x'" in listed.err  # issue 16 item 11
    assert maestro("memory", "add", "daily", "x y", "--date", "2024-02-30").rc == 3
    assert [p for p in home.rglob("x*")] == []


def test_daily_date_selects_the_file(maestro, mem_root):
    assert maestro("memory", "add", "daily", "old day note", "--date", "2024-01-02").rc == 0
    assert (mem_root / "daily" / "2024-01-02.md").is_file()
    listed = maestro("memory", "list", "daily", "--date", "2024-01-02", "--json")
    assert [e["summary"] for e in json.loads(listed.out)["entries"]] == ["old day note"]


# ------------------------------------------------------------------- 20–21 edits by unique match


def test_20_an_ambiguous_match_changes_nothing(maestro, mem_root):
    for text in ("likes tea", "likes coffee"):
        assert maestro("memory", "add", "memory", text).rc == 0
    before = (mem_root / "MEMORY.md").read_bytes()
    for args in (["replace", "memory", "--match", "likes", "x y"], ["remove", "memory", "--match", "likes"],
                 ["archive", "memory", "--match", "likes"]):
        result = maestro("memory", *args)
        assert result.rc == 4 and 'ambiguous match for "likes" (2 hits)' in result.err, result.err
    missing = maestro("memory", "remove", "memory", "--match", "Likes")
    assert missing.rc == 4 and 'no match for "Likes"' in missing.err
    assert (mem_root / "MEMORY.md").read_bytes() == before
    assert not (mem_root / "MEMORY-archive.md").exists()


def test_replace_keeps_the_id_stamp_and_branch_and_refreshes_the_summary(store, project):
    old = store.add("key", "use pnpm", cwd=str(project), branches=["main"])
    change = store.replace("key", "pnpm", "use pnpm 9 everywhere", cwd=str(project))
    assert change.entry == f"[id:{old.id}] [2024-05-01 10:07] [branch:main] [summary:use pnpm 9 everywhere] " \
                           "use pnpm 9 everywhere"
    assert store.list("key", cwd=str(project)).entries == [change.entry]


def test_replace_refuses_to_duplicate_another_entry(maestro, mem_root):
    for text in ("[2024-05-01 10:07] alpha", "[2024-05-01 10:07] beta"):
        assert maestro("memory", "add", "memory", text).rc == 0
    result = maestro("memory", "replace", "memory", "--match", "beta", "[2024-05-01 10:07] alpha")
    assert result.rc == 4 and "duplicate" in result.err


def test_remove_takes_out_exactly_one_entry(maestro, mem_root):
    for text in ("alpha one", "beta two"):
        maestro("memory", "add", "memory", text)
    result = maestro("memory", "remove", "memory", "--match", "alpha")
    assert result.rc == 0 and result.out.startswith("removed memory: ")
    (left,) = grammar.parse_file((mem_root / "MEMORY.md").read_bytes())
    assert left.endswith("beta two")


def test_21_archive_moves_the_entry_to_the_archive_file(maestro, mem_root, project):
    cwd = ["--cwd", str(project)]
    for text in ("keep this rule", "retire this rule"):
        assert maestro("memory", "add", "key", text, *cwd).rc == 0
    result = maestro("memory", "archive", "key", "--match", "retire", *cwd)
    assert result.rc == 0 and result.out.startswith("archived key to KEY-archive.md: ")
    archive = key_file(mem_root, project).with_name("KEY-archive.md")
    assert [e.endswith("retire this rule") for e in grammar.parse_file(archive.read_bytes())] == [True]
    live = maestro("memory", "list", "key", *cwd)
    assert "retire" not in live.out and "keep this rule" in live.out
    archived = maestro("memory", "list", "key", "--archived", *cwd)
    assert "retire this rule" in archived.out and "keep" not in archived.out
    assert maestro("memory", "archive", "daily", "--match", "x").rc == 3


# ------------------------------------------------------------------------------- 22 drift guard


def test_22_a_non_canonical_file_is_backed_up_and_the_write_refused(maestro, mem_root):
    mem_root.mkdir(parents=True)
    original = b"[2024-01-01 09:00] [summary:a] a"  # no trailing newline
    (mem_root / "MEMORY.md").write_bytes(original)
    result = maestro("memory", "add", "memory", "likes tea")
    assert result.rc == 4 and "drift" in result.err, result.err
    (backup,) = mem_root.glob("MEMORY.md.bak.*")
    assert re.fullmatch(r"MEMORY\.md\.bak\.\d{13}", backup.name)
    assert backup.read_bytes() == original and (mem_root / "MEMORY.md").read_bytes() == original
    assert maestro("memory", "add", "memory", "likes tea").rc == 4
    assert len(list(mem_root.glob("MEMORY.md.bak.*"))) == 1  # the same bytes are not backed up twice


def test_22_a_file_that_is_not_utf8_is_drift_not_rewritten(maestro, mem_root):
    mem_root.mkdir(parents=True)
    (mem_root / "USER.md").write_bytes(b"caf\xe9\n")
    result = maestro("memory", "add", "user", "likes tea")
    assert result.rc == 4 and "not UTF-8" in result.err
    assert (mem_root / "USER.md").read_bytes() == b"caf\xe9\n"


# ---------------------------------------------------------------------------- 23–24 concurrency


def test_23_twenty_parallel_adds_all_land_in_a_canonical_file(tmp_path, home, mem_root):
    env = {"HOME": str(home)}
    procs = [spawn("memory", "add", "daily", f"e{i}", "--date", "2024-05-01", env=env) for i in range(20)]
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    text = (mem_root / "daily" / "2024-05-01.md").read_text()
    assert grammar.is_canonical(text)
    assert sorted(grammar.split(e).body for e in grammar.parse_entries(text)) == sorted(f"e{i}" for i in range(20))
    assert leftovers(mem_root) == []


HOLD_LOCK = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(60)
"""


def hold_store_lock(mem_root):
    (mem_root / ".maestro-memory").mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(mem_root / ".maestro-memory" / "store.lock")],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout.readline() == b"held\n"
    return proc


def test_24_a_lock_whose_holder_died_is_free_at_once(maestro, mem_root):
    holder = hold_store_lock(mem_root)
    holder.kill()
    holder.wait()
    holder.stdout.close()
    (mem_root / ".maestro-memory" / "store.lock").write_text(f"{holder.pid}\n")
    (mem_root / ".maestro.lock").write_text(json.dumps({"pid": dead_pid(), "at": 0}))  # dsh's, dead owner
    started = time.monotonic()
    result = maestro("memory", "add", "memory", "likes tea", env={"MAESTRO_MEMORY_LOCK_TIMEOUT_SEC": "60"})
    assert result.rc == 0, result.err
    assert time.monotonic() - started < 30  # it did not wait out the 60 s timeout (room for a busy machine)


def test_24_a_live_holder_makes_the_add_time_out_and_the_file_stays(maestro, mem_root):
    assert maestro("memory", "add", "memory", "[2024-05-01 10:07] first").rc == 0
    before = (mem_root / "MEMORY.md").read_bytes()
    holder = hold_store_lock(mem_root)
    try:
        started = time.monotonic()
        result = maestro("memory", "add", "memory", "second", env={"MAESTRO_MEMORY_LOCK_TIMEOUT_SEC": "0.5"})
        elapsed = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    assert result.rc == 4 and "busy" in result.err and "nothing was written" in result.err, result.err
    assert 0.4 < elapsed < 10
    assert (mem_root / "MEMORY.md").read_bytes() == before


def test_24_a_live_dsh_lock_is_respected(maestro, mem_root):
    mem_root.mkdir(parents=True)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (mem_root / ".maestro.lock").write_text(json.dumps({"pid": sleeper.pid, "at": 0}))
        result = maestro("memory", "add", "memory", "likes tea", env={"MAESTRO_MEMORY_LOCK_TIMEOUT_SEC": "0.3"})
    finally:
        sleeper.kill()
        sleeper.wait()
    assert result.rc == 4 and "dsh-maestro-memory writer" in result.err
    assert not (mem_root / "MEMORY.md").exists()
    assert (mem_root / ".maestro.lock").exists()  # not ours: never deleted


def test_24_the_default_lock_wait_is_five_seconds():
    from maestro.memory.store import lock

    assert lock.timeout_seconds() == 5.0


NONBLOCKING_PROBE = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    sys.exit(1)
"""


def lock_is_free(path) -> bool:
    return subprocess.run([sys.executable, "-c", NONBLOCKING_PROBE, str(path)]).returncode == 0


def test_24_the_lock_is_reentrant_per_thread_and_released_when_the_body_raises(tmp_path):
    import threading

    from maestro.memory.store.errors import StoreError
    from maestro.memory.store.lock import StoreLock

    path = str(tmp_path / "store.lock")
    outcomes = []

    def contender():
        try:
            with StoreLock(path, timeout=0.2):
                outcomes.append("won")
        except StoreError as exc:
            outcomes.append(exc.reason)

    with StoreLock(path, timeout=0.2):
        with StoreLock(path, timeout=0.2):  # the same thread again: no self-deadlock
            assert not lock_is_free(path)
        assert not lock_is_free(path)  # the inner exit did not release the outer hold
        thread = threading.Thread(target=contender)
        thread.start()
        thread.join()
    assert outcomes == ["busy"] and lock_is_free(path)
    with pytest.raises(RuntimeError):
        with StoreLock(path, timeout=0.2):
            raise RuntimeError("body failed")
    assert lock_is_free(path) and os.path.exists(path)  # released, never unlinked


def test_24_an_unreadable_dsh_lock_counts_only_while_fresh(tmp_path):
    from maestro.memory.store.lock import legacy_holder

    path = tmp_path / ".maestro.lock"
    path.write_text("")  # dsh creates it, then writes {pid, at}
    assert legacy_holder(str(path)) == "unreadable lock file"
    old = time.time() - 60
    os.utime(path, (old, old))
    assert legacy_holder(str(path)) is None
    path.write_text(json.dumps({"pid": 2 ** 40}))
    assert legacy_holder(str(path)) is None


def test_a_killed_writers_temp_file_is_swept_by_the_next_writer(maestro, mem_root):
    assert maestro("memory", "add", "memory", "first entry").rc == 0
    debris = mem_root / ".MEMORY.md.maestro-tmp-999999"
    debris.write_bytes(b"half")
    assert maestro("memory", "add", "memory", "second entry").rc == 0
    assert not debris.exists() and leftovers(mem_root) == []


# ------------------------------------------------------------------------------ 25 write-block


def test_25_write_block_refuses_every_write_and_reads_still_work(maestro, mem_root, tmp_path):
    assert maestro("memory", "add", "memory", "likes tea").rc == 0
    (mem_root / ".maestro-memory" / "write-block.json").write_text('{"blocked": true, "reason": "verify"}')
    before = (mem_root / "MEMORY.md").read_bytes()
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps([{"track": "user", "text": "u"}]))
    for args in (["add", "memory", "more"], ["add", "daily", "Idle"], ["replace", "memory", "--match", "tea", "x y"],
                 ["remove", "memory", "--match", "tea"], ["archive", "memory", "--match", "tea"],
                 ["batch", str(batch)]):
        result = maestro("memory", *args)
        assert result.rc == 4 and "blocked" in result.err, (args, result.err)
    listed = maestro("memory", "list", "memory")
    assert listed.rc == 0 and "likes tea" in listed.out
    assert (mem_root / "MEMORY.md").read_bytes() == before and not (mem_root / "USER.md").exists()


@pytest.mark.parametrize("content,blocked", [("not json", True), ("[]", True), ('{"blocked": "yes"}', True),
                                             ('{"blocked": false}', False), ("{}", False)])
def test_25_a_malformed_write_block_fails_closed(maestro, mem_root, content, blocked):
    (mem_root / ".maestro-memory").mkdir(parents=True)
    (mem_root / ".maestro-memory" / "write-block.json").write_text(content)
    result = maestro("memory", "add", "memory", "likes tea")
    assert (result.rc == 4) is blocked, result.err


# ------------------------------------------------------------------------------------ 26 batch


def write_batch(tmp_path, items):
    path = tmp_path / "batch.json"
    path.write_text(json.dumps(items))
    return str(path)


def test_26_a_batch_with_an_unknown_target_writes_nothing(maestro, mem_root, tmp_path):
    path = write_batch(tmp_path, [{"track": "memory", "text": "first"}, {"target": "nope", "content": "second"}])
    result = maestro("memory", "batch", path)
    assert result.rc == 3 and "entry 1: unknown track 'nope'" in result.err, result.err
    assert not (mem_root / "MEMORY.md").exists()


def test_26_a_batch_failing_late_leaves_earlier_entries_unwritten(maestro, mem_root, tmp_path):
    maestro("memory", "add", "memory", "[2024-05-01 10:07] existing")
    before = (mem_root / "MEMORY.md").read_bytes()
    path = write_batch(tmp_path, [{"track": "memory", "text": "one"}, {"track": "daily", "text": "two"},
                                  {"track": "user", "text": "sk-abcdefgh12345678"}])
    result = maestro("memory", "batch", path)
    assert result.rc == 3 and "entry 2: content filtered (sensitive-only)" in result.err
    assert (mem_root / "MEMORY.md").read_bytes() == before and not (mem_root / "daily").exists()


def test_26_a_batch_adds_in_order_and_reports_duplicates(maestro, mem_root, tmp_path, project):
    path = write_batch(tmp_path, [
        {"track": "memory", "text": "[2024-05-01 10:07] one"},
        {"track": "key", "text": "rule", "cwd": str(project), "branches": ["main"], "summary": "r"},
        {"track": "memory", "text": "[2024-05-01 10:07] [summary:dup] one"},
        {"track": "daily", "text": "two", "date": "2024-05-01"},
    ])
    result = maestro("memory", "batch", path, "--json")
    assert result.rc == 0, result.err
    envelope = json.loads(result.out)
    assert (envelope["version"], envelope["command"], envelope["ok"]) == (1, "memory batch", True)
    assert [r["duplicate"] for r in envelope["results"]] == [False, False, True, False]
    assert grammar.branches(envelope["results"][1]["entry"]) == ("main",)


def fail_the_second_write(monkeypatch, txn):
    """Make the transaction's second file write fail with ENOSPC; (the real writer, the paths written)."""
    real_write, calls = txn._write, []

    def failing(path, data):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_write(path, data)

    monkeypatch.setattr(txn, "_write", failing)
    return real_write, calls


@pytest.mark.source_only
def test_26_a_write_failing_mid_commit_restores_the_files_already_written(store, mem_root, monkeypatch, maestro):
    if maestro.target == "pyz":
        pytest.skip("source_only: monkeypatches maestro internals")
    from maestro.memory.store import txn
    from maestro.memory.store.errors import StoreError
    from maestro.memory.store.tracks import AddRequest

    store.add("memory", "existing entry")
    before = (mem_root / "MEMORY.md").read_bytes()
    real_write, calls = fail_the_second_write(monkeypatch, txn)
    with pytest.raises(StoreError) as caught:
        store.batch([AddRequest("memory", "new one"), AddRequest("user", "new two")])
    assert caught.value.reason == "io" and "nothing was changed" in caught.value.message
    monkeypatch.setattr(txn, "_write", real_write)
    assert (mem_root / "MEMORY.md").read_bytes() == before and not (mem_root / "USER.md").exists()


@pytest.mark.source_only
def test_26_a_failed_batch_removes_the_track_files_it_had_created(store, mem_root, monkeypatch, maestro):
    """All or nothing: a file the failed transaction created is unlinked, not left behind holding its entry."""
    if maestro.target == "pyz":
        pytest.skip("source_only: monkeypatches maestro internals")
    from maestro.memory.store import txn
    from maestro.memory.store.errors import StoreError
    from maestro.memory.store.tracks import AddRequest

    real_write, calls = fail_the_second_write(monkeypatch, txn)
    with pytest.raises(StoreError) as caught:
        store.batch([AddRequest("memory", "new one"), AddRequest("user", "new two")])
    assert caught.value.reason == "io" and "nothing was changed" in caught.value.message
    monkeypatch.setattr(txn, "_write", real_write)
    assert len(calls) == 2 and not os.path.exists(calls[0])  # the first file was written, then removed
    assert not (mem_root / "MEMORY.md").exists() and not (mem_root / "USER.md").exists()
    assert store.list("memory").entries == [] and store.list("user").entries == []


# -------------------------------------------------------------------------- format and interface


def test_an_existing_dsh_store_is_read_and_appended_byte_for_byte(maestro, tmp_path, project):
    dsh = tmp_path / "dsh" / "memories"
    key = dsh / "projects" / hashlib.sha1(os.path.realpath(project).encode()).hexdigest()[:12] / "KEY.md"
    key.parent.mkdir(parents=True)
    legacy = ("[id: ABCDEF12] [2024-08-06] [branch:main,dev] pnpm only [summary:package manager]\n§\n"
              "[id:0badc0de] [2024-08-07 09:30] [git abc123] [dsh-only] [summary:global rule] never force-push\n")
    key.write_text(legacy)
    env = {"MAESTRO_MEMORY_DIR": str(dsh)}
    listed = maestro("memory", "list", "key", "--cwd", str(project), "--branch", "feature", "--json", env=env)
    assert [e["id"] for e in json.loads(listed.out)["entries"]] == ["0badc0de"]
    assert maestro("memory", "add", "key", "one more rule", "--cwd", str(project), env=env).rc == 0
    data = key.read_text()
    assert data.startswith(legacy[:-1] + "\n§\n[id:") and data.endswith("one more rule\n")
    assert grammar.is_canonical(data) and len(grammar.parse_entries(data)) == 3


def test_content_holding_the_delimiter_line_is_refused(maestro, mem_root):
    result = maestro("memory", "add", "memory", "one\n§\ntwo")
    assert result.rc == 3 and "delimiter" in result.err
    assert not (mem_root / "MEMORY.md").exists()


def test_text_can_come_from_stdin(maestro, mem_root):
    result = maestro("memory", "add", "user", "-", stdin="prefers short answers\nand tables\n")
    assert result.rc == 0, result.err
    assert (mem_root / "USER.md").read_text().endswith("prefers short answers\nand tables\n")


def test_json_envelopes_carry_the_result_and_the_error(maestro, mem_root):
    ok = json.loads(maestro("memory", "add", "memory", "likes tea", "--json").out)
    assert (ok["version"], ok["command"], ok["ok"], ok["duplicate"], ok["track"]) == (1, "memory add", True, False,
                                                                                      "memory")
    assert ok["file"] == str(mem_root / "MEMORY.md") and ok["entry"].endswith("likes tea")
    failed = maestro("memory", "add", "user", "sk-abcdefgh12345678", "--json")
    assert failed.rc == 3
    envelope = json.loads(failed.out)
    assert envelope["ok"] is False and envelope["error"]["reason"] == "sensitive"
    usage = maestro("memory", "add", "--json")
    assert usage.rc == 3 and json.loads(usage.out)["error"]["reason"] == "usage"


def test_help_and_usage_errors(maestro):
    assert maestro("memory", "--help").rc == 0
    assert maestro("memory").rc == 3
    unknown = maestro("memory", "frobnicate")
    assert unknown.rc == 3 and "unknown subcommand" in unknown.err
    for sub in ("add", "list", "replace", "remove", "archive", "batch"):
        assert maestro("memory", sub, "--help").rc == 0
    bad = maestro("memory", "replace", "memory", "x")
    assert bad.rc == 3 and bad.err.startswith("maestro memory replace: ") and bad.err.count("\n") == 1


def test_store_files_are_private(maestro, mem_root, project):
    assert maestro("memory", "add", "key", "rule one", "--cwd", str(project)).rc == 0
    for path in [mem_root, *mem_root.rglob("*")]:
        mode = path.stat().st_mode & 0o777
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))


def test_the_store_root_honours_maestro_memory_dir(maestro, tmp_path):
    root = tmp_path / "elsewhere"
    assert maestro("memory", "add", "memory", "likes tea", env={"MAESTRO_MEMORY_DIR": str(root)}).rc == 0
    assert (root / "MEMORY.md").is_file()


def test_list_prints_the_track_in_its_file_format(maestro, mem_root):
    for text in ("[2024-05-01 10:07] one", "[2024-05-01 10:08] two\nlines"):
        maestro("memory", "add", "memory", text)
    listed = maestro("memory", "list", "global")
    assert listed.rc == 0 and listed.out == (mem_root / "MEMORY.md").read_text()
    assert maestro("memory", "list", "user").out == ""


def test_an_unreadable_batch_file_is_a_one_line_error(maestro):
    result = maestro("memory", "batch", "/nonexistent/batch.json")
    assert result.rc == 3 and "Traceback" not in result.err and "cannot read" in result.err


@pytest.mark.parametrize("items,message", [("{}", "expected a JSON list"), ('[{"track": "memory"}]', "needs a track"),
                                           ('[{"track": "memory", "text": 1}]', "text must be a string"),
                                           ('[{"track": "memory", "text": "a", "extra": 1}]', "unknown field")])
def test_batch_input_is_parsed_strictly(maestro, tmp_path, items, message):
    path = tmp_path / "b.json"
    path.write_text(items)
    result = maestro("memory", "batch", str(path))
    assert result.rc == 3 and message in result.err, result.err
