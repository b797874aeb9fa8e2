"""`maestro session-start` — the SessionStart hook (spec §1.8, §2.8; original install suite t13).

It exports MAESTRO_SESSION_ID through $CLAUDE_ENV_FILE, and reports the Codex pins: as a setup
question when armed (~/.maestro/ask-on-start) on a non-resume start, as one status line otherwise.
It never fails the session (always exit 0) and its output stays below Claude Code's 10,000-char cap.
"""

import json
import os
from pathlib import Path

import pytest

SID = "session-test"
NP = "(Codex default — not pinned)"
PYZ = "maestro"  # the launcher install puts on PATH
NOT_ARMED_TAIL = f" — or turn on the session-start setup question: {PYZ} model-select --ask-on-start on.\n"
OUTPUT_CAP = 10_000


# --------------------------------------------------------------------------------------------- helpers


def start(maestro, body=None, env=None):
    if body is None:
        body = {"source": "startup", "session_id": SID}
    stdin = body if isinstance(body, (str, bytes)) else json.dumps(body)
    result = maestro("session-start", stdin=stdin, env=env)
    assert result.rc == 0, result
    assert len(result.out) < OUTPUT_CAP
    return result


def status_line(model=NP, debate=NP, impl_effort="medium", impl_model=None, scout="unpinned", armed=False):
    inherited = impl_model is None
    impl_model = model if impl_model is None else impl_model
    return (
        f"Maestro: Codex pin is model={model}, debate-effort={debate}, impl-effort={impl_effort}, "
        f"impl-model={impl_model}{' (inherited)' if inherited else ''}, scout={scout}. "
        'Say "codex model" to change it before starting work' + ("." + "\n" if armed else NOT_ARMED_TAIL)
    )


def codex(home):
    path = home / ".codex"
    path.mkdir(exist_ok=True)
    return path


def write_config(home, text):
    (codex(home) / "config.toml").write_text(text, encoding="utf-8")


def arm(home):
    (home / ".maestro").mkdir(exist_ok=True)
    (home / ".maestro" / "ask-on-start").write_bytes(b"")


# ----------------------------------------------------------------------------------------- export


def test_valid_session_id_is_appended_to_claude_env_file(maestro, tmp_path):
    env_file = tmp_path / "env.sh"
    env_file.write_bytes(b"export FOO=1\n")
    start(maestro, env={"CLAUDE_ENV_FILE": str(env_file)})
    assert env_file.read_bytes() == b"export FOO=1\nexport MAESTRO_SESSION_ID=session-test\n"
    start(maestro, {"session_id": "Second_id-2"}, env={"CLAUDE_ENV_FILE": str(env_file)})
    assert env_file.read_bytes() == (
        b"export FOO=1\nexport MAESTRO_SESSION_ID=session-test\nexport MAESTRO_SESSION_ID=Second_id-2\n"
    )


def test_env_file_is_created_private_when_missing(maestro, tmp_path):
    env_file = tmp_path / "new-env.sh"
    start(maestro, env={"CLAUDE_ENV_FILE": str(env_file)})
    assert env_file.read_bytes() == b"export MAESTRO_SESSION_ID=session-test\n"
    assert os.stat(env_file).st_mode & 0o777 == 0o600


@pytest.mark.parametrize("sid", ["a;rm -rf /", "a" * 65, "", "a b", "$(id)", "ä", 5, None, ["x"]])
def test_invalid_session_id_is_not_exported(maestro, tmp_path, sid):
    env_file = tmp_path / "env.sh"
    env_file.write_bytes(b"export FOO=1\n")
    result = start(maestro, {"source": "startup", "session_id": sid}, env={"CLAUDE_ENV_FILE": str(env_file)})
    assert env_file.read_bytes() == b"export FOO=1\n"
    assert result.out == status_line()


def test_invalid_session_id_does_not_create_the_env_file(maestro, tmp_path):
    env_file = tmp_path / "never.sh"
    start(maestro, {"session_id": "a;b"}, env={"CLAUDE_ENV_FILE": str(env_file)})
    assert not env_file.exists()


