"""`memory patterns`: a project's patterns and things to avoid, and `extract`, which mines outcomes.

    projects/<h>/patterns.json
    {"version": 1, "project": <root>, "last_updated": <UTC ISO Z>,
     "patterns": [{"id": "P001", "title", "source", "confidence": high|medium|low, "applies_to": [...]}],
     "avoid":    [{"id": "A001", "title", "reason", "source", "confidence", "applies_to": [...]}]}

`applies_to` holds repo-relative path globs or prefixes: `src/*.py` (fnmatch), `src/auth` (that path
and everything under it); `*` applies everywhere, and so does an empty list on a hand-added item —
but an auto-mined avoid item (one with a `lesson` field) with an empty list applies nowhere: no file
was ever tied to it, so it must not be injected into every session. `applicable()` is pure and this
module imports nothing heavy, so session-start can call it. A malformed patterns.json fails closed:
one line, exit 3 (`malformed`), the file untouched. Writes are atomic, under the project's
`.patterns.lock`, and titles/reasons pass the memory sanitizer.

extract — lessons come from the outcome records (outcomes.py):
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
`avoid` item here (matched by its `lesson` field, refreshed in place). A re-run with nothing new
writes nothing (bytes identical). Promoted and archived candidates keep their status; new
observations are still appended; an archived lesson's avoid item is refreshed but never re-created.
"""

import os

VERSION = 1
CONFIDENCE = ("high", "medium", "low")
KINDS = {"patterns": "P", "avoid": "A"}
THRESHOLD = 2


def _norm_path(value: str) -> str:
    value = value.strip().replace("\\", "/")
    while value.startswith("./"):
        value = value[2:]
    return value.rstrip("/") if value not in ("/", "") else value


def matches(rule: str, path: str) -> bool:
    """`rule` (a glob or a path prefix) covers the repo-relative `path`."""
    from fnmatch import fnmatchcase

    rule, path = _norm_path(rule), _norm_path(path)
    if rule in ("", "*", "**"):
        return True
    return path == rule or path.startswith(rule + "/") or fnmatchcase(path, rule)


def applicable(patterns_doc, files) -> list:
    """The patterns and avoid items that apply to any of `files` (repo-relative paths), each a copy
    with `kind` ("pattern" | "avoid"). Items with `*`, and hand-added items with no applies_to, apply
    everywhere; an auto-mined item (`lesson` key) with no applies_to applies nowhere. Never
    raises on a malformed document: whatever does not parse is skipped."""
    if not isinstance(patterns_doc, dict):
        return []
    files = [f for f in (files or ()) if isinstance(f, str) and f.strip()]
    found = []
    for section, kind in (("patterns", "pattern"), ("avoid", "avoid")):
        items = patterns_doc.get(section)
        for item in items if isinstance(items, list) else ():
            if not isinstance(item, dict):
                continue
            rules = item.get("applies_to") or []
            rules = [r for r in (rules if isinstance(rules, list) else [rules]) if isinstance(r, str)]
            if not rules and "lesson" in item:
                continue  # auto-mined with no known file: applies nowhere, not everywhere
            if not rules or any(_norm_path(r) in ("*", "**", "") for r in rules) or any(
                    matches(rule, path) for rule in rules for path in files):
                found.append(dict(item, kind=kind))
    return found


def empty(project_root: str) -> dict:
    return {"version": VERSION, "project": project_root, "last_updated": None, "patterns": [], "avoid": []}


def validate(doc, path: str = "patterns.json") -> dict:
    from maestro.memory.store.errors import StoreError

    def bad(why):
        return StoreError(f"{path} is malformed ({why}); fix or remove it — nothing was changed", "malformed")

    if not isinstance(doc, dict):
        raise bad("not a JSON object")
    if doc.get("version", VERSION) != VERSION:
        raise bad(f"unsupported version {doc.get('version')!r}")
    for section, prefix in KINDS.items():
        items = doc.setdefault(section, [])
        if not isinstance(items, list):
            raise bad(f"{section} is not a list")
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not isinstance(item.get("title"), str):
                raise bad(f"an item of {section} lacks a string id or title")
            if not (item["id"][:1] == prefix and item["id"][1:].isdigit()):
                raise bad(f"{section} id {item['id'][:20]!r} is not {prefix}<digits>")
            if not isinstance(item.get("applies_to", []), list):
                raise bad(f"{item['id']}: applies_to is not a list")
    doc["version"] = VERSION
    return doc


