"""`memory skill list | show | promote | archive | restore`: the command over the candidate skills of
maestro/memory/project/skills.py (promotion is a person's decision: only this command promotes)."""

from maestro.commands.memory.output import one_line, parser, run
from maestro.memory.project import files as project
from maestro.memory.project import skills
from maestro.memory.store.errors import StoreError


def main(argv) -> int:
    """candidate skills: list | show SLUG | promote SLUG [--force] | archive SLUG --reason R | restore SLUG

  skill list [--cwd D] [--json]           the project's candidate skills (slug, status, confidence)
  skill show SLUG                          the candidate-skill.md text
  skill promote SLUG [--force]             install it as ~/.claude/skills/SLUG/SKILL.md (manifest-tracked;
                                           `maestro uninstall` removes it). --force replaces a foreign file
  skill archive SLUG --reason R            set it aside (archived, archived_at, archive_reason)
  skill restore SLUG                       an archived candidate becomes a candidate again

Candidates come from `memory patterns extract`. Promotion is a person's decision: nothing promotes
automatically. An unknown slug exits 4."""

    def body(out):
        p = parser("skill", main.__doc__)
        p.add_argument("action", nargs="?", default="list", choices=("list", "show", "promote", "archive", "restore"))
        p.add_argument("slug", nargs="?")
        p.add_argument("--reason", help="archive: why (required)")
        p.add_argument("--force", action="store_true", help="promote: replace a SKILL.md maestro does not own")
        p.add_argument("--cwd", help="the project directory (default: .)")
        p.add_argument("--json", action="store_true", help="print one JSON envelope")
        args = p.parse_args(argv)
        memory = project.ProjectMemory.for_cwd(args.cwd)
        if args.action == "list":
            if args.slug:
                raise StoreError("skill list takes no slug", "usage")
            found = skills.list_all(memory)
            for meta in found:
                out.line(one_line(f"{meta['slug']}  {meta['status']}  {meta.get('confidence')}  "
                                  f"{meta.get('occurrences')} obs  {meta.get('name')}"))
            if not found:
                out.line("no candidate skills (memory patterns extract)")
            return out.done(skills=found)
        if not args.slug:
            raise StoreError(f"skill {args.action} needs a slug", "usage")
        slug = project.check_id(args.slug, "skill slug")
        if args.action == "show":
            meta, text_body, text = skills.read(memory, slug)
            if not out.as_json:
                out.line(text.rstrip("\n"))
            return out.done(skill=meta, body=text_body)
        if args.action == "promote":
            result = skills.promote(memory, slug, args.force)
            out.line(f"promoted {slug} → {result['path']} (tracked in the install manifest; uninstall removes it)")
            return out.done(**result)
        if args.action == "archive":
            meta = skills.archive(memory, slug, args.reason)
            out.line(f"archived {slug}: {meta['archive_reason']}")
        else:
            meta = skills.restore(memory, slug)
            out.line(f"restored {slug} as a candidate")
        return out.done(skill=meta)

    return run("skill", argv, body)
