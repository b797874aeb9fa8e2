"""`maestro gate` — the PreToolUse hook (spec §1.10, §2.7, §4; original tests/gate.sh 1–14, 28, 33, 36, 40–42).

Exit 0 allows the edit, exit 2 blocks it with guidance on stderr. Paths under a nonexistent root are
classified lexically; anything that must resolve through REAL files outside the scratch roots lives
in `outside_tmp` (tmp_path and HOME are under /tmp, which the gate treats as scratch).
"""

import json
import os
import uuid

from testing import grants
import pytest

SID = "gatetest-1234"
REPO = "/nonexistent-maestro/repo"

FAIL_CLOSED = (
    "ORCHESTRATOR GATE: could not read the hook payload; failing closed for edits — "
    "likely a harness change or a malformed path, report it to the user.\n"
)
BLOCK_FIRST_LINE = "ORCHESTRATOR GATE (source code): you plan and review here; Codex implements.\n"
SUBAGENT_LINE = 'A subagent never inherits "edit it yourself"; only the main session can hold that grant.\n'


# --------------------------------------------------------------------------------------------- helpers


def payload(file_path, cwd=REPO, sid=SID, key="file_path", **extra):
    body = {"session_id": sid, "cwd": cwd, "tool_input": {key: file_path}}
    body.update(extra)
    return json.dumps(body)


def gate(maestro, body):
    return maestro("gate", stdin=body)


def assert_allowed(result):
    assert (result.rc, result.out, result.err) == (0, "", "")


def assert_blocked(result, subagent=False):
    assert result.rc == 2, result
    assert result.out == ""
    assert result.err.startswith(BLOCK_FIRST_LINE), result.err
    assert result.err.endswith(SUBAGENT_LINE) is subagent, result.err
    assert "failing closed" not in result.err


def assert_fail_closed(result):
    assert (result.rc, result.out, result.err) == (2, "", FAIL_CLOSED)


def flag_path(home, sid=SID):
    return grants.flag_path(home, sid)


def make_flag(home, sid=SID, **options):
    return grants.make_flag(home, sid, **options)


# ------------------------------------------------------------------------ original gate.sh scenarios


def test_01_source_edit_without_grant_is_blocked(maestro):
    assert_blocked(gate(maestro, payload(f"{REPO}/src/app.ts")))


def test_02_markdown_is_allowed(maestro):
    assert_allowed(gate(maestro, payload(f"{REPO}/notes.md")))


@pytest.mark.parametrize("path", ["/tmp/plan.sh", "/private/tmp/plan.sh", "/tmp/nested/deeper/x.py"])
def test_03_real_temporary_roots_are_allowed(maestro, path):
    assert_allowed(gate(maestro, payload(path)))


def test_03_tmpdir_root_is_allowed(maestro, tmp_path):
    assert_allowed(gate(maestro, payload(str(tmp_path / "tmp" / "scratch.py"))))


def test_04_home_desktop_is_allowed(maestro, monkeypatch, outside_tmp):
    # HOME outside /tmp, so only the Desktop rule can allow this.
    home = outside_tmp / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert_allowed(gate(maestro, payload(str(home / "Desktop" / "scratch.py"))))
    assert_allowed(gate(maestro, payload(str(home / "Desktop" / "deep" / "er" / "x.ts"))))
    # anchored: neither a sibling with the same prefix nor the home itself
    assert_blocked(gate(maestro, payload(str(home / "Desktopx" / "scratch.py"))))
    assert_blocked(gate(maestro, payload(str(home / "scratch.py"))))


def test_04_symlinked_desktop_is_classified_by_its_target(maestro, monkeypatch, outside_tmp):
    home = outside_tmp / "home"
    home.mkdir()
    real_desktop = outside_tmp / "cloud-desktop"
    real_desktop.mkdir()
    (home / "Desktop").symlink_to(real_desktop)
    monkeypatch.setenv("HOME", str(home))
    assert_allowed(gate(maestro, payload(str(real_desktop / "scratch.py"))))
    assert_allowed(gate(maestro, payload(str(home / "Desktop" / "scratch.py"))))