def test_64_char_session_id_is_exported(maestro, tmp_path):
    sid = "x" * 64
    env_file = tmp_path / "env.sh"
    start(maestro, {"session_id": sid}, env={"CLAUDE_ENV_FILE": str(env_file)})
    assert env_file.read_bytes() == f"export MAESTRO_SESSION_ID={sid}\n".encode()


def test_without_claude_env_file_nothing_is_written(maestro, tmp_path, home):
    before = sorted(os.listdir(tmp_path))
    result = start(maestro)
    assert result.out == status_line()
    assert result.err == ""
    assert sorted(os.listdir(tmp_path)) == before
    assert list(home.iterdir()) == []


def test_empty_claude_env_file_variable_is_ignored(maestro, tmp_path):
    result = start(maestro, env={"CLAUDE_ENV_FILE": ""})
    assert result.out == status_line()


def test_symlinked_env_file_is_not_followed_and_the_session_still_starts(maestro, tmp_path):
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep\n")
    link = tmp_path / "env.sh"
    link.symlink_to(victim)
    result = start(maestro, env={"CLAUDE_ENV_FILE": str(link)})
    assert victim.read_bytes() == b"keep\n"
    assert result.out == status_line()
    assert result.err.startswith("maestro session-start: not exporting MAESTRO_SESSION_ID to ")
    assert not (Path(os.environ["HOME"]) / ".maestro" / "logs" / "crashes.log").exists()


# ------------------------------------------------------------------------------------ bad payloads


@pytest.mark.parametrize("raw", [b"not-json", b"", b"[]", b"\xff", b'{"source":', b"null"])
def test_bad_payload_still_exits_0_with_the_status_line(maestro, tmp_path, home, raw):
    env_file = tmp_path / "env.sh"
    result = start(maestro, raw, env={"CLAUDE_ENV_FILE": str(env_file)})
    assert result.out == status_line()
    assert result.err == ""
    assert not env_file.exists()
    assert not (home / ".maestro").exists()  # an expected condition leaves no crash note


def test_bad_payload_when_armed_asks_the_setup_question(maestro, home):
    arm(home)
    result = start(maestro, "not-json")
    assert result.out.startswith("MAESTRO SESSION SETUP — ")


# ------------------------------------------------------------------------------ armed setup question


def test_t13_armed_fresh_start_unpinned_is_not_complete(maestro, home):
    arm(home)
    codex(home)
    result = start(maestro)
    out = result.out
    assert out.startswith(
        "MAESTRO SESSION SETUP — the user asked to choose the Codex model and per-role reasoning effort "
        "before work starts.\n"
    )
    assert "NOT complete" in out and "cannot dispatch Codex until values are selected" in out
    assert out.index("NOT complete") < out.index("cannot dispatch Codex until values are selected")
    assert out.endswith(
        "NOT complete: tell the user maestro cannot dispatch Codex until values are selected, "
        "and do not report setup as done.\n"
    )
    assert "complete; if the user declines or skips" not in out
    assert f"  1) Debate model — current: {NP}.\n" in out
    assert f"  2) Debate/design effort — current: {NP}.\n" in out
    assert "  3) Implementation effort — current: medium.\n" in out
    assert f"  4) Implementation model — current: {NP}.\n" in out
    assert f"Show the current pins first:  {PYZ} model-select --show\n" in out
    assert "AskUserQuestion" in out


def test_t13_armed_fresh_start_with_complete_pin_may_be_kept(maestro, home):
    arm(home)
    write_config(home, 'model = "gpt-test"\nmodel_reasoning_effort = "high"\n')
    out = start(maestro).out
    assert "complete; if the user declines or skips, preserve it" in out
    assert out.endswith("complete; if the user declines or skips, preserve it and proceed.\n")
    assert "NOT complete" not in out
    assert "  1) Debate model — current: gpt-test.\n" in out
    assert "  2) Debate/design effort — current: high.\n" in out
    assert "  4) Implementation model — current: gpt-test.\n" in out


