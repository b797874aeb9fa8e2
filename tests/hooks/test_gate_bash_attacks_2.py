"""Second red-team round on `maestro gate` (issue 14): new bypasses and false blocks.

Same setup as test_gate_bash_attacks.py (its `attack_env` fixture and placeholders: {repo}, {home},
{tmp}, with {tmp}/into-src -> {repo}/src). Every command in BYPASSES was run for real with `bash -c`
in a throw-away git repository (HOME a throw-away directory) and wrote, truncated or deleted
`src/app.py` (or created another source file in src/) while the gate answered 0. The comment above
each says why bash writes the file. {tmp}/evil.zip, evil.tar, evil.a hold `src/app.py`; such state
an earlier, allowed command can leave in scratch.

FALSE_BLOCKS are ordinary orchestrator commands that write only scratch files and that the gate
blocked: they must be allowed.
"""

import pytest

from testing.bash_corpus import bash_payload, describe, is_allowed, is_policy_block
from test_gate_bash_attacks import WRITE_APP, attack_env, fill  # noqa: F401  (attack_env is a fixture)

# ================================================================================ confirmed bypasses
# (id, command): exit 2 expected; the gate answered 0.

BYPASSES_2 = [
    # ---------------------------------------------------------------- git: abbreviated long options
    # git's parse-options accepts any unambiguous prefix of a long option: --ha is --hard, --for is
    # --force, --discard-ch is --discard-changes. The gate matches only the full spelling.
    ("git-reset-ha", "git reset --ha"),
    ("git-reset-har-with-c", "git -c core.editor=true reset --har"),
    ("git-checkout-for", "git checkout --for"),
    ("git-switch-discard-ch", "git switch --discard-ch master"),
    # ---------------------------------------------------------------- git: commands git runs
    # --config-env=KEY=VAR is `git -c KEY=$VAR`: here an alias that runs a shell command.
    ("git-config-env-alias", "X='!" + WRITE_APP + "' git --config-env=alias.x=X x"),
    # for a local remote git runs --upload-pack / --receive-pack / --exec through the shell.
    ("git-ls-remote-upload-pack", "git ls-remote --upload-pack='" + WRITE_APP + "; :' ."),
    ("git-fetch-upload-pack", "git fetch -q --upload-pack='" + WRITE_APP + "; :' ."),
    ("git-clone-u", "git clone -q -u 'sh -c \"" + WRITE_APP + "\"' . {tmp}/c"),
    ("git-push-receive-pack", "git push -q --receive-pack='" + WRITE_APP + "; :' . HEAD:refs/heads/x"),
    ("git-archive-remote-exec", "git archive --remote=. --exec='" + WRITE_APP + "; :' HEAD"),
    # ---------------------------------------------------------------- git: other work-tree writers
    # format-patch -o DIR --suffix=.py writes src/0001-<subject>.py (a new source file).
    ("git-format-patch-o-src", "git format-patch -1 -o src --suffix=.py"),
    # --orphan empties the work tree (every tracked file is removed; the tree here is clean after the commit).
    ("git-switch-orphan", "git -c user.name=a -c user.email=a@b commit -qam x && git switch -q --orphan zz"),
    # ---------------------------------------------------------------- tar: --remove-files deletes what it archives
    ("tar-remove-files", "tar --remove-files -cf {tmp}/x.tar src/app.py"),
    ("tar-remove-files-trailing", "tar -cf {tmp}/r.tar src --remove-files"),
    ("tar-old-style-remove-files", "tar cf {tmp}/r.tar --remove-files src/app.py"),
    # ---------------------------------------------------------------- links made earlier in the command (other makers)
    # cp -a / cp -P copy the symlink itself; the redirect then opens {repo}/src/app.py through it.
    ("cp-a-symlink-then-redirect", "cp -a {tmp}/into-src .claude/x && echo pwned > .claude/x/app.py"),
    ("cp-P-symlink-then-redirect", "cp -P {tmp}/into-src .claude/y && echo pwned > .claude/y/app.py"),
    # tar -x restores the symlink it archived.
    ("tar-x-symlink-then-redirect",
     "tar -cf {tmp}/l.tar -C {tmp} into-src && tar -xf {tmp}/l.tar -C .claude && echo pwned > .claude/into-src/app.py"),
    # ---------------------------------------------------------------- shell state
    # ~+ expands to $PWD, which is an ordinary assignable variable: ~+/app.py is {repo}/src/app.py.
    ("pwd-assign-tilde-plus", "cd {tmp}; PWD={repo}/src; echo pwned > ~+/app.py"),
    # ---------------------------------------------------------------- interpreters reading program text
    # -i: after running -c, python reads the rest of stdin as interactive input and runs it.
    ("python-i-c-stdin-pipe", "echo 'open(\"src/app.py\",\"w\").write(\"x\")' | python3 -i -c pass"),
    ("python-i-c-herestring", "python3 -i -c pass <<< 'open(\"src/app.py\",\"w\").write(\"x\")'"),
    # ExtUtils::Command: `-e rm_f` etc. are subroutines taking their files from @ARGV.
    ("perl-extutils-rm-f", "perl -MExtUtils::Command -e rm_f src/app.py"),
    ("perl-extutils-rm-f-quoted", "perl -MExtUtils::Command -e 'rm_f' src/app.py"),
    ("perl-extutils-we", "perl -MExtUtils::Command -we rm_f src/app.py"),
    ("perl-extutils-cp", "perl -MExtUtils::Command -e cp /etc/passwd src/app.py"),
    ("perl-extutils-mv", "perl -MExtUtils::Command -e mv src/app.py {tmp}/m"),
    ("perl-extutils-touch-new", "perl -MExtUtils::Command -e touch src/new.py"),
    ("perl-extutils-rm-rf", "perl -MExtUtils::Command -e rm_rf src"),
    # python -m stdlib command lines that write their operand.
    ("python-m-json-tool-outfile", "python3 -m json.tool {tmp}/x.json src/app.py"),
    ("python-m-zipfile-extract", "python3 -m zipfile -e {tmp}/evil.zip ."),
    ("python-m-zipfile-create", "python3 -m zipfile -c src/app.py /etc/passwd"),
    ("python-m-tarfile-extract", "python3 -m tarfile -e {tmp}/evil.tar ."),
    # literal makefile / Tcl script / gdb command: inline code that runs a shell.
    ("make-f-stdin", "make -f - <<< $'all:\\n\\t" + WRITE_APP + "'"),
    ("tclsh-herestring", "tclsh <<< 'exec sh -c {" + WRITE_APP + "}'"),
    ("tclsh-pipe", "echo 'exec sh -c {" + WRITE_APP + "}' | tclsh"),
    ("gdb-ex-shell", "gdb -batch -ex 'shell " + WRITE_APP + "'"),
    ("gdb-ex-pipe", "gdb -batch -ex 'pipe echo | sh -c \"" + WRITE_APP + "\"'"),
    # tmux runs its command through the shell (in a detached server).
    ("tmux-new-d", "tmux -L rt new -d '" + WRITE_APP + "'; sleep 1"),
    ("tmux-new-d-rm", "tmux -L rt new -d 'rm src/app.py'; sleep 1"),
    # sqlite3 dot-commands: .output/.once write a file, .shell runs one.
    ("sqlite3-output", "sqlite3 {tmp}/db '.output src/app.py' 'select 1;'"),
    ("sqlite3-once", "sqlite3 :memory: '.once src/app.py' 'select 1;'"),
    ("sqlite3-shell", "sqlite3 {tmp}/db '.shell " + WRITE_APP + "'"),
    ("sqlite3-stdin-output", "echo '.output src/app.py' | sqlite3"),
    # ---------------------------------------------------------------- utilities that write a named file
    ("shuf-o", "shuf -o src/app.py /etc/passwd"),
    ("openssl-out", "openssl enc -base64 -in /etc/passwd -out src/app.py"),
    ("sdiff-o", "sdiff -o src/app.py /etc/passwd /etc/passwd < /dev/null"),
    ("logsave", "logsave src/app.py true"),
    # csplit: %.0d prints nothing for 0, so the first piece is named src/app.py.
    ("csplit-empty-number", "csplit -s -f src/app. -b '%.0dpy' /etc/passwd 5"),
    ("split-suffix-py", "split -n 1 --additional-suffix=.py /etc/passwd src/x"),
    ("ar-x-into-src", "cd src && ar x {tmp}/evil.a"),
    ("mktemp-p-src-suffix-py", "mktemp -p src --suffix=.py"),
    # gio (GLib) file operations.
    ("gio-remove", "gio remove src/app.py"),
    ("gio-trash", "gio trash src/app.py"),
    ("gio-save", "gio save src/app.py <<< pwned"),
    ("gio-move", "gio move src/app.py {tmp}/moved"),
    ("gio-copy", "gio copy /etc/passwd src/app.py"),
]

