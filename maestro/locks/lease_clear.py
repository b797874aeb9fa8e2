"""`loop --clear-lease` (spec §2.3): retire a write lease its owner can no longer finish.

Refused while the lease is healthy (fresh heartbeat), while its owner process is alive or cannot
be identified, while it may still be initializing, or while any write-capable Codex job runs:
only a person, after `status`, decides that nothing is writing any more. Every refusal names the
lease's writer (its job id, or the running jobs) and why it refused.

Two clears may race (two terminals, a script): exactly one retires the lease and the other
reports it already cleared. An unreadable writer list is read again a few times before refusing:
the real companion rewrites its job table unlocked, so a read can fail while another call writes
it (more often the bigger the table), and a transient failure must not decide the outcome.
"""

import os
import time

from maestro.errors import Exit
from maestro.locks import lockdir as claimlib
from maestro.locks import identity
from maestro.locks.lease_state import UNKNOWN, LeaseState, lock_path


WRITER_LIST_READS = 3  # reads of the global writer list before an unreadable one refuses the clear
WRITER_LIST_RETRY_SEC = 0.5


def clear(git_dir: str, *, writers, emit, clock=time.time, heartbeat_stale=90.0, init_grace=5.0,
          sleep=time.sleep) -> int:
    """`loop --clear-lease`: retire a lease that can no longer be finished by its owner.

    0 = cleared, absent or already cleared by a concurrent clear, 11 = refused (with the reason and
    the writer it protects). Never clears a healthy lease, a live or unidentifiable owner's lease,
    or any lease while a write-capable Codex job is running."""
    lock = claimlib.LockDir(lock_path(git_dir))
    where = f"lock: {lock.path}"
    if not lock.exists():
        emit(f"MAESTRO_LOCK: there is no write lease to clear at {lock.path}")
        return Exit.OK
    state = LeaseState(lock, clock)
    if not lock.exists():  # retired while it was read (a concurrent clear or the owner's release)
        return _already_cleared(emit, where)
    action = _clearing_action(lock, state, emit, where, clock=clock, heartbeat_stale=heartbeat_stale,
                              init_grace=init_grace)
    if action is None or not _no_writer_runs(writers, emit, where, _lease_writer(state), sleep):
        return Exit.BLOCKED
    if not _no_ledger_worker_alive(git_dir, emit, where, _lease_writer(state)):
        return Exit.BLOCKED
    return _retire(lock, state, action, emit, where)


def _lease_writer(state: LeaseState) -> str:
    """The writer this lease stands for, as a refusal names it."""
    job = state.poison.get("unconfirmed_job") if state.poisoned else ""
    return (f"lease job={job or state.owner('job_id')} session={state.owner('session_id')} "
            f"pid={state.owner('pid')}")


def _already_cleared(emit, where: str) -> int:
    emit(f"MAESTRO_LOCK: the write lease was already cleared by another process; nothing left to clear ({where})")
    return Exit.OK


def _clearing_action(lock, state: LeaseState, emit, where: str, *, clock, heartbeat_stale, init_grace):
    """The line announcing what will be cleared, or None after emitting why this lease is refused."""
    if state.identity is None:
        # No generation: left by a creator that died between mkdir and its first write (the
        # original Maestro, or a pre-#7 lock). Nothing can ever identify it, so once it is old
        # enough and no writer runs, it is cleared like any other orphan.
        if not os.path.isdir(lock.path) or os.path.islink(lock.path) or state.age < init_grace:
            emit(f"MAESTRO_LOCK: refusing to clear — Lease interval identity is unconfirmed ({where})")
            return None
        return f"MAESTRO_LOCK: clearing structurally invalid orphan write lease (no generation; {where})"
    if state.metadata is None and state.staged is None and not state.problem:
        if state.age < init_grace:
            emit(f"MAESTRO_LOCK: refusing to clear — metadata is absent but the {int(state.age)}s-old lease may still be "
                 f"initializing ({where}); retry after {init_grace:g}s")
            return None
        return f"MAESTRO_LOCK: clearing structurally invalid orphan write lease (no metadata; {where})"
    if state.problem:
        if state.age < init_grace:
            emit(f"MAESTRO_LOCK: refusing to clear — write lease metadata is malformed; owner cannot be identified; "
                 f"failing closed ({where})")
            return None
        return f"MAESTRO_LOCK: clearing structurally invalid orphan write lease ({state.problem}; {where})"
    if state.poisoned:
        poison = state.poison
        return (f"MAESTRO_LOCK: clearing poisoned write lease (job={poison.get('unconfirmed_job') or UNKNOWN} "
                f"reason={poison.get('unconfirmed_reason') or UNKNOWN}; {where})")
    return _stale_owner_action(state, emit, where, clock=clock, heartbeat_stale=heartbeat_stale)


