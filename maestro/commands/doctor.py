"""`doctor [--json]`: is this machine ready to run maestro, and does the gate really hold? One line per check.

Each check answers ok / warn / fail; every failure carries the command or step that fixes it.
The checks: Python, git, node, the Codex companion (a warning when its plugin version is outside the
tested range 1.0.5–1.0.6), ~/.claude writable, settings.json and the
registered hooks (interpreter, event, matcher, timeout, sync), the gate run on a synthetic source
Edit and a synthetic `sed -i` (both must be blocked), disableAllHooks, the installed archive
against the install manifest, the private ~/.maestro and grant directories, and the `maestro`
launcher (present, unchanged, first on PATH).
Exit 0 only when nothing fails (warnings are advice). `--json` prints one envelope:
{"version": 1, "command": "doctor", "ok": bool, "checks": [{"name", "status", "detail", "fix"}]}.
"""

import os
import shutil
import stat
import subprocess
import sys
from dataclasses import asdict

from maestro import messages, paths
from maestro.commands.support import parser, write_envelope
from maestro.errors import Exit
from maestro.install import doctor_checks
from maestro.install.doctor_checks import PROBE_TIMEOUT_SEC, Check


def check_python() -> Check:
    version = ".".join(map(str, sys.version_info[:3]))
    if sys.version_info < (3, 11):
        return Check("python", "fail", f"{sys.executable} is Python {version}", "install Python 3.11+ (tomllib)")
    return Check("python", "ok", f"{os.path.realpath(sys.executable)} (Python {version})")


def check_tool(name: str, why: str, fix: str) -> Check:
    found = shutil.which(name)
    if not found:
        return Check(name, "fail", f"{name} not found on PATH ({why})", fix)
    return Check(name, "ok", found)


def write_probe(command) -> str:
    """The companion's `--help` write probe (spec §3): '' when write dispatch looks supported."""
    try:
        result = subprocess.run(
            [*command, "--help"], capture_output=True, text=True, timeout=PROBE_TIMEOUT_SEC, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"--help did not answer ({exc.__class__.__name__}); the loop will still try"
    import re

    for line in (result.stdout + "\n" + result.stderr).splitlines():
        if re.search(r"\btask\b", line):
            return "" if "--write" in line else f"its task synopsis lacks --write: {line.strip()}"
    return ""


def check_companion() -> Check:
    from maestro.codex.discovery import find_companion

    companion = find_companion()
    if companion is None:
        source = os.environ.get("MAESTRO_COMPANION")
        detail = f"MAESTRO_COMPANION={source} is not a file" if source else "codex-companion.mjs not in the plugin cache"
        return Check(
            "companion", "fail", detail,
            f"install the Codex plugin in Claude Code: {messages.CODEX_PLUGIN}; then `codex login`",
        )
    detail = f"{companion.path} (version {companion.version}, via {companion.source})"
    if companion.argv()[0] == "node" and not shutil.which("node"):
        return Check("companion", "fail", detail + "; node is missing", "install Node.js 18+")
    problem = write_probe(companion.argv())
    if problem:
        return Check("companion", "fail", f"{detail}; write probe: {problem}", "update the Codex plugin")
    from maestro.codex.discovery import TESTED_RANGE, outside_tested_range, plugin_version

    version, tested = plugin_version(companion), "–".join(TESTED_RANGE)
    if outside_tested_range(version):
        return Check("companion", "warn", f"{detail}; write probe ok; plugin version {version} found, outside the "
                     f"tested range {tested}", f"install a Codex plugin version in {tested}, or watch its first loop")
    return Check("companion", "ok", f"{detail}; write probe ok; plugin version {version or 'unknown'} "
                 f"(tested: {tested})")


def private_dir_check(name: str, directory: str, absent: str) -> Check:
    """The one private-directory check (what util/atomic.ensure_private_dir makes or refuses): a directory, not a
    symlink, of this user, mode 0700. `absent` is the detail when it does not exist yet."""
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        return Check(name, "ok", absent)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        return Check(name, "fail", f"{directory} is not a directory", f"move it away: mv {directory} {directory}.old")
    if st.st_uid != os.getuid():
        return Check(name, "fail", f"{directory} is owned by uid {st.st_uid}, not by you",
                     f"move it away: mv {directory} {directory}.old")
    if stat.S_IMODE(st.st_mode) & 0o077:
        return Check(name, "fail", f"{directory} is mode {stat.S_IMODE(st.st_mode):04o}, uid {st.st_uid}",
                     f"chmod 700 {directory}")
    return Check(name, "ok", f"{directory} (mode 0700)")


def check_private_dir() -> Check:
    return private_dir_check("~/.maestro", paths.maestro_dir(), "absent (created on first use)")


def check_companion_data() -> Check:
    """maestro's private companion data directory for this workspace (codex/plugin_data.py): where its Codex jobs,
    their job table, their prompts and output verbatim and its broker record live, out of the user's own
    `/codex:status` and SessionEnd. Every directory below ~/.maestro on its path gets the one private check."""
    from maestro.codex import plugin_data
    from maestro.util import git as gitscope

    base = os.path.join(paths.maestro_dir(), plugin_data.DATA_DIR_NAME)
    root = gitscope.scope_root()
    if root is None:
        check = private_dir_check("companion data", base, f"{base} (created on first use)")
        if check.status == "ok":
            check.detail = f"{base}/<workspace> (one private directory per workspace, created 0700 on first use)"
        return check
    directory = plugin_data.data_dir(root)
    for folder in (base, directory):
        check = private_dir_check("companion data", folder, f"{directory} (created 0700 on the first Codex job here)")
        if check.status != "ok":
            return check
    return check


def check_original_install() -> Check:
    from maestro.install import manifest

    owned = manifest.read(strict=False)
    legacy = manifest.original_maestro_keys(owned) if owned else []
    if legacy:
        return Check(
            "original Maestro", "warn", f"the Bash/Node Maestro is still installed ({len(legacy)} hook files)",
            "python3 dist/maestro.pyz install (migrates it)",
        )
    return Check("original Maestro", "ok", "not installed")


def run_checks():
    checks = [
        check_python(),
        check_tool("git", "provenance and write leases", "install git"),
        check_tool("node", "runs codex-companion.mjs", "install Node.js 18+"),
        check_companion(),
    ]
    checks.append(doctor_checks.check_claude_dir())
    checks += list(doctor_checks.check_settings_and_hooks())
    checks += list(doctor_checks.check_manifest_and_archive())
    checks += [check_private_dir(), check_companion_data(), doctor_checks.check_grant_dir(), check_original_install()]
    checks.append(doctor_checks.check_launcher())
    return checks


def main(argv) -> int:
    p = parser("doctor", __doc__)
    p.add_argument("--json", action="store_true", help="print one JSON envelope instead of lines")
    args = p.parse_args(argv)
    checks = run_checks()
    ok = not any(c.status == "fail" for c in checks)
    if args.json:
        write_envelope("doctor", ok, checks=[asdict(c) for c in checks])
    else:
        for c in checks:
            fix = f" — fix: {c.fix}" if c.status != "ok" and c.fix else ""
            sys.stdout.write(f"{c.status:<4} {c.name}: {c.detail}{fix}\n")
        sys.stdout.write("doctor: all checks passed\n" if ok else "doctor: some checks failed\n")
    return Exit.OK if ok else Exit.ERROR
