"""The provenance log `<git-dir>/maestro-provenance.log` (spec §2.5): one record per completed
write snapshot (`dispatch`, `orphan-adopted`, and `rollback`: the tree `maestro rollback` left) and
per observed `gap`, the baseline they form, and the operator's one-line `provenance-check`; plus the
`checkpoint` record of each rollback point (maestro.provenance.checkpoint), which forms no baseline.
The digest itself lives in maestro.provenance.digest.
"""

import collections
import errno
import os
import re
import stat
import time

from maestro.util import atomic
from maestro.util import git as gitscope
from maestro.util import progress
from maestro.util.clock import utc_stamp
from maestro.provenance.digest import (
    BASELINE_RE,
    LEASE_DIR,
    LOG_NAME,
    NO_BASELINE,
    UNAVAILABLE,
    digest,
    is_observed,
)
from maestro.provenance.digest_cache import O_EXTRA


def log_path(git_dir: str) -> str:
    return os.path.join(git_dir, LOG_NAME)


def _field(value) -> str:
    """One space-free token: a record is parsed by splitting on spaces."""
    return re.sub(r"\s", "_", str(value)) if value else "unknown"


def append_record(git_dir: str, record: str, name: str = LOG_NAME) -> bool:
    """Append one line (0600, never through a symlink) to the log `name` under `git_dir`. A symlinked
    log is replaced by a new regular file holding this record; the link's target is left alone."""
    path = os.path.join(git_dir, name)
    data = (record.rstrip("\n") + "\n").encode("utf-8", "surrogateescape")
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | O_EXTRA
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.EMLINK) and not os.path.islink(path):
            return False
        try:
            atomic.write_atomic(path, data, 0o600)
            return True
        except OSError:
            return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        os.fchmod(fd, 0o600)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def log_dispatch(git_dir, kind, job, session, before, after, *, clock=time.time) -> bool:
    """`<ts> type=dispatch|orphan-adopted job=… session=… before=… after=…`"""
    if kind not in ("dispatch", "orphan-adopted"):
        raise ValueError(f"not a snapshot record type: {kind}")
    return append_record(git_dir, f"{utc_stamp(clock())} type={kind} job={_field(job)} session={_field(session)} "
                                  f"before={_field(before or UNAVAILABLE)} after={_field(after or UNAVAILABLE)}")


def log_gap(git_dir, prior_job, session, expected, observed, *, clock=time.time) -> bool:
    return append_record(git_dir, f"{utc_stamp(clock())} type=gap prior_job={_field(prior_job)} session={_field(session)} "
                                  f"expected={_field(expected)} observed={_field(observed)}")


def log_checkpoint(git_dir, job, session, commit, *, clock=time.time) -> bool:
    """`<ts> type=checkpoint job=… session=… commit=…`: the tree before `job` (maestro.provenance.checkpoint)."""
    return append_record(git_dir, f"{utc_stamp(clock())} type=checkpoint job={_field(job)} session={_field(session)} "
                                  f"commit={_field(commit)}")


def log_rollback(git_dir, job, session, before, after, *, clock=time.time) -> bool:
    """`<ts> type=rollback job=… session=… before=… after=…`: the tree restored to `job`'s checkpoint. Its
    `after` is a baseline like a dispatch's, so the next lease sees no gap where the rollback changed the tree."""
    return append_record(git_dir, f"{utc_stamp(clock())} type=rollback job={_field(job)} session={_field(session)} "
                                  f"before={_field(before or UNAVAILABLE)} after={_field(after or UNAVAILABLE)}")


_ROLLBACK_RE = re.compile(r"[^ ]+ type=rollback job=([^ ]+) session=[^ ]+ before=[^ ]+ after=([^ ]+)")
Baseline = collections.namedtuple("Baseline", "at job after")


def read_baseline(git_dir: str):
    """The last completed snapshot (dispatch, orphan-adopted or rollback record), or None. A log that
    is a symlink or not a regular file holds no baseline."""
    data = read_log(git_dir)
    if data is None:
        return None
    for line in reversed(data.decode("utf-8", "surrogateescape").split("\n")):
        match = BASELINE_RE.fullmatch(line) or _ROLLBACK_RE.fullmatch(line)
        if match:
            return Baseline(line.split(" ", 1)[0], match.group(1), match.group(2))
    return None


def read_log(git_dir: str, name: str = LOG_NAME):
    """The bytes of the log `name` under `git_dir`, or None when it is absent, a symlink or not a regular file."""
    try:
        fd = os.open(os.path.join(git_dir, name), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | O_EXTRA)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    finally:
        os.close(fd)
    return data


def baseline_check(root, git_dir, digest_value, session, *, emit=None, clock=time.time):
    """After acquiring the lease: a tree that differs from the last completed snapshot changed
    while no lease was held. Emits the BASELINE GAP line and appends a gap record; returns the
    line, or None. Diagnostic only: it never changes an exit code."""
    git_dir = git_dir or gitscope.git_dir(root)
    prior = read_baseline(git_dir)
    if prior is None or not (is_observed(prior.after) and is_observed(digest_value)) or prior.after == digest_value:
        return None
    line = (f"PROVENANCE: BASELINE GAP — tree at acquisition differs from the prior completed snapshot "
            f"(prior_job={prior.job}, expected={prior.after}, observed={digest_value}); author unknown")
    (emit or progress.emit)(line)
    log_gap(git_dir, prior.job, session or "unknown", prior.after, digest_value, clock=clock)
    return line


def _lease_job(lease_dir: str) -> str:
    try:
        with open(os.path.join(lease_dir, "metadata"), encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("job_id="):
                    return line[len("job_id="):].strip() or "unknown"
    except OSError:
        pass
    return "unknown"


def check_line(cwd=None, *, digest_fn=None, emit=None):
    """The operator's manual check: `(one PROVENANCE: line, rc)`; rc 1 only for a gap."""
    root = gitscope.scope_root(cwd)
    if root is None:
        return NO_BASELINE, 0
    try:
        git_dir = gitscope.git_dir(root)
    except gitscope.GitError:
        return NO_BASELINE, 0
    lease_dir = os.path.join(git_dir, LEASE_DIR)
    if os.path.isdir(lease_dir):
        return (f"PROVENANCE: in flight — a write lease is held (job={_lease_job(lease_dir)}), "
                "so the tree is mid-dispatch"), 0
    prior = read_baseline(git_dir)
    if prior is None:
        return NO_BASELINE, 0
    current = (digest_fn or (lambda: digest(cwd, emit=emit)[0]))() or UNAVAILABLE
    if not (is_observed(prior.after) and is_observed(current)):
        return (f"PROVENANCE: comparison unavailable — prior or current snapshot was not observed "
                f"(job={prior.job}, at {prior.at})"), 0
    if current == prior.after:
        return f"PROVENANCE: tree matches the prior completed snapshot (job={prior.job}, at {prior.at})", 0
    return (f"PROVENANCE: BASELINE GAP — tree differs from the prior completed snapshot "
            f"(prior_job={prior.job}, expected={prior.after}, observed={current}); author unknown"), 1
