"""Pin the Codex model and the effort per role (debate, implementation, scout).

Forms:
  model-select --show                      every pin, with why one is invalid or inherited
  model-select --pin                       MODEL<TAB>DEBATE<TAB>IMPL<TAB>IMPL_MODEL (exit 3 if unusable)
  model-select MODEL DEBATE_EFFORT [IMPL_EFFORT] [IMPL_MODEL]
  model-select --scout MODEL EFFORT        pin the read-only scout role
  model-select --scout-pin                 MODEL<TAB>EFFORT
  model-select --ask-on-start on|off|status

Debate effort: none|minimal|low|medium|high|xhigh|max|ultra. Implementation effort: none…xhigh, or
max/ultra only when equal to the debate effort (the companion cannot pass them per job; the
top-level config value then governs). Scout effort: none…xhigh. Models: letters, digits, . _ -;
when ~/.codex/models_cache.json exists, a model or effort it does not list is refused (with what it lists).
An omitted IMPL_EFFORT keeps ~/.codex/maestro-impl-effort (else medium); an omitted IMPL_MODEL keeps
~/.codex/maestro-impl-model (else MODEL).

Only the top-level `model` and `model_reasoning_effort` keys of ~/.codex/config.toml change; every
other byte stays. config.toml and the two pin files publish together or not at all, selectors
serialize on a lock, and the first edit leaves config.toml.maestro.bak. Exit 0 ok, 3 refused.
"""

import contextlib
import os
import stat
import sys
from dataclasses import dataclass

from maestro import paths
from maestro.util import atomic
from maestro.commands.support import parser
from maestro.codex import models_cache
from maestro.codex.pins import (
    DEBATE_EFFORTS,
    WRAPPER_EFFORTS,
    read_line_file,
    is_valid_model,
    read_pins,
)
from maestro.errors import Exit, MaestroError
from maestro.messages import PIN_MODELS
from maestro.util.text import printable

LOCK_WAIT_SEC = 10.0
LOCK_POLL_SEC = 0.05
NOT_PINNED = "(not pinned — Codex default)"
SCOUT_HOWTO = "maestro model-select --scout <model> <effort>"
_WRAPPER_LIST = " | ".join(WRAPPER_EFFORTS)
_DEBATE_LIST = " | ".join(DEBATE_EFFORTS)


def _codex(name: str) -> str:
    return os.path.join(paths.codex_dir(), name)


def impl_effort_file() -> str:
    return _codex("maestro-impl-effort")


def impl_model_file() -> str:
    return _codex("maestro-impl-model")


def scout_file() -> str:
    return _codex("maestro-scout")


def lock_file() -> str:
    return _codex("maestro-pin.lock.flock")


def backup_file() -> str:
    return paths.codex_config() + ".maestro.bak"


def refuse(message: str):
    raise MaestroError(f"SELECT_ERROR: {message}", Exit.USAGE)


def impl_effort_error(impl: str, debate: str) -> str:
    """'' when the implementation effort can be dispatched with this debate effort."""
    if impl in WRAPPER_EFFORTS or (impl in ("max", "ultra") and impl == debate):
        return ""
    return (f"implementation effort '{impl}' cannot be expressed per write job (the companion accepts "
            f"{'|'.join(WRAPPER_EFFORTS)}); max/ultra are usable only when the top-level debate effort is "
            f"the same value, currently '{debate}'")


def _shown(value: str) -> str:
    return printable(value)


# --- the pin lock ---------------------------------------------------------------------------

@contextlib.contextmanager
def pin_lock(required: bool = True):
    """Serialize selectors: flock on a permanent file (never unlinked, so waiters share one inode).

    The kernel drops the lock when its holder exits, however it dies, so there is nothing stale to
    reclaim. Reads (`required=False`) go ahead unlocked when the lock file cannot even be created
    (no ~/.codex yet, read-only home): there is then nothing a writer could be halfway through.
    """
    from maestro.locks.lockdir import ClaimBusy, flock_file

    with contextlib.ExitStack() as held:
        try:
            if required:
                os.makedirs(paths.codex_dir(), mode=0o700, exist_ok=True)
            held.enter_context(flock_file(lock_file(), LOCK_WAIT_SEC, poll=LOCK_POLL_SEC))
        except ClaimBusy:
            refuse("another model selection is still active; no pin files were changed")
        except OSError as exc:
            if required:
                refuse(f"cannot open the pin lock {lock_file()}: {exc.strerror}; no pin files were changed")
        yield  # the flock is released when `held` closes