def test_05_repository_tmp_directory_is_blocked(maestro):
    assert_blocked(gate(maestro, payload(f"{REPO}/tmp/app.ts")))


def test_06_nested_desktop_directory_is_blocked(maestro):
    assert_blocked(gate(maestro, payload(f"{REPO}/Desktop/app.py")))


@pytest.mark.parametrize("path", [f"{REPO}/.claude/hooks/x.sh", f"{REPO}/.codex/x.py", "/nonexistent-maestro/.claude/a/b/c.ts"])
def test_07_harness_directory_is_allowed_at_any_segment(maestro, path):
    assert_allowed(gate(maestro, payload(path)))


@pytest.mark.parametrize("path", [f"{REPO}/.claudex/x.py", f"{REPO}/x.claude/x.py", f"{REPO}/src/.claude.py"])
def test_07_near_miss_harness_names_are_blocked(maestro, path):
    assert_blocked(gate(maestro, payload(path)))


@pytest.mark.parametrize("path", [f"{REPO}/build.scala", f"{REPO}/Makefile", f"{REPO}/run", f"{REPO}/x.md.py", f"{REPO}/src/"])
def test_08_unknown_extensions_code_basenames_and_extensionless_paths_are_blocked(maestro, path):
    assert_blocked(gate(maestro, payload(path)))


@pytest.mark.parametrize(
    "path",
    [f"{REPO}/LICENSE", f"{REPO}/.gitignore", f"{REPO}/package.json", f"{REPO}/.env", f"{REPO}/.env.local",
     f"{REPO}/config/APP.YAML", f"{REPO}/Cargo.lock", f"{REPO}/readme"],
)
def test_09_noncode_allowlist_is_allowed(maestro, path):
    assert_allowed(gate(maestro, payload(path)))


def test_10_garbage_payload_fails_closed(maestro):
    assert_fail_closed(gate(maestro, "not-json"))


def test_10_missing_file_path_fails_closed(maestro):
    assert_fail_closed(gate(maestro, json.dumps({"session_id": SID})))
    assert_fail_closed(gate(maestro, json.dumps({"session_id": SID, "tool_input": {}})))


def test_11_main_session_flag_is_honoured(maestro, home):
    make_flag(home)
    assert_allowed(gate(maestro, payload(f"{REPO}/src/app.ts")))


def test_11_flag_of_another_session_is_not_honoured(maestro, home):
    make_flag(home, sid="other-session")
    assert_blocked(gate(maestro, payload(f"{REPO}/src/app.ts")))


def test_12_subagent_cannot_inherit_the_flag(maestro, home):
    make_flag(home)
    result = gate(maestro, payload(f"{REPO}/src/app.ts", agent_id="agent-123"))
    assert_blocked(result, subagent=True)


def test_12_subagent_with_agent_type_only_is_blocked_even_with_a_valid_flag(maestro, home):
    make_flag(home)
    result = gate(maestro, payload(f"{REPO}/src/app.ts", agent_type="general-purpose"))
    assert_blocked(result, subagent=True)


def test_12_blank_agent_fields_are_not_a_subagent(maestro, home):
    make_flag(home)
    assert_allowed(gate(maestro, payload(f"{REPO}/src/app.ts", agent_id="   ", agent_type="")))


def test_12_subagent_may_still_edit_free_paths(maestro):
    assert_allowed(gate(maestro, payload(f"{REPO}/docs/notes.md", agent_id="agent-123")))


def test_13_relative_source_path_is_resolved_against_payload_cwd_and_blocked(maestro):
    assert_blocked(gate(maestro, payload("src/app.ts", cwd=REPO)))


def test_13_relative_path_climbing_into_scratch_is_allowed_and_out_of_it_blocked(maestro):
    assert_allowed(gate(maestro, payload("../../../tmp/x.py", cwd="/nonexistent-maestro/a/b")))
    assert_blocked(gate(maestro, payload("../../../x.py", cwd="/tmp/a/b")))


