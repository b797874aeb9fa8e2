"""maestro as a real process for the workflow verbs (`loop`, `watchdog`, `discuss`, `scout`, `status`): run one to
its end, or start one and finish it later (source tree or built archive). Every started process is reaped by the
`reap_started` fixture (tests/conftest.py), even when its test fails mid-way."""

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

from testing.paths import PYZ, ROOT, TARGET, note_launch


@dataclass
class Run:
    rc: int
    out: str
    err: str

    @property
    def lines(self):
        return self.out.splitlines()

    def final(self):
        return self.lines[-1] if self.lines else ""


def command(*args):
    note_launch()
    if TARGET == "pyz":
        return [sys.executable, "-I", "-S", str(PYZ), *args]
    # -I -S as the archive runs: maestro needs only the standard library, and `site` costs ~8 ms a process
    return [sys.executable, "-I", "-S", "-c", "import sys; sys.path.insert(0, %r); from maestro.cli import main; "
            "raise SystemExit(main(sys.argv[1:]))" % str(ROOT), *args]


def run(*args, cwd=None, timeout=60, env=None, stdin="") -> Run:
    proc = subprocess.run(command(*args), cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})), input=stdin)
    return Run(proc.returncode, proc.stdout, proc.stderr)


_STARTED = []


def start(*args, cwd=None, env=None) -> subprocess.Popen:
    proc = subprocess.Popen(command(*args), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, **(env or {})), start_new_session=True)
    _STARTED.append(proc)
    return proc


def reap_started_processes():
    """Kill (process group) and collect every process `start` began that is still tracked."""
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.communicate()


def wait_for(predicate, timeout=10.0, step=0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False


def finish(proc: subprocess.Popen, sig=None, timeout=30) -> Run:
    if sig is not None:
        os.kill(proc.pid, sig)
    out, err = proc.communicate(timeout=timeout)
    return Run(proc.returncode, out, err)


TERM = signal.SIGTERM