@pytest.mark.parametrize(
    "config", ['model = "gpt-test"\n', 'model_reasoning_effort = "high"\n', 'model = ""\nmodel_reasoning_effort = "high"\n',
               'model = "gpt-test"\nmodel_reasoning_effort = "  "\n', 'model = 5\nmodel_reasoning_effort = "high"\n'],
)
def test_armed_with_a_partial_pin_is_not_complete(maestro, home, config):
    arm(home)
    write_config(home, config)
    out = start(maestro).out
    assert "NOT complete: tell the user maestro cannot dispatch Codex until values are selected" in out
    assert "preserve it and proceed" not in out


@pytest.mark.parametrize("source", ["startup", "clear", "compact", "", 5, None])
def test_armed_non_resume_source_asks(maestro, home, source):
    arm(home)
    body = {"session_id": SID, "source": source}
    assert start(maestro, body).out.startswith("MAESTRO SESSION SETUP — ")


def test_armed_resume_shows_one_status_line(maestro, home):
    arm(home)
    write_config(home, 'model = "gpt-test"\nmodel_reasoning_effort = "high"\n')
    result = start(maestro, {"session_id": SID, "source": "resume"})
    assert result.out == status_line(model="gpt-test", debate="high", armed=True)
    assert result.out.count("\n") == 1


def test_not_armed_startup_shows_status_line_with_the_arming_hint(maestro, home):
    write_config(home, 'model = "gpt-test"\nmodel_reasoning_effort = "high"\n')
    result = start(maestro)
    assert result.out == status_line(model="gpt-test", debate="high")
    assert result.out.count("\n") == 1


def test_arming_marker_must_be_exactly_named(maestro, home):
    (home / ".maestro").mkdir()
    (home / ".maestro" / "ask-on-start.bak").write_bytes(b"")
    assert start(maestro).out == status_line()


# ---------------------------------------------------------------------------------------------- pins


def test_all_pins_are_reported(maestro, home):
    write_config(home, 'model = "gpt-5.6-sol"\nmodel_reasoning_effort = "max"\n')
    (codex(home) / "maestro-impl-effort").write_text("xhigh\n")
    (codex(home) / "maestro-impl-model").write_text("gpt-5.6-luna\n")
    (codex(home) / "maestro-scout").write_text("model=gpt-5.6-terra\neffort=low\n")
    assert start(maestro).out == status_line(
        model="gpt-5.6-sol", debate="max", impl_effort="xhigh", impl_model="gpt-5.6-luna", scout="gpt-5.6-terra/low"
    )


def test_missing_impl_model_is_inherited(maestro, home):
    write_config(home, 'model = "gpt-test"\n')
    out = start(maestro).out
    assert out == status_line(model="gpt-test")
    assert "impl-model=gpt-test (inherited), " in out


@pytest.mark.parametrize("content", ["bad model!\n", "", "\n\n", "a/b\n", "x y\n"])
def test_invalid_impl_model_is_inherited(maestro, home, content):
    write_config(home, 'model = "gpt-test"\n')
    (codex(home) / "maestro-impl-model").write_text(content)
    assert start(maestro).out == status_line(model="gpt-test")


def test_blank_impl_effort_file_means_medium(maestro, home):
    (codex(home) / "maestro-impl-effort").write_text("  \n")
    assert start(maestro).out == status_line()


@pytest.mark.parametrize(
    "content",
    ["model=gpt-x\neffort=max\n", "model=gpt-x\n", "effort=low\n", "model=bad model\neffort=low\n", "model=\neffort=low\n",
     "gpt-x/low\n", "model = gpt-x\neffort = low\n", ""],
)
def test_invalid_scout_pin_is_unpinned(maestro, home, content):
    (codex(home) / "maestro-scout").write_text(content)
    assert start(maestro).out == status_line()


def test_scout_pin_lines_may_come_in_any_order(maestro, home):
    (codex(home) / "maestro-scout").write_text("effort=minimal\nmodel=scouty\n")
    assert start(maestro).out == status_line(scout="scouty/minimal")


def test_model_key_inside_a_table_does_not_count(maestro, home):
    write_config(home, '[profiles.fast]\nmodel = "gpt-table"\nmodel_reasoning_effort = "low"\n')
    assert start(maestro).out == status_line()


