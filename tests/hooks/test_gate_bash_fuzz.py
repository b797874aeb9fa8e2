"""Fuzz of the Bash gate: random and malformed commands never crash it and never leave it undecided.

Oracle for every case: exit 0 (nothing on stdout or stderr) or exit 2 (stderr starts with
ORCHESTRATOR GATE), never a traceback. Some hostile cases also have a policy answer (a 200 KB plan
heredoc to /tmp is allowed; a write to src/ buried under 500 levels of `$(…)` or nested `bash -c`
is blocked, by analysis or by the depth limit failing closed) and assert it. The work is bounded
by a fixed number of cases (no wall-clock asserts; pytest-timeout guards a hang).
The source target runs everything in-process; the pyz target runs the hostile table (judged by the archive's
code in one process, tests/testing/archive_batch.py, as the corpus is) and a sample as processes of their own.
"""

import random

import pytest

from testing.bash_corpus import GATE_PREFIX, REPO, bash_payload, describe
from testing.paths import TARGET

SEED = 0x62617368  # "bash"
RANDOM_CASES = 400
PYZ_RANDOM_SAMPLE = 30

VOCABULARY = (
    "echo", "x", "src/a.py", "/tmp/a.py", "notes.md", "sed", "-i", "s/a/b/", "rm", "-rf", "cp", "mv", "tee", "cat",
    "bash", "-c", "sh", "eval", "python3", "node", "-e", "sudo", "env", "X=1", "timeout", "5", "xargs", "find",
    "-exec", "{}", "\\;", "+", "-delete", "git", "checkout", "--", "tar", "-x", "-C", "dd", "of=src/a.py",
    ";", ";;", "&&", "||", "|", "|&", "&", "(", ")", "{", "}", "<", ">", ">>", ">|", "&>", "&>>", "<>", ">&", "2>",
    "2>&1", "<<", "<<-", "<<<", "EOF", "'EOF'", "$(", "`", "'", '"', "\\", "$'", "${", "$((", "))", "[[", "]]",
    "if", "then", "else", "elif", "fi", "for", "in", "do", "done", "while", "until", "case", "esac", "function",
    "f()", "select", "coproc", "time", "!", "#", "\n", "\t", "*", "?", "[a-z]", "~", "$HOME", "$1", "$OUT", "$$",
    "{a,b}", "{1..3}", "<(", ">(", "=", "cd", "pushd", "popd", "exec", "3>", "$'\\x00'", "\u00e9", "\U0001F600",
)
CHARS = "abcxyz019 _-./~'\"`$\\(){}[]<>|&;#*?!=%^+,:@\t\n\r\x0b\x0c\x01\x1b\u00a0\u200b\u202e\u3000\u4e2d"


def token_soup(r: random.Random) -> str:
    return " ".join(r.choice(VOCABULARY) for _ in range(r.randint(1, 60)))


def char_soup(r: random.Random) -> str:
    return "".join(r.choice(CHARS) for _ in range(r.randint(1, 200)))


def byte_soup(r: random.Random) -> str:
    return bytes(r.randrange(256) for _ in range(r.randint(1, 300))).decode("latin-1")


def random_commands() -> list:
    r = random.Random(SEED)
    makers = (token_soup, token_soup, char_soup, byte_soup)
    return [r.choice(makers)(r) for _ in range(RANDOM_CASES)]


def nested_bash_c(levels: int, core: str) -> str:
    command = core
    for _ in range(levels):
        command = "bash -c '" + command.replace("'", "'\\''") + "'"
    return command


BIG = "line of plan text with > src/a.py and $(rm -rf src) and `x` in it\n" * 3200  # ≈ 200 KB