# --- reading --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Current:
    model: str
    debate: str
    impl: str
    impl_model_raw: str  # file content, '' when absent or empty
    config_problem: str


def read_current() -> Current:
    pins = read_pins()
    return Current(pins.model, pins.debate_effort, pins.impl_effort, read_line_file(impl_model_file()),
                   pins.config_problem)


def read_scout():
    """(model, effort, valid). Valid only as exactly `model=<m>\\neffort=<e>\\n` (spec §2.8)."""
    try:
        with open(scout_file(), encoding="utf-8") as handle:
            text = handle.read(4096)
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        return "", "", False
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key in ("model", "effort") and key not in fields:
            fields[key] = value
    model, effort = fields.get("model", ""), fields.get("effort", "")
    valid = text == f"model={model}\neffort={effort}\n" and is_valid_model(model) and effort in WRAPPER_EFFORTS
    return model, effort, valid


def show() -> int:
    with pin_lock(required=False):
        cur = read_current()
        scout = read_scout()
    lines = []
    if cur.config_problem:
        lines += [f"model=(unknown — {cur.config_problem})", "effort=(unknown)"]
    else:
        lines.append(f"model={_shown(cur.model) or NOT_PINNED}")
        invalid = " (invalid)" if cur.debate and cur.debate not in DEBATE_EFFORTS else ""
        lines.append(f"effort={_shown(cur.debate) or NOT_PINNED}{invalid}")
    impl = _shown(cur.impl)
    if cur.impl in ("max", "ultra"):
        if cur.impl == cur.debate:
            impl += " (via top-level config)"
        else:
            impl += f" (invalid — top-level effort is {_shown(cur.debate) or 'not pinned'})"
    elif cur.impl not in WRAPPER_EFFORTS:
        impl += " (invalid)"
    lines.append(f"impl-effort={impl}")
    if is_valid_model(cur.impl_model_raw):
        lines.append(f"impl-model={cur.impl_model_raw}")
    elif cur.impl_model_raw:
        lines.append(f"impl-model={_shown(cur.impl_model_raw)} (invalid)")
    else:
        lines.append(f"impl-model={_shown(cur.model) or NOT_PINNED} (inherited)")
    if scout is None:
        lines.append("scout=(not pinned — scout dispatch disabled)")
    elif scout[2]:
        lines.append(f"scout={scout[0]}/{scout[1]}")
    else:
        lines.append(f"scout={_shown(scout[0]) or '?'}/{_shown(scout[1]) or '?'} (invalid)")
    lines.append(f"ask-on-start={'on' if os.path.exists(paths.ask_on_start_flag()) else 'off'}")
    sys.stdout.write("\n".join(lines) + "\n")
    if cur.config_problem:
        sys.stderr.write(f"SELECT_ERROR: {cur.config_problem}\n")
        return Exit.USAGE
    return Exit.OK


def pin() -> int:
    with pin_lock(required=False):
        cur = read_current()
    if cur.config_problem:
        refuse(cur.config_problem)
    if not cur.model or not cur.debate:
        refuse(f"Codex model and effort must both be pinned in the config.toml preamble; pin them with: {PIN_MODELS}")
    if not is_valid_model(cur.model):
        refuse(f"invalid model name '{_shown(cur.model)}' in config.toml (expected letters, digits, . _ -); "
               f"re-pin with: {PIN_MODELS}")
    if cur.debate not in DEBATE_EFFORTS:
        refuse(f"invalid debate effort '{_shown(cur.debate)}' (expected: {_DEBATE_LIST}); re-pin with: {PIN_MODELS}")
    problem = impl_effort_error(cur.impl, cur.debate)
    if problem:
        refuse(_shown(problem))
    if cur.impl_model_raw and not is_valid_model(cur.impl_model_raw):
        refuse(f"invalid implementation model '{_shown(cur.impl_model_raw)}' (expected letters, digits, . _ -)")
    sys.stdout.write(f"{cur.model}\t{cur.debate}\t{cur.impl}\t{cur.impl_model_raw or cur.model}\n")
    return Exit.OK


