"""`memory health`: the five-dimension score and the render cost per section (the domain:
maestro/memory/store/health.py, which computes the report; this module prints it).
"""

from maestro.commands.memory.output import parser, run
from maestro.memory.store.health import DIMENSIONS, health


def main(argv) -> int:
    """print the health score (five dimensions) and the render cost per section

The five dimensions S, R, J, C and Safety (each 0-10, from the share of project entries with a
[summary:], the days with daily entries in the last 7 UTC days and the longest entries) and their
composite (0.4 x the lowest + 0.6 x the mean), for the project of --cwd (default: the current
directory; its git toplevel), and the byte cost of the last 50 session-start renders per section
(median and max; recorded by session-start into .maestro-memory/cost.json). Reads only."""

    def body(out):
        from maestro.memory.store.tracks import Store

        p = parser("health", main.__doc__)
        p.add_argument("--cwd", help="the project directory (default: .)")
        p.add_argument("--json", action="store_true", help="print one JSON envelope")
        args = p.parse_args(argv)
        from maestro.memory.store.layout import project_root

        project = project_root(args.cwd or ".")
        report = health(Store().root, project)
        for line in format_report(report):
            out.line(line)
        return out.done(cwd=project, **report)

    return run("health", argv, body)


def format_report(report: dict) -> list:
    """The text lines of a `health()` report (the --json envelope carries the report itself)."""
    lines = [(f"project entries: {report['project']['total']}, with summary: {report['withSummary']}, "
              f"coverage: {report['coverage']:g}%"),
             "daily (7 UTC days, oldest first): " + " ".join(str(n) for n in report["daily"]["counts"])]
    dims = report.get("fiveDim")
    if dims:
        lines.insert(0, f"health: {dims['composite']:.1f}")
        lines.append("dimensions: " + ", ".join(f"{name} {dims[name]:.1f}" for name in DIMENSIONS))
    for item in report["longest"]:
        lines.append(f"longest: {item['len']} chars: {item['preview']}")
    cost = report["cost"]
    if not cost["samples"]:
        lines.append("cost: no renders recorded yet")
    else:
        lines.append(f"cost: {cost['samples']} renders, total bytes median {cost['medianTotalBytes']}, "
                     f"max {cost['maxTotalBytes']}, last {cost['last']['totalBytes']}")
        for key, med in cost["medianBySection"].items():
            lines.append(f"cost: {key}: median {med} B, max {cost['maxBySection'][key]} B")
    return lines
