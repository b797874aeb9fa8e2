"""Recall's parts in-process: the config scan, session-start's record, failure isolation and the hot path's
imports (maestro/hooks/recall.py)."""

import json
import os
import subprocess
import sys

import pytest

from maestro.hooks import inject, recall
from testing.paths import ROOT

pytestmark = pytest.mark.in_process
SID = "recall-internals-1"


@pytest.fixture(autouse=True)
def patient(monkeypatch):
    """No test here depends on how fast the machine is: the search budget is generous (one test sets its own)."""
    monkeypatch.setenv("MAESTRO_RECALL_BUDGET_SEC", "60")
STORE = "\n§\n".join([f"[2024-03-{n:02d} 09:00] routine note {n} about the dashboard colours" for n in range(1, 11)]
                     + ["[2024-04-01 09:00] kafka consumer lag on the kafka cluster"]) + "\n"


@pytest.mark.parametrize("text, expected", [
    ("", (True, 1200)),
    ("[memory]\nwrite_guard = true\n", (True, 1200)),
    ("[memory]\nrecall = false\n", (False, 1200)),
    ("[ memory ]  # spaced\nrecall = false # off\n", (False, 1200)),
    ("[memory]\nrecall_chars = 800\n", (True, 800)),
    ("[memory]\nrecall_chars = 1_000\n", (True, 1000)),
    ("[memory]\nrecall_chars = 0\n", (False, 0)),
    ("[memory]\nrecall_chars = 99999\n", (True, recall.MAX_CHARS)),
    ("[memory]\nrecall_chars = -5\n", (True, 1200)),
    ("[memory]\nrecall = \"no\"\n", (True, 1200)),  # not a boolean: the default
    ("[other]\nrecall = false\n", (True, 1200)),  # another table's key
    ("memory.recall = false\n", (False, 1200)),  # a dotted key: parsed by tomllib
    ("memory = { recall = false, recall_chars = 300 }\n", (False, 300)),
    ("[memory]\nrecall = fals\n[broken", (True, 1200)),  # not TOML at all: the default
    ("[memory]\n\"recall\" = false\n", (False, 1200)),  # a quoted key: parsed by tomllib
])
def test_config(tmp_path, text, expected):
    path = tmp_path / "config.toml"
    path.write_text(text)
    assert recall.config(str(path)) == expected


def test_a_missing_or_unreadable_config_is_the_default(tmp_path):
    assert recall.config(str(tmp_path / "none.toml")) == (True, recall.DEFAULT_CHARS)
    (tmp_path / "dir.toml").mkdir()
    assert recall.config(str(tmp_path / "dir.toml")) == (True, recall.DEFAULT_CHARS)


def test_the_record_round_trips_and_is_private(mem_root):
    recall.write_record(str(mem_root), SID, "/work/repo", "fix/x", ["id:0000000a", "h:abc", "h:abc"])
    path = mem_root / ".maestro-memory" / recall.RECORD_DIR / SID
    assert os.stat(path).st_mode & 0o777 == 0o600 and os.stat(path.parent).st_mode & 0o777 == 0o700
    assert recall.read_record(str(mem_root), SID) == ("/work/repo", "fix/x", {"id:0000000a", "h:abc"})


def test_a_project_path_with_a_newline_is_not_recorded(mem_root):
    recall.write_record(str(mem_root), SID, "/work/evil\nid:0000000a", "main", [])
    assert recall.read_record(str(mem_root), SID) == ("", "main", set())


@pytest.mark.parametrize("content", [b"", b"garbage\n", b"maestro-recall 1\nproject /x\n",
                                     b"maestro-recall 1\nproject /x\nbranch b\n" + b"h:0\n" * 20000])
def test_a_malformed_or_oversized_record_reads_as_none(mem_root, content):
    path = mem_root / ".maestro-memory" / recall.RECORD_DIR / SID
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    assert recall.read_record(str(mem_root), SID) == ("", "", set())


def test_old_records_are_pruned_when_a_new_one_is_written(mem_root):
    recall.write_record(str(mem_root), "old-session", "", "", [])
    old = mem_root / ".maestro-memory" / recall.RECORD_DIR / "old-session"
    stale = os.stat(old).st_mtime - recall.PRUNE_AGE_SEC - 60
    os.utime(old, (stale, stale))
    recall.write_record(str(mem_root), SID, "", "", [])
    assert not old.exists()


def test_the_shown_key_survives_the_snapshots_cuts():
    body = "the {{websocket}} reconnect uses backoff " + "x" * 900
    assert recall.shown_key("", body) == recall.shown_key("", body.replace("{{", "{")[:599] + "…")
    assert recall.shown_key("0000000a", body) == "id:0000000a"


def test_a_failing_recall_never_fails_the_prompt_nor_the_grant(monkeypatch, mem_root, home):
    mem_root.mkdir(parents=True)
    (mem_root / "MEMORY.md").write_text(STORE)  # a store with a track: recall really searches

    def broken(*args, **kwargs):
        raise RuntimeError("index exploded")

    monkeypatch.setattr(recall, "hits", broken)
    monkeypatch.setattr(sys, "stdin", _stdin({"session_id": SID, "prompt": "edit it yourself: fix the parser"}))
    assert inject.main([]) == 0
    from maestro import direct_edit

    assert direct_edit.flag_is_valid(SID)  # the grant was decided first, and stands
    assert "inject:recall" in (home / ".maestro" / "logs" / "crashes.log").read_text()


def _stdin(payload):
    import io

    return io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode()), encoding="utf-8")


