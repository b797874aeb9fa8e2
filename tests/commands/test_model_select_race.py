"""t5: selectors racing as real processes publish one requester's whole pin, never a mix.

Every process imports maestro first, then waits on a start gate, so all of them reach the pin
lock within a millisecond or two of each other. Readers (`--pin`) race the writers too: the lock
makes every answer one complete published tuple.
"""

import os
import signal
import subprocess
import sys
import time
import tomllib

from testing import PYZ, ROOT, TARGET

from maestro.codex.pins import DEBATE_EFFORTS, WRAPPER_EFFORTS

SELECTORS = 10
ROUNDS = 3
INITIAL = ("old-model", "medium", "medium", "old-impl")
CONFIG = (
    "# Codex config, hand-edited\r\n"
    'model = "old-model"  # pinned by maestro\r\n'
    "approval_policy = \"never\"\r\n"
    'notes = """\r\n[not.a.table]\r\nmodel = "inside"\r\n"""\r\n'
    'model_reasoning_effort = "medium"\r\n'
    "\r\n"
    "[profiles.fast]\r\n"
    'model = "nested"\r\n'
    "\r\n"
    "[mcp_servers.tavily]\r\n"
    'command = "npx"\r\n'
    'args = ["-y", "tavily-mcp@latest"]\r\n'
    'env = { TAVILY_API_KEY = "secret" }\r\n'
)

PRELUDE = (
    "import os, sys, time\n"
    "gate = sys.argv.pop(1)\n"
    "sys.path.insert(0, {path!r})\n"
    "from maestro.cli import main\n"
    "import maestro.commands.model_select, maestro.codex.toml_edit, tomllib\n"
    "while not os.path.exists(gate):\n"
    "    time.sleep(0.001)\n"
    "raise SystemExit(main(sys.argv[1:]))\n"
)


HOLDER = ("import fcntl, sys, time; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); "
          "print('held', flush=True); time.sleep(60)")


def launcher():
    path = os.path.join(str(PYZ), "site-packages") if TARGET == "pyz" else str(ROOT)
    flags = ["-I", "-S"] if TARGET == "pyz" else []
    return [sys.executable, *flags, "-c", PRELUDE.format(path=path)]


def requests():
    out = []
    for i in range(SELECTORS):
        debate = DEBATE_EFFORTS[i % len(DEBATE_EFFORTS)]
        impl = debate if debate in ("max", "ultra") else WRAPPER_EFFORTS[(i + 2) % len(WRAPPER_EFFORTS)]
        out.append((f"model-{i}", debate, impl, f"impl-model-{i}"))
    return out


def published(codex):
    config = (codex / "config.toml").read_bytes()
    data = tomllib.loads(config.decode())
    pin = (data["model"], data["model_reasoning_effort"], (codex / "maestro-impl-effort").read_text().strip(),
           (codex / "maestro-impl-model").read_text().strip())
    return pin, config, data


def without_pins(config: bytes, pin) -> bytes:
    return (config.replace(f'model = "{pin[0]}"'.encode(), b"", 1)
            .replace(f'model_reasoning_effort = "{pin[1]}"'.encode(), b"", 1))


def test_t5_racing_selectors_publish_exactly_one_requesters_pin(home):
    codex = home / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_bytes(CONFIG.encode())
    (codex / "maestro-impl-effort").write_text("medium\n")
    (codex / "maestro-impl-model").write_text("old-impl\n")
    original_data = tomllib.loads(CONFIG)
    wanted = requests()
    seen_by_readers = set()
    for round_ in range(ROUNDS):
        gate = home / f"gate-{round_}"
        writers = [subprocess.Popen([*launcher(), str(gate), "model-select", *pin], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE) for pin in wanted]
        readers = [subprocess.Popen([*launcher(), str(gate), "model-select", "--pin"], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE) for _ in range(4)]
        time.sleep(0.5)  # let every interpreter import and reach the gate
        gate.write_text("")
        for proc in writers + readers:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err.decode()
            if proc in readers:
                seen_by_readers.add(tuple(out.decode().rstrip("\n").split("\t")))
        pin, config, data = published(codex)
        assert pin in wanted, f"torn pin {pin}"
        assert data == {**original_data, "model": pin[0], "model_reasoning_effort": pin[1]}
        assert without_pins(config, pin) == without_pins(CONFIG.encode(), INITIAL)
    assert seen_by_readers <= set(wanted) | {INITIAL}, seen_by_readers
    assert (codex / "config.toml.maestro.bak").read_bytes() == CONFIG.encode()
    leftovers = [p.name for p in codex.iterdir() if "tmp" in p.name]
    assert leftovers == []


def test_a_killed_lock_holder_does_not_block_the_next_selector(home):
    codex = home / ".codex"
    codex.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(codex / "maestro-pin.lock.flock")],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout.readline() == b"held\n"
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
    finally:
        holder.stdout.close()
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    gate = home / "gate"
    gate.write_text("")
    started = time.monotonic()
    result = subprocess.run([*launcher(), str(gate), "model-select", "after-kill", "low"], capture_output=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr.decode()
    assert time.monotonic() - started < 9  # did not wait out the 10 s lock wait (room for a busy machine)
    assert published(codex)[0] == ("after-kill", "low", "medium", "after-kill")
