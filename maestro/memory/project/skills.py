"""Candidate skills mined from outcomes (learn.py), and their promotion — by a person only
(`memory skill`, maestro/commands/memory/skill.py).

    projects/<h>/candidate-skills/<slug>/candidate-skill.md   `key: value` frontmatter + SKILL-like body
    projects/<h>/candidate-skills/<slug>/observations.jsonl   {ts, outcome, task, prediction, actual, match, notes, id}

Frontmatter keys: name, slug, status (candidate | promoted | archived), confidence (low for 2
observations, medium 3–4, high >= 5), occurrences, lesson, created_at, updated_at, promoted_at,
archived_at, archive_reason, applies_to (a JSON list). `memory patterns extract` writes them and
regenerates the body; it never changes a status.

No code calls `promote`: only the `memory skill promote SLUG` command a person types. It publishes
`~/.claude/skills/<slug>/SKILL.md` (`name: <slug>`, a quoted one-line `description`, the body)
atomically and records its sha256 in `~/.maestro/install-manifest.json` as `skills/<slug>/SKILL.md`,
exactly like the installer, so `maestro uninstall` removes it (installed or not), holding the same
manifest lock as install and uninstall (`manifest.locked()`: busy, exit 4, when it stays held). A symlinked path
is refused; an existing SKILL.md that the manifest does not own with the same bytes (a skill of
your own) is kept unless `--force`; maestro's shipped skill names are never taken. Promoting again
refreshes a promoted skill. `archive SLUG --reason R` sets archived, archived_at, archive_reason; an
archived candidate is not promoted until `memory skill restore SLUG` makes it a candidate again
(an installed SKILL.md stays until uninstall or removal by hand). An unknown slug: exit 4 (no_match).
"""

import json
import os

from maestro.memory.project import files as project
from maestro.memory.store.errors import StoreError
from maestro.util.text import first_line

FIELDS = ("name", "slug", "status", "confidence", "occurrences", "lesson", "created_at", "updated_at",
          "promoted_at", "archived_at", "archive_reason", "applies_to")
STATUSES = ("candidate", "promoted", "archived")
SHOWN_OBSERVATIONS = 10


def confidence(occurrences: int) -> str:
    return "high" if occurrences >= 5 else "medium" if occurrences >= 3 else "low"


def paths_of(memory, slug: str):
    directory = os.path.join(memory.candidate_skills, project.check_id(slug, "skill slug"))
    return directory, os.path.join(directory, "candidate-skill.md"), os.path.join(directory, "observations.jsonl")


def exists(memory, slug: str) -> bool:
    return os.path.exists(paths_of(memory, slug)[1])


def _value(value) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return json.dumps(value, ensure_ascii=False)
    return " ".join(str(value).split())


def render(meta: dict, body: str) -> str:
    return "---\n" + "".join(f"{key}: {_value(meta.get(key))}\n" for key in FIELDS) + "---\n\n" + body


def parse(text: str, path: str = "candidate-skill.md"):
    """(meta, body); StoreError `malformed` when the frontmatter does not parse."""
    head, sep, body = text[4:].partition("\n---\n") if text.startswith("---\n") else ("", "", "")
    meta = {}
    for line in head.splitlines():
        key, colon, value = line.partition(":")
        if key in FIELDS and colon:
            meta[key] = value.strip() or None
    try:
        meta["occurrences"] = int(meta.get("occurrences") or 0)
        meta["applies_to"] = json.loads(meta.get("applies_to") or "[]")
    except ValueError:
        meta["applies_to"] = None
    if not sep or meta.get("status") not in STATUSES or not project.is_valid_id(meta.get("slug")) or not isinstance(
            meta["applies_to"], list):
        raise StoreError(f"{path} is malformed (frontmatter); fix or remove it — nothing was changed", "malformed")
    return meta, body.lstrip("\n")


def read(memory, slug: str):
    """(meta, body, raw text) of an existing candidate; StoreError `no_match` when there is none."""
    _, md, _ = paths_of(memory, slug)
    try:
        with open(md, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise StoreError(f"no candidate skill {slug} (memory skill list)", "no_match") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"cannot read {md}: {exc}", "io") from None
    meta, body = parse(text, md)
    if meta["slug"] != slug:
        raise StoreError(f"{md} names another slug ({meta['slug']}); fix or remove it", "malformed")
    return meta, body, text