def test_key_after_a_table_header_belongs_to_the_table(maestro, home):
    write_config(home, 'web_search = "disabled"\n  [mcp_servers.x]\ncommand = "x"\nmodel = "gpt-table"\n')
    assert start(maestro).out == status_line()


def test_dotted_model_key_does_not_count(maestro, home):
    write_config(home, 'profile.model = "gpt-dotted"\n')
    assert start(maestro).out == status_line()


def test_model_inside_a_multiline_string_does_not_count(maestro, home):
    write_config(home, 'notes = """\nmodel = "gpt-fake"\nmodel_reasoning_effort = "low"\n"""\n'
                       "other = '''\nmodel = \"gpt-fake2\"\n'''\n")
    assert start(maestro).out == status_line()


def test_single_quoted_values_are_read(maestro, home):
    write_config(home, "model = 'gpt-single'\nmodel_reasoning_effort = 'medium'\n")
    assert start(maestro).out == status_line(model="gpt-single", debate="medium")


def test_top_level_keys_before_a_table_are_read_and_bom_is_tolerated(maestro, home):
    (codex(home) / "config.toml").write_bytes(
        '\ufeff# comment\nmodel = "gpt-top"  # trailing\n\nmodel_reasoning_effort = "high"\n[profiles.x]\nmodel = "other"\n'.encode()
    )
    assert start(maestro).out == status_line(model="gpt-top", debate="high")


def test_invalid_toml_is_reported_but_the_session_starts(maestro, home):
    write_config(home, 'model = "gpt-test"\nmodel_reasoning_effort = \n')
    result = start(maestro)
    config = home / ".codex" / "config.toml"
    first, second = result.out.split("\n", 1)
    assert first.startswith(f"Note: {config} is not valid TOML (")
    assert second == status_line()
    assert result.err == ""


def test_non_utf8_toml_is_reported(maestro, home):
    (codex(home) / "config.toml").write_bytes(b'model = "gpt-\xff"\n')
    out = start(maestro).out
    assert out.startswith(f"Note: {home / '.codex' / 'config.toml'} is not valid TOML (")
    assert out.endswith(status_line())


def test_invalid_toml_is_reported_in_the_armed_question_too(maestro, home):
    arm(home)
    write_config(home, "[[[\n")
    out = start(maestro).out
    assert out.startswith("MAESTRO SESSION SETUP — ")
    assert f"Note: {home / '.codex' / 'config.toml'} is not valid TOML (" in out
    assert "NOT complete" in out


def test_unreadable_config_is_reported(maestro, home):
    codex(home)
    (home / ".codex" / "config.toml").mkdir()
    out = start(maestro).out
    assert out.startswith(f"Note: cannot read {home / '.codex' / 'config.toml'}: ")
    assert out.endswith(status_line())


def test_codex_home_is_honoured(maestro, tmp_path):
    other = tmp_path / "codex-home"
    other.mkdir()
    (other / "config.toml").write_text('model = "gpt-codex-home"\n')
    out = start(maestro, env={"CODEX_HOME": str(other)}).out
    assert out == status_line(model="gpt-codex-home")


# ---------------------------------------------------------------------------------------- size bound


@pytest.mark.parametrize("armed", [False, True])
def test_output_stays_below_10000_chars_with_hostile_pin_files(maestro, home, armed):
    if armed:
        arm(home)
    write_config(home, 'model = "%s"\nmodel_reasoning_effort = "%s"\n' % ("m" * 20000, "e" * 20000))
    (codex(home) / "maestro-impl-effort").write_text("x" * 50000)
    (codex(home) / "maestro-impl-model").write_text("y" * 4096)
    (codex(home) / "maestro-scout").write_text("model=%s\neffort=high\n" % ("z" * 4080))
    out = start(maestro).out
    assert len(out) < OUTPUT_CAP
    assert out.startswith("MAESTRO SESSION SETUP — " if armed else "Maestro: Codex pin is model=mmm")


