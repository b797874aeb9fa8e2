"""Third attack round (issue 14): bypasses confirmed under real bash in a throw-away repository, closed.

Same setup as test_gate_bash_attacks.py (its `attack_env` fixture and placeholders {repo}, {tmp}).
The round also reported python standard-library writers not yet in the tables (pipes, cProfile,
py_compile, tarfile.extract, ElementTree, distutils, readline); they are listed in the session note
as known gaps, not here.
"""

import pytest

from testing.bash_corpus import bash_payload, describe, is_allowed, is_policy_block
from test_gate_bash_attacks import attack_env, fill  # noqa: F401  (attack_env is a fixture)

BYPASSES_3 = [
    # bash looks a relative `cd` target up in CDPATH first; a prefix CDPATH reaches the cd itself
    ("cdpath-prefix-cd", "cd {tmp} && CDPATH={repo} cd src && rm app.py"),
    ("cdpath-prefix-pushd", "cd {tmp} && CDPATH={repo} pushd src && rm app.py"),
    ("cdpath-prefix-eval", "cd {tmp} && CDPATH={repo} eval cd src && rm app.py"),
    ("cdpath-export", "cd {tmp}; export CDPATH={repo}; cd src && rm app.py"),
    # BASH_CMDS is bash's command-path table: `cat` then runs /bin/rm
    ("bash-cmds-subscript", "BASH_CMDS[cat]=/bin/rm; cat src/app.py"),
    ("bash-cmds-array", "BASH_CMDS=([cat]=/bin/rm); cat src/app.py"),
    ("bash-cmds-declare", "declare -A BASH_CMDS; BASH_CMDS[ls]=/bin/rm; ls src/app.py"),
    # GNU env takes these signals only attached (`=SIG`): the next word is the program
    ("env-ignore-signal", "env --ignore-signal rm src/app.py"),
    ("env-default-signal", "env --default-signal rm src/app.py"),
    ("env-block-signal", "env --block-signal rm src/app.py"),
    # a forced checkout to a new branch throws the uncommitted change in src/app.py away
    ("checkout-force-new-branch", "git checkout -q -f -B newb"),
    ("checkout-force-b", "git checkout -f -b newb2"),
    ("checkout-bundled-force", "git checkout -qfb newb3"),
    # code built from strings at run time inside inline node/perl code
    ("node-eval", "node -e 'eval(\"require(\\\"fs\\\").unlinkSync(\\\"src/app.py\\\")\")'"),
    ("node-function", "node -e 'Function(\"r\",\"r(\\\"fs\\\").rmSync(\\\"src/app.py\\\")\")(require)'"),
    ("node-vm", "node -e 'require(\"vm\").runInNewContext(\"r(\\\"fs\\\").unlinkSync(\\\"src/app.py\\\")\",{r:require})'"),
    ("perl-string-eval", "perl -e 'eval q{unlink \"src/app.py\"}'"),
    # a string inside an interpolation inside a string (found by the planted-bug run, issue 17): the scanner
    # ended the outer string at the inner quote and read the rest as a comment
    ("ruby-nested-interpolation", "ruby -e 'puts \"#{puts \"#{File.write(%q(src/app.py), %q(y))}\"}\"'"),
    ("ruby-nested-interpolation-3", "ruby -e 'p \"#{p \"#{p \"#{File.delete(%q(src/app.py))}\"}\"}\"'"),
    ("node-nested-template", "node -e 'console.log(`${`${require(\"fs\").rmSync(\"src/app.py\")}`}`)'"),
]

STILL_ALLOWED = [
    "cd src && ls",
    "ruby -e 'puts \"#{puts \"#{1 + 1}\"}\"'",  # nested interpolation that writes nothing
    "CDPATH= cd src && ls",
    "env --ignore-signal=INT ls",
    "env -i ls -la",
    "git checkout -b feature/x",
    "git checkout -q -B feature/y",
    "cat src/app.py",
]


@pytest.mark.parametrize(("name", "command"), BYPASSES_3, ids=[name for name, _ in BYPASSES_3])
def test_third_round_attack_is_blocked(maestro, attack_env, name, command):
    command = fill(command, attack_env)
    result = maestro("gate", stdin=bash_payload(command, cwd=attack_env["{repo}"]))
    assert is_policy_block(result), f"bypass {name}: {command!r} → {describe(result)}"


@pytest.mark.parametrize("command", STILL_ALLOWED)
def test_the_look_alikes_stay_allowed(maestro, attack_env, command):
    command = fill(command, attack_env)
    result = maestro("gate", stdin=bash_payload(command, cwd=attack_env["{repo}"]))
    assert is_allowed(result), f"false block: {command!r} → {describe(result)}"