def read_observations(path: str):
    """(raw bytes, parsed list); a line that is not a JSON object fails closed."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        return b"", []
    found = []
    for line in raw.decode("utf-8", "replace").splitlines():
        try:
            value = json.loads(line) if line.strip() else {}
        except ValueError:
            value = None
        if not isinstance(value, dict):
            raise StoreError(f"{path} has a line that is not a JSON object; fix or remove it", "malformed")
        if value:
            found.append(value)
    if raw and not raw.endswith(b"\n"):
        raw += b"\n"
    return raw, found


def slug_for(memory, lesson: dict) -> str:
    """Stable: the lesson's slug plus hex of sha1 of its key, longer only if another lesson has it."""
    from hashlib import sha1

    base = project.slugify(("check " if lesson["kind"] == "check" else "") + lesson["text"], 40) or "lesson"
    digest = sha1(lesson["key"].encode("utf-8", "surrogateescape")).hexdigest()
    for width in (6, 12, 20):
        slug = project.check_id(f"{base}-{digest[:width]}", "skill slug")
        if not exists(memory, slug):
            return slug
        try:
            if read(memory, slug)[0].get("lesson") == lesson["key"]:
                return slug
        except StoreError:
            return slug  # plan() reports the malformed file
    return slug


CHECK_GUIDANCE = """1. Reproduce the check locally before dispatching again: run `{command}` and read the failing output in full.
2. Find and fix the root cause (or put the fix into the plan as an explicit step) before the next dispatch; a retry of the same plan hits the same wall.
3. Do not raise `--max-iters` to push through: more iterations of the same plan do not change it.
4. If the check itself is wrong (flaky, environment-dependent), fix or replace the check and say so in the plan."""
DIDNT_GUIDANCE = """1. Before planning work on these files, read this lesson and the observations below.
2. Put a step or a constraint into the plan that prevents it, and a verify check that would catch it.
3. If it happens again, record in the outcome's notes what was done differently."""


def body_for(lesson: dict, observations: list, applies_to: list) -> str:
    files = ", ".join(f"`{f}`" for f in applies_to[:12]) + (" …" if len(applies_to) > 12 else "") or "any file"
    if lesson["kind"] == "check":
        command = lesson["text"].split(" :: ", 1)[0]
        when = [f"- A dispatch whose verify check is `{command}` and which fails with: `{lesson['text']}`",
                f"- Files: {files}"]
        todo = CHECK_GUIDANCE.format(command=command).splitlines()
    else:
        when = [f"- Work on: {files}", f"- Reported as what did not work: \"{lesson['text']}\""]
        todo = DIDNT_GUIDANCE.splitlines()
    shown = observations[-SHOWN_OBSERVATIONS:]
    went = [f"Seen {len(observations)} times" + (f" (latest {len(shown)} below; all in observations.jsonl):"
                                                 if len(observations) > len(shown) else ":")]
    went += [first_line(f"- {o.get('ts')} outcome {o.get('outcome')} (task {o.get('task')}): {o.get('actual')} — "
                      f"{o.get('notes')}", 300) for o in shown]
    return "\n".join([f"# {lesson['title']}", "", "## When this applies", "", *when, "", "## What went wrong", "",
                      *went, "", "## What to do", "", *todo, ""])