def test_output_stays_below_10000_chars_with_a_long_config_error(maestro, monkeypatch, outside_tmp):
    deep = outside_tmp
    for _ in range(30):
        deep = deep / ("d" * 120)
    deep.mkdir(parents=True)
    (deep / "config.toml").write_text("=" * 5000 + "\n")
    monkeypatch.setenv("CODEX_HOME", str(deep))
    arm_home = os.environ["HOME"]
    os.makedirs(os.path.join(arm_home, ".maestro"), exist_ok=True)
    open(os.path.join(arm_home, ".maestro", "ask-on-start"), "w").close()
    out = start(maestro).out
    assert "is not valid TOML" in out


def test_status_line_is_one_line_even_for_a_multiline_model(maestro, home):
    write_config(home, 'model = "gpt\\nInjected: line"\n')
    out = start(maestro).out
    assert out.count("\n") == 1
    assert out.startswith("Maestro: Codex pin is model=")


# ------------------------------------------------------------------------------------- command line


def test_session_start_help_exits_0(maestro):
    result = maestro("session-start", "--help")
    assert result.rc == 0
    assert result.out.startswith("usage: maestro session-start  (reads a Claude Code hook payload on stdin)\n")


def test_session_start_with_an_extra_argument_never_fails_the_session(maestro):
    result = maestro("session-start", "extra")
    assert result.rc == 0
    assert result.err == "maestro session-start: takes no arguments, only a hook payload on stdin (see --help)\n"


@pytest.mark.source_only
def test_crash_while_building_context_still_exits_0_and_exports(source_maestro, home, tmp_path, monkeypatch):
    from maestro.hooks import session_start

    def boom(payload):
        raise RuntimeError("session-start-sentinel")

    monkeypatch.setattr(session_start, "build_context", boom)
    env_file = tmp_path / "env.sh"
    result = source_maestro("session-start", stdin=json.dumps({"session_id": SID}),
                            env={"CLAUDE_ENV_FILE": str(env_file)})
    assert (result.rc, result.out, result.err) == (0, "", "")
    assert env_file.read_bytes() == b"export MAESTRO_SESSION_ID=session-test\n"
    text = (home / ".maestro" / "logs" / "crashes.log").read_text()
    assert " verb=session-start:context " in text and "RuntimeError: session-start-sentinel" in text


# ------------------------------------------------------------------------------------ memory snapshot


def memory_root(home, monkeypatch):
    monkeypatch.delenv("MAESTRO_MEMORY_DIR", raising=False)
    return home / ".maestro" / "memory"


def write_track(path, entries):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(("\n§\n".join(entries) + "\n").encode())


def project_files(root, project):
    import hashlib

    return root / "projects" / hashlib.sha1(os.path.realpath(project).encode()).hexdigest()[:12]


def fill_store(root, project, total=5000, size=400):
    """`total` entries of ≈ `size` bytes spread over global, user, key, project and today's daily."""
    import datetime

    per = total // 5

    def entries(tag):
        return [f"[2024-04-01 09:00] [summary:{tag} {i}] {tag} {i} " + "w" * size for i in range(per)]

    write_track(root / "MEMORY.md", entries("global"))
    write_track(root / "USER.md", entries("user"))
    write_track(project_files(root, project) / "KEY.md", [f"[id:{i:08x}] " + e for i, e in enumerate(entries("key"))])
    write_track(project_files(root, project) / "MEMORY.md", entries("project"))
    write_track(root / "daily" / f"{datetime.date.today().isoformat()}.md", entries("daily"))


def test_memory_snapshot_is_printed_before_the_pin_line(maestro, home, tmp_path, monkeypatch):
    root = memory_root(home, monkeypatch)
    project = tmp_path / "project"
    project.mkdir()
    write_track(root / "MEMORY.md", ["[2024-04-01 09:00] [summary:tea] likes tea"])
    write_track(project_files(root, project) / "KEY.md", ["[id:0000000a] [2024-04-01] [summary:pnpm] use pnpm"])
    result = start(maestro, {"source": "startup", "session_id": SID, "cwd": str(project)})
    assert result.out.startswith(f"# Session\nsessionId: {SID}\n\n# Global Memory\n[2024-04-01 09:00] [summary:tea]")
    assert "# Project Key Memory\n[id:0000000a] [2024-04-01] [summary:pnpm] use pnpm\n" in result.out
    memory, _, pin = result.out.rpartition("\n\n")
    assert pin == status_line()
    assert memory.endswith("(at most 8 items).")
    assert result.err == ""


