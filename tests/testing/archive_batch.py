"""Many judgements by the built archive's code in one process, for the big labelled tables (the Bash corpus, the
gate fuzz's hostile table, the directive table's inject-then-gate rows).

Against the archive every corpus entry used to start its own `python3 -I -S maestro.pyz gate`: 1,186 processes,
about 46 s of CPU per CI run for the same few entry-point lines each time. The entry point is proved by the
hook tests that still start a process per case (tests/hooks/test_gate.py and the others); what the table
checks is the judgement, and that this runs here on the archive's own modules: one child process imports
maestro from inside the archive (never the source tree: `-I -S`, the archive first on sys.path, and it
refuses to go on otherwise) and calls `maestro.cli.main([verb])` once per payload, exactly as the source
target's in-process runner does.
"""

import json
import os
import subprocess
import sys
from dataclasses import dataclass

from testing.paths import PYZ, note_launch

_DRIVER = r'''
import io, json, os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "site-packages"))
import maestro
if not maestro.__file__.startswith(sys.argv[1] + os.sep):
    raise SystemExit("maestro was not imported from the archive: " + maestro.__file__)
from maestro.cli import main
from maestro.util import progress
cases = json.load(sys.stdin)
real = sys.stdin, sys.stdout, sys.stderr
results = []
for verb, data in cases:
    progress._fd = progress.STDOUT
    sys.stdin = io.TextIOWrapper(io.BytesIO(data.encode("utf-8")), encoding="utf-8")
    sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
    try:
        rc = main([verb])
    except SystemExit as exc:
        rc = exc.code
    results.append([rc, sys.stdout.getvalue(), sys.stderr.getvalue()])
sys.stdin, sys.stdout, sys.stderr = real
json.dump(results, sys.stdout)
'''


@dataclass
class Result:
    rc: int
    out: str
    err: str


def judge_all(verb: str, payloads, env=None, cwd=None, timeout=300, archive=PYZ):
    """One Result per payload, judged by the archive's `maestro <verb>` in one process."""
    return judge_cases([(verb, data) for data in payloads], env=env, cwd=cwd, timeout=timeout, archive=archive)


def judge_cases(cases, env=None, cwd=None, timeout=300, archive=PYZ):
    """One Result per (verb, payload), in order, in one process: what a case leaves on disk (a grant flag that
    `inject` sets or revokes) is there for the next, as between hook processes (tests/hooks/test_directive_table.py)."""
    note_launch()
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", _DRIVER, str(archive)],
                          input=json.dumps([[verb, data] for verb, data in cases]), capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})), cwd=cwd, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [Result(*row) for row in json.loads(proc.stdout)]
