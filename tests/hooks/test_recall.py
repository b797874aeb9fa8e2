"""Recall at the prompt (issue 11 §4): `inject` adds a bounded "Relevant memory" block of the entries most
relevant to the prompt, never for a short acknowledgement, never what session-start showed, nothing when
nothing is relevant, off with `[memory] recall = false`. Runs on both targets (the hook as installed)."""

import json

import pytest

from maestro.hooks import recall
from testing.memory import project_dir, write_track as write

SID = "recall-test-1"
TITLE = recall.TITLE + "\n"
FILLER = [f"[2024-03-{day:02d} 09:00] routine note {day}: reviewed the dashboard colours and the font sizes"
          for day in range(1, 21)]


@pytest.fixture(autouse=True)
def patient(monkeypatch):
    """No test here depends on how fast the machine is: the search budget is generous."""
    monkeypatch.setenv("MAESTRO_RECALL_BUDGET_SEC", "60")


@pytest.fixture
def store(mem_root, project):
    write(mem_root / "MEMORY.md", FILLER + ["[2024-04-01 09:00] the staging database password rotates monthly"])
    write(project_dir(mem_root, project) / "KEY.md",
          ["[id:0000000a] [2024-02-01] decided: the websocket reconnect uses exponential backoff with jitter"])
    write(project_dir(mem_root, project) / "MEMORY.md",
          ["[2024-02-02 10:00] websocket reconnect storms took the gateway down; backoff jitter fixed it",
           *[f"[2024-04-0{n} 10:00] timeline entry {n} about the release checklist" for n in range(1, 6)]])
    return mem_root


@pytest.fixture
def prompt(maestro, project):
    """inject as Claude Code runs it from the project directory: the block (or '') of its output."""
    def run(text, sid=SID):
        result = maestro("inject", stdin=json.dumps({"session_id": sid, "prompt": text, "cwd": str(project)}))
        assert result.rc == 0 and result.err == "", result
        return result.out

    return run


def block_of(out):
    return out[out.index(TITLE):] if TITLE in out else ""


def test_a_relevant_prompt_gets_the_block_of_matching_entries(prompt, store):
    out = prompt("why does the websocket reconnect need jitter in its backoff?")
    block = block_of(out)
    lines = block.splitlines()
    assert lines[0] == recall.TITLE and 1 <= len(lines) - 1 <= recall.MAX_ENTRIES
    assert all(line.startswith("- [") for line in lines[1:])
    assert any("websocket reconnect" in line for line in lines[1:])
    assert not any("dashboard colours" in line for line in lines)  # not relevant: not shown
    assert len(block) <= recall.DEFAULT_CHARS


def test_nothing_relevant_says_nothing(prompt, store):
    assert prompt("translate this sentence into Portuguese please") == ""


@pytest.mark.parametrize("ack", ["ok", "yes", "proceed"])
def test_a_short_acknowledgement_gets_no_block(prompt, store, ack):
    assert prompt(ack) == ""


def test_recall_false_in_the_config_turns_it_off(prompt, store, home):
    (home / ".maestro" / "config.toml").write_text("[memory]\nrecall = false  # quiet please\n")
    assert prompt("why does the websocket reconnect need jitter in its backoff?") == ""


def test_recall_chars_bounds_the_block(prompt, store, home):
    (home / ".maestro" / "config.toml").write_text("[memory]\nrecall_chars = 200\n")
    block = block_of(prompt("why does the websocket reconnect need jitter in its backoff?"))
    assert block and len(block) <= 200


def test_never_what_session_start_showed_in_this_session(maestro, prompt, store, project):
    start = maestro("session-start", stdin=json.dumps({"session_id": SID, "source": "startup",
                                                       "cwd": str(project)}))
    assert "exponential backoff with jitter" in start.out  # the key track is in the snapshot
    question = "why does the websocket reconnect need jitter in its backoff?"
    block = block_of(prompt(question))
    assert "exponential backoff with jitter" not in block  # shown at the start: not repeated
    assert "reconnect storms took the gateway down" in block  # the project timeline's older entry was not shown
    other = block_of(prompt(question, sid="recall-test-2"))  # another session saw no start
    assert "exponential backoff with jitter" in other


def test_at_most_five_entries(prompt, mem_root):
    write(mem_root / "MEMORY.md", FILLER + [f"[2024-04-{n:02d} 09:00] kafka consumer lag alert number {n} on "
                                            f"the kafka cluster" for n in range(1, 12)])
    lines = block_of(prompt("kafka consumer lag on the kafka cluster")).splitlines()
    assert len(lines) == 1 + recall.MAX_ENTRIES


def test_no_store_no_block(prompt):
    assert prompt("why does the websocket reconnect need jitter in its backoff?") == ""


def test_a_hostile_record_is_ignored(prompt, store, tmp_path):
    shown = store / ".maestro-memory" / recall.RECORD_DIR
    shown.mkdir(parents=True)
    decoy = tmp_path / "decoy"
    decoy.write_text(f"{recall.RECORD_MAGIC}\nproject /\nbranch x\nid:0000000a\n")
    (shown / SID).symlink_to(decoy)
    block = block_of(prompt("websocket reconnect jitter backoff"))
    assert "websocket" in block  # the symlinked record was not read: nothing is hidden by it


def test_the_index_and_the_file_parse_give_the_same_block(maestro, prompt, store, project):
    question = "why does the websocket reconnect need jitter in its backoff?"
    parsed = block_of(prompt(question))  # no index yet: a small store is parsed
    assert maestro("memory", "search", "websocket", "--cwd", str(project)).rc == 0  # builds the index
    assert (store / ".maestro-memory" / "index.sqlite3").exists()
    assert block_of(prompt(question, sid="recall-test-3")) == parsed and parsed  # a session that saw neither


def test_a_later_prompt_does_not_repeat_what_an_earlier_block_showed(prompt, store):
    question = "why does the websocket reconnect need jitter in its backoff?"
    first = block_of(prompt(question))
    assert "reconnect storms took the gateway down" in first
    again = block_of(prompt(question))
    assert "reconnect storms took the gateway down" not in again and "exponential backoff" not in again
    assert "reconnect storms took the gateway down" in block_of(prompt(question, sid="recall-test-4"))


def test_a_big_store_is_indexed_outside_the_prompt_and_then_recalled(prompt, mem_root):
    """Past recall.FALLBACK_MAX_BYTES no prompt parses the store, and none builds its index: the first
    prompt starts the detached refresher (holding its lock until it is done), a later one recalls."""
    import fcntl

    from maestro.hooks import recall_refresh

    filler = [f"[2024-01-01 09:00] routine note {n}: reviewed the dashboard colours, the font sizes and the "
              f"spacing of the settings page" for n in range(2600)]
    write(mem_root / "MEMORY.md", filler + ["[2024-04-01 09:00] kafka consumer lag alert on the kafka cluster"])
    assert (mem_root / "MEMORY.md").stat().st_size > recall.FALLBACK_MAX_BYTES
    assert prompt("why is the kafka consumer lagging on the cluster?") == ""  # no index: not on this prompt
    with open(recall_refresh.lock_path(str(mem_root)), "rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the refresher holds it from its start to its end
    assert (mem_root / ".maestro-memory" / "index.sqlite3").is_file()
    block = block_of(prompt("why is the kafka consumer lagging on the cluster?", sid="recall-test-5"))
    assert "kafka consumer lag alert on the kafka cluster" in block
    assert not (mem_root.parent / "logs").exists()  # nothing crashed, here or in the refresher
