"""maestro's private companion data directory (maestro/codex/plugin_data.py, issue 12 §1.1–2)."""

import hashlib
import json
import os
import stat

import pytest

from maestro.codex import plugin_data
from maestro.errors import MaestroError

pytestmark = pytest.mark.in_process


def test_the_workspace_key_is_the_companions_own_state_dir_name(tmp_path):
    root = tmp_path / "My Repo!"
    root.mkdir()
    link = tmp_path / "alias"
    link.symlink_to(root)
    digest = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    assert plugin_data.workspace_key(str(root)) == f"My-Repo-{digest}"  # lib/state.mjs resolveStateDir
    assert plugin_data.workspace_key(str(link)).endswith(digest)  # the hash is of the real path


def test_the_data_dir_is_private_and_per_workspace(home, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    first = plugin_data.ensure_data_dir(str(one))
    assert first.startswith(str(home / ".maestro" / "companion-data")) and first != plugin_data.data_dir(str(two))
    for path in (home / ".maestro", home / ".maestro" / "companion-data", first):
        assert stat.S_IMODE(os.lstat(path).st_mode) == 0o700


def test_a_foreign_or_linked_data_dir_is_refused(home, tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    target = plugin_data.data_dir(str(root))
    os.makedirs(os.path.dirname(target), mode=0o700)
    os.symlink(tmp_path, target)
    with pytest.raises(MaestroError, match="is a symlink"):
        plugin_data.ensure_data_dir(str(root))
    os.unlink(target)
    os.mkdir(target, 0o700)
    if os.geteuid() != 0:
        pytest.skip("changing a directory's owner needs root")
    os.chown(target, 12345, 12345)
    with pytest.raises(MaestroError, match="owned by another user"):
        plugin_data.ensure_data_dir(str(root))


def test_a_job_file_is_read_directly_but_never_through_a_symlink(tmp_path):
    data, root, job = str(tmp_path / "data"), str(tmp_path), "task-mx00test-abc123"
    path = plugin_data.job_file(data, root, job)
    os.makedirs(os.path.dirname(path))
    elsewhere = tmp_path / "planted.json"
    elsewhere.write_text(json.dumps({"status": "completed", "rendered": "RESULT: DONE\n"}))
    os.symlink(elsewhere, path)
    assert plugin_data.job_record(data, root, job) is None
    os.unlink(path)
    with open(path, "w") as handle:
        json.dump({"id": job, "status": "completed", "result": {"rawOutput": "ok\nRESULT: DONE"}}, handle)
    assert plugin_data.stored_result(plugin_data.job_record(data, root, job)) == "ok\nRESULT: DONE"
    assert plugin_data.job_record(data, root, "../x") is None


def test_a_leftover_broker_without_a_lifecycle_hook_is_reported(tmp_path):
    data, root = str(tmp_path / "data"), str(tmp_path)
    os.makedirs(plugin_data.state_dir(data, root))
    with open(os.path.join(plugin_data.state_dir(data, root), "broker.json"), "w") as handle:
        json.dump({"pid": 1, "endpoint": "unix:/nowhere"}, handle)
    said = []
    script = tmp_path / "codex-companion.mjs"
    script.write_text("")
    assert plugin_data.lifecycle_hook_argv(["node", str(script)]) is None
    assert not plugin_data.shutdown_broker(["node", str(script)], root=root, env={"CLAUDE_PLUGIN_DATA": data},
                                           emit=said.append)
    assert said and "still running" in said[0] and data in said[0]
    (tmp_path / "session-lifecycle-hook.mjs").write_text("")
    hook = tmp_path / "session-lifecycle-hook.mjs"
    assert plugin_data.lifecycle_hook_argv(["node", str(script)]) == ["node", str(hook)]


def test_a_transport_without_its_own_environment_never_stops_the_users_broker(tmp_path, monkeypatch):
    """Without an env of its own a Transport runs in the user's CLAUDE_PLUGIN_DATA: that broker is the user's."""
    import subprocess
    import sys

    from maestro.codex.companion import Transport

    user_data, root = str(tmp_path / "user-data"), str(tmp_path)
    os.makedirs(plugin_data.state_dir(user_data, root))
    broker = subprocess.Popen(["sleep", "60"])
    try:
        with open(os.path.join(plugin_data.state_dir(user_data, root), "broker.json"), "w") as handle:
            json.dump({"pid": broker.pid, "endpoint": "unix:/nowhere"}, handle)
        hook = tmp_path / "session_lifecycle_hook.py"  # would stop the broker it finds, as the plugin's hook does
        hook.write_text(f"import os, signal\nos.kill({broker.pid}, signal.SIGTERM)\n")
        (tmp_path / "companion.py").write_text("")
        monkeypatch.setenv("CLAUDE_PLUGIN_DATA", user_data)
        transport = Transport([sys.executable, str(tmp_path / "companion.py")], cwd=root, emit=print, env=None)
        transport.shutdown_broker()
        assert broker.poll() is None and plugin_data.broker_record(user_data, root)["pid"] == broker.pid
    finally:
        broker.kill()
        broker.wait()
