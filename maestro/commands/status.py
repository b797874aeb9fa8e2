"""`status [--json]`: who holds this worktree's write lease and job lock, and what to do about it.

Reports the lease (holder job, session, pid, age, heartbeat fresh/stale, poisoned and why), the
companion job lock, the last provenance record, and — when one is needed — the exact recovery
command. Reads only local files: it never waits on the companion. Exit 0 when nothing needs
recovery, 11 when something does, 3 outside git. `--watch [SECONDS]` follows the lease until it
is free (or needs recovery), then prints this report.
"""

import os
import sys
import time

from maestro import knobs
from maestro.commands.support import parser, write_envelope
from maestro.locks import lockdir as claimlib
from maestro.util import git as gitscope
from maestro.locks import identity
from maestro.locks import joblock
from maestro.locks.lease_state import LeaseState, lock_path
from maestro.errors import Exit, MaestroError
from maestro.messages import CLEAR_JOB_LOCK, CLEAR_LEASE


def lease_report(git_dir: str, now: float) -> dict:
    lock = claimlib.LockDir(lock_path(git_dir))
    if not lock.exists():
        return {"state": "absent", "path": lock.path}
    state = LeaseState(lock, lambda: now)
    report = {"path": lock.path, "age_seconds": int(state.age)}
    if state.identity is None or state.problem or (state.metadata is None and state.staged is None):
        why = state.problem or ("no generation" if state.identity is None else "no metadata (initializing or orphaned)")
        report.update(state="unidentifiable", reason=why,
                      recovery=f"{CLEAR_LEASE}  (refused while the lock is younger than "
                               f"{knobs.initializing_grace().value:g}s or a Codex writer is running)")
        return report
    pid = int(state.owner("pid", "0"))
    owner = identity.owner_state(pid, state.owner("process_start", ""))
    started = state.owner("started_epoch", "")
    beat = state.heartbeat_epoch()
    stale_after = knobs.heartbeat_stale().value
    report.update(
        job=state.owner("job_id"), session=state.owner("session_id"), pid=pid, owner=owner,
        held_seconds=int(now - int(started)) if started.isdigit() else None,
        heartbeat_age_seconds=None if beat is None else max(0, int(now) - beat),
        digest_before=state.owner("digest_before", "unavailable"),
    )
    report["heartbeat"] = ("unknown" if beat is None else
                           "stale" if stale_after and report["heartbeat_age_seconds"] > stale_after else "fresh")
    if state.poisoned:
        poison = state.poison
        report.update(state="poisoned", poisoned_job=poison.get("unconfirmed_job", "unknown"),
                      reason=poison.get("unconfirmed_reason", "unknown"),
                      recovery=f"{CLEAR_LEASE}  (only once no Codex job is writing: check the job's state "
                               "and `git status` first)")
    elif owner == identity.DEAD:
        report.update(state="orphaned", recovery=f"{CLEAR_LEASE}  (the owner process is gone; the next "
                                                 "loop also reclaims it once its job is finished)")
    else:
        report["state"] = "held"
    return report


def joblock_report(git_dir: str) -> dict:
    lock = claimlib.LockDir(joblock.lock_path(git_dir))
    if not lock.exists():
        return {"state": "absent", "path": lock.path}
    ident, record, problem = joblock.read_holder(lock)
    report = {"path": lock.path}
    if ident is None or problem or record is None:
        report.update(state="unidentifiable", reason=problem or "no metadata",
                      recovery=CLEAR_JOB_LOCK)
        return report
    alive = joblock.holder_alive(record)
    report.update(state="held" if alive else "orphaned", job_class=record.get("class"),
                  job=record.get("job") or "unknown", session=record.get("session") or "unknown",
                  pid=int(record["pid"]))
    if not alive:
        report["recovery"] = f"{CLEAR_JOB_LOCK}  (refused while its job is still running)"
    return report


def last_provenance(git_dir: str) -> str:
    path = os.path.join(git_dir, "maestro-provenance.log")
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - 65536))
            lines = handle.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    return lines[-1] if lines else ""


def render(report: dict) -> str:
    lines = [f"worktree: {report['root']}"]
    held = report["lease"]
    if held["state"] == "absent":
        lines.append("lease: free")
    elif held["state"] == "unidentifiable":
        lines.append(f"lease: UNIDENTIFIABLE ({held['reason']}; {held['age_seconds']}s old)")
    else:
        lines.append(
            f"lease: {held['state'].upper()} by job={held['job']} session={held['session']} pid={held['pid']} "
            f"({held['owner']}) for {held['held_seconds']}s; heartbeat {held['heartbeat']}"
            + (f" ({held['heartbeat_age_seconds']}s ago)" if held["heartbeat_age_seconds"] is not None else ""))
        if held["state"] == "poisoned":
            lines.append(f"  poisoned: quiescence unconfirmed for job={held['poisoned_job']} reason={held['reason']}")
    locked = report["job_lock"]
    if locked["state"] == "absent":
        lines.append("job lock: free")
    elif locked["state"] == "unidentifiable":
        lines.append(f"job lock: UNIDENTIFIABLE ({locked['reason']})")
    else:
        lines.append(f"job lock: {locked['state'].upper()} class={locked['job_class']} job={locked['job']} "
                     f"session={locked['session']} pid={locked['pid']}")
    lines.append(f"last provenance record: {report['provenance'] or '(none)'}")
    if "companion" in report:  # maestro's own companion data dir, broker and job ledger (issue 12 §1)
        from maestro.commands.status_companion import render_lines

        lines += render_lines(report["companion"])
    for part in (held, locked):
        if "recovery" in part:
            lines.append(f"recover with: {part['recovery']}")
    return "\n".join(lines) + "\n"


def main(argv) -> int:
    p = parser("status", __doc__)
    p.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    p.add_argument("--watch", nargs="?", const="2", metavar="SECONDS",
                   help="redraw every SECONDS (default 2) until the lease is free, then print the final state")
    args = p.parse_args(argv)
    root = gitscope.scope_root()
    if root is None:
        raise MaestroError("maestro status: not inside a git repository", Exit.USAGE)
    git_dir = gitscope.git_dir(root)
    if args.watch is not None:
        from maestro.commands import status_watch

        return status_watch.watch(args.watch, git_dir, lease_report, lambda: main([]), json_output=args.json)
    now = time.time()
    report = {"root": root, "git_dir": git_dir, "lease": lease_report(git_dir, now),
              "job_lock": joblock_report(git_dir), "provenance": last_provenance(git_dir)}
    from maestro.commands.status_companion import report as companion_report

    report["companion"] = companion_report(root, git_dir)
    needs = any("recovery" in report[key] for key in ("lease", "job_lock"))
    report["needs_recovery"] = needs
    if args.json:
        write_envelope("status", not needs, **report)
    else:
        sys.stdout.write(render(report))
    return Exit.BLOCKED if needs else Exit.OK