def test_14_relative_temporary_path_is_allowed(maestro):
    assert_allowed(gate(maestro, payload("x.ts", cwd="/tmp/scratch")))


def test_14_missing_cwd_resolves_against_the_process_cwd(maestro, tmp_path):
    # the process cwd is tmp_path (under /tmp, so scratch)
    body = json.dumps({"session_id": SID, "tool_input": {"file_path": "x.py"}})
    assert_allowed(maestro("gate", stdin=body, cwd=str(tmp_path)))
    body = json.dumps({"session_id": SID, "cwd": "", "tool_input": {"file_path": "x.py"}})
    assert_allowed(maestro("gate", stdin=body, cwd=str(tmp_path)))


@pytest.mark.parametrize("cwd", [{"a": 1}, 5, ["/tmp"], True])
def test_28_non_string_cwd_fails_closed(maestro, cwd):
    body = json.dumps({"session_id": SID, "cwd": cwd, "tool_input": {"file_path": "src/app.ts"}})
    result = gate(maestro, body)
    assert_fail_closed(result)
    assert "failing closed" in result.err


def test_33_missing_session_id_cannot_use_a_default_flag(maestro, home):
    make_flag(home, sid="default")
    make_flag(home, sid="undefined")
    body = json.dumps({"cwd": REPO, "tool_input": {"file_path": "src/app.ts"}})
    assert_fail_closed(gate(maestro, body))


@pytest.mark.parametrize("sid", ["../bad", "", "a" * 65, "a b", "a;b", 5, None, ["x"]])
def test_33_invalid_session_id_fails_closed(maestro, home, sid):
    make_flag(home, sid="bad")
    assert_fail_closed(gate(maestro, payload("src/app.ts", sid=sid)))


def test_33_invalid_session_id_fails_closed_even_for_a_free_path(maestro):
    assert_fail_closed(gate(maestro, payload("/tmp/x.md", sid="../bad")))


def test_33_longest_valid_session_id_is_accepted(maestro, home):
    sid = "A-z_0" * 12 + "abcd"
    assert len(sid) == 64
    make_flag(home, sid=sid)
    assert_allowed(gate(maestro, payload(f"{REPO}/src/app.ts", sid=sid)))


def test_36_scratch_symlink_to_source_file_is_blocked(maestro, tmp_path, outside_tmp):
    source = outside_tmp / "repo" / "src" / "app.ts"
    source.parent.mkdir(parents=True)
    source.write_text("source\n")
    link = tmp_path / "allowed.md"
    link.symlink_to(source)
    assert_blocked(gate(maestro, payload(str(link))))
    assert source.read_text() == "source\n"


def test_36_nonexistent_path_below_symlinked_source_parent_is_blocked(maestro, tmp_path, outside_tmp):
    src = outside_tmp / "repo" / "src"
    src.mkdir(parents=True)
    (tmp_path / "source-link").symlink_to(src)
    assert_blocked(gate(maestro, payload(str(tmp_path / "source-link" / "not-created.ts"))))
    assert_blocked(gate(maestro, payload(str(tmp_path / "source-link" / "new-dir" / "deeper" / "x.ts"))))


def test_36_ordinary_nonexistent_scratch_file_remains_allowed(maestro, tmp_path):
    assert_allowed(gate(maestro, payload(str(tmp_path / "ordinary-new.ts"))))


def test_36_symlinked_harness_name_into_source_is_blocked(maestro, outside_tmp):
    src = outside_tmp / "repo" / "src"
    src.mkdir(parents=True)
    (outside_tmp / "repo" / ".claude").symlink_to(src)
    assert_blocked(gate(maestro, payload(str(outside_tmp / "repo" / ".claude" / "app.py"))))