def scout_pin() -> int:
    with pin_lock(required=False):
        scout = read_scout()
    if scout is None:
        refuse(f"scout pin is missing; pin with: {SCOUT_HOWTO}")
    model, effort, valid = scout
    if not valid:
        if model and not is_valid_model(model):
            refuse(f"invalid scout model '{_shown(model)}'; pin with: {SCOUT_HOWTO}")
        if effort and effort not in WRAPPER_EFFORTS:
            refuse(f"invalid scout effort '{_shown(effort)}' (expected: {_WRAPPER_LIST}); pin with: {SCOUT_HOWTO}")
        refuse(f"malformed scout pin; pin with: {SCOUT_HOWTO}")
    sys.stdout.write(f"{model}\t{effort}\n")
    return Exit.OK


# --- publishing -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Original:
    path: str
    data: object  # bytes, or None when the file did not exist
    mode: int


def snapshot(path: str) -> Original:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.lexists(path):
            refuse(f"{path} is a dangling symlink; no pin files were changed")
        return Original(path, None, 0o600)
    except OSError as exc:
        refuse(f"cannot read {path}: {exc.strerror}; no pin files were changed")
    if not stat.S_ISREG(st.st_mode):
        refuse(f"{path} is not a regular file; no pin files were changed")
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        refuse(f"cannot read {path}: {exc.strerror}; no pin files were changed")
    return Original(path, data, stat.S_IMODE(st.st_mode))


def _restore(done) -> list:
    """Put back every already-published file; the names that could not be restored."""
    failed = []
    for original in reversed(done):
        try:
            if original.data is None:
                os.unlink(original.path)
            else:
                atomic.write_atomic(original.path, original.data, original.mode)
        except OSError as exc:
            failed.append(f"{os.path.basename(original.path)} ({exc.strerror or exc})")
    return failed


def publish(steps) -> None:
    """Publish [(Original, new bytes, label)] in order; on a failure restore the earlier ones."""
    done = []
    for original, data, label in steps:
        if data == original.data:
            continue  # unchanged: keep the inode and mtime
        try:
            atomic.write_atomic(original.path, data, original.mode)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            if not done:
                refuse(f"could not publish {label} ({reason}); no pin files were changed")
            failed = _restore(done)
            if failed:
                refuse(f"could not publish {label} ({reason}) and could not restore {', '.join(failed)}; "
                       f"check ~/.codex by hand (the first original is in {os.path.basename(backup_file())})")
            refuse(f"could not publish {label} ({reason}); previous pin restored")
        done.append(original)


def select(model: str, debate: str, impl=None, impl_model=None) -> int:
    from maestro.codex import toml_edit

    if not is_valid_model(model):
        refuse(f"invalid model name '{_shown(model)}' (expected e.g. gpt-5.6-sol — letters, digits, . _ -)")
    if debate not in DEBATE_EFFORTS:
        refuse(f"invalid effort '{_shown(debate)}' (expected: {_DEBATE_LIST})")
    with pin_lock():
        cur = read_current()
        impl = cur.impl if impl is None else impl
        impl_model = (cur.impl_model_raw or model) if impl_model is None else impl_model
        problem = impl_effort_error(impl, debate)
        if problem:
            refuse(_shown(problem))
        if not is_valid_model(impl_model):
            refuse(f"invalid implementation model '{_shown(impl_model)}' (expected letters, digits, . _ -)")
        problem = models_cache.problem((model, debate), (impl_model, impl))
        if problem:
            refuse(f"{problem}; no pin files were changed")

        config = snapshot(os.path.realpath(paths.codex_config()))  # a symlinked config stays a symlink
        try:
            new_config = toml_edit.set_top_level(config.data or b"", {"model": model, "model_reasoning_effort": debate})
        except toml_edit.TomlEditError as exc:
            refuse(f"{paths.codex_config()}: {exc}; no pin files were changed")
        steps = [
            (config, new_config, "config.toml"),
            (snapshot(impl_effort_file()), f"{impl}\n".encode(), "implementation effort"),
            (snapshot(impl_model_file()), f"{impl_model}\n".encode(), "implementation model"),
        ]
        if config.data is not None and new_config != config.data and not os.path.lexists(backup_file()):
            try:
                atomic.write_atomic(backup_file(), config.data, config.mode)
            except OSError as exc:
                refuse(f"could not back up config.toml ({exc.strerror or exc}); no pin files were changed")
            sys.stdout.write("SELECT: backed up config.toml → config.toml.maestro.bak\n")
        publish(steps)
    sys.stdout.write(f"SELECT: Codex pin updated → model={model} debate-effort={debate} impl-effort={impl} "
                     f"impl-model={impl_model} (applies from the next dispatch)\n")
    return Exit.OK


