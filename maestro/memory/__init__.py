"""The durable memory store (issue 5; format: dsh-maestro-memory, spec memory.md §2).

Modules, one concern each; imports point down:
    cli, store_cli   the `memory` verb and its store subcommands
    store            the API: add / batch / list / replace / remove / archive
    txn              one locked unit of work: write-block, drift guard, staged atomic writes, rollback
    lock             fcntl.flock on a permanent lock file (and dsh's .maestro.lock, respected)
    layout           tracks → files, project hash, date guard
    compose          idle guard, stamp, key header, summaries, dedupe key (pure)
    sanitize         secrets → [Filtered:<label>] (pure)
    entry            the file and entry grammar (pure)
    errors           StoreError: a reason and its exit code
"""
