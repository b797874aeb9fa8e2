"""Strict, fast parsing of a hook's JSON payload.

Hooks are hot paths: `import json` pulls in `re` and `enum` and costs ~8 ms here, more than the
whole budget of the gate. CPython's `_json` accelerator parses the same grammar without either,
so the gate uses it directly and falls back to `json` only where `_json` is missing.
"""

import sys

MAX_PAYLOAD_BYTES = 8 * 1024 * 1024  # far above any real payload; bounds a hostile one
_WHITESPACE = " \t\n\r"


class PayloadError(ValueError):
    pass


def _reject_constant(name):
    raise PayloadError(f"non-standard JSON constant {name}")


class _StrictContext:
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_reject_constant)
    memo = {}


try:
    from _json import make_scanner as _make_scanner

    _scan = _make_scanner(_StrictContext)
except ImportError:  # pragma: no cover - non-CPython interpreters
    _scan = None


def parse(text: str):
    """Parse one JSON document; raise PayloadError on anything else (trailing data included)."""
    if _scan is None:  # pragma: no cover
        import json

        try:
            return json.loads(text, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            raise PayloadError(str(exc)) from None
    stripped = text.lstrip(_WHITESPACE)
    start = len(text) - len(stripped)
    try:
        value, end = _scan(text, start)
    except StopIteration:
        raise PayloadError("not a JSON document") from None
    except (ValueError, RecursionError) as exc:
        raise PayloadError(str(exc) or "malformed JSON") from None
    except SystemError:
        # _json raises its syntax errors as json.decoder.JSONDecodeError, looked up in sys.modules
        # only: without `json` imported (the hooks' hot path) it returns NULL with no exception set.
        raise PayloadError("malformed JSON") from None
    if text[end:].strip(_WHITESPACE):
        raise PayloadError("trailing data after the JSON document")
    return value


def read_stdin() -> str:
    """Read the payload from stdin as UTF-8 (strict: a mis-encoded payload is malformed)."""
    raw = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
    if len(raw) > MAX_PAYLOAD_BYTES:
        raise PayloadError("payload larger than 8 MiB")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PayloadError("payload is not UTF-8") from None


def read_object() -> dict:
    value = parse(read_stdin())
    if not isinstance(value, dict):
        raise PayloadError("payload is not a JSON object")
    return value
