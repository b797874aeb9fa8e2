"""The companion part of `status` (issue 12 §1.1–4): maestro's private companion data directory,
its broker, and the newest jobs of maestro's own job ledger, each with what its own job file and
its worker process say — read from local files only, never from the companion's job table (which
can lose a job) and never by calling the companion."""

from maestro.codex import plugin_data
from maestro.locks import identity
from maestro.locks.job_ledger import JobLedger, worker_state

SHOWN = 5  # newest ledger entries in the report


def report(root: str, git_dir: str) -> dict:
    data = plugin_data.data_dir(root)
    broker = plugin_data.broker_record(data, root)
    pid = broker.get("pid") if broker else None
    alive = isinstance(pid, int) and pid > 0 and identity.owner_state(pid, "") != identity.DEAD
    jobs = []
    for entry in JobLedger(git_dir).entries()[:SHOWN]:
        record = plugin_data.job_record(entry.get("data_dir") or data, entry.get("root") or root, entry["id"]) or {}
        jobs.append({
            "job": entry["id"], "kind": entry.get("kind"), "state": entry.get("state"),
            "reason": entry.get("reason") or "", "reset": entry.get("reset") or "",
            "launched_at": entry.get("launched_at"), "lease_generation": entry.get("lease_generation") or "",
            "companion_status": record.get("status") if isinstance(record.get("status"), str) else "unknown",
            "worker_pid": entry.get("worker_pid"), "worker": worker_state(entry) or "unknown",
            "log_file": entry.get("log_file") or record.get("logFile") or "",
        })
    quota = next(({"job": j["job"], "reset": j["reset"]} for j in jobs[:1] if j["state"] == "quota"), None)
    return {"data_dir": data, "broker": {"pid": pid, "running": alive} if broker else None, "jobs": jobs,
            "quota": quota}


def render_lines(part: dict) -> list:
    lines = [f"companion data dir: {part['data_dir']}"]
    broker = part["broker"]
    if broker:
        lines.append(f"  broker: pid {broker['pid']} ({'running' if broker['running'] else 'gone'})")
    if part["quota"]:
        reset = part["quota"]["reset"]
        lines.append(f"  last run: BLOCKED reason=quota (Codex usage limit{f', resets {reset}' if reset else ''}); "
                     "run it again once the limit resets")
    for job in part["jobs"]:
        why = f" reason={job['reason']}" if job["reason"] else ""
        lines.append(f"  job {job['job']} ({job['kind']}) {job['state']}{why}; "
                     f"companion says {job['companion_status']}; "
                     f"worker pid {job['worker_pid'] or '-'} {job['worker']}; launched {job['launched_at']}"
                     + (f"; log {job['log_file']}" if job["log_file"] else ""))
    return lines