def load(memory) -> dict:
    from maestro.memory.project import files as project

    doc = project.read_json(memory.patterns_file)
    return empty(memory.project) if doc is None else validate(doc, memory.patterns_file)


def next_id(items, prefix: str) -> str:
    used = [int(i["id"][1:]) for i in items if i["id"][1:].isdigit()]
    return f"{prefix}{(max(used) + 1 if used else 1):03d}"


def locked(memory):
    """The project's learning lock (patterns.json and candidate skills), bounded like the store's."""
    import contextlib

    from maestro.util import atomic
    from maestro.memory.store.errors import StoreError
    from maestro.memory.store.lock import timeout_seconds

    @contextlib.contextmanager
    def hold():
        atomic.make_private_dirs(memory.dir)
        try:
            with atomic.flock_file(os.path.join(memory.dir, ".patterns.lock"), timeout_seconds()):
                yield
        except atomic.LockBusy:
            raise StoreError("the project's patterns lock is held by another writer; try again", "busy") from None

    return hold()


def save(memory, doc: dict, before: dict, clock=None) -> bool:
    """Write `doc` unless it equals `before` (then nothing changes on disk). True when written."""
    from maestro.memory.project import outcomes
    from maestro.memory.project import files as project

    if before is not None and doc == before:
        return False
    doc["last_updated"] = outcomes.now_utc(clock)
    doc["project"] = memory.project
    project.write_json(memory.patterns_file, doc)
    return True


def clean(text: str, what: str, limit: int = 300) -> str:
    from maestro.memory.store.errors import StoreError
    from maestro.memory.store.sanitize import sanitize

    text = " ".join((text or "").split())
    if not text:
        raise StoreError(f"{what} is empty", "invalid")
    safe = sanitize(text)
    if safe is None:
        raise StoreError(f"content filtered (sensitive-only): {what}", "sensitive")
    return safe[:limit]


def add(memory, *, title, avoid=False, reason=None, source=None, confidence="medium", applies_to=(), clock=None):
    from maestro.memory.store.errors import StoreError

    if confidence not in CONFIDENCE:
        raise StoreError(f"confidence must be one of {', '.join(CONFIDENCE)}", "usage")
    if avoid and not reason:
        raise StoreError("an avoid item needs --reason", "usage")
    if reason and not avoid:
        raise StoreError("--reason goes with --avoid", "usage")
    rules = [_norm_path(r) for r in applies_to or () if r.strip()]
    item = {"id": None, "title": clean(title, "title")}
    if avoid:
        item["reason"] = clean(reason, "reason")
    item.update(source=clean(source, "source") if source else "manual", confidence=confidence, applies_to=rules)
    section = "avoid" if avoid else "patterns"
    with locked(memory):
        doc = load(memory)
        item["id"] = next_id(doc[section], KINDS[section])
        doc[section].append(item)
        save(memory, doc, None, clock)
    return item


def remove(memory, item_id: str):
    from maestro.memory.store.errors import StoreError

    section = {"P": "patterns", "A": "avoid"}.get((item_id or "")[:1].upper())
    if not section or not item_id[1:].isdigit():
        raise StoreError(f"invalid pattern id {item_id[:20]!r} (P001, A001, …)", "usage")
    with locked(memory):
        doc = load(memory)
        hit = [i for i in doc[section] if i["id"].upper() == item_id.upper()]
        if not hit:
            raise StoreError(f"no pattern {item_id[:20]} in {memory.patterns_file}", "no_match")
        doc[section] = [i for i in doc[section] if i is not hit[0]]
        save(memory, doc, None)
    return hit[0]


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
        item = {"id": next_id(doc["avoid"], "A"), **fields}
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
    from maestro.memory.project import skills

    errors = []
    with contextlib.nullcontext() if dry_run else locked(memory):
        records = outcomes.load_all(memory, errors)
        doc = load(memory)
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
            written = save(memory, doc, before, clock)
        else:
            written = doc != before
    candidates = [{k: plan[k] for k in ("slug", "action", "status", "occurrences", "added", "confidence", "title")}
                  for plan, _ in plans]
    return {"dry_run": dry_run, "outcomes": len(records), "lessons": len(found), "candidates": candidates,
            "avoid": avoid, "patterns_written": written, "errors": errors}