def test_memory_without_cwd_shows_only_the_global_sections(maestro, home, monkeypatch):
    root = memory_root(home, monkeypatch)
    write_track(root / "USER.md", ["prefers short answers"])
    out = start(maestro).out
    assert "# User Memory\nprefers short answers\n" in out and "# Project" not in out
    assert out.endswith("\n\n" + status_line())


@pytest.mark.parametrize("layout", ["absent", "empty-dir", "empty-files"])
def test_an_empty_or_absent_store_prints_only_the_pin_line(maestro, home, tmp_path, monkeypatch, layout):
    root = memory_root(home, monkeypatch)
    if layout != "absent":
        root.mkdir(parents=True)
    if layout == "empty-files":
        (root / "MEMORY.md").write_bytes(b"")
        (root / "USER.md").write_bytes(b"\n\n")
    result = start(maestro, {"source": "startup", "session_id": SID, "cwd": str(tmp_path)})
    assert (result.out, result.err) == (status_line(), "")


@pytest.mark.parametrize("armed", [False, True])
def test_a_2mb_store_of_5000_entries_stays_below_10000_chars(maestro, home, tmp_path, monkeypatch, armed):
    root = memory_root(home, monkeypatch)
    project = tmp_path / "project"
    project.mkdir()
    fill_store(root, project)
    assert sum(p.stat().st_size for p in root.rglob("*.md")) > 2_000_000
    (project_files(root, project) / "REFERENCE.md").write_text("reference " * 2000)
    if armed:
        arm(home)
    result = start(maestro, {"source": "startup", "session_id": SID, "cwd": str(project)})
    assert len(result.out) < OUTPUT_CAP
    assert "# Project Key Memory\n" in result.out and "# Recent Daily\n" in result.out
    assert result.out.startswith("# Session\n")
    assert result.out.endswith("do not report setup as done.\n" if armed else status_line())
    assert not (home / ".maestro" / "logs").exists()


def test_oversize_entries_with_hostile_pins_still_stay_below_10000_chars(maestro, home, tmp_path, monkeypatch):
    root = memory_root(home, monkeypatch)
    project = tmp_path / "project"
    project.mkdir()
    fill_store(root, project, total=50, size=30000)
    write_config(home, 'model = "%s"\nmodel_reasoning_effort = "%s"\n' % ("m" * 20000, "e" * 20000))
    (codex(home) / "maestro-impl-effort").write_text("x" * 50000)
    result = start(maestro, {"source": "startup", "cwd": str(project)})
    assert len(result.out) < OUTPUT_CAP
    assert "Maestro: Codex pin is model=mmm" in result.out


def test_a_non_utf8_store_file_still_shows_every_track_and_names_the_file(maestro, home, tmp_path, monkeypatch):
    """Issue 10 §3: one bad byte used to drop the whole memory part (a crash note, no memory)."""
    root = memory_root(home, monkeypatch)
    write_track(root / "MEMORY.md", ["fine entry"])
    (root / "USER.md").write_bytes(b"broken \xff\xfe bytes\n")
    env_file = tmp_path / "env.sh"
    result = start(maestro, {"source": "startup", "session_id": SID, "cwd": str(tmp_path)},
                   env={"CLAUDE_ENV_FILE": str(env_file)})
    assert "# Global Memory\nfine entry\n" in result.out
    assert "# User Memory\nbroken \ufffd\ufffd bytes\n" in result.out
    (line,) = [x for x in result.out.splitlines() if str(root / "USER.md") in x]
    assert line.endswith("memory repair --confirm") and "not UTF-8 (byte 7)" in line
    assert result.out.endswith(status_line()) and result.err == ""
    assert env_file.read_bytes() == b"export MAESTRO_SESSION_ID=session-test\n"
    assert (root / "USER.md").read_bytes() == b"broken \xff\xfe bytes\n"  # the boot repair waits for a person
    assert not (home / ".maestro" / "logs").exists()


