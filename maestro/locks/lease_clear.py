"""`loop --clear-lease` (spec §2.3): retire a write lease its owner can no longer finish.

Refused while the lease is healthy (fresh heartbeat), while its owner process is alive or cannot
be identified, while it may still be initializing, or while any write-capable Codex job runs:
only a person, after `status`, decides that nothing is writing any more.
"""

import os
import time

from maestro.locks import lockdir as claimlib
from maestro.locks import identity
from maestro.locks.lease import UNKNOWN, LeaseState, lock_path


def clear(git_dir: str, *, writers, emit, clock=time.time, heartbeat_stale=90.0, init_grace=5.0) -> int:
    """`loop --clear-lease`: retire a lease that can no longer be finished by its owner.

    0 = cleared or absent, 11 = refused (with the reason). Never clears a healthy lease, a live
    or unidentifiable owner's lease, or any lease while a write-capable Codex job is running."""
    lock = claimlib.LockDir(lock_path(git_dir))
    where = f"lock: {lock.path}"
    if not lock.exists():
        emit(f"MAESTRO_LOCK: there is no write lease to clear at {lock.path}")
        return 0
    state = LeaseState(lock, clock)
    if state.identity is None:
        # No generation: left by a creator that died between mkdir and its first write (the
        # original Maestro, or a pre-#7 lock). Nothing can ever identify it, so once it is old
        # enough and no writer runs, it is cleared like any other orphan.
        if not os.path.isdir(lock.path) or os.path.islink(lock.path) or state.age < init_grace:
            emit(f"MAESTRO_LOCK: refusing to clear — Lease interval identity is unconfirmed ({where})")
            return 11
        action = f"MAESTRO_LOCK: clearing structurally invalid orphan write lease (no generation; {where})"
    elif state.metadata is None and state.staged is None and not state.problem:
        if state.age < init_grace:
            emit(f"MAESTRO_LOCK: refusing to clear — metadata is absent but the {int(state.age)}s-old lease may still be "
                 f"initializing ({where}); retry after {init_grace:g}s")
            return 11
        action = f"MAESTRO_LOCK: clearing structurally invalid orphan write lease (no metadata; {where})"
    elif state.problem:
        if state.age < init_grace:
            emit(f"MAESTRO_LOCK: refusing to clear — write lease metadata is malformed; owner cannot be identified; "
                 f"failing closed ({where})")
            return 11
        action = f"MAESTRO_LOCK: clearing structurally invalid orphan write lease ({state.problem}; {where})"
    elif state.poisoned:
        poison = state.poison
        action = (f"MAESTRO_LOCK: clearing poisoned write lease (job={poison.get('unconfirmed_job') or UNKNOWN} "
                  f"reason={poison.get('unconfirmed_reason') or UNKNOWN}; {where})")
    else:
        who = f"job={state.owner('job_id')} session={state.owner('session_id')} pid={state.owner('pid')}"
        beat = state.heartbeat_epoch()
        age = None if beat is None else max(0, int(clock()) - beat)
        if not heartbeat_stale or age is None or age <= heartbeat_stale:
            note = "" if age is None else f"; heartbeat {age}s old"
            emit(f"MAESTRO_LOCK: refusing to clear — write lease is healthy and not this command's to clear "
                 f"({who}, {where}){note}")
            return 11
        owner = identity.owner_state(int(state.owner("pid", "0")), state.owner("process_start", ""))
        if owner != identity.DEAD:
            emit(f"MAESTRO_LOCK: refusing to clear — heartbeat is stale but the recorded owner process is still alive "
                 f"or its identity is unconfirmed ({who}, {where})")
            return 11
        kind = "metadata-only write lease" if state.heartbeat is None else "write lease whose heartbeat went stale"
        action = f"MAESTRO_LOCK: clearing {kind} ({who}, last sign of life {age}s ago; {where})"
    running = writers()
    if running is None:
        emit(f"MAESTRO_LOCK: refusing to clear — the global Codex writer list is unavailable ({where})")
        return 11
    active = sorted(job for job, write in running.items() if write)
    if active:
        emit(f"MAESTRO_LOCK: refusing to clear — write-capable Codex job(s) still running: {', '.join(active)} ({where})")
        return 11
    try:
        with claimlib.claim(lock.parent):
            if lock.identity() != state.identity:
                emit(f"MAESTRO_LOCK: refusing to clear — a successor lease now holds {lock.path}")
                return 11
            emit(action)
            warning = lock.retire()
    except (claimlib.ClaimBusy, OSError) as exc:
        emit(f"MAESTRO_LOCK: refusing to clear — could not claim the lease ({exc}; {where})")
        return 11
    if warning:
        emit(warning)
    return 0