def test_a_big_store_without_an_index_is_not_parsed_on_the_prompt(mem_root, monkeypatch):
    (mem_root).mkdir(parents=True)
    (mem_root / "MEMORY.md").write_text(STORE)
    monkeypatch.setattr(recall, "FALLBACK_MAX_BYTES", 10)
    assert recall.hits(str(mem_root), "kafka consumer lag", "", "", set()) == []
    monkeypatch.setattr(recall, "FALLBACK_MAX_BYTES", 1 << 20)
    assert [doc.text for doc, _ in recall.hits(str(mem_root), "kafka consumer lag", "", "", set())] == [
        "kafka consumer lag on the kafka cluster"]


@pytest.mark.source_only
@pytest.mark.parametrize("prompt, loaded, tracks", [("ok", False, True), ("why is the kafka consumer lagging?", True, True),
                                                    ("why is the kafka consumer lagging?", False, False)])
def test_sqlite_and_ranking_are_imported_only_for_a_real_prompt_on_a_store_with_tracks(home, mem_root, prompt, loaded,
                                                                                       tracks):
    # A store without any track file yet (only the write guard's state, as after the first Stop hook) has nothing
    # to recall: the prompt must not pay the index's and the ranking's imports for it.
    (mem_root / ".maestro-memory" / "guard").mkdir(parents=True)
    if tracks:
        (mem_root / "MEMORY.md").write_text(STORE)
    code = ("import io, json, sys\nfrom maestro.hooks import inject\n"
            f"sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps({{'session_id': '{SID}', 'prompt': {prompt!r}}})"
            ".encode()))\ninject.main([])\n"
            "sys.stderr.write(repr(sorted(m for m in ('sqlite3', 'maestro.memory.store.rank') if m in sys.modules)))")
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=str(ROOT),
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=60)
    modules = eval(done.stderr.strip().splitlines()[-1])  # noqa: S307 - our own repr of a list of names
    assert ("maestro.memory.store.rank" in modules) is loaded
    assert "kafka consumer lag" in done.stdout if loaded else done.stdout == ""


@pytest.mark.timeout(20)
def test_a_search_past_the_budget_leaves_the_prompt_without_a_block(monkeypatch, mem_root, home):
    mem_root.mkdir(parents=True)
    (mem_root / "MEMORY.md").write_text(STORE)  # a store with a track: recall really searches
    spins = []

    def endless(*args, **kwargs):
        while True:  # a search that never ends: only the deadline gets the prompt out
            spins.append(1) if not spins else None

    import signal

    monkeypatch.setattr(recall, "hits", endless)
    monkeypatch.setenv("MAESTRO_RECALL_BUDGET_SEC", "0.05")
    before = signal.getsignal(signal.SIGALRM)
    assert recall.block({"session_id": SID, "prompt": "why is the kafka consumer lagging?"}) == ""
    assert spins and not (home / ".maestro" / "logs").exists()  # expected, not a crash
    assert signal.getsignal(signal.SIGALRM) is before  # the handler is restored
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # and no timer is left running


def test_a_hit_sharing_no_word_with_the_prompt_is_left_out(mem_root, monkeypatch):
    mem_root.mkdir(parents=True)
    (mem_root / "MEMORY.md").write_text(STORE)
    from maestro.memory.store import rank

    real = rank.search

    def with_a_lifted_neighbour(query, corpus, **options):
        found = real(query, corpus, **options)
        neighbour = next(doc for doc in corpus.docs if "dashboard" in doc.text)
        return found + [(neighbour, found[0][1])]  # as a neighbour boost might rank it

    monkeypatch.setattr(rank, "search", with_a_lifted_neighbour)
    texts = [doc.text for doc, _ in recall.hits(str(mem_root), "kafka consumer lag", "", "", set())]
    assert texts == ["kafka consumer lag on the kafka cluster"]


@pytest.mark.source_only
def test_the_deadline_does_not_import_signal():
    """`signal` builds enums at import (~2 ms of the prompt): the deadline uses the builtin `_signal` it wraps."""
    code = ("import sys; sys.path.insert(0, %r); from maestro.hooks import recall\n"
            "with recall.deadline(5): pass\n"
            "import _signal; print('signal' in sys.modules, _signal.getitimer(_signal.ITIMER_REAL), "
            "_signal.getsignal(_signal.SIGALRM) == _signal.SIG_DFL)" % str(ROOT))
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == "False (0.0, 0.0) True", done.stdout + done.stderr


def test_the_index_is_closed_after_the_deadline_so_its_view_write_cannot_cost_the_hits(mem_root, monkeypatch):
    """Closing the corpus may write the index's view (a short write transaction): it runs after the deadline
    is lifted, and a close that fails leaves the block standing."""
    monkeypatch.delenv("MAESTRO_MEMORY_INDEX", raising=False)
    mem_root.mkdir(parents=True)
    (mem_root / "MEMORY.md").write_text(STORE)
    from maestro.memory.store import index_corpus
    from maestro.memory.store import search as memsearch

    assert memsearch.search(str(mem_root), "kafka")  # builds the index: recall then searches through it
    events = []
    real_deadline, real_close = recall.deadline, index_corpus.IndexCorpus.close

    class recorded(real_deadline):  # noqa: N801
        def __enter__(self):
            events.append("deadline on")
            return super().__enter__()

        def __exit__(self, *exc):
            events.append("deadline off")
            return super().__exit__(*exc)

    def close(corpus):
        events.append("close")
        real_close(corpus)
        raise OSError("a close that fails")

    monkeypatch.setattr(recall, "deadline", recorded)
    monkeypatch.setattr(index_corpus.IndexCorpus, "close", close)
    block = recall.block({"session_id": SID, "prompt": "why is the kafka consumer lagging?"})
    assert "kafka consumer lag on the kafka cluster" in block
    assert events == ["deadline on", "deadline off", "close"]