# (name, command, required rc or None for "0 or 2")
HOSTILE = [
    ("deep-cmdsub-write", "$(" * 500 + "echo x > src/a.py" + ")" * 500, 2),
    ("deep-cmdsub-quoted-write", 'echo "' + "$(" * 500 + "echo x > src/a.py" + ")" * 500 + '"', 2),
    ("deep-cmdsub-unbalanced", "$(" * 500 + "true", None),
    ("deep-cmdsub-read", "$(" * 500 + "true" + ")" * 500, None),
    ("deep-subshell-write", "( " * 1000 + "echo x > src/a.py" + " )" * 1000, 2),  # "((" would be arithmetic
    ("deep-group-write", "{ " * 500 + "echo x > src/a.py" + "; }" * 500, 2),
    ("deep-if-write", "if true; then " * 300 + "echo x > src/a.py" + "; fi" * 300, 2),
    ("deep-backticks", "echo " + "`" * 501, None),
    ("deep-param", "echo ${x:-" * 500 + "y" + "}" * 500, None),
    ("deep-arith", "echo " + "$((" * 500 + "1" + "))" * 500, None),
    ("deep-procsub", "cat " + "<(" * 500 + "true" + ")" * 500, None),
    ("deep-bash-c-write", nested_bash_c(8, "echo x > src/a.py"), 2),
    ("deep-eval-write", "eval " * 200 + "'echo x > src/a.py'", 2),
    ("heredoc-200k-plan", "cat <<'EOF' > /tmp/plan.md\n" + BIG + "EOF", 0),
    ("heredoc-200k-source", "cat > src/a.py <<'EOF'\n" + BIG + "EOF", 2),
    ("heredoc-200k-unquoted", "cat <<EOF > /tmp/plan.md\n" + BIG + "EOF", None),
    ("heredoc-200k-unterminated", "cat <<'EOF' > /tmp/plan.md\n" + BIG, None),
    ("heredoc-many", "cat " + " ".join(f"<<E{i}" for i in range(1000)) + "\n"
     + "".join(f"x\nE{i}\n" for i in range(1000)), None),
    ("here-string-huge", "cat <<< '" + "x" * 200_000 + "' > /tmp/a.md", None),
    ("long-word", "echo " + "x" * 1_000_000 + " > /tmp/a.md", None),
    ("long-path-write", "echo x > src/" + "d/" * 20_000 + "a.py", 2),
    ("semicolons", ";" * 100_000, None),
    ("true-semicolons", "true;" * 50_000, None),
    ("and-chain", "true && " * 10_000 + "true", None),
    ("and-chain-write", "true && " * 10_000 + "echo x > src/a.py", 2),
    ("pipes", "cat | " * 5_000 + "cat", None),
    ("bare-pipes", "|" * 10_000, None),
    ("newlines", "\n" * 100_000, None),
    ("spaces", " " * 100_000, None),
    ("comments", "#" * 100_000, None),
    ("brace-range-bomb", "touch src/{1..100000000}.py", 2),
    ("brace-product-bomb", "echo " + "{a,b}" * 40 + " > /dev/null", None),
    ("brace-product-write", "touch src/" + "{a,b}" * 40 + ".py", 2),
    ("glob-bomb", "rm -f /*/*/*/*", 2),
    ("nul-in-word", "echo x\x00 > src/a.py", None),
    ("nul-alone", "\x00", None),
    ("nul-in-target", "echo x > /tmp/a\x00.py", None),
    ("nul-run", "\x00" * 10_000, None),
    ("lone-surrogate", "echo \ud800 > /tmp/a.md", None),
    ("bidi-override", "echo x > \u202esrc/a.py", 2),
    ("zero-width", "echo x > src/a\u200b.py", 2),
    ("control-chars", "".join(chr(c) for c in range(1, 32)) * 100, None),
]
for i, text in enumerate([
    "<<", "<<EOF", "cat <<", "cat <<'EOF'", "cat <<EOF\nno end", "<<<", ")", "}", "fi", "esac", "done", "then", "else",
    "do", "in", "case", "if", "for", "while", "until", "}{", ")(", "((", "))", "[[", "]]", "`", "'", '"', "$'", "\\",
    "$(", "${", "${x", "$((1", "<(", ">(", "&", "&&", "||", "|", ";;", "!", "function", "f()", "select", "coproc",
    "time", "{", "(", "case x in", "case x in x)", "for i in", "if true; then", "while true; do", "echo 'open",
    'echo "open', "echo $'open", "echo `open", "echo ${open", "echo $(open", "x=$(", "echo > ", ">", ">>", "2>", "&>",
    "<>", ">&", "exec 3>", "echo x > ''", 'echo x > ""', "rm ''", "sed -i", "sed -i ''", "cp", "cp src/a.py",
    "tar -x -C", "dd of=", "find . -exec", "find . -exec rm {}", "xargs", "bash -c", "eval", "python3 -c",
    "python3 - <<", "sudo", "env", "timeout", "echo x >\\", "fi; echo x > src/a.py", "esac; rm src/a.py",
    ") ; rm src/a.py", "} ; rm src/a.py", "done > src/a.py", "cat <<'E\"OF'\nx\nE\"OF", "cat <<$(x)\nx\n$(x)",
    "f() { f; }; f", "cat <<'EOF'\nEOF\nEOF", "shopt -s extglob; rm !(x)",
]):
    HOSTILE.append((f"malformed-{i:03d}", text, None))
