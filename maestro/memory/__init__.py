"""Memory: what carries over from one session to the next (spec memory.md).

    store/    the durable memory store (format: dsh-maestro-memory, spec memory.md §2): global, user,
              project, key, daily and reference tracks; domain only — the `memory` subcommands that
              drive it live in maestro/commands/memory/
    project/  what maestro learns about one project, beside its tracks: outcomes, handoffs, patterns,
              candidate skills, codemaps, and the project part of the session-start context
"""
