"""A project's patterns and things to avoid (`memory patterns`, maestro/commands/memory/patterns.py).

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

`memory patterns extract` (learn.py) mines the outcome records into candidate skills (skills.py) and
the avoid items here; this module does not know about either, so nothing here imports them.
"""

VERSION = 1
CONFIDENCE = ("high", "medium", "low")
KINDS = {"patterns": "P", "avoid": "A"}


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


def add(memory, *, title, avoid=False, reason=None, source=None, confidence="medium", applies_to=(), clock=None):
    from maestro.memory.project.files import clean, locked
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
    from maestro.memory.project.files import locked
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
