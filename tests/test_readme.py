"""The README and docs/*.md show only commands that exist and parse, and link only to files that exist.

Which text counts as a command: in fenced code blocks, every line that starts with `maestro ` (but not an error line it prints, `maestro <verb>: …`) or runs
the archive (`python3 dist/maestro.pyz …`, `python3.11 ~/.claude/hooks/maestro.pyz …`); in the prose,
every inline code span that starts the same way. A `$ ` prompt is dropped; the command ends at a
shell comment, a pipe, `;`, `&&`, `||` or a redirection.

The rule for placeholders: `<anything in angle brackets>` stands for a value the reader fills in, so
it is replaced by a sample value before parsing; a placeholder in the place of the verb (`maestro
<verb>`) or of the memory subcommand is a generic form, not a command, and is skipped; `…` (or
`...`) stands for "the rest of the arguments": the command is checked up to it, and skipped when it
stands in the place of the verb. Inline code that only names a verb (`maestro loop`, `maestro
memory`) is a mention of the verb: only the verb (and subcommand) must exist. Synopses
with `[optional]` or `a | b` alternatives are written without the leading `maestro` (the reference
tables do that) and are not checked here; `--help` of every verb is covered by test_help_texts.py.

"Parses" means the verb's own argument parser accepts the arguments, without running the verb:
argparse verbs stop right after `parse_args`; the hand-parsed ones are asked through the function
that parses them (loop.parse, watchdog.parse, scout._arguments), install/uninstall run with their
domain step replaced, and discuss — which parses inside each mode's handler — is checked against
its documented forms here.
"""

import re
import shlex
from pathlib import Path

import pytest

from maestro.cli import VERBS
from maestro.commands.memory.main import SUBCOMMANDS

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

SAMPLE = "sample-value"
GENERIC = "\0generic"  # a placeholder verb, or `…`
PLACEHOLDER = re.compile(r"<[^<>\n]+>")
COMMAND_START = re.compile(r"^(?:\$\s+)?(?:maestro|python3(?:\.\d+)?\s+(?:-I\s+-S\s+)?\S*maestro\.pyz)(?=\s|$)")
ERROR_LINE = re.compile(r"^maestro(?: [a-z-]+)+: ")  # output shown in a block: `maestro memory sync: conflicts …`
SHELL_STOP = {"|", "||", "&&", ";", "&", ">", ">>", "2>&1", "<"}
HOOK_VERBS = ("gate", "inject", "session-start", "stop")


class _Parsed(BaseException):
    """Raised where a verb would start its work: the arguments parsed. A BaseException so no
    `except Exception` on the way turns it into an error line."""


def _commands_in(text: str):
    """(line number, command text, whether inline) for every command shown in a Markdown text."""
    found, in_fence = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            candidate = line.strip()
            if COMMAND_START.match(candidate) and not ERROR_LINE.match(candidate):
                found.append((number, candidate, False))
            continue
        for span in re.findall(r"`([^`]+)`", line):
            if COMMAND_START.match(span.strip()):
                found.append((number, span.strip(), True))
    return found