def test_36_real_source_file_outside_scratch_is_blocked_and_its_markdown_sibling_allowed(maestro, outside_tmp):
    (outside_tmp / "app.py").write_text("x\n")
    (outside_tmp / "NOTES.md").write_text("x\n")
    assert_blocked(gate(maestro, payload(str(outside_tmp / "app.py"))))
    assert_allowed(gate(maestro, payload(str(outside_tmp / "NOTES.md"))))


def test_40_legacy_tmp_flag_is_not_authorization(maestro, tmp_path):
    sid = f"gatelegacy-{uuid.uuid4().hex[:12]}"
    legacy = [f"/tmp/maestro-direct-{sid}.flag", str(tmp_path / "tmp" / f"maestro-direct-{sid}.flag")]
    try:
        for path in legacy:
            with open(path, "wb") as handle:
                handle.write(b"1\n")
            os.chmod(path, 0o600)
        assert_blocked(gate(maestro, payload(f"{REPO}/src/app.ts", sid=sid)))
    finally:
        for path in legacy:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


def test_41_executable_file_cannot_use_a_noncode_extension_exemption(maestro, outside_tmp):
    tool = outside_tmp / "repo" / "tool.json"
    tool.parent.mkdir()
    tool.write_text("#!/usr/bin/env node\n")
    os.chmod(tool, 0o755)
    assert_blocked(gate(maestro, payload(str(tool))))
    os.chmod(tool, 0o644)
    assert_allowed(gate(maestro, payload(str(tool))))
    os.chmod(tool, 0o744)  # any one execute bit is enough
    assert_blocked(gate(maestro, payload(str(tool))))


def test_41_executable_file_in_scratch_stays_free(maestro, tmp_path):
    tool = tmp_path / "tool.json"
    tool.write_text("#!/bin/sh\n")
    os.chmod(tool, 0o755)
    assert_allowed(gate(maestro, payload(str(tool))))


def test_42_block_guidance_names_the_loop_and_the_watchdog(maestro):
    result = gate(maestro, payload(f"{REPO}/src/app.ts"))
    assert result.rc == 2
    loop = 'maestro loop --plan <plan-file> --verify "<verify command>"\n'
    watchdog = "maestro watchdog --file <plan-file>\n"
    assert loop in result.err and watchdog in result.err
    assert result.err.index(loop) < result.err.index(watchdog)
    assert '"edit it yourself" opens this gate for the current task.\n' in result.err
    assert result.err.endswith("opens this gate for the current task.\n")


# ------------------------------------------------------------------------------- Windows-style paths


@pytest.mark.parametrize(
    "path", ["C:\\repo\\src\\a.py", "C:/repo/src/a.py", "\\\\server\\share\\src\\a.py", "C:\\repo\\.claude\\..\\src\\a.py",
             "c:\\repo\\.claudex\\a.py"],
)
def test_windows_source_path_is_blocked(maestro, path):
    assert_blocked(gate(maestro, payload(path, cwd="C:\\repo")))


@pytest.mark.parametrize(
    "path", ["C:\\repo\\docs\\README.md", "C:\\repo\\.claude\\x.py", "C:\\repo\\.codex\\config.py", "D:/repo/LICENSE",
             "\\\\server\\share\\.env"],
)
def test_windows_free_path_is_allowed(maestro, path):
    assert_allowed(gate(maestro, payload(path, cwd="C:\\repo")))


def test_windows_relative_path_uses_windows_cwd(maestro):
    assert_blocked(gate(maestro, payload("src\\a.py", cwd="C:\\repo")))
    assert_allowed(gate(maestro, payload("docs\\README.md", cwd="C:\\repo")))
    assert_allowed(gate(maestro, payload(".claude\\hooks\\x.py", cwd="C:\\repo")))


def test_windows_source_path_is_allowed_with_grant(maestro, home):
    make_flag(home)
    assert_allowed(gate(maestro, payload("C:\\repo\\src\\a.py", cwd="C:\\repo")))


# ------------------------------------------------------------------------------------- NotebookEdit


