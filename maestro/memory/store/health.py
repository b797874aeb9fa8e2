"""Cost and health (spec memory.md §2.8): the render-cost ring and the five-dimension score.

Cost ring — `<store>/.maestro-memory/cost.json`, bytes only (never any text):
    {"version": 1, "renders": [{"total": B, "sections": {"memory": B, …}}, …]}   oldest first
The last `window` renders are kept (50; `MAESTRO_MEMORY_COST_WINDOW` or the `window` argument for
tests). `record` appends one render under an exclusive `flock` on the permanent file
`.maestro-memory/cost.lock` and replaces cost.json atomically (temp file + os.replace). It is not an
entry file, so it never goes through the entry Transaction (no write-block, drift guard or backup).
Choices: no fsync — this is telemetry written from the session-start hook, whose budget is a few
milliseconds; a lost or torn-after-crash ring (unparseable) is read as empty and starts over. A
busy lock (another session recording the same instant) waits at most LOCK_WAIT_SEC, then the
sample is skipped (`record` returns False). The flock is taken here with `fcntl` directly rather
than through maestro.locks.lockdir, whose imports (secrets, shutil) would cost the hook ~2 ms.

Health — `health(root, project)`, pure over the store's contents (reads only):
    project.total, withSummary (entries containing `[summary:`), coverage (%; 100 with no entries),
    daily.counts (7 UTC days, oldest first), longest (top 5 {len, preview}), fiveDim, cost.
Without a project: zeros, coverage 100, no fiveDim. Choices where §2.8 is silent:
- The entries are the project timeline (`projects/<h>/MEMORY.md`); `len` counts characters; the
  preview is the first 80 characters with line breaks shown as spaces.
- daily.counts counts the entries of `daily/<day>.md` for the 7 UTC dates ending today (UTC).
- coverage is rounded half-up to one decimal; the formulas use the exact fraction.
- The composite uses the five already-rounded dimension values; all arithmetic is Decimal, so
  x.x5 rounds up exactly (7.35 → 7.4), never by float accident or banker's rounding.
- The cost report adds `maxBySection` to §2.8's `{samples, last, medianTotalBytes, maxTotalBytes,
  medianBySection}`; a section's figures are over the renders that showed it.

The domain only: the `memory health` command (arguments, the text lines) is
maestro/commands/memory/health.py.
"""

import os

from maestro.util import atomic

COST_FILE = "cost.json"
COST_LOCK = "cost.lock"
COST_VERSION = 1
DEFAULT_WINDOW = 50
MAX_WINDOW = 10_000
MAX_COST_BYTES = 1 << 20  # a larger cost.json is not ours: read as empty
LOCK_WAIT_SEC = 0.2
LOCK_POLL_SEC = 0.002
PREVIEW_CHARS = 80
LONGEST = 5
DAYS = 7
SUMMARY_TAG = "[summary:"
DIMENSIONS = ("S", "R", "J", "C", "Safety")


# --- the cost ring --------------------------------------------------------------------------


def window_size(window: int = None) -> int:
    """The ring's length: `window`, else MAESTRO_MEMORY_COST_WINDOW (1–10000), else 50."""
    if window is None:
        raw = os.environ.get("MAESTRO_MEMORY_COST_WINDOW", "").strip()
        window = int(raw) if raw.isdigit() and raw.isascii() else DEFAULT_WINDOW
    return min(max(int(window), 1), MAX_WINDOW)


def _meta_dir(root: str) -> str:
    from maestro.memory.store.layout import META_DIR

    return os.path.join(root, META_DIR)


def cost_path(root: str) -> str:
    return os.path.join(_meta_dir(root), COST_FILE)


def _valid_render(item) -> bool:
    if not isinstance(item, dict):
        return False
    total, sections = item.get("total"), item.get("sections")
    return (type(total) is int and total >= 0 and isinstance(sections, dict)
            and all(isinstance(k, str) and type(v) is int and v >= 0 for k, v in sections.items()))


def read_renders(root: str) -> list:
    """The recorded renders, oldest first; a missing, oversized or malformed ring is empty."""
    try:
        with open(cost_path(root), "rb") as handle:
            raw = handle.read(MAX_COST_BYTES + 1)
    except OSError:
        return []
    if len(raw) > MAX_COST_BYTES:
        return []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return []
    renders = _parse_canonical(text)
    if renders is not None:
        return renders
    import json

    try:
        value = json.loads(text)
    except ValueError:
        return []
    renders = value.get("renders") if isinstance(value, dict) else None
    if not isinstance(renders, list):
        return []
    return [item for item in renders if _valid_render(item)]


