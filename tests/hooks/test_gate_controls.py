"""The gate protects its own controls and never fails open (issue 14, parts 3 and 4).

Protected: every Claude Code settings file, ~/.claude/hooks/**, maestro's grant directory and install
records — blocked for Edit/Write (and, through the same classification, Bash and MCP) unless granted,
whatever scratch location or symlink leads there. Also source: hard links, `.git/hooks/*`, `.envrc`.
Never fail open: a closed, full or broken stderr still exits 2; TMPDIR only counts when canonical and
not `/`, HOME or an ancestor; the Windows rule only for paths that cannot be POSIX.
"""

import json
import os
import subprocess
import sys

from testing import grants
import pytest

from testing import PYZ, ROOT, TARGET

SID = "controls-1"
REPO = "/nonexistent-maestro/repo"


def payload(file_path, cwd=REPO, tool="Write", **extra):
    body = {"session_id": SID, "cwd": cwd, "tool_name": tool, "tool_input": {"file_path": file_path}}
    body.update(extra)
    return json.dumps(body)


def make_flag(home):
    return grants.make_flag(home, SID)


def rc_of(maestro, body):
    return maestro("gate", stdin=body).rc


# ------------------------------------------------------------------------------- protected controls


def protected_paths(home):
    claude = home / ".claude"
    return [
        claude / "settings.json",
        claude / "settings.local.json",
        claude / "hooks" / "maestro.pyz",
        claude / "hooks" / "other-hook.sh",
        home / ".maestro" / "direct-edit" / f"maestro-direct-{SID}.flag",
        home / ".maestro" / "install-manifest.json",
        home / ".maestro" / "settings-before-install.json",
        f"{REPO}/.claude/settings.json",
        f"{REPO}/.claude/settings.local.json",
        "/etc/claude-code/managed-settings.json",
        "/Library/Application Support/ClaudeCode/managed-settings.json",
    ]


@pytest.mark.parametrize("index", range(11))
def test_a_write_to_a_gate_control_is_blocked_and_named(maestro, home, index):
    target = str(protected_paths(home)[index])
    result = maestro("gate", stdin=payload(target))
    assert result.rc == 2, result
    assert "which controls Claude Code's hooks or maestro's gate" in result.err
    first = result.err.splitlines()[0]
    assert os.path.basename(target) in first and target[:30] in first


def test_home_lives_under_tmp_here_so_scratch_does_not_launder_controls(maestro, home):
    # HOME is under pytest's /tmp tree: without the protected rule all of these would be scratch.
    assert rc_of(maestro, payload(str(home / ".claude" / "settings.json"))) == 2
    assert rc_of(maestro, payload(str(home / ".claude" / "plans" / "p.md"))) == 0


@pytest.mark.parametrize("free", [".claude/plans/p.md", ".claude/agents/reviewer.md", ".claude/notes.txt",
                                  ".claude/commands/x.md", ".claude/hooks-notes.md", ".claude/settings.json.bak"])
def test_other_claude_files_stay_free(maestro, free):
    assert rc_of(maestro, payload(f"{REPO}/{free}")) == 0


def test_claude_config_dir_settings_are_protected_too(maestro, tmp_path):
    config = tmp_path / "claude-config"
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    assert maestro("gate", stdin=payload(str(config / "settings.json")), env=env).rc == 2
    assert maestro("gate", stdin=payload(str(config / "hooks" / "maestro.pyz")), env=env).rc == 2
    assert maestro("gate", stdin=payload(str(config / "notes.md")), env=env).rc == 0


def test_a_scratch_symlink_into_the_settings_is_judged_by_its_target(maestro, home, tmp_path):
    (home / ".claude").mkdir()
    settings = home / ".claude" / "settings.json"
    settings.write_text("{}")
    link = tmp_path / "tmp" / "innocent.json"
    link.symlink_to(settings)
    assert rc_of(maestro, payload(str(link))) == 2


