"""Cost and health (spec memory.md §2.8; §4 scenarios 37–38): the five-dimension score with its
test vectors and half-up rounding, the render-cost ring, and the `memory health` verb."""

import datetime
import json
import os
from decimal import Decimal

import pytest

from maestro.memory.store import health
from maestro.memory.store.layout import Layout

TODAY = datetime.date(2024, 5, 2)  # a UTC date
DIMS = ("S", "R", "J", "C", "Safety")


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "project"
    path.mkdir()
    return str(path.resolve())


def write(path, entries):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(("\n§\n".join(entries) + "\n").encode())


def timeline(root, project):
    return Layout(str(root)).target("project", project).path


def daily(root, day):
    return Layout(str(root)).target("daily", date=day).path


def dims(result):
    return tuple(float(result[name]) for name in DIMS)


# ----------------------------------------------------------------------------- §2.8 test vectors


def test_vector_empty_store():
    result = health.five_dim(health.coverage_fraction(0, 0), active_days=0, longest=0)
    assert dims(result) == (7.5, 7.5, 7.8, 7.7, 8.0)
    assert result["composite"] == Decimal("7.6")


def test_vector_10_entries_2_with_summary_no_daily_longest_10():
    result = health.five_dim(health.coverage_fraction(2, 10), active_days=0, longest=10)
    assert dims(result) == (6.8, 7.0, 7.0, 7.1, 7.7)
    assert result["composite"] == Decimal("7.0")


def test_vector_all_summarised_with_daily_activity():
    counts = [1, 2, 0, 1, 0, 0, 1]
    result = health.five_dim(health.coverage_fraction(10, 10), sum(1 for n in counts if n), longest=10)
    assert result["composite"] == Decimal("8.0")


def test_vector_empty_store_all_flags_false():
    result = health.five_dim(health.coverage_fraction(0, 0), 0, 0, auto_recall=False, gated_queue=False,
                             sanitize=False)
    assert result["composite"] == Decimal("6.2")


def test_the_vectors_through_the_pure_report():
    entries = [f"[2024-05-01 10:00] entry {i}" for i in range(8)] + [
        f"[2024-05-01 10:00] [summary:s{i}] entry {i}" for i in range(2)]
    report = health.summarise(entries, [0] * 7)
    assert report["fiveDim"] == {"S": 6.8, "R": 7.0, "J": 7.0, "C": 7.1, "Safety": 7.7, "composite": 7.0}
    assert (report["project"], report["withSummary"], report["coverage"]) == ({"total": 10}, 2, 20.0)
    full = health.summarise([f"[summary:s{i}] e{i}" for i in range(10)], [1, 2, 0, 1, 0, 0, 1])
    assert full["fiveDim"]["composite"] == 8.0 and full["coverage"] == 100.0


# ------------------------------------------------------------------------------- half-up rounding


@pytest.mark.parametrize("value, expected", [
    ("7.25", "7.3"), ("7.35", "7.4"), ("0.05", "0.1"), ("6.45", "6.5"), ("2.65", "2.7"), ("7.24999", "7.2"),
    ("8.0", "8.0"), ("9.95", "10.0"),
])
def test_round1_is_half_up_not_bankers(value, expected):
    assert health.round1(Decimal(value)) == Decimal(expected)
    assert health.round1(float(value)) == Decimal(expected)  # a float goes through its shortest repr


def test_bankers_round_would_differ_on_these_edges():
    assert round(7.25, 1) == 7.2 and health.round1(7.25) == Decimal("7.3")
    assert round(0.125, 2) == 0.12  # Python's round: half-even on exact binary halves


