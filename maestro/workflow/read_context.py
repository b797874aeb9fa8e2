"""What a read adapter (`discuss`, `scout`) needs, wired from the environment: the repository
whose job lock serializes companion jobs, two companion transports and the read budget.

Read turns take no write lease, so unlike WriteContext there is no heartbeat and no provenance.
The repository lookup and the companion discovery are WriteContext's own (workflow/context.py).
"""

import time

from maestro import knobs
from maestro.workflow.read_turn import ReadTurn
from maestro.workflow.context import companion_transport, repository
from maestro.util import progress
from maestro.util import signals as signal_state


class ReadContext:
    def __init__(self, scope: str):
        self.emit = progress.emit
        for knob in (knobs.lock_wait(), knobs.lock_wait_poll(), knobs.companion_timeout(),
                     knobs.max_dispatch(write=False)):
            if knob.warning:
                self.emit(knob.warning)
        self.root, self.git_dir = repository(
            scope, "Codex jobs run under the repository's companion job lock (spec §2.4)")
        self.signals = signal_state
        self.transport = companion_transport(scope, self.emit, signal_state.stop_requested, signal_state.pause)

    def joblock(self):
        from maestro.locks.joblock import JobLock

        return JobLock(
            self.git_dir, "read", job_status=self.transport.job_status, emit=self.emit,
            writers=self.transport.global_writers, wait_budget=knobs.lock_wait().value,
            wait_poll=knobs.lock_wait_poll(for_job_lock=True).value, init_grace=knobs.initializing_grace().value,
            should_stop=self.signals.stop_requested, sleep=self.signals.pause,
        )

    def read_turn(self, routing, max_idle: float, poll: float) -> ReadTurn:
        return ReadTurn(
            joblock_factory=self.joblock, transport=self.transport, routing=routing,
            emit=self.emit, signals=self.signals, max_idle=max_idle, poll=poll,
            max_total=knobs.max_dispatch(write=False).value, clock=time.monotonic,
            retry_sleep=knobs.retry_sleep().value,
        )