def plan(memory, slug: str, lesson: dict, now: str) -> dict:
    """What extract would write for one lesson; reads (and checks) every existing file first."""
    directory, md, obs_path = paths_of(memory, slug)
    meta, _, current = read(memory, slug) if os.path.exists(md) else (None, None, None)
    raw, existing = read_observations(obs_path)
    known = {o.get("id") for o in existing}
    new = [o for o in lesson["observations"] if o["id"] not in known]
    everything = existing + new
    meta = dict(meta) if meta else {"slug": slug, "status": "candidate", "lesson": lesson["key"], "created_at": now,
                                    "updated_at": now}
    applies_to = sorted(set(meta.get("applies_to") or []) | lesson["files"])
    meta.update(name=lesson["title"], confidence=confidence(len(everything)), occurrences=len(everything),
                lesson=lesson["key"], applies_to=applies_to)
    body = body_for(lesson, everything, applies_to)
    text = render(meta, body)
    writes = []
    if new:
        writes.append((obs_path, raw + "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in new).encode("utf-8")))
    if text != current:
        meta["updated_at"] = now
        writes.append((md, render(meta, body).encode("utf-8")))
    action = "created" if current is None else "updated" if writes else "unchanged"
    return {"slug": slug, "action": action, "status": meta["status"], "occurrences": len(everything),
            "added": len(new), "confidence": meta["confidence"], "title": lesson["title"], "applies_to": applies_to,
            "observations": everything, "dir": directory, "writes": writes}


def apply(planned: dict) -> None:
    from maestro.util import atomic

    if planned["writes"]:
        atomic.make_private_dirs(planned["dir"])
    for path, data in planned["writes"]:
        atomic.write_atomic(path, data, 0o600)


def list_all(memory) -> list:
    try:
        names = sorted(os.listdir(memory.candidate_skills))
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        try:
            meta = read(memory, name)[0]
        except StoreError as exc:
            if exc.reason == "no_match":
                continue
            meta = {"slug": name, "status": "?", "confidence": "?", "occurrences": 0, "name": "(malformed)"}
        found.append(meta)
    return found


def _update(memory, slug: str, body: str, **fields) -> dict:
    from maestro.util import atomic
    from maestro.memory.project import outcomes

    meta = dict(read(memory, slug)[0], **fields, updated_at=outcomes.now_utc())
    atomic.write_atomic(paths_of(memory, slug)[1], render(meta, body).encode("utf-8"), 0o600)
    return meta


def archive(memory, slug: str, reason: str) -> dict:
    """Set the candidate aside (archived, archived_at, archive_reason); its new frontmatter."""
    from maestro.memory.project import outcomes

    with project.locked(memory):
        _, body, _ = read(memory, slug)
        if not reason:
            raise StoreError("skill archive needs --reason", "usage")
        return _update(memory, slug, body, status="archived", archived_at=outcomes.now_utc(),
                       archive_reason=project.clean(reason, "reason", 200))


def restore(memory, slug: str) -> dict:
    """An archived candidate becomes a candidate again; its new frontmatter."""
    with project.locked(memory):
        meta, body, _ = read(memory, slug)
        if meta["status"] != "archived":
            raise StoreError(f"candidate {slug} is {meta['status']}, not archived", "conflict")
        return _update(memory, slug, body, status="candidate", archived_at=None, archive_reason=None)


def skill_md(meta: dict, body: str, project_root: str) -> bytes:
    description = (f"Lesson maestro learned in {os.path.basename(project_root) or project_root} from "
                   f"{meta['occurrences']} outcomes: {meta['name']}")
    description = " ".join(description.split())[:300]
    return (f"---\nname: {meta['slug']}\ndescription: {json.dumps(description, ensure_ascii=False)}\n---\n\n"
            + body).encode("utf-8")


def promote(memory, slug: str, force: bool = False) -> dict:
    """Publish the candidate as ~/.claude/skills/<slug>/SKILL.md, manifest-tracked. Person-only."""
    from maestro import paths
    from maestro.install import manifest, targets
    from maestro.install.transaction import Transaction
    from maestro.memory.store.lock import timeout_seconds
    from maestro.memory.project.files import locked

    if slug in targets.BASE_SKILLS + targets.WORKFLOW_SKILLS:
        raise StoreError(f"{slug} is the name of a skill maestro installs; refusing", "conflict")
    with locked(memory):
        meta, body, _ = read(memory, slug)
        if meta["status"] == "archived":
            raise StoreError(f"candidate {slug} is archived ({meta.get('archive_reason')}); "
                             f"run `maestro memory skill restore {slug}` first", "conflict")
        key = f"skills/{slug}/SKILL.md"
        destination = manifest.key_path(key)
        data = skill_md(meta, body, memory.project)
        try:
            with manifest.locked(timeout_seconds()):  # the one lock install and uninstall take too
                owned = manifest.read(strict=True)
                current = _check_destination(destination, owned["files"].get(key), force)
                record = dict(owned, files=dict(sorted({**owned["files"], key: manifest.sha256(data)}.items())))
                tx = Transaction()
                try:
                    if current != data:
                        tx.write(destination, data, 0o644)
                    tx.write(paths.install_manifest(), manifest.dumps(record), 0o600)
                except OSError as exc:
                    tx.rollback()
                    raise StoreError(f"cannot publish {destination}: {exc.strerror or exc}", "io") from None
        except manifest.ManifestBusy as exc:
            raise StoreError(str(exc), "busy") from None
        except manifest.ManifestError as exc:
            raise StoreError(f"{exc}; refusing to change managed files", "malformed") from None
        from maestro.memory.project import outcomes

        meta = _update(memory, slug, body, status="promoted", promoted_at=outcomes.now_utc())
    return {"slug": slug, "path": destination, "manifest_key": key, "sha256": manifest.sha256(data), "meta": meta}


def _check_destination(destination: str, recorded, force: bool):
    """The current bytes (None when absent); refuses symlinks, non-files and unowned skills
    (the installer's check, maestro/install/publish.py, worded for `memory skill promote`)."""
    from maestro.install import publish

    try:
        return publish.current_bytes(destination, recorded, force=force)
    except publish.Refused as exc:
        if exc.problem in (publish.SYMLINKED_DIRECTORY, publish.SYMLINK):
            message = f"{exc.path} is a symlink; refusing to publish through it"
        elif exc.problem == publish.NOT_A_FILE:
            message = f"{exc.path} is not a regular file; refusing"
        else:
            message = f"{exc.path} exists and maestro does not own it (a skill of your own?); --force replaces it"
        raise StoreError(message, "conflict") from None