def test_an_unreadable_store_path_drops_only_the_memory_part(maestro, home, monkeypatch):
    root = memory_root(home, monkeypatch)
    (root / "MEMORY.md").mkdir(parents=True)  # a directory where a track file belongs
    result = start(maestro)
    assert (result.out, result.err) == (status_line(), "")
    assert " verb=session-start:memory " in (home / ".maestro" / "logs" / "crashes.log").read_text()


def test_memory_dir_override_is_honoured(maestro, tmp_path, monkeypatch):
    root = tmp_path / "dsh-memories"
    write_track(root / "MEMORY.md", ["from the override"])
    out = start(maestro, env={"MAESTRO_MEMORY_DIR": str(root)}).out
    assert "# Global Memory\nfrom the override\n" in out and out.endswith(status_line())


def test_memory_shows_the_key_entries_of_the_checked_out_branch(maestro, home, tmp_path, monkeypatch):
    import subprocess

    root = memory_root(home, monkeypatch)
    repo = tmp_path / "repo"
    repo.mkdir()
    genv = dict(os.environ, GIT_CONFIG_NOSYSTEM="1")
    subprocess.run(["git", "init", "-q", "-b", "feature"], cwd=repo, check=True, env=genv)
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "x"],
                   cwd=repo, check=True, env=genv)
    (repo / "sub").mkdir()
    write_track(project_files(root, repo) / "KEY.md",
                ["[id:0000000a] [branch:feature] on feature", "[id:0000000b] [branch:other] on other"])
    out = start(maestro, {"source": "startup", "cwd": str(repo / "sub")}).out
    assert "on feature" in out and "on other" not in out


@pytest.mark.source_only
def test_crash_in_the_memory_part_keeps_the_pin_line(source_maestro, home, monkeypatch):
    from maestro.memory.store import snapshot

    def boom(*args, **kwargs):
        raise RuntimeError("memory-sentinel")

    root = memory_root(home, monkeypatch)
    write_track(root / "MEMORY.md", ["entry"])
    monkeypatch.setattr(snapshot, "render", boom)
    result = source_maestro("session-start", stdin=json.dumps({"session_id": SID}))
    assert (result.rc, result.out, result.err) == (0, status_line(), "")
    assert "RuntimeError: memory-sentinel" in (home / ".maestro" / "logs" / "crashes.log").read_text()


# ------------------------------------------------------------------------------------ render cost (§2.8)


def cost_ring(root):
    return json.loads((root / ".maestro-memory" / "cost.json").read_text())["renders"]


def test_a_render_records_one_sample_per_shown_section(maestro, home, tmp_path, monkeypatch):
    root = memory_root(home, monkeypatch)
    project = tmp_path / "project"
    project.mkdir()
    write_track(root / "MEMORY.md", ["[2024-04-01 09:00] [summary:tea] likes tea"])
    write_track(project_files(root, project) / "KEY.md", ["[id:0000000a] [2024-04-01] [summary:pnpm] use pnpm"])
    body = {"source": "startup", "session_id": SID, "cwd": str(project)}
    result = start(maestro, body)
    (render,) = cost_ring(root)
    assert render["sections"] == {"memory": len("[2024-04-01 09:00] [summary:tea] likes tea"),
                                  "key": len("[id:0000000a] [2024-04-01] [summary:pnpm] use pnpm")}
    memory_part = result.out[: len(result.out) - len(status_line())]
    assert render["total"] == len(memory_part.encode()) - 1  # the snapshot text, without the blank line
    start(maestro, body)
    assert len(cost_ring(root)) == 2
    # the cost ring, the once-per-store repair's flag (and the store lock it took), what recall must not repeat
    assert sorted(p.name for p in (root / ".maestro-memory").iterdir()) == [
        "cost.json", "cost.lock", "delimiter-repaired-v3", "recall", "store.lock"]
    assert not (home / ".maestro" / "logs").exists()


def test_an_empty_or_absent_store_records_nothing(maestro, home, tmp_path, monkeypatch):
    root = memory_root(home, monkeypatch)
    start(maestro)
    assert not root.exists()
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_bytes(b"")
    start(maestro)
    assert not (root / ".maestro-memory" / "cost.json").exists()  # only the once-per-store repair flag
    assert sorted(p.name for p in (root / ".maestro-memory").iterdir()) == ["delimiter-repaired-v3", "store.lock"]