def select_scout(model: str, effort: str) -> int:
    if not is_valid_model(model):
        refuse(f"invalid scout model '{_shown(model)}' (expected letters, digits, . _ -)")
    if effort not in WRAPPER_EFFORTS:
        refuse(f"invalid scout effort '{_shown(effort)}' (expected: {_WRAPPER_LIST})")
    problem = models_cache.problem((model, effort))  # one read and parse of the cache (it can be megabytes)
    if problem:
        refuse(f"{problem}; no pin files were changed")
    with pin_lock():
        publish([(snapshot(scout_file()), f"model={model}\neffort={effort}\n".encode(), "scout pin")])
    sys.stdout.write(f"SELECT: scout pin updated → model={model} effort={effort} "
                     "(applies from the next scout dispatch)\n")
    return Exit.OK


def ask_on_start(choice: str) -> int:
    flag = paths.ask_on_start_flag()
    try:
        if choice == "on":
            atomic.ensure_private_dir(paths.maestro_dir())
            if not os.path.isfile(flag):
                atomic.write_atomic(flag, b"", 0o600)
            message = "ask-on-start=on — the setup prompt fires at each new session"
        elif choice == "off":
            try:
                os.unlink(flag)
            except FileNotFoundError:
                pass
            message = "ask-on-start=off — session start shows a status line only"
        else:
            message = f"ask-on-start={'on' if os.path.exists(flag) else 'off'}"
    except OSError as exc:
        refuse(f"cannot turn ask-on-start {choice}: {exc.strerror or exc}")
    sys.stdout.write(message + "\n")
    return Exit.OK


def main(argv) -> int:
    p = parser("model-select", __doc__)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--show", action="store_true", help="print every pin")
    mode.add_argument("--pin", action="store_true", help="print the dispatchable pin, tab-separated")
    mode.add_argument("--scout", nargs=2, metavar=("MODEL", "EFFORT"), help="pin the scout role")
    mode.add_argument("--scout-pin", action="store_true", help="print the scout pin, tab-separated")
    mode.add_argument("--ask-on-start", choices=("on", "off", "status"), help="the session-start setup question")
    p.add_argument("values", nargs="*", metavar="PIN", help="MODEL DEBATE_EFFORT [IMPL_EFFORT] [IMPL_MODEL]")
    args = p.parse_args(argv)
    flagged = args.show or args.pin or args.scout_pin or args.scout is not None or args.ask_on_start is not None
    if flagged and args.values:
        p.error(f"unexpected arguments: {' '.join(args.values)}")
    if args.show:
        return show()
    if args.pin:
        return pin()
    if args.scout_pin:
        return scout_pin()
    if args.scout is not None:
        return select_scout(*args.scout)
    if args.ask_on_start is not None:
        return ask_on_start(args.ask_on_start)
    if not 2 <= len(args.values) <= 4:
        p.error("expected MODEL DEBATE_EFFORT [IMPL_EFFORT] [IMPL_MODEL], or one of --show, --pin, --scout, "
                "--scout-pin, --ask-on-start")
    return select(*args.values)