# ================================================================================ false blocks
# Ordinary commands that write only scratch files: they must be allowed (exit 0).
# $$ (and $RANDOM, $BASHPID) expand to digits only, so /tmp/x.$$ is under /tmp whatever the value.

FALSE_BLOCKS = [
    "rm -f /tmp/x.$$",
    "echo x > /tmp/out.$$.log",
    "pytest -q > /tmp/pytest-$$.log 2>&1",
    "echo x > /tmp/r.$RANDOM",
    "cp src/app.py /tmp/app.py.$$",
    "trap 'rm -f /tmp/plan.$$' EXIT; cat > /tmp/plan.$$ <<'EOF'\nplan\nEOF",
]


def _id(text):
    return " ".join(text.split())[:60]


@pytest.mark.parametrize(("name", "command"), BYPASSES_2, ids=[name for name, _ in BYPASSES_2])
def test_second_round_attack_that_really_writes_source_is_blocked(maestro, attack_env, name, command):
    command = fill(command, attack_env)
    result = maestro("gate", stdin=bash_payload(command, cwd=attack_env["{repo}"]))
    assert is_policy_block(result), f"bypass {name}: {command!r} → {describe(result)}"


@pytest.mark.parametrize("command", FALSE_BLOCKS, ids=[_id(c) for c in FALSE_BLOCKS])
def test_scratch_write_named_with_a_digits_only_variable_is_allowed(maestro, attack_env, command):
    command = fill(command, attack_env)
    result = maestro("gate", stdin=bash_payload(command, cwd=attack_env["{repo}"]))
    assert is_allowed(result), f"false block: {command!r} → {describe(result)}"


def test_second_round_lists_are_distinct():
    commands = [c for _, c in BYPASSES_2]
    assert len(set(commands)) == len(commands)
    assert len({name for name, _ in BYPASSES_2}) == len(BYPASSES_2)