def test_dimension_on_an_x_x5_edge_rounds_up():
    # c = 1/2: C = 6 + 1 + 0 + 0.35 = 7.35 → 7.4; S = 6 + 0.75 + 0 + 0.5 = 7.25 → 7.3
    result = health.five_dim(health.coverage_fraction(5, 10), active_days=0, longest=3)
    assert result["C"] == Decimal("7.4") and result["S"] == Decimal("7.3")
    # J = 5 + 0.5 + 1 + 0.8 = 7.3; R = 5.5 + 1.5 = 7.0; Safety = 5.5 + 1.2 + 1 + 0 = 7.7 (c > 0.5 is false)
    assert dims(result) == (7.3, 7.0, 7.3, 7.4, 7.7)
    # composite = 7.0 * 0.4 + 7.34 * 0.6 = 7.204 → 7.2
    assert result["composite"] == Decimal("7.2")


def test_a_dimension_of_exactly_x_x5_rounds_up():
    # c = 0.7, a = 3, longest > 0: S = 6 + 1.05 + 0.5 + 0.5 = 8.05 exactly (Decimal) → 8.1
    result = health.five_dim(health.coverage_fraction(7, 10), active_days=3, longest=5)
    assert dims(result) == (8.1, 7.5, 7.5, 8.3, 8.0)  # C = 6 + 1 + 0.8 + 0.49 = 8.29 → 8.3
    # min 7.5 × 0.4 + mean 7.88 × 0.6 = 3.0 + 4.728 = 7.728 → 7.7
    assert result["composite"] == Decimal("7.7")


def test_values_are_clamped_to_ten():
    result = health.five_dim(Decimal(5), active_days=7, longest=1)
    assert all(Decimal(0) <= result[name] <= Decimal(10) for name in DIMS) and result["S"] == Decimal("10.0")


# ------------------------------------------------------------------------------------ scenario 37


def test_37_without_a_cwd_coverage_is_100_and_there_is_no_five_dim(mem_root):
    report = health.health(str(mem_root), None)
    assert report["project"] == {"total": 0} and report["withSummary"] == 0
    assert report["coverage"] == 100 and "fiveDim" not in report
    assert report["daily"]["counts"] == [0] * 7 and report["longest"] == []
    assert report["cost"] == {"samples": 0, "last": None, "medianTotalBytes": 0, "maxTotalBytes": 0,
                              "medianBySection": {}, "maxBySection": {}}
    assert not mem_root.exists()  # reads only


def test_37_ten_entries_two_summarised(mem_root, project):
    entries = [f"[2024-05-0{1 + i % 2} 10:00] plain entry number {i}" for i in range(8)]
    entries += ["[2024-05-01 10:00] [summary:short] first summarised", "[2024-05-01 10:00] [summary:x] second " + "y" * 90]
    write(timeline(mem_root, project), entries)
    report = health.health(str(mem_root), project, today=TODAY)
    assert report["fiveDim"] == {"S": 6.8, "R": 7.0, "J": 7.0, "C": 7.1, "Safety": 7.7, "composite": 7.0}
    assert (report["project"]["total"], report["withSummary"], report["coverage"]) == (10, 2, 20.0)
    assert report["daily"]["counts"] == [0] * 7
    longest = report["longest"]
    assert len(longest) == 5 and longest[0]["len"] == len(entries[-1])
    assert longest[0]["preview"] == entries[-1][:80] and [x["len"] for x in longest] == sorted(
        (x["len"] for x in longest), reverse=True)


def test_daily_counts_are_seven_utc_days_oldest_first(mem_root, project):
    write(timeline(mem_root, project), ["[summary:a] a"])
    write(daily(mem_root, "2024-04-26"), ["[09:00] one"])  # 6 days before TODAY: the oldest slot
    write(daily(mem_root, "2024-04-25"), ["[09:00] too old"])
    write(daily(mem_root, "2024-05-02"), ["[09:00] a", "[10:00] b"])
    report = health.health(str(mem_root), project, today=TODAY)
    assert report["daily"]["counts"] == [1, 0, 0, 0, 0, 0, 2]
    assert health.utc_days(TODAY)[0] == "2024-04-26" and health.utc_days(TODAY)[-1] == "2024-05-02"


