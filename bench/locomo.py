#!/usr/bin/env python3
"""Memory search on LoCoMo (snap-research/LoCoMo, data/locomo10.json): recall of the evidence turns.

    MAESTRO_LOCOMO=/path/to/locomo10.json python3 bench/locomo.py [--pyz dist/maestro.pyz] [--in-process]

One store per conversation in a throw-away HOME, one `global` entry per dialogue turn
(`[YYYY-MM-DD HH:MM] Speaker: text`, the session's date and time; a shared photo's caption appended as
`[shares …]`), loaded with `maestro memory batch`. Every question of categories 1–4 is asked with
`maestro memory search --json --limit 10` (a real process: the pyz given, else the source tree); its gold
is its evidence turns. Reported overall and per category: R@k (the share of a question's evidence turns
in the top k, averaged) for k = 1, 5, 10 and MRR (of the first evidence turn), next to plain BM25
(rank.bm25) over the same entries, in-process. --in-process ranks with rank.search over a MemoryCorpus of
the same entries instead of the real path (quick, for tuning). Goal (issue 11): R@5 ≥ 0.70.
The data is CC BY-NC 4.0: never copy it into this repository. Prints numbers; asserts nothing.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import locomo_data  # noqa: E402  (bench/ is not a package)
from maestro.memory.store import rank  # noqa: E402
from maestro.memory.store.analyze import terms  # noqa: E402

KS = (1, 5, 10)
TARGET_R5 = 0.70


class Tally:
    """R@k and MRR per category and overall."""

    def __init__(self):
        self.rows = {}

    def add(self, category: int, gold: set, ranked_ids: list) -> None:
        values = [len(gold & set(ranked_ids[:k])) / len(gold) for k in KS]
        values.append(next((1.0 / (i + 1) for i, x in enumerate(ranked_ids) if x in gold), 0.0))
        for key in ("all", category):
            self.rows.setdefault(key, []).append(values)

    def line(self, key) -> str:
        rows = self.rows.get(key, [])
        if not rows:
            return "n=0"
        means = [sum(column) / len(rows) for column in zip(*rows)]
        return " ".join(f"{name}={value:.3f}" for name, value in zip(("R@1", "R@5", "R@10", "MRR"), means)) \
            + f" n={len(rows)}"

    def r5(self) -> float:
        rows = self.rows.get("all", [])
        return sum(row[1] for row in rows) / len(rows) if rows else 0.0


def corpus_of(turns) -> rank.MemoryCorpus:
    return rank.MemoryCorpus([rank.Doc(f"MEMORY.md#{seq}", "global", dia_id, stamp, "MEMORY.md", body,
                                       tuple(terms(body)), seq, "")
                              for seq, (dia_id, stamp, body) in enumerate(turns)])


def maestro_argv(pyz: str) -> list:
    """A command as the `maestro` launcher runs it (bench/memory_scale.py registered_argv), else the tree."""
    if pyz:
        from memory_scale import registered_argv

        return registered_argv(os.path.realpath(sys.executable), os.path.abspath(pyz))[1]
    return [sys.executable, "-m", "maestro"]


def real_search(conversation, argv, env, tally: Tally, latencies: list) -> None:
    """Load the conversation with `memory batch`, ask every question with `memory search`."""
    with tempfile.TemporaryDirectory(prefix="maestro-locomo-") as home:
        env = dict(env, HOME=home)
        batch = [{"track": "global", "text": f"[{stamp}] {body}"} for _, stamp, body in conversation["turns"]]
        path = os.path.join(home, "batch.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(batch, handle)
        done = subprocess.run(argv + ["memory", "batch", path], capture_output=True, env=env, cwd=home)
        if done.returncode != 0:
            raise SystemExit(f"memory batch failed ({done.returncode}): {done.stderr.decode()[-500:]}")
        by_entry = {}
        for dia_id, stamp, body in conversation["turns"]:
            by_entry.setdefault((stamp, body), dia_id)  # a repeated turn: its first occurrence was stored
        for question, category, gold in conversation["questions"]:
            start = time.perf_counter()
            done = subprocess.run(argv + ["memory", "search", "--json", "--limit", "10", "--", question],
                                  capture_output=True, env=env, cwd=home)
            latencies.append(time.perf_counter() - start)
            results = json.loads(done.stdout)["results"] if done.returncode == 0 else []
            tally.add(category, gold, [by_entry.get((hit["date"], hit["text"]), "?") for hit in results])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("MAESTRO_LOCOMO", ""))
    parser.add_argument("--pyz", default="", help="the archive to run (default: the source tree)")
    parser.add_argument("--in-process", action="store_true", help="rank.search in-process, not the real path")
    parser.add_argument("--no-captions", action="store_true", help="leave shared photos' captions out")
    args = parser.parse_args()
    if not args.data or not os.path.exists(args.data):
        print("LoCoMo data not found: set MAESTRO_LOCOMO=/path/to/locomo10.json (skipped)")
        return 0
    conversations = locomo_data.load(args.data, captions=not args.no_captions)
    baseline, ours, latencies = Tally(), Tally(), []
    env = {k: v for k, v in os.environ.items() if k not in ("MAESTRO_MEMORY_DIR", "CLAUDE_ENV_FILE")}
    if not args.pyz:
        env["PYTHONPATH"] = os.path.dirname(HERE)
    for conversation in conversations:
        corpus = corpus_of(conversation["turns"])
        for question, category, gold in conversation["questions"]:
            baseline.add(category, gold, [doc.id for doc, _ in rank.bm25(question, corpus, limit=10)])
            if args.in_process:
                start = time.perf_counter()
                ranked = rank.search(question, corpus, limit=10)
                latencies.append(time.perf_counter() - start)
                ours.add(category, gold, [doc.id for doc, _ in ranked])
        if not args.in_process:
            real_search(conversation, maestro_argv(args.pyz), env, ours, latencies)
    how = "rank.search in-process" if args.in_process else f"memory search ({args.pyz or 'source tree'})"
    print(f"LoCoMo: {len(conversations)} conversations, {sum(len(c['turns']) for c in conversations)} turns")
    for key in ("all", 1, 2, 3, 4):
        name = "all" if key == "all" else f"{key} {locomo_data.CATEGORIES[key]}"
        print(f"  {name:<14} bm25    {baseline.line(key)}")
        print(f"  {'':<14} maestro {ours.line(key)}")
    latencies.sort()
    if latencies:
        print(f"  {how}: median {1000 * latencies[len(latencies) // 2]:.1f} ms a query, "
              f"p95 {1000 * latencies[int(len(latencies) * 0.95)]:.1f} ms")
    print(f"  goal R@5 >= {TARGET_R5}: {'met' if ours.r5() >= TARGET_R5 else 'NOT met'} ({ours.r5():.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