def _argv(command: str):
    """The arguments after `maestro` (or the archive), placeholders filled, shell syntax cut off.
    None when the command is a generic form (a placeholder verb or subcommand)."""
    text = PLACEHOLDER.sub(lambda m: SAMPLE if "verb" not in m.group(0) and "sub" not in m.group(0)
                           else GENERIC, command)
    lexer = shlex.shlex(text, posix=True, punctuation_chars="|&;<>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words = []
    for word in lexer:
        if word in SHELL_STOP or set(word) <= set("|&;<>"):
            break
        if word in ("…", "..."):
            words.append(GENERIC)
            break
        words.append(word)
    words = words[1:] if words[0] == "$" else words
    start = 1 if words[0] == "maestro" else 1 + next(i for i, w in enumerate(words) if w.endswith("maestro.pyz"))
    argv = words[start:]
    if GENERIC in argv[:2]:
        return None
    return argv[:argv.index(GENERIC)] if GENERIC in argv else argv


def _all_commands():
    cases = []
    for document in DOCUMENTS:
        for number, command, inline in _commands_in(document.read_text(encoding="utf-8")):
            cases.append(pytest.param(command, inline, id=f"{document.relative_to(ROOT)}:{number}"))
    return cases


def _stop_at_parse(monkeypatch):
    from maestro.commands.support import Parser

    real = Parser.parse_args

    def parse_then_stop(self, args=None, namespace=None):
        real(self, args, namespace)
        raise _Parsed()

    monkeypatch.setattr(Parser, "parse_args", parse_then_stop)
    from maestro.commands.memory import search as search_command  # parses its ordinary lines without argparse

    real_quick = search_command.quick_args

    def quick_then_stop(argv):
        if real_quick(argv) is not None:
            raise _Parsed()
        return None

    monkeypatch.setattr(search_command, "quick_args", quick_then_stop)


def _expect_parsed(call):
    try:
        rc = call()
    except _Parsed:
        return
    raise AssertionError(f"does not parse: the verb stopped before its work (rc {rc})")


def _check_model_select(argv, monkeypatch):
    from maestro.commands import model_select

    def stop(*_args, **_kwargs):
        raise _Parsed()

    for name in ("show", "pin", "scout_pin", "select_scout", "ask_on_start", "select"):
        monkeypatch.setattr(model_select, name, stop)
    _expect_parsed(lambda: model_select.main(argv))


def _check_discuss(argv, monkeypatch):
    # discuss parses inside each mode's handler, after it has started work: its documented forms.
    forms = {"--new": (1, 2), "--turn": (1, 4), "--list": (0, 1), "--show": (1, 1)}
    assert argv and argv[0] in forms, f"discuss needs one of {sorted(forms)}"
    low, high = forms[argv[0]]
    assert low <= len(argv) - 1 <= high, f"discuss {argv[0]} takes {low}..{high} arguments"
    if argv[0] == "--list":
        assert argv[1:] in ([], ["--all"])


def _check_install(argv, monkeypatch):
    from maestro.commands import install
    from maestro.install import install as domain

    def stop(*_args, **_kwargs):
        raise _Parsed()

    monkeypatch.setattr(domain, "run", stop)
    _expect_parsed(lambda: install.main(argv))


def _check_uninstall(argv, monkeypatch):
    from maestro.commands import uninstall
    from maestro.install import uninstall as domain

    def stop(*_args, **_kwargs):
        raise _Parsed()

    monkeypatch.setattr(domain, "run", stop)
    monkeypatch.setattr(domain, "purge_targets", stop, raising=False)  # --purge asks before it runs
    _expect_parsed(lambda: uninstall.main(argv))


def _check_watchdog(argv, monkeypatch):
    from maestro.commands import watchdog

    monkeypatch.setattr(watchdog, "read_plan", lambda path: "a plan")
    watchdog.parse(argv)


def _check_memory(argv, monkeypatch):
    from maestro.commands.memory import main

    assert argv and argv[0] in SUBCOMMANDS, f"unknown memory subcommand {argv[:1]}"
    _stop_at_parse(monkeypatch)
    if argv[0] == "mcp":  # without arguments it parses nothing and serves stdin
        from maestro.commands.memory import mcp

        monkeypatch.setattr(mcp, "serve", lambda *_args: (_ for _ in ()).throw(_Parsed()))
    _expect_parsed(lambda: main.main(argv))


def _check_argparse_verb(verb, argv, monkeypatch):
    module = __import__(VERBS[verb][0], fromlist=("main",))
    _stop_at_parse(monkeypatch)
    _expect_parsed(lambda: module.main(argv))


def check_command(argv, monkeypatch):
    """Raises (AssertionError, or the verb's own usage error) when `maestro *argv` would not parse."""
    from maestro.errors import MaestroError

    if argv in ([], ["--help"], ["--version"]):
        return
    verb, rest = argv[0], argv[1:]
    assert verb in VERBS, f"unknown verb {verb!r}"
    if rest in (["--help"], ["-h"]):
        return
    try:
        if verb in HOOK_VERBS:
            assert rest == [], f"the {verb} hook takes no arguments"
        elif verb == "loop":
            from maestro.commands import loop

            monkeypatch.setattr(loop.os.path, "isfile", lambda path: True)  # the plan is the reader's own file
            loop.parse(rest)
        elif verb == "watchdog":
            _check_watchdog(rest, monkeypatch)
        elif verb == "scout":
            from maestro.commands import scout

            scout._arguments(rest)
        elif verb == "discuss":
            _check_discuss(rest, monkeypatch)
        elif verb == "model-select":
            _check_model_select(rest, monkeypatch)
        elif verb == "install":
            _check_install(rest, monkeypatch)
        elif verb == "uninstall":
            _check_uninstall(rest, monkeypatch)
        elif verb == "memory":
            _check_memory(rest, monkeypatch)
        else:
            _check_argparse_verb(verb, rest, monkeypatch)
    except MaestroError as exc:
        raise AssertionError(f"`maestro {' '.join(argv)}` does not parse: {exc.message}") from None


@pytest.mark.source_only
@pytest.mark.parametrize("command, inline", _all_commands())
def test_every_command_shown_exists_and_parses(command, inline, monkeypatch, capsys):
    argv = _argv(command)
    if argv is None:
        pytest.skip("a generic form (placeholder verb)")
    if argv[:1] in (["--help"], ["--version"]):
        return
    if inline and (len(argv) == 1 or argv[:1] == ["memory"] and len(argv) == 2):
        assert argv[0] in VERBS, f"unknown verb {argv[0]!r}"
        assert argv[0] != "memory" or len(argv) == 1 or argv[1] in SUBCOMMANDS, f"unknown memory subcommand {argv[1]!r}"
        return  # a mention of the verb in the prose, not a command line
    check_command(argv, monkeypatch)


@pytest.mark.source_only
@pytest.mark.parametrize("command, problem", [
    ("maestro frobnicate", "unknown verb"),
    ("maestro loop --plan p.md", "--verify"),  # a loop run needs --verify too
    ("maestro doctor --bogus", "does not parse"),
    ("maestro memory frobnicate", "unknown memory subcommand"),
    ("maestro memory list", "does not parse"),  # TRACK is required
    ("maestro model-select --scout gpt-5.4", "does not parse"),
    ("maestro discuss --show", "discuss --show takes"),
    ("maestro gate --verbose", "takes no arguments"),
    ("maestro install --frobnicate", "does not parse"),
])
def test_the_checker_refuses_what_does_not_exist_or_parse(command, problem, monkeypatch, capsys):
    """The check above is only worth something if it fails on a wrong command."""
    with pytest.raises(AssertionError, match=problem):
        check_command(_argv(command), monkeypatch)


def test_commands_are_found_in_fences_and_inline_and_placeholders_filled():
    text = ("Run `maestro status` or `maestro <verb>`.\n```sh\n$ maestro loop --plan <plan-file> "
            "--verify \"<verify command>\"  # comment\npython3 dist/maestro.pyz install | tee log\n```\n")
    commands = [(command, inline) for _, command, inline in _commands_in(text)]
    assert [c for c, _ in commands] == ["maestro status", "maestro <verb>",
                        "$ maestro loop --plan <plan-file> --verify \"<verify command>\"  # comment",
                        "python3 dist/maestro.pyz install | tee log"]
    assert [inline for _, inline in commands] == [True, True, False, False]
    assert [_argv(c) for c, _ in commands] == [["status"], None, ["loop", "--plan", SAMPLE, "--verify", SAMPLE],
                                               ["install"]]
    assert _argv("python3.11 maestro.pyz …") is None
    assert _argv("maestro loop --plan p.md …") == ["loop", "--plan", "p.md"]


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_to_an_existing_file(document):
    broken = []
    for target in LINK.findall(document.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL, or an anchor in the same page
        path = target.split("#", 1)[0]
        if not (document.parent / path).exists():
            broken.append(target)
    assert not broken, f"{document.name} links to missing files: {broken}"
