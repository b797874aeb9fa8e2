"""Reading the Codex pins (spec §2.8): which model and efforts each role uses.

`~/.codex/config.toml` top-level `model` / `model_reasoning_effort` (parsed with tomllib, so
tables, multi-line strings and single-quoted values are read correctly), plus maestro's own pin
files beside it. Reading never writes and never raises for a bad file: it reports it.
"""

import collections
import os

from maestro import paths

WRAPPER_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
DEBATE_EFFORTS = WRAPPER_EFFORTS + ("max", "ultra")
DEFAULT_IMPL_EFFORT = "medium"
_MODEL_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def is_valid_model(value) -> bool:
    return isinstance(value, str) and bool(value) and all(ch in _MODEL_CHARS for ch in value)


_PinFields = collections.namedtuple(
    "_PinFields",
    "model debate_effort impl_effort impl_model impl_model_invalid scout config_problem",
    defaults=("", "", DEFAULT_IMPL_EFFORT, "", False, (), ""),
)


class Pins(_PinFields):
    """The pins as read. model/debate_effort '' = not pinned; impl_model '' = inherits `model`;
    impl_model_invalid: the impl-model file holds no valid name; scout: (model, effort) or ();
    config_problem: why config.toml could not be read. (A namedtuple, not a dataclass: importing
    `dataclasses` costs the session-start hook several milliseconds.)"""

    __slots__ = ()

    @property
    def complete(self) -> bool:
        """Enough to dispatch Codex: a pinned model and debate effort."""
        return bool(self.model and self.debate_effort)


def read_line_file(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read(4096).strip()
    except (OSError, UnicodeDecodeError):
        return ""


def read_config_top_level(path: str):
    """(top-level scalar keys, problem text). Missing file ⇒ ({}, '')."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        return {}, ""
    except OSError as exc:
        return {}, f"cannot read {path}: {exc.strerror}"
    import tomllib

    try:
        text = raw.decode("utf-8-sig")
        data = tomllib.loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return {}, f"{path} is not valid TOML ({exc})"
    return {key: value for key, value in data.items() if not isinstance(value, dict)}, ""


def _scout_pin(path: str) -> tuple:
    text = read_line_file(path)
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key in ("model", "effort"):
            fields[key] = value
    model, effort = fields.get("model", ""), fields.get("effort", "")
    if is_valid_model(model) and effort in WRAPPER_EFFORTS:
        return (model, effort)
    return ()


def read_pins() -> Pins:
    codex = paths.codex_dir()
    top, problem = read_config_top_level(paths.codex_config())
    model = top.get("model")
    effort = top.get("model_reasoning_effort")
    impl_model = read_line_file(os.path.join(codex, "maestro-impl-model"))
    return Pins(
        model=model if isinstance(model, str) and model.strip() else "",
        debate_effort=effort if isinstance(effort, str) and effort.strip() else "",
        impl_effort=read_line_file(os.path.join(codex, "maestro-impl-effort")) or DEFAULT_IMPL_EFFORT,
        impl_model=impl_model if is_valid_model(impl_model) else "",
        impl_model_invalid=bool(impl_model) and not is_valid_model(impl_model),
        scout=_scout_pin(os.path.join(codex, "maestro-scout")),
        config_problem=problem,
    )