def test_notebook_edit_is_blocked_without_grant(maestro):
    assert_blocked(gate(maestro, payload(f"{REPO}/analysis.ipynb", key="notebook_path")))


def test_notebook_edit_is_allowed_with_grant(maestro, home):
    make_flag(home)
    assert_allowed(gate(maestro, payload(f"{REPO}/analysis.ipynb", key="notebook_path")))


def test_notebook_edit_in_scratch_is_allowed(maestro):
    assert_allowed(gate(maestro, payload("/tmp/analysis.ipynb", key="notebook_path")))


def test_file_path_takes_precedence_over_notebook_path(maestro):
    body = json.dumps({"session_id": SID, "cwd": REPO,
                       "tool_input": {"file_path": f"{REPO}/src/a.py", "notebook_path": "/tmp/x.ipynb"}})
    assert_blocked(gate(maestro, body))


def test_null_file_path_falls_back_to_notebook_path(maestro):
    body = json.dumps({"session_id": SID, "cwd": REPO, "tool_input": {"file_path": None, "notebook_path": "/tmp/x.ipynb"}})
    assert_allowed(gate(maestro, body))


# ----------------------------------------------------------------------------- malformed → fail closed


@pytest.mark.parametrize("tool_input", [None, "x.md", ["/tmp/x.md"], 5, True])
def test_non_dict_tool_input_fails_closed(maestro, tool_input):
    assert_fail_closed(gate(maestro, json.dumps({"session_id": SID, "cwd": REPO, "tool_input": tool_input})))


@pytest.mark.parametrize("value", [5, 1.5, True, ["/tmp/x.md"], {"path": "/tmp/x.md"}])
@pytest.mark.parametrize("key", ["file_path", "notebook_path"])
def test_non_string_path_fails_closed(maestro, key, value):
    assert_fail_closed(gate(maestro, payload(value, key=key)))


@pytest.mark.parametrize("value", ["", "   ", "\t\n", "\u3000"])
def test_blank_path_fails_closed(maestro, value):
    assert_fail_closed(gate(maestro, payload(value)))


@pytest.mark.parametrize("value", ["/tmp/x\u0000.md", "\u0000", f"{REPO}/a.md\u0000.py"])
def test_nul_in_path_fails_closed(maestro, value):
    assert_fail_closed(gate(maestro, payload(value)))


def test_nul_in_cwd_fails_closed(maestro):
    assert_fail_closed(gate(maestro, payload("x.md", cwd="/tmp/a\u0000b")))


def test_lone_surrogate_in_path_fails_closed(maestro):
    assert_fail_closed(gate(maestro, '{"session_id":"%s","tool_input":{"file_path":"/tmp/\\ud800.md"}}' % SID))


@pytest.mark.parametrize(
    "raw",
    [b"", b"   \n", b"[]", b'"x"', b"null", b"42", b"{", b'{"session_id":"gatetest-1234"', b"\xff\xfe{}",
     b'{"session_id":"gatetest-1234","tool_input":{"file_path":"/tmp/x.md"}} trailing',
     b'{"session_id":"gatetest-1234","tool_input":{"file_path":"/tmp/x.md"}}{}',
     b'{"session_id":"gatetest-1234","tool_input":{"file_path":"/tmp/x.md"},"n":NaN}',
     b'{"session_id":"gatetest-1234","tool_input":{"file_path":"/tmp/x\xff.md"}}',
     b'{"session_id":"gatetest-1234","tool_input":{"file_path":"/tmp/x\n.md"}}',
     b"\xef\xbb\xbf{}"],
)
def test_unparseable_or_non_object_payload_fails_closed(maestro, raw):
    assert_fail_closed(maestro("gate", stdin=raw))


@pytest.mark.parametrize("raw", [b"not-json", b"{", b'{"session_id":"a\x01"}', b'{"a":1,}', b"[1 2]", b"nul"])
def test_malformed_json_fails_closed_without_a_crash_note(maestro, home, raw):
    assert_fail_closed(maestro("gate", stdin=raw))
    assert not (home / ".maestro").exists()


