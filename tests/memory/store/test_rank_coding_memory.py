"""Recall of memory search on the coding-memory set (tests/memory/store/coding_memory/): a coding agent's own
store of the "harbor" project — decisions, bugs, commands, file paths, people — and the queries it asks.

The floors are the figures measured when the ranking was tuned (bench/coding_memory.py prints them) minus a
small margin: a change to the analyzer or the ranking that loses recall here fails."""

import importlib.util
import pathlib

import pytest

from maestro.memory.store import rank

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)

BENCH = pathlib.Path(__file__).parents[3] / "bench" / "coding_memory.py"
# Measured: rank.search R@5 0.945, R@10 0.969, MRR 0.908 (rank.bm25: 0.936, 0.942, 0.905).
R5_FLOOR = 0.93
R10_FLOOR = 0.95
MRR_FLOOR = 0.88


@pytest.fixture(scope="module")
def coding_set():
    spec = importlib.util.spec_from_file_location("coding_memory_bench", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    docs, queries = bench.load()
    return bench, rank.MemoryCorpus(docs), queries


def test_the_set_is_big_enough_and_every_gold_entry_exists(coding_set):
    bench, corpus, queries = coding_set
    ids = [d.id for d in corpus.docs]
    assert len(queries) >= 100 and len(ids) == len(set(ids)) >= 100
    assert {d.track for d in corpus.docs} == {"global", "user", "project", "key", "daily"}
    assert all(gold <= set(ids) for _, gold in queries)


def test_recall_stays_above_its_measured_floor(coding_set):
    bench, corpus, queries = coding_set
    figures = bench.recall(bench.maestro_search, corpus, queries)
    assert figures["R@5"] >= R5_FLOOR, figures
    assert figures["R@10"] >= R10_FLOOR, figures
    assert figures["MRR"] >= MRR_FLOOR, figures
    baseline = bench.recall(bench.plain_bm25, corpus, queries)
    assert figures["R@10"] >= baseline["R@10"], (figures, baseline)
