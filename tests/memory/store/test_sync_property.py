"""The sync property (issue 10 §1): two and three machines — clones of one project repository at different
paths, each with its own store — run random add / replace / remove / todo-status / sync / resolve sequences;
after a final round everywhere (conflicts resolved, synced again) every machine's synced files are
byte-identical, and every version a user wrote is present or was deliberately removed, replaced, or given up
by a `--resolve` that chose the other side. Seeded: the seed is in every assertion message."""

import random
import re

import pytest

from maestro.memory.store import sync
from sync_world import World

pytestmark = pytest.mark.source_only  # in-process domain calls: the archive adds nothing but minutes

SEEDS_TWO = range(6)
SEEDS_THREE = range(100, 104)
STEPS = 12
_TOKEN = re.compile(r"\b([kpt][0-9]{4})\b")
_STATUS = re.compile(r"\[status: ([a-z]+)\]")
STATUS_VERBS = ("open", "doing", "done", "dropped")
# edits of shared entries and syncs weigh most: they are what makes concurrent changes (conflicts)
ACTIONS = ("add", "todo", "replace", "replace", "remove", "status", "status", "sync", "sync", "sync", "resolve")


def versions_in(entry) -> set:
    """The versions an entry holds: its token (k/p entries), or token:status (todos)."""
    if entry is None:
        return set()
    tokens = set(_TOKEN.findall(entry))
    status = _STATUS.search(entry)
    return {f"{t}:{status.group(1)}" for t in tokens} if status else tokens


class Run:
    def __init__(self, base, seed: int, machines):
        self.seed, self.rng = seed, random.Random(seed)
        self.world = World(base, machines)
        self.written, self.given_up = set(), set()
        self.counter = self.conflicts = 0
        self.log = []

    def fail(self, what: str) -> str:
        return f"seed {self.seed}: {what}\nsteps: {self.log}"

    def token(self, kind: str) -> str:
        self.counter += 1
        return f"{kind}{self.counter:04d}"

    def pick(self, machine, name: str, kind: str):
        tokens = sorted(t for e in machine.entries(name) for t in _TOKEN.findall(e) if t.startswith(kind))
        return self.rng.choice(tokens) if tokens else None

    def step(self) -> None:
        machine = self.rng.choice(list(self.world.machines.values()))
        action = self.rng.choice(ACTIONS)
        self.log.append(f"{machine.name}:{action}")
        getattr(self, action)(machine)

    def add(self, machine) -> None:
        track = self.rng.choice(("key", "project"))
        token = self.token("k" if track == "key" else "p")
        machine.add(f"{token} note", track)
        self.written.add(token)

    def replace(self, machine) -> None:
        track = self.rng.choice(("key", "project"))
        old = self.pick(machine, "KEY.md" if track == "key" else "MEMORY.md", "k" if track == "key" else "p")
        if old is None:
            return self.add(machine)
        new = self.token(old[0])
        machine.replace(f"{old} note", f"{new} note", track)
        self.given_up.add(old)
        self.written.add(new)

    def remove(self, machine) -> None:
        track = self.rng.choice(("key", "project"))
        old = self.pick(machine, "KEY.md" if track == "key" else "MEMORY.md", "k" if track == "key" else "p")
        if old is not None:
            machine.remove(f"{old} note", track)
            self.given_up.add(old)

    def todo(self, machine) -> None:
        token = self.token("t")
        machine.todos.add(f"{token} task", "project", cwd=machine.cwd)
        self.written.add(f"{token}:open")

    def status(self, machine) -> None:
        todos = [t for t in machine.todos.all(machine.cwd) if t.list == "project"]
        if not todos:
            return self.todo(machine)
        todo = self.rng.choice(sorted(todos, key=lambda t: t.text))
        new = self.rng.choice([s for s in STATUS_VERBS if s != todo.status])
        machine.todos.set_status(todo.id, new, cwd=machine.cwd)
        token = todo.text.split()[0]
        self.given_up.add(f"{token}:{todo.status}")
        self.written.add(f"{token}:{new}")

    def sync(self, machine):
        """"pushed", "conflict" (the sync stopped on conflicts) or None (nothing moved)."""
        try:
            return "pushed" if machine.sync()["pushed"] else None
        except sync.SyncError as exc:
            assert exc.reason == "conflict", self.fail(exc.message)
            return "conflict"

    def resolve(self, machine) -> None:
        chosen = self.rng.choice(sync.RESOLUTIONS)
        files = {name: sync.keyed(machine.entries(name), sync.id_reader(name)) for name in sync.FILES}
        settled = machine.resolve(chosen)
        self.conflicts += len(settled)
        for conflict in settled:
            current, theirs = files[conflict["file"]].get(conflict["id"]), conflict["remote"]
            how = chosen
            if how == "both" and (current is None or theirs is None):
                how = "remote" if current is None else "local"
            if how == "both" and not sync.id_reader(conflict["file"])(theirs):
                how = "local"  # an entry without an id cannot be kept twice
            if how == "local":
                self.given_up |= versions_in(theirs)
            elif how == "remote":
                self.given_up |= versions_in(current)
        self.log.append(f"{machine.name}:resolved {chosen} {len(settled)}")

    def settle(self) -> None:
        """Sync everywhere, resolving what conflicts, until a whole round moves nothing."""
        for _round in range(6):
            moved = False
            for machine in self.world.machines.values():
                outcome = self.sync(machine)
                while outcome == "conflict":
                    self.resolve(machine)
                    outcome = self.sync(machine)
                    moved = True
                moved = moved or outcome == "pushed"
            if not moved:
                return
        raise AssertionError(self.fail("no quiet round after 6"))

    def check(self) -> None:
        machines = list(self.world.machines.values())
        first = machines[0].files()
        for other in machines[1:]:
            for name in sync.FILES:
                assert other.files()[name] == first[name], self.fail(f"{name} differs: {machines[0].name} vs "
                                                                     f"{other.name}")
        present = {v for name in sync.FILES for e in machines[0].entries(name) for v in versions_in(e)}
        lost = self.written - self.given_up - present
        assert not lost, self.fail(f"versions lost: {sorted(lost)}")
        assert present <= self.written, self.fail(f"versions nobody wrote: {sorted(present - self.written)}")


def run_seed(tmp_path, seed: int, machines) -> int:
    """One seeded sequence, settled and checked; the number of conflicts it resolved."""
    run = Run(tmp_path / f"seed-{seed}", seed, machines)
    first = run.world[machines[0]]
    for action in ("add", "add", "todo"):  # a few entries every machine has, so that edits can collide
        getattr(run, action)(first)
    for machine in run.world.machines.values():
        run.sync(machine)
    for _ in range(STEPS):
        run.step()
    run.settle()
    run.check()
    return run.conflicts


def test_two_machines_converge_and_lose_nothing(tmp_path):
    conflicts = sum(run_seed(tmp_path, seed, ("one", "two")) for seed in SEEDS_TWO)
    assert conflicts > 0  # the seeds do make concurrent changes: the resolutions are exercised


def test_three_clones_at_different_paths_converge_and_lose_nothing(tmp_path):
    conflicts = sum(run_seed(tmp_path, seed, ("one", "two", "three")) for seed in SEEDS_THREE)
    assert conflicts > 0