@pytest.mark.source_only
def test_payload_parsing_does_not_need_the_json_module(source_maestro, home, monkeypatch):
    # the hooks never import `json` (hot path); _json finds JSONDecodeError only through sys.modules
    import sys

    monkeypatch.delitem(sys.modules, "json.decoder")
    assert_fail_closed(source_maestro("gate", stdin=b'{"session_id": "x", bad'))
    assert not (home / ".maestro").exists()


def test_payload_larger_than_8_mib_fails_closed(maestro):
    body = payload("/tmp/x.md", pad="x" * (8 * 1024 * 1024))
    assert_fail_closed(gate(maestro, body))


def test_deeply_nested_payload_fails_closed(maestro):
    body = '{"session_id":"%s","tool_input":{"file_path":"/tmp/x.md"},"deep":%s%s}' % (SID, "[" * 100000, "]" * 100000)
    assert_fail_closed(gate(maestro, body))


def test_unknown_extra_fields_are_ignored(maestro):
    assert_allowed(gate(maestro, payload("/tmp/x.py", tool_name="Write", hook_event_name="PreToolUse",
                                         transcript_path=5, extra={"a": [1, 2, None]})))


def test_special_files_are_classified_by_name(maestro, outside_tmp):
    os.mkfifo(outside_tmp / "pipe.py")
    os.mkfifo(outside_tmp / "pipe.md")
    assert_blocked(gate(maestro, payload(str(outside_tmp / "pipe.py"))))
    assert_allowed(gate(maestro, payload(str(outside_tmp / "pipe.md"))))
    assert_blocked(gate(maestro, payload("/dev/null")))


def test_relative_cwd_that_does_not_exist_fails_closed(maestro):
    assert_fail_closed(gate(maestro, payload("x.md", cwd="no-such-relative-dir")))


def test_path_through_an_existing_file_fails_closed(maestro, outside_tmp):
    (outside_tmp / "file").write_text("x")
    assert_fail_closed(gate(maestro, payload(str(outside_tmp / "file" / "x.md"))))


# ----------------------------------------------------------------------------------- flag rules §2.7


@pytest.mark.parametrize("content", [b"1", b"yes\n", b"1\n\n", b"1\nx", b" 1\n", b"", b"true\n"])
def test_flag_with_wrong_content_is_not_honoured(maestro, home, content):
    make_flag(home, content=content)
    assert_blocked(gate(maestro, payload(f"{REPO}/src/app.ts")))


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o602])
def test_flag_with_group_or_other_bits_is_not_honoured(maestro, home, mode):
    make_flag(home, mode=mode)
    assert_blocked(gate(maestro, payload(f"{REPO}/src/app.ts")))


def test_flag_with_owner_only_read_mode_is_honoured(maestro, home):
    make_flag(home, mode=0o400)
    assert_allowed(gate(maestro, payload(f"{REPO}/src/app.ts")))


@pytest.mark.parametrize("which", ["maestro", "direct-edit"])
@pytest.mark.parametrize("mode", [0o770, 0o750, 0o705, 0o777])
def test_flag_in_a_non_private_directory_is_not_honoured(maestro, home, which, mode):
    make_flag(home)
    os.chmod(home / ".maestro" if which == "maestro" else home / ".maestro" / "direct-edit", mode)
    assert_blocked(gate(maestro, payload(f"{REPO}/src/app.ts")))


def test_symlinked_flag_is_not_honoured(maestro, home):
    flag = make_flag(home)
    real = flag.with_name("real-flag")
    flag.rename(real)
    flag.symlink_to(real)
    assert_blocked(gate(maestro, payload(f"{REPO}/src/app.ts")))


def test_symlinked_maestro_dir_is_not_honoured(maestro, home):
    make_flag(home)
    (home / ".maestro").rename(home / "real-maestro")
    (home / ".maestro").symlink_to(home / "real-maestro")
    assert_blocked(gate(maestro, payload(f"{REPO}/src/app.ts")))


