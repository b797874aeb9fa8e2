#!/usr/bin/env python3
"""Checkpoint cost (issue 13 §1) on a big repository, as a ratio to the warm tree digest.

    python3 bench/checkpoint.py [--files 20000] [--mb 200] [--runs 5] [--changed 10]

Uses its own copy of bench/digest.py's generated repository (`<N>f-<M>mb-checkpoint` beside it, so
its edits never disturb the digest bench) and measures, median of --runs runs, in-process:

  digest warm        `provenance.digest()` with its stat cache warm (what the lease does twice per dispatch)
  checkpoint first   the first checkpoint: the private index is seeded from the user's index (once)
  checkpoint same    a checkpoint of an unchanged tree (private index warm: only lstat, no file read)
  checkpoint edited  a checkpoint after --changed files were rewritten (only those are rehashed)
  status             `git status --porcelain` on the same tree, for scale

A checkpoint is `git add -A` + `git write-tree` + `git commit-tree` on the private index, then
`git update-ref` once the job id is known (all four are timed). Target: checkpoint ≤ 1.5× the
warm digest. Prints numbers; asserts nothing.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import digest as digest_bench  # noqa: E402  (bench/digest.py: the repository generator, `median`)
from digest import median  # noqa: E402
from maestro.provenance import checkpoint  # noqa: E402
from maestro.provenance import digest as provenance  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--mb", type=float, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--changed", type=int, default=10)
    args = parser.parse_args()
    base = os.path.join(os.environ.get("TMPDIR") or tempfile.gettempdir(), "maestro-bench-repo")
    repo = os.path.realpath(os.path.join(base, f"{args.files}f-{args.mb:g}mb-checkpoint"))
    digest_bench.generate(repo, args.files, int(args.mb * 1e6))
    git_dir = os.path.join(repo, ".git")
    checkpoint.drop_private_index(git_dir)
    subprocess.run(["git", "-C", repo, "status", "--porcelain"], check=True, capture_output=True)  # warm caches
    provenance.digest(repo)
    digest_s = median(lambda: provenance.digest(repo), args.runs)
    status_s = median(lambda: subprocess.run(["git", "-C", repo, "status", "--porcelain"], check=True,
                                             capture_output=True), args.runs)
    checkpointer = checkpoint.Checkpointer(repo, git_dir, "bench", emit=lambda line: None)
    counter = iter(range(10 ** 6))

    def one():
        pending = checkpointer.take("# bench plan")
        if pending is None or not pending.name(f"bench-{next(counter)}"):
            raise SystemExit("bench: checkpoint failed")

    started = time.perf_counter()
    one()
    first_s = time.perf_counter() - started
    same_s = median(one, args.runs)
    paths = sorted(os.path.join(root, name) for root, _, names in os.walk(repo) if ".git" not in root
                   for name in names)[:: max(1, args.files // args.changed)][: args.changed]
    rounds = iter(range(10 ** 6))

    def edit():
        tag = next(rounds)
        for path in paths:
            with open(path, "ab") as handle:
                handle.write(f"edit {tag}\n".encode())

    edited_s = median(one, args.runs, before=edit)
    checkpoint.prune(repo, git_dir, 0)
    print(f"repository        {args.files} files, {args.mb:g} MB: {repo}")
    print(f"git status        {status_s * 1000:8.1f} ms")
    print(f"digest warm       {digest_s * 1000:8.1f} ms")
    print(f"checkpoint first  {first_s * 1000:8.1f} ms  (seeds the private index)")
    print(f"checkpoint same   {same_s * 1000:8.1f} ms  ({same_s / digest_s:.2f}× warm digest)")
    print(f"checkpoint edited {edited_s * 1000:8.1f} ms  ({edited_s / digest_s:.2f}× warm digest; "
          f"{len(paths)} file(s) changed)")
    print("target: checkpoint ≤ 1.5× warm digest")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