def test_a_multiline_entry_preview_is_one_line(mem_root, project):
    write(timeline(mem_root, project), ["line one\nline two " + "z" * 100])
    (item,) = health.health(str(mem_root), project)["longest"]
    assert "\n" not in item["preview"] and len(item["preview"]) == 80


# ------------------------------------------------------------------------------------ scenario 38


def test_38_window_3_keeps_the_last_three_renders(mem_root):
    for size in (10, 20, 30, 40):
        assert health.record(str(mem_root), {"total": size, "sections": {"memory": size}}, window=3)
    report = health.cost(str(mem_root))
    assert (report["samples"], report["medianTotalBytes"], report["maxTotalBytes"]) == (3, 30, 40)
    assert report["last"] == {"totalBytes": 40, "sections": {"memory": 40}}
    assert report["medianBySection"] == {"memory": 30} and report["maxBySection"] == {"memory": 40}
    stored = json.loads((mem_root / ".maestro-memory" / "cost.json").read_text())
    assert [r["total"] for r in stored["renders"]] == [20, 30, 40]


def test_the_window_knob_and_its_default(mem_root, monkeypatch):
    assert health.window_size() == 50
    monkeypatch.setenv("MAESTRO_MEMORY_COST_WINDOW", "2")
    for size in (1, 2, 3):
        health.record(str(mem_root), {"total": size, "sections": {}})
    assert health.cost(str(mem_root))["samples"] == 2
    monkeypatch.setenv("MAESTRO_MEMORY_COST_WINDOW", "nonsense")
    assert health.window_size() == 50


def test_the_ring_holds_at_most_50_renders_by_default(mem_root):
    for size in range(60):
        health.record(str(mem_root), {"total": size, "sections": {"user": size}})
    report = health.cost(str(mem_root))
    assert report["samples"] == 50 and report["maxTotalBytes"] == 59
    assert report["medianTotalBytes"] == 35  # 10..59: (34 + 35) / 2 = 34.5 → 35, half-up


def test_even_median_is_the_rounded_mean_of_the_middle_two():
    assert health.median([10, 21]) == 16 and health.median([10, 20]) == 15 and health.median([]) == 0
    assert health.median([5, 1, 3]) == 3


def test_section_figures_are_over_the_renders_that_showed_the_section():
    renders = [{"total": 100, "sections": {"memory": 40, "key": 60}}, {"total": 50, "sections": {"memory": 50}}]
    report = health.cost_report(renders)
    assert report["medianBySection"] == {"memory": 45, "key": 60}
    assert report["maxBySection"] == {"memory": 50, "key": 60}


def test_a_malformed_ring_is_read_as_empty_and_started_over(mem_root):
    meta = mem_root / ".maestro-memory"
    meta.mkdir(parents=True)
    (meta / "cost.json").write_text("{not json")
    assert health.cost(str(mem_root))["samples"] == 0
    health.record(str(mem_root), {"total": 7, "sections": {"memory": 7}})
    assert health.cost(str(mem_root))["samples"] == 1
    assert sorted(p.name for p in meta.iterdir()) == ["cost.json", "cost.lock"]  # no temp debris
    assert oct((meta / "cost.json").stat().st_mode & 0o777) == "0o600"


