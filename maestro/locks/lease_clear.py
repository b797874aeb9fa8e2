"""`loop --clear-lease` (spec §2.3): retire a write lease its owner can no longer finish.

Refused while the lease is healthy (fresh heartbeat), while its owner process is alive or cannot
be identified, while it may still be initializing, or while any write-capable Codex job runs:
only a person, after `status`, decides that nothing is writing any more.
"""

import os
import time

from maestro.errors import Exit
from maestro.locks import lockdir as claimlib
from maestro.locks import identity
from maestro.locks.lease_state import UNKNOWN, LeaseState, lock_path


def clear(git_dir: str, *, writers, emit, clock=time.time, heartbeat_stale=90.0, init_grace=5.0) -> int:
    """`loop --clear-lease`: retire a lease that can no longer be finished by its owner.

    0 = cleared or absent, 11 = refused (with the reason). Never clears a healthy lease, a live
    or unidentifiable owner's lease, or any lease while a write-capable Codex job is running."""
    lock = claimlib.LockDir(lock_path(git_dir))
    where = f"lock: {lock.path}"
    if not lock.exists():
        emit(f"MAESTRO_LOCK: there is no write lease to clear at {lock.path}")
        return Exit.OK
    state = LeaseState(lock, clock)
    action = _clearing_action(lock, state, emit, where, clock=clock, heartbeat_stale=heartbeat_stale,
                              init_grace=init_grace)
    if action is None or not _no_writer_runs(writers, emit, where):
        return Exit.BLOCKED
    return _retire(lock, state, action, emit, where)


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
        emit(f"MAESTRO_LOCK: refusing to clear — heartbeat is stale but the recorded owner process is still alive "
             f"or its identity is unconfirmed ({who}, {where})")
        return None
    kind = "metadata-only write lease" if state.heartbeat is None else "write lease whose heartbeat went stale"
    return f"MAESTRO_LOCK: clearing {kind} ({who}, last sign of life {age}s ago; {where})"


def _no_writer_runs(writers, emit, where: str) -> bool:
    """Only a readable global writer list with no write-capable job lets a lease be cleared."""
    running = writers()
    if running is None:
        emit(f"MAESTRO_LOCK: refusing to clear — the global Codex writer list is unavailable ({where})")
        return False
    active = sorted(job for job, write in running.items() if write)
    if active:
        emit(f"MAESTRO_LOCK: refusing to clear — write-capable Codex job(s) still running: {', '.join(active)} ({where})")
        return False
    return True


def _retire(lock, state: LeaseState, action: str, emit, where: str) -> int:
    """Retire the lease under the claim, unless a successor replaced it since it was read."""
    try:
        with claimlib.claim(lock.parent):
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