def test_a_symlinked_claude_dir_does_not_hide_the_settings(maestro, home, outside_tmp):
    dotfiles = outside_tmp / "dotfiles-claude"
    dotfiles.mkdir()
    (home / ".claude").symlink_to(dotfiles)
    assert rc_of(maestro, payload(str(home / ".claude" / "settings.json"))) == 2
    assert rc_of(maestro, payload(str(home / ".claude" / "hooks" / "maestro.pyz"))) == 2


def test_the_grant_opens_protected_files_for_the_main_session_only(maestro, home):
    make_flag(home)
    target = str(home / ".claude" / "settings.json")
    assert rc_of(maestro, payload(target)) == 0
    assert rc_of(maestro, payload(target, agent_id="sub-1")) == 2


def test_protected_edit_message_keeps_the_guidance(maestro, home):
    result = maestro("gate", stdin=payload(f"{REPO}/.claude/settings.local.json", tool="Edit"))
    first, *rest = result.err.splitlines()
    assert first.startswith("ORCHESTRATOR GATE (Edit): Edit would write ")
    assert rest[0] == "ORCHESTRATOR GATE (source code): you plan and review here; Codex implements."


# ------------------------------------------------------------------------ files that are code anyway


def test_a_hard_link_to_a_source_file_is_source_even_in_scratch(maestro, outside_tmp, tmp_path):
    source = outside_tmp / "app.py"
    source.write_text("x = 1\n")
    link = tmp_path / "tmp" / "notes.md"
    os.link(source, link)
    assert rc_of(maestro, payload(str(link))) == 2
    single = tmp_path / "tmp" / "alone.md"
    single.write_text("x")
    assert rc_of(maestro, payload(str(single))) == 0


@pytest.mark.parametrize("name", [".git/hooks/pre-commit", ".git/hooks/pre-commit.md", ".git/hooks/x/y.json",
                                  ".envrc", "sub/.envrc", ".env.sh", ".env.py", ".ENVRC"])
def test_code_that_runs_is_source(maestro, name):
    assert rc_of(maestro, payload(f"{REPO}/{name}")) == 2


@pytest.mark.parametrize("name", [".env", ".env.local", ".env.production", ".env.example", "docs/.gitignore"])
def test_plain_env_files_stay_free(maestro, name):
    assert rc_of(maestro, payload(f"{REPO}/{name}")) == 0


# ------------------------------------------------------------------------------------ scratch roots


def test_a_non_canonical_tmpdir_is_not_a_scratch_root(maestro, outside_tmp, tmp_path):
    real = outside_tmp / "real-tmp"
    real.mkdir()
    link = tmp_path / "tmp" / "link-tmp"
    link.symlink_to(real)
    env = {"TMPDIR": str(link)}
    # the link lives under /tmp, so test the target side: the real directory is not scratch
    assert maestro("gate", stdin=payload(str(real / "x.py")), env=env).rc == 2
    assert maestro("gate", stdin=payload(str(real / "x.py")), env={"TMPDIR": str(real)}).rc == 0


@pytest.mark.parametrize("tmpdir", ["/", "//", "HOME", "HOME/", "HOME_PARENT"])
def test_tmpdir_at_root_or_home_or_above_is_not_scratch(maestro, monkeypatch, outside_tmp, tmpdir):
    home = outside_tmp / "users" / "me"
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    value = {"HOME": str(home), "HOME/": f"{home}/", "HOME_PARENT": str(home.parent)}.get(tmpdir, tmpdir)
    env = {"TMPDIR": value}
    assert maestro("gate", stdin=payload(str(home / "project" / "app.py")), env=env).rc == 2
    assert maestro("gate", stdin=payload(str(outside_tmp / "app.py")), env=env).rc == 2


# ------------------------------------------------------------------------------------ Windows rule


def test_a_relative_posix_path_with_a_drive_like_first_segment_is_posix(maestro, outside_tmp):
    # `a:/x/../src/app.py` is a directory named `a:` here: judged as the POSIX path it is.
    assert rc_of(maestro, payload("a:/x/../../src/app.py", cwd=str(outside_tmp))) == 2
    assert rc_of(maestro, payload("a:/../.claude/../src/app.py", cwd=str(outside_tmp))) == 2
    assert rc_of(maestro, payload("a:/docs/README.md", cwd=str(outside_tmp))) == 0


