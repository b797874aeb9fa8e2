#!/usr/bin/env python3
"""Planted-bug (mutation) score for maestro's safety-critical code (issue 17 item 14).

    python3 bench/mutants.py [--only ID ...] [--list] [--check] [--timeout 300] [--python PY]

Each mutant is one small deliberate bug: (id, file, the exact original snippet, its replacement,
the test files that should catch it, why it matters), listed in bench/mutants_table.py. The
script copies maestro/, tests/, pytest.ini and build.py into a private temporary directory (the
tree it runs from is never touched), then for one mutant at a time: writes the mutated file into the copy, runs that
mutant's tests on the source target (`-x -q -p no:randomly -m "not stress"`, one process, a
per-mutant timeout), and writes the original back. One line per mutant (KILLED / SURVIVED /
EQUIVALENT / ERROR, seconds), then the table and the score:

    score = killed / (mutants run - equivalent - errors)

A mutant whose original snippet is not found exactly once in its file is refused (ERROR) before
anything runs, so the list cannot rot silently when the code moves: fix the snippet. A mutant
marked `equivalent` changes no observable behaviour (its `why` argues it); it is still run, and
reported EQUIVALENT when it survives (KILLED when a test proves the argument wrong).
The copy is made once; byte code is never written (PYTHONDONTWRITEBYTECODE), so a restored file
can never be shadowed by a stale .pyc of its mutant. Exit status: 0 when every mutant that
changes behaviour was killed, 1 when one survived, 2 on any error (including a failing baseline).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COPIED = ("maestro", "tests", "pytest.ini", "build.py")
PYTEST_ARGS = ("-x", "-q", "-p", "no:randomly", "-m", "not stress")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mutants_table import MUTANTS, Mutant  # noqa: E402


# -- running -----------------------------------------------------------------------------------
def locate(source: str, item: Mutant):
    """The original snippet's offset, or a reason to refuse the mutant."""
    count = source.count(item.original)
    if count != 1:
        return None, f"original snippet found {count} times in {item.file} (must be exactly once)"
    if item.original == item.replacement:
        return None, "replacement equals the original"
    return source.index(item.original), ""


def copy_tree(target: str) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    for name in COPIED:
        source = os.path.join(ROOT, name)
        if os.path.isdir(source):
            shutil.copytree(source, os.path.join(target, name), ignore=ignore, symlinks=True)
        else:
            shutil.copy2(source, os.path.join(target, name))


def child_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAESTRO_TEST_", "PYTEST_"))}
    env.pop("PYTHONPATH", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_tests(python: str, work: str, tests, timeout: float):
    """('passed'|'failed'|'timeout'|'error', seconds, tail of the output)."""
    started = time.monotonic()
    argv = [python, "-m", "pytest", *PYTEST_ARGS, *tests]
    proc = subprocess.Popen(argv, cwd=work, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.communicate()
        return "timeout", time.monotonic() - started, ""
    tail = out.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
    # 1: a test failed; 2: collection failed (the mutant broke an import) — both are caught bugs.
    verdict = {0: "passed", 1: "failed", 2: "failed"}.get(proc.returncode, "error")
    return verdict, time.monotonic() - started, f"rc={proc.returncode} {tail[0]}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="ID", help="run only these mutants")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--check", action="store_true", help="only check that every snippet is found exactly once")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per mutant's test run")
    parser.add_argument("--python", default=sys.executable, help="the interpreter that runs pytest")
    parser.add_argument("--no-baseline", action="store_true", help="skip the unmutated run of every test set")
    args = parser.parse_args(argv)

    ids = [item.id for item in MUTANTS]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        print(f"duplicate mutant ids: {', '.join(duplicates)}")
        return 2
    chosen = MUTANTS
    if args.only:
        unknown = sorted(set(args.only) - set(ids))
        if unknown:
            print(f"unknown mutant ids: {', '.join(unknown)}")
            return 2
        chosen = [item for item in MUTANTS if item.id in args.only]
    if args.list:
        for item in chosen:
            mark = " (equivalent)" if item.equivalent else ""
            print(f"{item.id}{mark}\n    {item.file}: {item.why}\n    tests: {' '.join(item.tests)}")
        print(f"{len(chosen)} mutants")
        return 0

    refused = {}
    for item in chosen:
        with open(os.path.join(ROOT, item.file), encoding="utf-8") as handle:
            _, reason = locate(handle.read(), item)
        if reason:
            refused[item.id] = reason
    if args.check:
        for item_id, reason in refused.items():
            print(f"REFUSED {item_id}: {reason}")
        print(f"{len(chosen) - len(refused)} of {len(chosen)} mutants apply")
        return 2 if refused else 0

    results = []
    with tempfile.TemporaryDirectory(prefix="maestro-mutants-") as work:
        copy_tree(work)
        print(f"copy of {ROOT} in {work}; {len(chosen)} mutants, one at a time", flush=True)
        if not args.no_baseline:
            for tests in sorted({item.tests for item in chosen if item.id not in refused}):
                for attempt in (1, 2):  # one retry: a busy machine can fail a timing-sensitive test once
                    verdict, seconds, tail = run_tests(args.python, work, tests, args.timeout)
                    print(f"baseline {verdict:<7} {seconds:6.1f}s  {' '.join(tests)}  {tail}", flush=True)
                    if verdict == "passed":
                        break
                if verdict != "passed":
                    print("the unmutated tests do not pass: no score can be given")
                    return 2
        for item in chosen:
            if item.id in refused:
                results.append((item, "ERROR", 0.0, refused[item.id]))
                print(f"ERROR      {0.0:6.1f}s  {item.id}  ({refused[item.id]})", flush=True)
                continue
            path = os.path.join(work, item.file)
            with open(path, encoding="utf-8") as handle:
                original = handle.read()
            try:
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(original.replace(item.original, item.replacement, 1))
                verdict, seconds, tail = run_tests(args.python, work, item.tests, args.timeout)
            finally:
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(original)
            if verdict in ("failed", "timeout"):
                status = "KILLED"
            elif verdict == "passed":
                status = "EQUIVALENT" if item.equivalent else "SURVIVED"
            else:
                status = "ERROR"
            note = " (timeout)" if verdict == "timeout" else ""
            results.append((item, status, seconds, tail))
            print(f"{status:<10} {seconds:6.1f}s  {item.id}{note}  [{item.file}]", flush=True)
    return report(results)


def report(results) -> int:
    counts = {status: sum(1 for r in results if r[1] == status) for status in ("KILLED", "SURVIVED", "EQUIVALENT",
                                                                               "ERROR")}
    scored = counts["KILLED"] + counts["SURVIVED"]
    total_time = sum(r[2] for r in results)
    print("\n| status | mutants |\n|---|---|")
    for status, count in counts.items():
        print(f"| {status.lower()} | {count} |")
    score = 100.0 * counts["KILLED"] / scored if scored else 0.0
    print(f"\nscore: {counts['KILLED']}/{scored} killed = {score:.1f}% of the mutants that change behaviour "
          f"({len(results)} run, {total_time:.0f}s, {total_time / max(1, len(results)):.1f}s per mutant)")
    for item, status, _, _ in results:
        if status in ("SURVIVED", "EQUIVALENT"):
            print(f"  {status.lower()}: {item.id} — {item.why}")
    if counts["ERROR"]:
        return 2
    return 1 if counts["SURVIVED"] else 0


if __name__ == "__main__":
    sys.exit(main())