def test_an_unwritable_cost_ring_keeps_the_rendered_context(maestro, home, monkeypatch):
    root = memory_root(home, monkeypatch)
    write_track(root / "USER.md", ["prefers short answers"])
    (root / ".maestro-memory").write_text("a file where the meta directory belongs")
    result = start(maestro)
    assert "# User Memory\nprefers short answers\n" in result.out and result.out.endswith(status_line())
    assert result.err == ""
    assert " verb=session-start:memory-cost " in (home / ".maestro" / "logs" / "crashes.log").read_text()


@pytest.mark.source_only
def test_a_crash_while_recording_the_cost_keeps_the_rendered_context(source_maestro, home, monkeypatch):
    from maestro.memory.store import health

    def boom(*args, **kwargs):
        raise RuntimeError("cost-sentinel")

    root = memory_root(home, monkeypatch)
    write_track(root / "MEMORY.md", ["entry"])
    monkeypatch.setattr(health, "record", boom)
    result = source_maestro("session-start", stdin=json.dumps({"session_id": SID}))
    assert result.rc == 0 and "# Global Memory\nentry\n" in result.out and result.out.endswith(status_line())
    assert "RuntimeError: cost-sentinel" in (home / ".maestro" / "logs" / "crashes.log").read_text()


# ----------------------------------------------------------------------------- direct-edit grants


def grant(home, sid=SID, age=0.0):
    """A valid direct-edit flag whose mtime is `age` seconds ago (negative: in the future)."""
    from testing import grants

    return grants.make_flag(home, sid, age=age)


@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compact", "something-new", None, 7])
def test_every_session_start_revokes_this_sessions_grant(maestro, home, source):
    mine = grant(home)
    other = grant(home, "other-session")
    body = {"session_id": SID} if source is None else {"session_id": SID, "source": source}
    result = start(maestro, body)
    assert not os.path.lexists(mine)
    assert other.read_bytes() == b"1\n"  # a concurrent session's fresh grant stays
    assert result.err == ""
    assert result.out.endswith(status_line()) or result.out.startswith("MAESTRO SESSION SETUP")


def test_session_start_prunes_expired_and_future_grants_of_every_session(maestro, home):
    fresh = grant(home, "fresh-one", age=60)
    expired = grant(home, "expired-one", age=7200 + 600)
    future = grant(home, "future-one", age=-3600)
    directory = home / ".maestro" / "direct-edit"
    unrelated = directory / "notes.txt"
    unrelated.write_text("keep\n")
    os.utime(unrelated, (0, 0))
    start(maestro)
    assert fresh.exists()
    assert not os.path.lexists(expired) and not os.path.lexists(future)
    assert unrelated.read_text() == "keep\n"


def test_session_start_prunes_by_the_configured_ttl(maestro, home):
    young = grant(home, "young-one", age=30)
    old = grant(home, "old-one", age=120)
    start(maestro, env={"MAESTRO_GRANT_TTL_SEC": "60"})
    assert young.exists() and not os.path.lexists(old)


@pytest.mark.parametrize("raw", [b"not-json", b"[]", b'{"session_id":"a;b"}'])
def test_a_bad_payload_still_prunes_but_revokes_no_live_grant(maestro, home, raw):
    live = grant(home, age=60)
    expired = grant(home, "expired-one", age=7200 + 600)
    result = start(maestro, raw)
    assert result.out == status_line()
    assert live.exists() and not os.path.lexists(expired)


def test_grant_clearing_creates_nothing(maestro, home):
    start(maestro, {"source": "clear", "session_id": SID})
    assert list(home.iterdir()) == []


def test_a_directory_in_place_of_the_grant_never_fails_the_session(maestro, home):
    expired = grant(home, "expired-one", age=7200 + 600)
    directory = home / ".maestro" / "direct-edit" / f"maestro-direct-{SID}.flag"
    directory.mkdir(mode=0o700)
    result = start(maestro)
    assert result.out == status_line()
    assert directory.is_dir() and not os.path.lexists(expired)
    assert "session-start:grants" in (home / ".maestro" / "logs" / "crashes.log").read_text()