_HEAD, _TAIL, _TOTAL, _SECTIONS = '{"version":1,"renders":[', "]}", '{"total":', ',"sections":{'


def _count(text: str):
    return int(text) if text.isdigit() and text.isascii() else None


def _key(text: str):
    """A section key as the canonical writer quotes it: an ASCII identifier, or None."""
    if len(text) > 2 and text[0] == '"' and text[-1] == '"' and text[1:-1].isidentifier() and text.isascii():
        return text[1:-1]
    return None


def _parse_canonical(text: str):
    """The renders of a ring in exactly the form `_dump` writes, or None for anything else (then
    the json module decides). The hook reads its own format without importing json (~1 ms)."""
    text = text.rstrip("\n")
    if not (text.startswith(_HEAD) and text.endswith(_TAIL)):
        return None
    body = text[len(_HEAD):-len(_TAIL)]
    if not body:
        return []
    if not (body.startswith(_TOTAL) and body.endswith("}}")):
        return None
    renders = []
    for piece in body[len(_TOTAL):-2].split("}}," + _TOTAL):
        total, sep, pairs = piece.partition(_SECTIONS)
        total = _count(total)
        if total is None or not sep:
            return None
        sections = {}
        for pair in pairs.split(",") if pairs else ():
            key, _, size = pair.rpartition(":")
            key, size = _key(key), _count(size)
            if key is None or size is None or key in sections:
                return None
            sections[key] = size
        renders.append({"total": total, "sections": sections})
    return renders


def _dump(renders) -> bytes:
    """The canonical ring (compact JSON, keys in this order); json.dumps for an unusual key."""
    if all(_key(f'"{key}"') for item in renders for key in item["sections"]):
        items = ",".join(_TOTAL + str(item["total"]) + _SECTIONS
                         + ",".join(f'"{key}":{size}' for key, size in item["sections"].items()) + "}}"
                         for item in renders)
        return (_HEAD + items + _TAIL + "\n").encode()
    import json

    return (json.dumps({"version": COST_VERSION, "renders": renders}, separators=(",", ":")) + "\n").encode()


def sample(snap) -> dict:
    """One render's bytes: the whole text and each memory section it showed (stats.entries > 0).
    The `# Session` line is not a memory section and has no cost row."""
    sections = {row.key: row.bytes for row in snap.sections if row.entries and row.key != "session"}
    return {"total": snap.total_bytes, "sections": sections}


def record(root: str, render: dict, window: int = None, wait: float = LOCK_WAIT_SEC) -> bool:
    """Append one render (`sample(snap)` or {"total", "sections"}) to the ring of the store at
    `root`, keeping the last `window`. False when the lock stayed busy (nothing written)."""
    if not _valid_render(render):
        raise ValueError(f"not a render sample: {render!r}")
    meta = _meta_dir(root)
    atomic.make_private_dirs(meta)
    try:
        with atomic.flock_file(os.path.join(meta, COST_LOCK), wait, poll=LOCK_POLL_SEC):
            keep = window_size(window)
            renders = (read_renders(root) + [{"total": render["total"], "sections": dict(render["sections"])}])[-keep:]
            atomic.write_atomic(cost_path(root), _dump(renders), 0o600, durable=False)  # telemetry: no fsync
    except atomic.LockBusy:
        return False
    return True


def median(values) -> int:
    """The median; for an even count the mean of the two middle values rounded half-up; 0 if empty."""
    ordered = sorted(values)
    if not ordered:
        return 0
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    low, high = ordered[mid - 1], ordered[mid]
    return (low + high + 1) // 2  # non-negative ints: half-up


def cost_report(renders) -> dict:
    """§2.8's cost figures over the ring (oldest first); empty: {0, None, 0, 0, {}}."""
    renders = list(renders)
    by_section = {}
    for item in renders:
        for key, size in item["sections"].items():
            by_section.setdefault(key, []).append(size)
    totals = [item["total"] for item in renders]
    last = renders[-1] if renders else None
    return {
        "samples": len(renders),
        "last": {"totalBytes": last["total"], "sections": dict(last["sections"])} if last else None,
        "medianTotalBytes": median(totals),
        "maxTotalBytes": max(totals, default=0),
        "medianBySection": {key: median(sizes) for key, sizes in by_section.items()},
        "maxBySection": {key: max(sizes) for key, sizes in by_section.items()},
    }