def _extract_cli(memory, out, dry_run: bool) -> int:
    result = extract(memory, dry_run)
    prefix = "(dry run) " if dry_run else ""
    for cand in (c for c in result["candidates"] if c["action"] != "unchanged"):
        out.line(f"{prefix}{cand['action']} candidate {cand['slug']} [{cand['status']}, {cand['confidence']}, "
                 f"{cand['occurrences']} observation(s), +{cand['added']}]: {cand['title'][:120]}")
    for item in (i for i in result["avoid"] if i["action"] != "unchanged"):
        out.line(f"{prefix}{item['action']} avoid {item['id']} (candidate {item['candidate']})")
    for error in result["errors"]:
        out.line(f"skipped invalid outcome: {error}")
    counts = {a: sum(1 for c in result["candidates"] if c["action"] == a) for a in ("created", "updated", "unchanged")}
    out.line(f"{prefix}extract: {result['outcomes']} outcome(s), {result['lessons']} lesson(s); candidates "
             f"{counts['created']} created, {counts['updated']} updated, {counts['unchanged']} unchanged"
             + ("; nothing written" if dry_run else ""))
    return out.done(**result)


def _line(item) -> str:
    from maestro.commands.memory.output import one_line

    where = ", ".join(item.get("applies_to") or []) or ("nowhere (no file known)" if "lesson" in item else "everywhere")
    head = f"{item['id']} [{item.get('confidence', '?')}] "
    text = item["title"] + (f" — {item['reason']}" if item.get("reason") else "")
    return one_line(head + ("avoid: " if item["id"].startswith("A") else "") + text + f"  (applies to: {where})")


def main(argv) -> int:
    """patterns and things to avoid (patterns.json); extract mines outcomes into candidate skills

  patterns [list] [--file PATH ...] [--cwd D] [--json]    --file: only what applies to those files
  patterns add --title T [--avoid --reason R] [--source S] [--confidence high|medium|low]
               [--applies-to GLOB_OR_PREFIX ...] [--cwd D]
  patterns remove ID [--cwd D]                             ID: P001, A001, …
  patterns extract [--dry-run] [--cwd D] [--json]

extract: a lesson (a verify check that keeps failing, a `what_didnt` item) observed in >= 2
distinct outcomes becomes a candidate skill in candidate-skills/<slug>/ plus an
avoid item here. Re-running it is idempotent. Promotion is by a person: memory skill promote."""
    from maestro.commands.memory.output import parser, run
    from maestro.memory.store.errors import StoreError
    from maestro.memory.project.files import ProjectMemory

    def body(out):
        p = parser("patterns", main.__doc__)
        p.add_argument("action", nargs="?", default="list", choices=("list", "add", "remove", "extract"))
        p.add_argument("arg", nargs="?", help="remove: the id")
        p.add_argument("--title")
        p.add_argument("--avoid", action="store_true", help="add: a thing to avoid (needs --reason)")
        p.add_argument("--reason")
        p.add_argument("--source")
        p.add_argument("--confidence", default="medium", choices=CONFIDENCE)
        p.add_argument("--applies-to", nargs="+", action="extend", default=[], metavar="GLOB")
        p.add_argument("--file", action="append", default=[], help="list: only items applying to this file")
        p.add_argument("--dry-run", action="store_true", help="extract: report, write nothing")
        p.add_argument("--cwd", help="the project directory (default: .)")
        p.add_argument("--json", action="store_true", help="print one JSON envelope")
        args = p.parse_args(argv)
        if args.arg is not None and args.action != "remove":
            raise StoreError(f"patterns {args.action} takes no positional argument", "usage")
        memory = ProjectMemory.for_cwd(args.cwd)
        if args.action == "add":
            if not args.title:
                raise StoreError("patterns add needs --title", "usage")
            item = add(memory, title=args.title, avoid=args.avoid, reason=args.reason, source=args.source,
                       confidence=args.confidence, applies_to=args.applies_to)
            out.line("added " + _line(item))
            return out.done(item=item)
        if args.action == "remove":
            if not args.arg:
                raise StoreError("patterns remove needs an id", "usage")
            item = remove(memory, args.arg)
            out.line("removed " + _line(item))
            return out.done(item=item)
        if args.action == "extract":
            return _extract_cli(memory, out, args.dry_run)
        doc = load(memory)
        items = applicable(doc, args.file) if args.file else (
            [dict(i, kind="pattern") for i in doc["patterns"]] + [dict(i, kind="avoid") for i in doc["avoid"]])
        for item in items:
            out.line(_line(item))
        if not items:
            out.line("no patterns yet (memory patterns add, memory patterns extract)")
        return out.done(project=memory.project, file=memory.patterns_file, items=items)

    return run("patterns", argv, body)