def test_a_busy_lock_skips_the_sample(mem_root):
    import fcntl

    meta = mem_root / ".maestro-memory"
    meta.mkdir(parents=True)
    fd = os.open(meta / "cost.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert health.record(str(mem_root), {"total": 1, "sections": {}}, wait=0.01) is False
    finally:
        os.close(fd)
    assert not (meta / "cost.json").exists()


def test_recording_rejects_anything_but_byte_counts(mem_root):
    with pytest.raises(ValueError):
        health.record(str(mem_root), {"total": 1, "sections": {"memory": "text"}})


def test_a_sample_has_one_row_per_shown_section(mem_root, project):
    from maestro.memory.store import snapshot

    write(str(mem_root / "MEMORY.md"), ["[2024-04-01 09:00] global one"])
    write(str(mem_root / "USER.md"), ["[2024-04-01 09:00] user one"])
    snap = snapshot.render(str(mem_root), project=project, session_id="s-1", today=TODAY)
    sample = health.sample(snap)
    assert sample == {"total": snap.total_bytes, "sections": {"memory": len(b"[2024-04-01 09:00] global one"),
                                                              "user": len(b"[2024-04-01 09:00] user one")}}


# --------------------------------------------------------------------------------- the verb


def test_health_verb_json_and_text(maestro, mem_root, project):
    write(timeline(mem_root, project), [f"entry {i}" for i in range(8)] + ["[summary:a] a", "[summary:b] b"])
    health.record(str(mem_root), {"total": 300, "sections": {"memory": 100, "user": 200}})
    result = maestro("memory", "health", "--cwd", project, "--json")
    assert result.rc == 0, result
    envelope = json.loads(result.out)
    assert (envelope["version"], envelope["command"], envelope["ok"]) == (1, "memory health", True)
    assert envelope["fiveDim"] == {"S": 6.8, "R": 7.0, "J": 7.0, "C": 7.1, "Safety": 7.7, "composite": 7.0}
    assert envelope["cost"]["samples"] == 1 and envelope["cost"]["medianBySection"] == {"memory": 100, "user": 200}
    text = maestro("memory", "health", "--cwd", project).out
    assert text.startswith("health: 7.0\n")
    assert "dimensions: S 6.8, R 7.0, J 7.0, C 7.1, Safety 7.7\n" in text
    assert "cost: memory: median 100 B, max 100 B\n" in text and "coverage: 20%" in text


def test_health_verb_on_an_empty_store_and_bad_cwd(maestro, mem_root, tmp_path):
    result = maestro("memory", "health", "--cwd", str(tmp_path))
    assert result.rc == 0 and "health: 7.6\n" in result.out and "cost: no renders recorded yet" in result.out
    assert not mem_root.exists()
    bad = maestro("memory", "health", "--cwd", str(tmp_path / "absent"), "--json")
    assert bad.rc == 3 and json.loads(bad.out)["ok"] is False
    assert "health" in maestro("memory", "--help").out


def test_the_canonical_ring_is_json_and_other_json_forms_are_read_too(mem_root):
    renders = [{"total": 5, "sections": {}}, {"total": 9, "sections": {"memory": 4, "recentDaily": 5}}]
    data = health._dump(renders)
    assert json.loads(data) == {"version": 1, "renders": renders}
    assert health._parse_canonical(data.decode()) == renders
    meta = mem_root / ".maestro-memory"
    meta.mkdir(parents=True)
    (meta / "cost.json").write_text(json.dumps({"version": 1, "renders": renders}, indent=2))
    assert health.read_renders(str(mem_root)) == renders  # not canonical: the json module reads it
    odd = [{"total": 1, "sections": {"odd key\"": 1}}]
    assert json.loads(health._dump(odd))["renders"] == odd


@pytest.mark.parametrize("text", [
    '{"version":1,"renders":[{"total":x,"sections":{}}]}', '{"version":1,"renders":[{"total":1,"sections":{"a":1,"a":2}}]}',
    '{"version":2,"renders":[]}', '{"version":1,"renders":[{"total":-1,"sections":{}}]}', "[]", "",
])
def test_a_ring_that_is_neither_canonical_nor_valid_is_empty(mem_root, text):
    meta = mem_root / ".maestro-memory"
    meta.mkdir(parents=True)
    (meta / "cost.json").write_text(text)
    renders = health.read_renders(str(mem_root))
    assert all(health._valid_render(r) for r in renders) and len(renders) <= 1