def test_backslash_drive_paths_still_use_the_windows_rule(maestro):
    assert rc_of(maestro, payload("C:\\repo\\src\\a.py", cwd="C:\\repo")) == 2
    assert rc_of(maestro, payload("C:\\repo\\.claude\\settings.json", cwd="C:\\repo")) == 2
    assert rc_of(maestro, payload("C:\\repo\\.claude\\plans\\p.md", cwd="C:\\repo")) == 0


# ---------------------------------------------------------------------- the message is not the decision


def _gate_argv():
    if TARGET == "pyz":
        return [sys.executable, "-I", "-S", str(PYZ), "gate"]
    launcher = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from maestro.cli import main; raise SystemExit(main(['gate']))"
    return [sys.executable, "-S", "-c", launcher]


@pytest.mark.parametrize("stderr", ["closed", "full", "broken-pipe"])
def test_a_blocked_write_exits_2_whatever_happens_to_stderr(stderr):
    body = payload(f"{REPO}/src/app.py").encode()
    argv = _gate_argv()
    if stderr == "closed":
        proc = subprocess.run(argv, input=body, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              close_fds=True, preexec_fn=lambda: os.close(2), timeout=60)
    elif stderr == "full":
        with open("/dev/full", "wb") as full:
            proc = subprocess.run(argv, input=body, stdout=subprocess.PIPE, stderr=full, timeout=60)
    else:
        read_end, write_end = os.pipe()
        os.close(read_end)  # nobody reads: the first write raises EPIPE
        proc = subprocess.run(argv, input=body, stdout=subprocess.PIPE, stderr=write_end, timeout=60)
        os.close(write_end)
    assert proc.returncode == 2
    assert proc.stdout == b""


def test_an_allowed_write_still_exits_0_with_stderr_closed():
    body = payload("/tmp/scratch.py").encode()
    proc = subprocess.run(_gate_argv(), input=body, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          preexec_fn=lambda: os.close(2), timeout=60)
    assert proc.returncode == 0


# --------------------------------------------------------------- variables only the hook process has


@pytest.mark.parametrize("command", ['cd "$CLAUDE_PROJECT_DIR/.claude"; echo x > app.py',
                                     'echo x > "$CLAUDE_PROJECT_DIR/.claude/x.py"',
                                     'cp /tmp/a.py "$CLAUDE_PLUGIN_DATA/x.py"'])
def test_hook_only_variables_are_unknown_to_the_bash_analysis(maestro, tmp_path, command):
    # Claude Code sets CLAUDE_* variables for hooks; the Bash tool's shell need not have them.
    project = tmp_path / "tmp" / "project"
    (project / ".claude").mkdir(parents=True)
    env = {"CLAUDE_PROJECT_DIR": str(project), "CLAUDE_PLUGIN_DATA": str(project / ".claude")}
    body = json.dumps({"session_id": SID, "cwd": REPO, "tool_name": "Bash", "tool_input": {"command": command}})
    result = maestro("gate", stdin=body, env=env)
    assert result.rc == 2 and "cannot be resolved" in result.err, result


def test_ordinary_environment_variables_still_resolve(maestro):
    body = json.dumps({"session_id": SID, "cwd": REPO, "tool_name": "Bash",
                       "tool_input": {"command": 'echo x > "$MAESTRO_TEST_SCRATCH/out.py"'}})
    assert maestro("gate", stdin=body, env={"MAESTRO_TEST_SCRATCH": "/tmp/scratch-dir"}).rc == 0


def test_a_glob_with_a_lone_surrogate_is_unresolved_not_an_internal_error(maestro, home):
    body = json.dumps({"session_id": SID, "cwd": "/var/tmp", "tool_name": "Bash",
                       "tool_input": {"command": "rm -f '\ud800x\ud800'/*"}})
    result = maestro("gate", stdin=body)
    assert result.rc == 2 and "cannot be resolved" in result.err, result
    assert not (home / ".maestro" / "logs" / "crashes.log").exists()
