"""One sanitizer on every write path (issue 10 §2): the table of tests/testing/secrets.py written through each
path that stores free text — the domain call in-process for the whole table, then one real command per path
(the `maestro` fixture) — leaves no fragment of a secret in the stored bytes and every look-alike as written.

"Stored bytes" are everything under HOME after the write, read raw and, for JSON files, decoded too (a secret
escaped inside a JSON string is still a leak)."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from maestro.memory.store.errors import StoreError
from testing.memory import command, process_env
from testing.paths import TARGET
from testing.secrets import LOOKALIKES, SECRETS, leaked_fragment, measure_stored


def stored_text(*roots) -> str:
    """Every file under the roots, raw, plus the strings inside every JSON document or JSON line."""
    out = []
    for root in roots:
        root = Path(root)
        for path in [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file()):
            raw = path.read_bytes().decode("utf-8", "replace")
            out.append(raw)
            for chunk in ([raw] if path.suffix == ".json" else raw.splitlines() if path.suffix == ".jsonl" else []):
                try:
                    out.extend(_strings(json.loads(chunk)))
                except ValueError:
                    pass
    return "\n".join(out)


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def refused_or_written(write, text) -> None:
    """Write `text`; a write the sanitizer refuses (secret-only text) stores nothing, which is fine."""
    try:
        write(text)
    except StoreError as exc:
        assert exc.reason == "sensitive", exc.message


# -- the domain calls, the whole table each ----------------------------------------------------------------------


def _paths(store, project):
    """path -> (write one text, how a look-alike reads once stored)."""
    from maestro.commands.memory import mcp_tools
    from maestro.memory.project import codemap, handoffs, outcomes, patterns
    from maestro.memory.project.files import ProjectMemory
    from maestro.memory.store.queue import Queue
    from maestro.memory.store.todos import Todos

    memory = ProjectMemory.for_cwd(str(project), str(store.root))
    counter = iter(range(10 ** 6))
    as_written = lambda text: text  # noqa: E731
    one_line = lambda text: " ".join(text.split())  # noqa: E731

    def replace(text):
        marker = f"to be replaced {next(counter)}"
        store.add("memory", marker)
        store.replace("memory", marker, text)

    def outcome(text):
        outcomes.save(memory, outcomes.record(kind="manual", task_id=f"task-{next(counter)}", state="DONE",
                                              started_at="2024-05-01T10:00:00Z", title=text, notes=text,
                                              what_didnt=[text]))

    def handoff(text):
        handoffs.write(memory, task_id=f"task-{next(counter)}", kind="loop", title=text, state="STUCK",
                       next_command="maestro loop", questions=text, doing=text)

    def codemaps(text):
        codemap.init_codemap(str(project), memory.codemaps, "repo", f"mod-{next(counter)}", ["src/app.py"],
                             purpose=text, notes=text)

    return {
        "memory add": (lambda text: store.add("user", text), as_written),
        "--summary": (lambda text: store.add("user", f"note {next(counter)}", summary=text), _summary_form),
        "memory replace": (replace, as_written),
        "memory suggest -> queue": (lambda text: Queue(store).suggest("key", text, str(project)), as_written),
        "todo add": (lambda text: Todos(store).add(text), as_written),
        "MCP memory_add": (lambda text: mcp_tools.memory_add({"track": "user", "content": text,
                                                              "cwd": str(project)}), as_written),
        "MCP memory_add key + summary -> queue": (
            lambda text: mcp_tools.memory_add({"track": "key", "content": f"note {next(counter)}", "summary": text,
                                               "cwd": str(project)}), _summary_form),
        "outcomes": (outcome, as_written),
        "handoffs": (handoff, as_written),
        "patterns": (lambda text: patterns.add(memory, title=text), one_line),
        "codemaps": (codemaps, as_written),
    }


def _summary_form(text: str) -> str:
    """How a `[summary:…]` holds a look-alike: one line, no `]`, placeholders in their bracket-free form."""
    text = re.sub(r"\[(Filtered:[^\]]+)\]", r"(\1)", text)
    return " ".join(re.sub(r"[\n\r\t\]]", " ", text).split())[:120]


PATHS = ["memory add", "--summary", "memory replace", "memory suggest -> queue", "todo add", "MCP memory_add",
         "MCP memory_add key + summary -> queue", "outcomes", "handoffs", "patterns", "codemaps"]


@pytest.mark.source_only  # the domain modules in-process; the archive is covered by the commands below
@pytest.mark.parametrize("path", PATHS)
def test_every_write_path_stores_no_secret_and_every_look_alike(path, store, project, home, monkeypatch):
    if TARGET == "pyz":
        pytest.skip("source_only: the domain modules in-process")
    monkeypatch.setenv("MAESTRO_MEMORY_DIR", str(store.root))
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # ~250 writes a path: what is stored matters here, not durability
    write, stored_form = _paths(store, project)[path]
    texts, stored = [s.text for s in SECRETS] + LOOKALIKES, []
    for start in range(0, len(texts), 25):  # a fresh store every 25 writes: each write reads its whole file
        for text in texts[start:start + 25]:
            refused_or_written(write, text)
        stored.append(stored_text(home))
        shutil.rmtree(store.root)
    report = measure_stored("\n".join(stored), stored_form)
    assert report.secrets >= 150 and not report.leaks and not report.false_positives, f"{path}\n{report.table()}"


# -- the commands, one real run per path ----------------------------------------------------------------------------


def _chunks(texts, size):
    return [texts[i:i + size] for i in range(0, len(texts), size)]


SECRET_NOTES = ["deploy notes:\n" + "\n".join(s.text for s in chunk) for chunk in _chunks(SECRETS, 40)]
LOOKALIKE_NOTES = ["\n".join(chunk) for chunk in _chunks(LOOKALIKES, 50)]


def _command_paths(project):
    cwd = ["--cwd", str(project)]
    return {
        "memory add": lambda text: [("memory", "add", "user", text)],
        "memory add --summary": lambda text: [("memory", "add", "user", "a note", "--summary", text)],
        "memory replace": lambda text: [("memory", "add", "user", "placeholder entry"),
                                        ("memory", "replace", "user", text, "--match", "placeholder entry")],
        "memory suggest": lambda text: [("memory", "suggest", "key", text, *cwd)],
        "memory todo add": lambda text: [("memory", "todo", "add", " ".join(text.split()))],
        "memory outcome": lambda text: [("memory", "outcome", "save", "--title", "release", "--state", "DONE",
                                         "--notes", text, "--didnt", text, *cwd)],
    }


@pytest.mark.parametrize("path", ["memory add", "memory add --summary", "memory replace", "memory suggest",
                                  "memory todo add", "memory outcome"])
def test_every_command_that_writes_stores_no_secret(maestro, path, project, home):
    runs = _command_paths(project)[path]
    for note in SECRET_NOTES:
        for argv in runs(note):
            result = maestro(*argv)
            assert result.rc == 0, (argv[:3], result.out, result.err)
            for secret in SECRETS:
                assert leaked_fragment(secret, result.out + result.err) is None, (secret.kind, "printed")
    stored = stored_text(home)
    leaks = [(s.kind, s.text) for s in SECRETS if leaked_fragment(s, stored)]
    assert not leaks, f"{path}: {len(leaks)} of {len(SECRETS)} secrets reached disk: {leaks}"


@pytest.mark.parametrize("path", ["memory add", "memory replace", "memory suggest"])
def test_every_command_that_writes_keeps_look_alikes_as_written(maestro, path, project, home):
    runs = _command_paths(project)[path]
    for note in LOOKALIKE_NOTES:
        for argv in runs(note):
            result = maestro(*argv)
            assert result.rc == 0, (argv[:3], result.out, result.err)
    stored = stored_text(home)
    changed = [text for text in LOOKALIKES if text not in stored]
    assert not changed, f"{path}: {len(changed)} look-alikes were changed: {changed}"


def _mcp_session(calls) -> bytes:
    """The stdin of one `memory mcp` run: the handshake, then one tools/call a line."""
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += [{"jsonrpc": "2.0", "id": n + 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
              for n, (name, arguments) in enumerate(calls)]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def test_the_mcp_server_stores_no_secret_and_keeps_look_alikes(project, home):
    """One real `memory mcp` process (it needs binary stdio, which the in-process runner does not give)."""
    cwd = str(project)
    calls = [("memory_add", {"track": "user", "content": note, "cwd": cwd}) for note in SECRET_NOTES + LOOKALIKE_NOTES]
    calls += [("memory_add", {"track": "key", "content": f"note {n}", "summary": s.text, "cwd": cwd})
              for n, s in enumerate(SECRETS[:60])]
    calls += [("memory_suggest", {"track": "project", "content": note, "cwd": cwd}) for note in SECRET_NOTES]
    done = subprocess.run(command("memory", "mcp"), input=_mcp_session(calls), env=process_env(), cwd=cwd,
                          capture_output=True, timeout=120)
    out = done.stdout.decode("utf-8")
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in out.splitlines()]
    failed = [r for r in replies if r.get("result", {}).get("isError")]
    assert len(replies) == len(calls) + 1 and all("sensitive-only" in json.dumps(r) for r in failed), out
    stored = stored_text(home)
    for secret in SECRETS:
        assert leaked_fragment(secret, stored) is None, (secret.kind, "stored")
        assert leaked_fragment(secret, out) is None, (secret.kind, "echoed to the client")
    assert [text for text in LOOKALIKES if text not in stored] == []