def cost(root: str) -> dict:
    return cost_report(read_renders(root))


# --- the five-dimension score ---------------------------------------------------------------


def round1(value):
    """`value` (Decimal, int, or float via its shortest repr) rounded to one decimal, half-up."""
    from decimal import ROUND_HALF_UP, Decimal

    if not isinstance(value, Decimal):
        value = Decimal(str(value))
    return value.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)


def five_dim(coverage, active_days: int, longest: int, auto_recall: bool = True, gated_queue: bool = True,
             sanitize: bool = True) -> dict:
    """The five dimensions and the composite (§2.8), each a Decimal with one decimal place.

    `coverage` is the fraction c (1 when there are no entries); give a Decimal or Fraction-like
    exact value (an int ratio via `coverage_fraction`) for exact half-up behaviour."""
    from decimal import Decimal

    c = coverage if isinstance(coverage, Decimal) else Decimal(str(coverage))
    ar, gq, sz = (Decimal(int(bool(flag))) for flag in (auto_recall, gated_queue, sanitize))

    def b(condition):
        return Decimal(1) if condition else Decimal(0)

    half = Decimal("0.5")
    raw = {
        "S": 6 + Decimal("1.5") * c + half * b(active_days > 2) + half * b(longest > 0),
        "R": Decimal("5.5") + Decimal("1.5") * ar + half * b(active_days > 0) + half * b(c > Decimal("0.8")),
        "J": 5 + c + gq + Decimal("0.8") * sz,
        "C": 6 + ar + Decimal("0.8") * b(active_days > 0) + Decimal("0.7") * c,
        "Safety": Decimal("5.5") + Decimal("1.2") * sz + gq + Decimal("0.3") * b(c > half),
    }
    dims = {name: round1(min(max(value, Decimal(0)), Decimal(10))) for name, value in raw.items()}
    values = list(dims.values())
    mean = sum(values) / len(values)
    dims["composite"] = round1(min(values) * Decimal("0.4") + mean * Decimal("0.6"))
    return dims


def coverage_fraction(with_summary: int, total: int):
    from decimal import Decimal

    return Decimal(1) if total <= 0 else Decimal(with_summary) / Decimal(total)


def _number(value):
    """A one-decimal Decimal as JSON shows it (a float: 7.0, 7.6)."""
    return float(value)


def summarise(entries, daily_counts, with_flags=None) -> dict:
    """The health report over project entries (file order) and the 7 daily counts (pure)."""
    flags = dict(with_flags or {})
    total = len(entries)
    with_summary = sum(1 for e in entries if SUMMARY_TAG in e)
    c = coverage_fraction(with_summary, total)
    ranked = sorted(entries, key=len, reverse=True)[:LONGEST]
    longest = [{"len": len(e), "preview": e[:PREVIEW_CHARS].replace("\r", " ").replace("\n", " ")} for e in ranked]
    dims = five_dim(c, sum(1 for n in daily_counts if n > 0), len(ranked[0]) if ranked else 0,
                    flags.get("autoRecall", True), flags.get("gatedQueue", True), flags.get("sanitize", True))
    return {
        "project": {"total": total},
        "withSummary": with_summary,
        "coverage": _number(round1(c * 100)),
        "daily": {"counts": list(daily_counts)},
        "longest": longest,
        "fiveDim": {name: _number(value) for name, value in dims.items()},
    }


def empty_report() -> dict:
    """Without a cwd: zeros, coverage 100, no fiveDim."""
    return {"project": {"total": 0}, "withSummary": 0, "coverage": 100.0, "daily": {"counts": [0] * DAYS},
            "longest": []}


def utc_days(today=None) -> list:
    """The 7 UTC dates ending `today` (default: today in UTC), oldest first, as YYYY-MM-DD."""
    import datetime

    from maestro.util.clock import utc_today

    today = today or utc_today()
    return [(today - datetime.timedelta(days=back)).isoformat() for back in range(DAYS - 1, -1, -1)]


def health(root: str, project: str = None, today=None, flags=None) -> dict:
    """The report for the store at `root` and the project root `project` (None: no project).
    Reads only."""
    from maestro.memory.store.layout import Layout
    from maestro.memory.store.txn import read_entries

    if not project:
        report = empty_report()
    else:
        lay = Layout(root)
        entries = read_entries(lay.target("project", project).path)
        counts = [len(read_entries(lay.target("daily", date=day).path)) for day in utc_days(today)]
        report = summarise(entries, counts, flags)
    report["cost"] = cost(root)
    return report
