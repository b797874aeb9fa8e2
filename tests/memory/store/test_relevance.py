"""Session-start's Project Context by relevance (issue 11 §4; maestro/memory/store/relevance.py): the newest
entry plus the ones the branch and the open tasks name, not only the newest four."""

import datetime
import hashlib
import json
import os

import pytest

from maestro.memory.store import relevance, snapshot

pytestmark = pytest.mark.in_process

TIMELINE = [f"[2024-04-{n:02d} 09:00] worked on the dashboard colours, round {n}" for n in range(1, 21)]
OLD_HIT = "[2024-03-01 09:00] the websocket reconnect storm: backoff jitter in src/net/reconnect.py"


def test_without_focus_the_newest_in_file_order():
    assert relevance.choose(TIMELINE, "", 4) == TIMELINE[-4:]
    assert relevance.choose(TIMELINE, "main", 4) == TIMELINE[-4:]  # a plain branch name says nothing
    assert relevance.choose(TIMELINE[:3], "websocket", 4) == TIMELINE[:3]


def test_the_focus_brings_an_older_entry_in_just_before_the_newest():
    entries = [OLD_HIT] + TIMELINE
    chosen = relevance.choose(entries, "fix/websocket-reconnect src/net/reconnect.py", 4)
    assert chosen[-1] == TIMELINE[-1] and chosen[-2] == OLD_HIT  # the cap keeps entries from the end
    assert chosen[:2] == [TIMELINE[-3], TIMELINE[-2]]  # the free slots: the newest left, as before
    assert len(chosen) == 4 == len(set(chosen))


def test_rarer_words_weigh_more():
    rare = "[2024-03-02 09:00] the kafka consumer was lagging"
    common = "[2024-03-03 09:00] dashboard kafka round"
    entries = [rare, common] + TIMELINE
    chosen = relevance.choose(entries, "kafka consumer dashboard", 3)
    assert chosen == [common, rare, TIMELINE[-1]]  # rare matches two words, one of them rarer


def test_only_the_window_of_newest_entries_is_looked_at():
    entries = [OLD_HIT] + [f"[2024-05-01 09:00] filler {n}" for n in range(relevance.WINDOW)]
    assert OLD_HIT not in relevance.choose(entries, "websocket reconnect", 4)


def write(path, entries):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(("\n§\n".join(entries) + "\n").encode())


def test_the_snapshot_shows_the_focused_entry_within_the_section_cap(mem_root, tmp_path):
    project = str(tmp_path.resolve())
    directory = mem_root / "projects" / hashlib.sha1(project.encode()).hexdigest()[:12]
    write(directory / "MEMORY.md", [OLD_HIT] + TIMELINE)
    plain = snapshot.render(str(mem_root), project=project, today=datetime.date(2024, 5, 2))
    focused = snapshot.render(str(mem_root), project=project, today=datetime.date(2024, 5, 2),
                              focus="websocket reconnect")
    assert "reconnect storm" not in plain.text and "reconnect storm" in focused.text
    stats = next(row for row in focused.sections if row.key == "autoRecall")
    assert stats.bytes <= stats.cap and stats.dropped == 21 - stats.entries
    assert ("autoRecall", OLD_HIT) in focused.shown


def test_session_start_focuses_on_the_branch_and_the_open_tasks(mem_root, tmp_path):
    from maestro.memory.project import context

    from testing.git import git, git_repo

    repo = git_repo(tmp_path / "repo")
    git(repo, "checkout", "-q", "-b", "fix/websocket-reconnect")
    directory = mem_root / "projects" / hashlib.sha1(os.path.realpath(repo).encode()).hexdigest()[:12]
    write(directory / "MEMORY.md", [OLD_HIT, "[2024-03-02 09:00] kafka consumer lag alert"] + TIMELINE)
    assert context.focus(str(mem_root), str(repo), "fix/websocket-reconnect") == "fix/websocket-reconnect"
    handoffs = directory / "handoffs"
    handoffs.mkdir()
    (handoffs / "t1.json").write_text(json.dumps({"version": 1, "task_id": "t1", "kind": "loop", "state": "STUCK",
                                                  "title": "kafka lag", "files": ["src/kafka/consumer.py"]}))
    focus = context.focus(str(mem_root), str(repo), "fix/websocket-reconnect")
    assert focus.startswith("fix/websocket-reconnect") and "src/kafka/consumer.py" in focus
    from maestro.hooks import session_start

    text = session_start.memory_context({"session_id": "focus-test", "cwd": str(repo)}, "")
    assert "reconnect storm" in text and "kafka consumer lag alert" in text


def test_the_words_an_entry_shares_with_the_focus_are_exactly_words_intersected():
    """choose() matches an entry's words against the focus without building and filtering all of them
    (session-start at 20,000 entries): the same set as words(entry) & words(focus), ASCII or not — a
    non-ASCII casefold may move a word boundary (`İ` → `i` + a combining dot), so it is kept per word."""
    focus = "İstanbul STRASSE straße ﬁle Kelvin the main release_v2 fix/websocket-reconnect ǅemal 日本語 src/net/a.py"
    wanted = relevance.words(focus)
    entries = [focus, focus.upper(), focus.lower(), focus.casefold(), "İSTANBUL istanbul i̇stanbul", "ﬁLE FILE file",
               "the and main dev head release v2 websocket", "ǅEMAL ǆemal džemal", "日本語のテスト", "", "x" * 50,
               OLD_HIT, *TIMELINE[:3], "Straße strasse STRAẞE", "\u212aelvin kelvin"]
    for entry in entries:
        assert relevance._found(entry, wanted) == relevance.words(entry) & wanted, entry
