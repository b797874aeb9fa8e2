"""`memory search` (issue 11 §1): ranked hits of every track as lines or the `--json` envelope; exit 0
with hits, 1 with none, 3 on bad arguments. Runs on both targets, on the index and on its fallback."""

import json

import pytest

from maestro.errors import Exit
from testing.memory import project_dir, write_track as write


@pytest.fixture(params=["index", "fallback"])
def store(request, mem_root, project, monkeypatch):
    """A small store over the global and the project tracks; the fallback run switches the index off."""
    if request.param == "fallback":
        monkeypatch.setenv("MAESTRO_MEMORY_INDEX", "off")
    write(mem_root / "MEMORY.md", ["[2024-04-01 09:00] [summary:shell] use bash strict mode in scripts",
                                   "[2024-04-02 09:00] [summary:coffee] the coffee machine is on floor 3"])
    write(mem_root / "USER.md", ["[2024-04-03 09:00] [summary:editor] prefers vim keybindings"])
    write(project_dir(mem_root, project) / "KEY.md",
          ["[id:0000000a] [2024-04-04] [summary:sqlite] decided: the search index lives in sqlite fts5"])
    write(project_dir(mem_root, project) / "MEMORY.md",
          ["[2024-04-05 10:00] [summary:flaky] the sqlite index test was flaky under load; fixed the lock wait"])
    write(project_dir(mem_root, project) / "MEMORY-archive.md",
          ["[2023-01-05 10:00] [summary:old] an archived sqlite note about the index"])
    return mem_root


def test_hits_are_lines_with_score_track_id_date_file_and_text_best_first(maestro, store, project):
    result = maestro("memory", "search", "sqlite", "index", "--cwd", str(project))
    assert result.rc == Exit.OK, result.err
    lines = result.out.splitlines()
    assert len(lines) == 2 and result.err == ""
    scores = [float(line.split()[0]) for line in lines]
    assert scores == sorted(scores, reverse=True) and scores[-1] > 0
    key = next(line for line in lines if " key " in line)
    assert "0000000a" in key and "2024-04-04" in key and str(project_dir(store, project) / "KEY.md") in key
    assert key.endswith("decided: the search index lives in sqlite fts5")
    assert not any("archived" in line for line in lines)  # archives only with --archived


def test_json_is_the_envelope_with_every_field(maestro, store, project):
    result = maestro("memory", "search", "sqlite", "--cwd", str(project), "--archived", "--json")
    assert result.rc == Exit.OK, result.err
    envelope = json.loads(result.out)
    assert (envelope["version"], envelope["command"], envelope["ok"]) == (1, "memory search", True)
    hits = envelope["results"]
    assert {hit["track"] for hit in hits} == {"key", "project"} and len(hits) == 3
    assert all(set(hit) == {"track", "id", "date", "score", "file", "text", "project"} for hit in hits)
    assert any("archived sqlite note" in hit["text"] and hit["file"].endswith("MEMORY-archive.md") for hit in hits)
    assert [hit["score"] for hit in hits] == sorted((hit["score"] for hit in hits), reverse=True)


def test_track_limit_and_since_narrow_the_hits(maestro, store, project):
    only_key = maestro("memory", "search", "sqlite", "--cwd", str(project), "--track", "key", "--json")
    assert [hit["track"] for hit in json.loads(only_key.out)["results"]] == ["key"]
    one = maestro("memory", "search", "sqlite", "index", "--cwd", str(project), "--limit", "1")
    assert (one.rc, len(one.out.splitlines())) == (Exit.OK, 1)
    recent = maestro("memory", "search", "sqlite", "--cwd", str(project), "--since", "2024-04-05", "--json")
    assert [hit["track"] for hit in json.loads(recent.out)["results"]] == ["project"]
    two_tracks = maestro("memory", "search", "vim", "coffee", "--track", "user", "--track", "global", "--json",
                         "--cwd", str(project))
    assert {hit["track"] for hit in json.loads(two_tracks.out)["results"]} == {"user", "memory"}


def test_no_hit_exits_1_with_one_line_and_an_empty_envelope(maestro, store, project):
    result = maestro("memory", "search", "kubernetes", "--cwd", str(project))
    assert (result.rc, result.out) == (Exit.NOT_FOUND, "")
    assert result.err == "maestro memory search: no entry matches\n"
    as_json = maestro("memory", "search", "kubernetes", "--cwd", str(project), "--json")
    assert as_json.rc == Exit.NOT_FOUND
    assert json.loads(as_json.out) == {"version": 1, "command": "memory search", "ok": True, "results": []}


def test_an_empty_store_is_no_hit_not_an_error(maestro, project):
    result = maestro("memory", "search", "anything", "--cwd", str(project))
    assert result.rc == Exit.NOT_FOUND


@pytest.mark.parametrize("args, words", [
    (["--limit", "0"], "invalid limit"),
    (["--limit", "ten"], "--limit"),
    (["--since", "2024-02-30"], "invalid date"),
    (["--since", "../../etc"], "invalid date"),
    (["--track", "secrets"], "unknown track"),
    (["--cwd", "/nonexistent/dir"], "not a directory"),
    (["--bogus"], "unrecognized arguments"),
])
def test_bad_arguments_exit_3_with_one_line(maestro, store, project, args, words):
    result = maestro("memory", "search", "sqlite", *(["--cwd", str(project)] if "--cwd" not in args else []), *args)
    assert (result.rc, result.out) == (Exit.USAGE, "")
    assert result.err.startswith("maestro memory search") and words in result.err and result.err.count("\n") == 1


def test_a_missing_or_blank_query_is_a_usage_error(maestro, store, project):
    assert maestro("memory", "search").rc == Exit.USAGE
    blank = maestro("memory", "search", "  ", "--cwd", str(project), "--json")
    assert blank.rc == Exit.USAGE and json.loads(blank.out)["error"]["reason"] == "usage"
