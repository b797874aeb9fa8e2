"""`memory patterns extract`: mine the outcome records into candidate skills and avoid items.

This module sits above patterns.py (patterns.json) and skills.py (candidate-skills/): it reads
outcomes and writes both, so neither of them needs the other; the lock and the text cleaner they
share are in files.py.

Lessons come from the outcome records (outcomes.py):
  * every attempt with a non-empty `check` (failing verify signature, volatile parts already
    normalised) observes the lesson "verify check keeps failing: <check>";
  * every item of a record's `what_didnt` observes that lesson (casefolded, whitespace collapsed).
An observation's id is `<outcome id>#attempt-<n>` or `<outcome id>#didnt-<i>`, so re-running extract
never counts one twice. THRESHOLD: a lesson seen in >= 2 distinct outcomes becomes a candidate skill
(two attempts of one STUCK run are one outcome: not enough). Every observation is still recorded in
observations.jsonl and counted in `occurrences` and the confidence. The candidate's and the avoid
item's `applies_to` is the union of the observing outcomes' `files_changed` and `files_named` (the
repository files the plan names; older records lack it). Each candidate lives in `candidate-skills/<slug>/`
(see skills.py; slug = slug of the lesson + 6 hex of sha1 of its key, stable across runs) and gets an
`avoid` item in patterns.json (matched by its `lesson` field, refreshed in place). A re-run with nothing
new writes nothing (bytes identical). Promoted and archived candidates keep their status; new
observations are still appended; an archived lesson's avoid item is refreshed but never re-created.
"""

from maestro.memory.project import patterns, skills

THRESHOLD = 2


def lessons(records) -> list:
    """The lessons the outcome records observe (see the module docstring), in first-seen order."""
    from maestro.memory.store.sanitize import filter_text

    found = {}

    def observe(kind, text, obs_id, record, notes):
        key = f"{kind}:{text}"
        title = f"verify check keeps failing: {text}" if kind == "check" else text
        lesson = found.setdefault(key, {"key": key, "kind": kind, "text": text, "title": title[:300],
                                        "observations": [], "files": set()})
        if all(o["id"] != obs_id for o in lesson["observations"]):
            lesson["observations"].append({
                "ts": record.get("ended_at") or record.get("started_at"), "outcome": record["id"],
                "task": record["task_id"], "prediction": lesson["title"], "actual": record["state"],
                "match": True, "notes": filter_text(" ".join(notes.split()))[:300], "id": obs_id})
            for field in ("files_changed", "files_named"):
                listed = record.get(field)
                lesson["files"].update(f for f in (listed if isinstance(listed, list) else ()) if isinstance(f, str))

    for record in records:
        used = set()
        for index, attempt in enumerate(record.get("attempts") or []):
            check = " ".join(str(attempt.get("check") or "").split()) if isinstance(attempt, dict) else ""
            if not check:
                continue
            n = attempt.get("n")
            n = n if isinstance(n, int) and n not in used else f"i{index + 1}"
            used.add(n)
            summary = str(attempt.get("summary") or "")
            notes = f"attempt {n}: {attempt.get('result') or '?'}" + (f" — {summary}" if summary else "")
            observe("check", filter_text(check)[:300], f"{record['id']}#attempt-{n}", record, notes)
        for index, item in enumerate(record.get("what_didnt") or []):
            text = " ".join(item.casefold().split()) if isinstance(item, str) else ""
            if text:
                observe("didnt", filter_text(text)[:300], f"{record['id']}#didnt-{index + 1}", record, item)
    return list(found.values())


def distinct_outcomes(lesson: dict) -> int:
    """How many different outcomes observed the lesson (the threshold counts these)."""
    return len({o.get("outcome") for o in lesson["observations"] if o.get("outcome")})


def _refresh_avoid(doc: dict, plan: dict, lesson: dict):
    """Add or refresh the lesson's avoid item: (action, item) or None (archived, not re-created)."""
    item = next((i for i in doc["avoid"] if i.get("lesson") == lesson["key"]), None)
    if item is None and plan["status"] == "archived":
        return None
    outcome_ids = list(dict.fromkeys(o.get("outcome") for o in plan["observations"] if o.get("outcome")))
    source = "outcomes " + ", ".join(outcome_ids[-5:]) + (f" (+{len(outcome_ids) - 5} more)" if len(outcome_ids) > 5 else "")
    why = ("the same verify check failed" if lesson["kind"] == "check" else "reported under what_didnt")
    fields = {"title": lesson["title"], "reason": f"{why} {plan['occurrences']} times; see candidate skill {plan['slug']} "
              "(memory skill show " + plan["slug"] + ")", "source": source, "confidence": plan["confidence"],
              "applies_to": plan["applies_to"], "lesson": lesson["key"], "candidate": plan["slug"]}
    if item is None:
        item = {"id": patterns.next_id(doc["avoid"], "A"), **fields}
        doc["avoid"].append(item)
        return "added", item
    changed = any(item.get(k) != v for k, v in fields.items())
    item.update(fields)
    return ("refreshed" if changed else "unchanged"), item


def extract(memory, dry_run: bool = False, clock=None) -> dict:
    """Mine the outcomes into candidate skills and avoid items (nothing is written on a dry run).
    Every existing file is read and checked before the first write: a malformed one fails closed."""
    import contextlib
    import copy

    from maestro.memory.project import outcomes
    from maestro.memory.project.files import locked

    errors = []
    with contextlib.nullcontext() if dry_run else locked(memory):
        records = outcomes.load_all(memory, errors)
        doc = patterns.load(memory)
        before = copy.deepcopy(doc)
        now = outcomes.now_utc(clock)
        found = lessons(records)
        plans, avoid = [], []
        for lesson in found:
            slug = skills.slug_for(memory, lesson)
            if distinct_outcomes(lesson) >= THRESHOLD or skills.exists(memory, slug):
                plans.append((skills.plan(memory, slug, lesson, now), lesson))
        for plan, lesson in plans:
            result = _refresh_avoid(doc, plan, lesson)
            if result:
                avoid.append({"action": result[0], "id": result[1]["id"], "candidate": plan["slug"]})
        if not dry_run:
            for plan, _ in plans:
                skills.apply(plan)
            written = patterns.save(memory, doc, before, clock)
        else:
            written = doc != before
    candidates = [{k: plan[k] for k in ("slug", "action", "status", "occurrences", "added", "confidence", "title")}
                  for plan, _ in plans]
    return {"dry_run": dry_run, "outcomes": len(records), "lessons": len(found), "candidates": candidates,
            "avoid": avoid, "patterns_written": written, "errors": errors}
