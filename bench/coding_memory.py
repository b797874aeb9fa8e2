#!/usr/bin/env python3
"""Memory search on the coding-memory set: recall of a coding agent's own store (decisions, bugs, commands,
file paths, people), next to plain BM25.

    python3 bench/coding_memory.py

The set lives in tests/memory/store/coding_memory/ (entries.md: 104 entries of the "harbor" project over the
global, user, project, key and daily tracks; queries.tsv: 163 queries with their gold entry ids), and
tests/memory/store/test_rank_coding_memory.py holds its recall floor. Ranked in-process with rank.search
(today = the day after the last entry, the project being worked on = harbor) and rank.bm25 over the same
MemoryCorpus. Prints R@1/5/10 and MRR; asserts nothing.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from maestro.memory.store import rank  # noqa: E402
from maestro.memory.store.analyze import terms  # noqa: E402

SET_DIR = os.path.join(ROOT, "tests", "memory", "store", "coding_memory")
PROJECT = "harbor"
TODAY = "2026-07-28"
FILES = {"global": "MEMORY.md", "user": "USER.md", "project": f"projects/{PROJECT}/MEMORY.md",
         "key": f"projects/{PROJECT}/KEY.md"}


def load(directory: str = SET_DIR) -> tuple:
    """(docs, queries): the entries as rank.Docs (seq = order within their file) and [(query, {gold ids})]."""
    blocks = []
    with open(os.path.join(directory, "entries.md"), encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("## "):
                entry_id, track, date = line[3:].split()
                blocks.append([entry_id, track, date, []])
            elif blocks and line.strip():
                blocks[-1][3].append(line.strip())
    docs, seqs = [], {}
    for entry_id, track, date, lines in blocks:
        file = FILES.get(track) or f"daily/{date}.md"
        seq = seqs[file] = seqs.get(file, -1) + 1
        text = " ".join(lines)
        docs.append(rank.Doc(f"{file}#{seq}", track, entry_id, date, file, text, tuple(terms(text)), seq,
                             PROJECT if track in ("project", "key") else ""))
    queries = []
    with open(os.path.join(directory, "queries.tsv"), encoding="utf-8") as handle:
        for line in handle:
            if line.strip() and not line.startswith("#"):
                query, gold = line.rstrip("\n").split("\t")
                queries.append((query, set(gold.split())))
    return docs, queries


def recall(ranker, corpus, queries) -> dict:
    """Mean R@1/5/10 (share of a query's gold entries in the top k) and MRR."""
    sums = {"R@1": 0.0, "R@5": 0.0, "R@10": 0.0, "MRR": 0.0}
    for query, gold in queries:
        ids = [doc.id for doc, _ in ranker(query, corpus)]
        for k in (1, 5, 10):
            sums[f"R@{k}"] += len(gold & set(ids[:k])) / len(gold)
        sums["MRR"] += next((1.0 / (i + 1) for i, x in enumerate(ids) if x in gold), 0.0)
    return {name: value / len(queries) for name, value in sums.items()}


def maestro_search(query, corpus):
    return rank.search(query, corpus, limit=10, today=TODAY, project=PROJECT)


def plain_bm25(query, corpus):
    return rank.bm25(query, corpus, limit=10)


def main() -> int:
    docs, queries = load()
    corpus = rank.MemoryCorpus(docs)
    print(f"coding-memory set: {len(docs)} entries, {len(queries)} queries")
    for name, ranker in (("bm25", plain_bm25), ("maestro", maestro_search)):
        figures = recall(ranker, corpus, queries)
        print(f"  {name:<8} " + " ".join(f"{key}={value:.3f}" for key, value in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
