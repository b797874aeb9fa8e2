"""Models and efforts the user's plan really has (issue 12 §1.6): `model-select` checks them against
`$CODEX_HOME/models_cache.json` when it exists and refuses with the list of what exists; and a prompt
containing `-m pytest` never becomes the model of a dispatch (codex-plugin-cc #699)."""

import json

import pytest

from maestro.codex import models_cache

pytestmark = pytest.mark.timeout(60)

CACHE = {"fetched_at": "2026-11-30T10:00:00Z", "etag": "W/\"1\"", "models": [
    {"slug": "gpt-5.6-sol", "visibility": "list", "default_reasoning_level": "medium",
     "supported_reasoning_levels": [{"effort": e, "description": ""} for e in ("low", "medium", "high", "xhigh")]},
    {"slug": "gpt-6-astra", "visibility": "list",
     "supported_reasoning_levels": [{"effort": e} for e in ("low", "medium", "high", "max", "ultra")]},
    {"slug": "legacy-model", "visibility": "hide"},  # no level list: every effort passes
]}


@pytest.fixture
def codex(home):
    path = home / ".codex"
    path.mkdir()
    (path / "models_cache.json").write_text(json.dumps(CACHE))
    return path


def test_a_model_the_account_lacks_is_refused_with_the_models_it_has(maestro, codex):
    result = maestro("model-select", "gpt-9-imaginary", "high")
    assert result.rc == 3
    assert result.err == ("SELECT_ERROR: model 'gpt-9-imaginary' is not one your Codex account offers (per "
                          "~/.codex/models_cache.json); models there: gpt-5.6-sol, gpt-6-astra, legacy-model; no pin "
                          "files were changed\n")
    assert unchanged(codex)


def test_an_effort_the_model_lacks_is_refused_with_its_efforts(maestro, codex):
    result = maestro("model-select", "gpt-5.6-sol", "ultra")
    assert result.rc == 3 and "model 'gpt-5.6-sol' does not offer effort 'ultra'" in result.err
    assert "its efforts: low, medium, high, xhigh" in result.err
    result = maestro("model-select", "gpt-6-astra", "high", "xhigh")  # the implementation effort is checked too
    assert result.rc == 3 and "model 'gpt-6-astra' does not offer effort 'xhigh'" in result.err
    result = maestro("model-select", "gpt-6-astra", "high", "low", "gpt-9-imaginary")  # and the implementation model
    assert result.rc == 3 and "model 'gpt-9-imaginary' is not one" in result.err
    result = maestro("model-select", "--scout", "gpt-6-astra", "xhigh")
    assert result.rc == 3 and "does not offer effort 'xhigh'" in result.err
    assert unchanged(codex)


def test_what_the_cache_lists_is_accepted(maestro, codex):
    assert maestro("model-select", "gpt-6-astra", "ultra", "ultra").rc == 0
    assert maestro("model-select", "legacy-model", "minimal", "low").rc == 0
    assert maestro("model-select", "--scout", "gpt-5.6-sol", "low").rc == 0


@pytest.mark.parametrize("content", [None, b"", b"{not json", b"[]", b'{"models": {}}', b'{"models": [1, {"slug": 2}]}',
                                     b"\xff\xfe", b"[" * 100000])
def test_no_usable_cache_checks_nothing(maestro, home, content):
    codex = home / ".codex"
    codex.mkdir()
    if content is not None:
        (codex / "models_cache.json").write_bytes(content)
    assert models_cache.problem(("anything", "ultra")) == ""
    assert maestro("model-select", "gpt-9-imaginary", "high").rc == 0


def test_a_cache_that_is_a_directory_or_fifo_checks_nothing(home):
    import os

    codex = home / ".codex"
    codex.mkdir()
    (codex / "models_cache.json").mkdir()
    assert models_cache.read_models() is None
    (codex / "models_cache.json").rmdir()
    os.mkfifo(codex / "models_cache.json")
    assert models_cache.read_models() is None  # and never blocks, as a plain open() of a FIFO would


def test_the_companions_spark_alias_is_checked_as_the_model_it_names(maestro, home):
    codex = home / ".codex"
    codex.mkdir()
    (codex / "models_cache.json").write_text(json.dumps({"models": [
        {"slug": "gpt-5.3-codex-spark", "supported_reasoning_levels": [{"effort": e} for e in ("low", "high")]}]}))
    assert maestro("model-select", "spark", "high", "low").rc == 0
    assert maestro("model-select", "--scout", "Spark", "low").rc == 0
    result = maestro("model-select", "spark", "xhigh")
    assert result.rc == 3 and "model 'spark (= gpt-5.3-codex-spark)' does not offer effort 'xhigh'" in result.err


def test_a_refusal_reads_the_cache_once(codex, monkeypatch):
    from maestro.commands import model_select
    from maestro.errors import MaestroError

    reads = []
    read_models = models_cache.read_models
    monkeypatch.setattr(models_cache, "read_models", lambda: reads.append(1) or read_models())
    with pytest.raises(MaestroError, match="gpt-9-imaginary"):
        model_select.select_scout("gpt-9-imaginary", "low")
    assert len(reads) == 1


def unchanged(codex):
    return sorted(p.name for p in codex.iterdir() if not p.name.endswith(".flock")) == ["models_cache.json"]


# -- `-m pytest` in a prompt never becomes a model (#699) ------------------------------------------------------
PROMPT = "Run the tests with python -m pytest -q, then -m pytest again; --model pytest is not a request.\n"


def assert_pinned_model(fake, home):
    tasks = fake.calls("task")
    assert tasks, "no task was launched"
    for call in tasks:
        argv = call["argv"]
        assert argv[argv.index("--model") + 1] == "gpt-test"
        assert argv.index("--") < len(argv) - 1 and "-m pytest" in argv[-1]
        assert "pytest" not in argv[:argv.index("--")]
    # the fake's own job records (wherever its data directory is): the model it parsed out of the argv
    records = [json.loads(path.read_text()) for base in (fake.dir, home) for path in base.rglob("task-*.json")]
    requests = [record["request"] for record in records if isinstance(record.get("request"), dict)]
    assert requests and all(request["model"] == "gpt-test" for request in requests)


def test_a_discussion_turn_mentioning_dash_m_pytest_keeps_the_pinned_model(maestro, repo, fake, home):
    fake.set(turn_seconds=0, final_message="STANCE: AGREE\nfine")
    assert maestro("discuss", "--new", "tests", cwd=str(repo)).rc == 0
    turn = repo.parent / "turn.md"
    turn.write_text(PROMPT)
    result = maestro("discuss", "--turn", str(turn), cwd=str(repo))
    assert result.rc == 0, result.out + result.err
    assert_pinned_model(fake, home)


def test_a_loop_plan_mentioning_dash_m_pytest_keeps_the_pinned_model(maestro, repo, fake, home):
    fake.set(final_message="Edited.\nRESULT: DONE", turn_seconds=0, edits={"app.py": "VALUE = 2\n"})
    plans = home / ".maestro" / "plans"
    plans.mkdir(parents=True, mode=0o700)
    plan = plans / "plan.md"
    plan.write_text(PROMPT)
    plan.chmod(0o600)
    result = maestro("loop", "--plan", str(plan), "--verify", "grep -q 'VALUE = 2' app.py", "--poll", "1",
                     cwd=str(repo))
    assert result.rc == 0, result.out + result.err
    assert_pinned_model(fake, home)