HOSTILE += [
    # bash -c does not expand aliases, and noclobber does not stop the creation of a new file
    ("alias-does-not-hide-rm", "alias rm=ls; rm src/a.py", 2),
    ("noclobber-still-creates", "set -o noclobber; echo x > src/a.py", 2),
]


def check(result, command, required):
    assert "Traceback" not in result.err, describe(result)
    assert result.out == "", describe(result)
    assert result.rc in (0, 2), describe(result)
    if result.rc == 0:
        assert result.err == "", describe(result)
    else:
        assert result.err.startswith(GATE_PREFIX), describe(result)
    if required is not None:
        assert result.rc == required, f"{command[:200]!r}: expected rc {required}\n{describe(result)}"


@pytest.fixture(scope="session")
def archive_hostile_judgements(tmp_path_factory):
    """Against the archive: the hostile table judged by the archive's gate in one process (a HOME and TMPDIR of
    the kind `isolated_home` makes); the per-process entry point is proved by the random sample below."""
    from testing import archive_batch

    base = tmp_path_factory.mktemp("hostile")
    (base / "home").mkdir()
    (base / "tmp").mkdir()
    results = archive_batch.judge_all("gate", [bash_payload(case[1]) for case in HOSTILE],
                                      env={"HOME": str(base / "home"), "TMPDIR": str(base / "tmp")}, cwd=str(base))
    return dict(zip((case[0] for case in HOSTILE), results))


@pytest.mark.parametrize(("name", "command", "required"), HOSTILE, ids=[case[0] for case in HOSTILE])
def test_hostile_command_gets_a_decision_never_a_traceback(request, name, command, required):
    if TARGET == "pyz":
        result = request.getfixturevalue("archive_hostile_judgements")[name]
    else:
        result = request.getfixturevalue("maestro")("gate", stdin=bash_payload(command))
    check(result, command, required)


def test_random_commands_get_a_decision_never_a_traceback(maestro):
    commands = random_commands()
    if maestro.target == "pyz":
        commands = random.Random(SEED).sample(commands, PYZ_RANDOM_SAMPLE)
    for command in commands:
        check(maestro("gate", stdin=bash_payload(command)), command, None)


def test_random_commands_in_a_real_cwd_and_under_a_subagent_get_a_decision(maestro, outside_tmp):
    r = random.Random(SEED + 1)
    commands = [token_soup(r) for _ in range(60 if maestro.target == "source" else 10)]
    for index, command in enumerate(commands):
        cwd = str(outside_tmp) if index % 2 else REPO
        check(maestro("gate", stdin=bash_payload(command, cwd=cwd, agent_id="fuzz-agent")), command, None)
