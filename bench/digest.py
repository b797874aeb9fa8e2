#!/usr/bin/env python3
"""Tree digest (`maestro digest`) on a big repository, as a ratio to git's own hashing floor.

    python3 bench/digest.py [--files 20000] [--mb 200] [--runs 5] [--pyz dist/maestro.pyz]

Generates (once; reused while present) a committed repository of N files totalling M MB under
$TMPDIR/maestro-bench-repo/<N>f-<M>mb, then measures, all in the same run, median wall time of
--runs runs each:

  floor        `git ls-files -s -z` + `git hash-object --stdin-paths` over the same files
               (git reading and hashing every byte; no filters apply in this repository)
  digest cold  no stat cache: `<git-dir>/maestro-digest-cache` is deleted before each run, so
               every byte is read and hashed (the same cost as a tree where every file changed)
  digest warm  the cache left by the previous run: only lstat + listings, no file is read
  git status   `git status --porcelain` on the same tree, as a process (git's own stat pass:
               index, lstat of every tracked file on its preload threads, the untracked walk)

The OS page cache is warm for all three (the bench does not drop caches; the floor is run once
before timing so it pays no cold-disk penalty either). Each digest is timed in-process
(`provenance.digest()`) and as users run it, a fresh `python3 …/maestro.pyz digest` process
(`python3 -m maestro digest` without --pyz), which adds interpreter start-up and imports.
Targets: warm digest ≤ 0.2 × floor (issue 3); warm digest as a process ≤ 1.5 × `git status
--porcelain` as a process (issue 13: the digest runs twice per write dispatch). The two are timed
interleaved (status, digest, status, …) so a busy machine slows both alike; CPU time (user + system,
the children included) is printed beside the wall time because on a shared 2-core machine it is the
steadier figure. Prints numbers; asserts nothing.
"""

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from maestro.provenance import digest as provenance  # noqa: E402

PER_DIR = 100
DONE_MARK = "maestro-bench-complete"


def git(repo, *args, stdin=None):
    return subprocess.run(["git", "-C", repo, *args], input=stdin, check=True, capture_output=True).stdout


def generate(repo: str, files: int, total_bytes: int) -> None:
    """A deterministic tree: nested directories, varied sizes, ~1% executables, one commit."""
    if os.path.exists(os.path.join(repo, ".git", DONE_MARK)):
        return
    if os.path.exists(repo):
        subprocess.run(["rm", "-rf", repo], check=True)
    os.makedirs(repo)
    rng = random.Random(20260820)
    weights = [rng.random() + 0.05 for _ in range(files)]
    scale = total_bytes / sum(weights)
    sizes = [max(1, int(weight * scale)) for weight in weights]
    started = time.perf_counter()
    print(f"generating {files} files / {sum(sizes) / 1e6:.0f} MB in {repo} …", flush=True)
    chunk = rng.randbytes(1 << 20)
    for index, size in enumerate(sizes):
        directory = os.path.join(repo, f"pkg{index // (PER_DIR * 10):03d}", f"mod{(index // PER_DIR) % 10}")
        os.makedirs(directory, exist_ok=True)
        offset = rng.randrange(len(chunk))
        body = (f"file {index}\n".encode() + (chunk[offset:] + chunk[:offset]) * (size // len(chunk) + 1))[:size]
        path = os.path.join(directory, f"f{index:05d}.dat")
        with open(path, "wb") as handle:
            handle.write(body)
        if index % 100 == 7:
            os.chmod(path, 0o755)
    git(repo, "init", "-q")
    for key, value in (("user.name", "bench"), ("user.email", "bench@example.invalid"),
                       ("core.looseCompression", "0"), ("gc.auto", "0")):
        git(repo, "config", key, value)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "bench tree")
    open(os.path.join(repo, ".git", DONE_MARK), "w").close()
    print(f"generated in {time.perf_counter() - started:.1f}s", flush=True)
    time.sleep(provenance.CACHE_MARGIN_NS / 1e9)  # younger files are never cached: let them age


def median(fn, runs: int, before=None) -> float:
    samples = []
    for _ in range(runs):
        if before is not None:
            before()
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def interleaved(commands: dict, runs: int) -> dict:
    """label -> (median wall s, median CPU s of the child) of each command, run in turns."""
    walls, cpus = {label: [] for label in commands}, {label: [] for label in commands}
    for _ in range(runs):
        for label, run in commands.items():
            before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
            run()
            walls[label].append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[label].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return {label: (statistics.median(walls[label]), statistics.median(cpus[label])) for label in commands}


def floor(repo: str) -> None:
    listing = git(repo, "ls-files", "-s", "-z")
    paths = b"".join(record.partition(b"\t")[2] + b"\n" for record in listing.split(b"\0") if record)
    git(repo, "hash-object", "--stdin-paths", stdin=paths)


def drop_cache(repo: str) -> None:
    try:
        os.unlink(os.path.join(repo, ".git", provenance.CACHE_NAME))
    except FileNotFoundError:
        pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--mb", type=float, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pyz", default="", help="time this archive's `digest` verb as a process")
    args = parser.parse_args()
    base = os.path.join(os.environ.get("TMPDIR") or tempfile.gettempdir(), "maestro-bench-repo")
    repo = os.path.realpath(os.path.join(base, f"{args.files}f-{args.mb:g}mb"))
    generate(repo, args.files, int(args.mb * 1e6))
    env = dict(os.environ, LC_ALL="C")
    command = [sys.executable, "-I", "-S", os.path.abspath(args.pyz), "digest"] if args.pyz else \
        [sys.executable, "-m", "maestro", "digest"]

    def verb():
        subprocess.run(command, cwd=repo, env=dict(env, PYTHONPATH=ROOT), check=True, capture_output=True)

    floor(repo)  # warm the page cache for everyone
    floor_s = median(lambda: floor(repo), args.runs)
    reference = provenance.digest(repo, use_cache=False)[0]

    def in_process():
        if provenance.digest(repo)[0] != reference:
            raise SystemExit("bench: the cached digest differs from the uncached one")

    results = {}
    for label, before in (("cold", lambda: drop_cache(repo)), ("warm", None)):
        results[label] = (median(in_process, args.runs, before), median(verb, args.runs, before))
    print(f"repository   {args.files} files, {args.mb:g} MB: {repo}")
    print(f"digest       {reference}")
    print(f"floor        {floor_s * 1000:8.1f} ms  (git ls-files -s + git hash-object --stdin-paths)")
    for label, (inproc, proc) in results.items():
        print(f"digest {label:5} {inproc * 1000:8.1f} ms in-process ({inproc / floor_s:.2f}× floor), "
              f"{proc * 1000:8.1f} ms as a process ({proc / floor_s:.2f}× floor)")
    print("target: warm digest ≤ 0.2× floor")

    def status():
        subprocess.run(["git", "status", "--porcelain"], cwd=repo, env=env, check=True, capture_output=True)

    verb()  # the cache is warm and the page cache too
    paired = interleaved({"status": status, "digest": verb}, max(args.runs, 11))
    (status_wall, status_cpu), (warm_wall, warm_cpu) = paired["status"], paired["digest"]
    print(f"git status   {status_wall * 1000:8.1f} ms wall, {status_cpu * 1000:6.1f} ms CPU  (--porcelain, as a process)")
    print(f"digest warm  {warm_wall * 1000:8.1f} ms wall, {warm_cpu * 1000:6.1f} ms CPU  as a process: "
          f"{warm_wall / status_wall:.2f}× git status wall, {warm_cpu / status_cpu:.2f}× its CPU")
    print("target: warm digest as a process ≤ 1.5× git status --porcelain")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