def _stale_owner_action(state: LeaseState, emit, where: str, *, clock, heartbeat_stale):
    """A well-formed, unpoisoned lease is cleared only when its heartbeat is stale and its owner dead."""
    who = f"job={state.owner('job_id')} session={state.owner('session_id')} pid={state.owner('pid')}"
    beat = state.heartbeat_epoch()
    age = None if beat is None else max(0, int(clock()) - beat)
    if not heartbeat_stale or age is None or age <= heartbeat_stale:
        note = "" if age is None else f"; heartbeat {age}s old"
        emit(f"MAESTRO_LOCK: refusing to clear — write lease is healthy and not this command's to clear "
             f"({who}, {where}){note}")
        return None
    owner = identity.owner_state(int(state.owner("pid", "0")), state.owner("process_start", ""))
    if owner != identity.DEAD:
        why = ("its pid is alive with the recorded start time: the writer itself may be running"
               if owner == identity.ALIVE_CONFIRMED else
               "its pid is alive but its start time cannot be confirmed: it may be the writer")
        emit(f"MAESTRO_LOCK: refusing to clear — heartbeat is stale but the recorded owner process is still alive "
             f"or its identity is unconfirmed; {why} ({who}, {where})")
        return None
    kind = "metadata-only write lease" if state.heartbeat is None else "write lease whose heartbeat went stale"
    return f"MAESTRO_LOCK: clearing {kind} ({who}, last sign of life {age}s ago; {where})"


def _no_writer_runs(writers, emit, where: str, lease_writer: str, sleep) -> bool:
    """Only a readable global writer list with no write-capable job lets a lease be cleared; an
    unreadable one is read again (WRITER_LIST_READS in all) before it refuses."""
    running = writers()
    for _ in range(WRITER_LIST_READS - 1):
        if running is not None:
            break
        sleep(WRITER_LIST_RETRY_SEC)
        running = writers()
    if running is None:
        emit(f"MAESTRO_LOCK: refusing to clear — the global Codex writer list is unavailable after "
             f"{WRITER_LIST_READS} reads, so nothing proves the lease's writer has stopped ({lease_writer}; {where})")
        return False
    active = sorted(job for job, write in running.items() if write)
    if active:
        emit(f"MAESTRO_LOCK: refusing to clear — write-capable Codex job(s) still running: {', '.join(active)}; "
             f"any of them may be writing into this worktree, clear once they have ended ({lease_writer}; {where})")
        return False
    return True


def _no_ledger_worker_alive(git_dir: str, emit, where: str, lease_writer: str) -> bool:
    """maestro's own job ledger, not the companion's table alone (job_ledger.live_worker)."""
    from maestro.locks.job_ledger import describe_live, live_worker

    entry = live_worker(git_dir)
    if entry is None:
        return True
    emit(f"MAESTRO_LOCK: refusing to clear — {describe_live(entry, git_dir)}; clear once it has ended "
         f"({lease_writer}; {where})")
    return False


def _retire(lock, state: LeaseState, action: str, emit, where: str) -> int:
    """Retire the lease under the claim, unless a successor replaced it since it was read."""
    try:
        with claimlib.claim(lock.parent):
            if not lock.exists():
                return _already_cleared(emit, where)
            if lock.identity() != state.identity:
                emit(f"MAESTRO_LOCK: refusing to clear — a successor lease now holds {lock.path}")
                return Exit.BLOCKED
            emit(action)
            warning = lock.retire()
    except (claimlib.ClaimBusy, OSError) as exc:
        emit(f"MAESTRO_LOCK: refusing to clear — could not claim the lease ({exc}; {where})")
        return Exit.BLOCKED
    if warning:
        emit(warning)
    return Exit.OK