def test_symlinked_direct_edit_dir_is_not_honoured(maestro, home):
    make_flag(home)
    (home / ".maestro" / "direct-edit").rename(home / ".maestro" / "real-direct-edit")
    (home / ".maestro" / "direct-edit").symlink_to(home / ".maestro" / "real-direct-edit")
    assert_blocked(gate(maestro, payload(f"{REPO}/src/app.ts")))


def test_directory_or_fifo_in_place_of_the_flag_is_not_honoured(maestro, home):
    flag = make_flag(home)
    flag.unlink()
    os.mkfifo(flag, 0o600)
    assert_blocked(gate(maestro, payload(f"{REPO}/src/app.ts")))
    flag.unlink()
    flag.mkdir(mode=0o700)
    assert_blocked(gate(maestro, payload(f"{REPO}/src/app.ts")))


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to chown the flag to another user")
def test_flag_owned_by_another_user_is_not_honoured(maestro, home):
    flag = make_flag(home)
    os.chown(flag, 12345, -1)
    assert_blocked(gate(maestro, payload(f"{REPO}/src/app.ts")))
    os.chown(flag, 0, -1)
    os.chown(home / ".maestro", 12345, -1)
    assert_blocked(gate(maestro, payload(f"{REPO}/src/app.ts")))


def test_gate_never_creates_or_changes_the_flag_state(maestro, home):
    flag = make_flag(home)
    before = (flag.read_bytes(), os.stat(flag).st_mode)
    assert_allowed(gate(maestro, payload(f"{REPO}/src/app.ts")))
    assert_blocked(gate(maestro, payload(f"{REPO}/src/app.ts", agent_id="a")), subagent=True)
    assert (flag.read_bytes(), os.stat(flag).st_mode) == before
    assert sorted(p.name for p in flag.parent.iterdir()) == [flag.name]


def test_gate_without_flag_creates_no_state(maestro, home):
    assert_blocked(gate(maestro, payload(f"{REPO}/src/app.ts")))
    assert_fail_closed(gate(maestro, "junk"))
    assert list(home.iterdir()) == []


# ------------------------------------------------------------------------------------- command line


def test_gate_help_exits_0(maestro):
    result = maestro("gate", "--help")
    assert result.rc == 0
    assert result.out.startswith("usage: maestro gate  (reads a Claude Code hook payload on stdin)\n")
    assert result.err == ""


def test_gate_with_an_extra_argument_exits_2(maestro):
    result = maestro("gate", "extra-arg", stdin=payload("/tmp/x.md"))
    assert result.rc == 2
    assert result.out == ""
    assert result.err == "maestro gate: takes no arguments, only a hook payload on stdin (see --help)\n"


@pytest.mark.source_only
def test_crash_inside_decide_fails_closed_and_leaves_a_crash_note(source_maestro, home, monkeypatch):
    from maestro.hooks import gate as gate_module

    def boom(payload):
        raise RuntimeError("gate-test-sentinel")

    monkeypatch.setattr(gate_module, "decide", boom)
    make_flag(home)
    result = source_maestro("gate", stdin=payload("/tmp/x.md"))
    assert_fail_closed(result)
    assert "Traceback" not in result.err
    log = home / ".maestro" / "logs" / "crashes.log"
    text = log.read_text()
    assert " verb=gate " in text.splitlines()[0]
    assert "RuntimeError: gate-test-sentinel" in text
    assert "Traceback (most recent call last)" in text
    assert os.stat(log).st_mode & 0o777 == 0o600


@pytest.mark.source_only
def test_unexpected_os_error_during_classification_fails_closed(source_maestro, monkeypatch):
    from maestro.hooks import gate as gate_module

    def denied(path):
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(gate_module.os, "lstat", denied)
    assert_fail_closed(source_maestro("gate", stdin=payload(f"{REPO}/src/app.py")))
