"""The Bash analysis engine (hooks/bash_writes.py + bash_expand.py): which files a command line
writes, with the channel table and the inline-code scanner replaced by small fakes so these tests
pin the engine alone (redirections, cwd and variable tracking, expansion, nesting, stdin programs).
The integration tests at the end use the real modules."""

import sys
import types

import pytest

import maestro.hooks
from maestro.hooks.bash_writes import MAX_NESTED, find_writes
from maestro.hooks.targets import BashSyntaxError, Run, Script, Target, Word

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)

CWD = "/work/repo"
HOME = "/home/user"


def _base(value):
    return value.rsplit("/", 1)[-1] if value else value


def fake_command_writes(argv, cwd, env, home):
    """A tiny channel table: sed -i / tee / touch / rm write; shells and python run scripts;
    sudo/env/command/builtin/timeout/exec wrap; xargs wraps with stdin arguments; eval evals."""
    name = _base(argv[0].value)
    rest = argv[1:]
    values = [w.value for w in rest]
    out = []
    if name == "sed" and "-i" in values:
        out.append(Target("sed -i", "change", rest[-1].value, rest[-1].raw, cwd))
    elif name in ("tee", "touch", "rm"):
        action = {"tee": "write", "touch": "create", "rm": "delete"}[name]
        out.extend(Target(name, action, w.value, w.raw, cwd) for w in rest
                   if w.value is None or not w.value.startswith("-"))
    elif name in ("bash", "sh"):
        if values[:1] == ["-c"]:
            if rest[1].value is None:
                out.append(Target(name + " -c", "run", None, rest[1].raw, cwd))
            else:
                out.append(Script("sh", rest[1].value, rest[1].raw))
        elif not values or values == ["-s"]:
            out.append(Script("sh", None, name))
    elif name in ("python3", "python"):
        if values[:1] == ["-c"]:
            out.append(Script("python", rest[1].value, rest[1].raw))
        elif not values or values == ["-"]:
            out.append(Script("python", None, name))
    elif name in ("sudo", "env", "command", "builtin", "timeout", "exec") and rest:
        k = 0
        while k < len(rest) and rest[k].value is not None and (rest[k].value[:1] == "-" or "=" in rest[k].value):
            k += 2 if rest[k].value == "-u" else 1
        if k < len(rest):
            out.append(Run(list(rest[k:])))
    elif name == "xargs" and rest:
        out.append(Run(list(rest) + [Word(None, "<arguments from stdin>", False)], True))
    elif name == "eval":
        code = None if None in values else " ".join(values)
        if code is None:
            out.append(Target("eval", "run", None, " ".join(w.raw for w in rest), cwd))
        else:
            out.append(Script("sh", code, " ".join(w.raw for w in rest)))
    return out


def fake_code_writes(lang, code):
    """open('PATH', 'w') → Target; os.system('CMD') → Script("sh")."""
    out = []
    for marker, kind in (("open(", "target"), ("os.system(", "script")):
        k = code.find(marker)
        if k < 0:
            continue
        quote = code[k + len(marker)]
        end = code.find(quote, k + len(marker) + 1)
        text = code[k + len(marker) + 1:end]
        if kind == "target":
            out.append(Target(f"{lang} open()", "write", text, quote + text + quote, None))
        else:
            out.append(Script("sh", text, quote + text + quote))
    return out


def _module(monkeypatch, name):
    try:
        return __import__(f"maestro.hooks.{name}", fromlist=["x"])
    except Exception:
        stub = types.ModuleType(f"maestro.hooks.{name}")
        monkeypatch.setitem(sys.modules, f"maestro.hooks.{name}", stub)
        monkeypatch.setattr(maestro.hooks, name, stub, raising=False)
        return stub


@pytest.fixture(autouse=True)
def fakes(monkeypatch, request):
    if request.node.name.startswith("test_integration"):
        return
    monkeypatch.setattr(_module(monkeypatch, "bash_channels"), "command_writes", fake_command_writes, raising=False)
    monkeypatch.setattr(_module(monkeypatch, "inline_code"), "code_writes", fake_code_writes, raising=False)


def writes(command, cwd=CWD, env=None, home=HOME):
    env = {"HOME": home, "PATH": "/usr/bin:/bin"} if env is None else env
    return [(t.channel, t.action, t.path, t.word, t.cwd) for t in find_writes(command, cwd, env, home)]


def paths(command, cwd=CWD, env=None):
    return [(t[2], t[4]) for t in writes(command, cwd, env)]


# ------------------------------------------------------------------------------------ redirections


@pytest.mark.parametrize("command, channel", [
    ("echo x > out.py", "redirection >"),
    ("echo x >> out.py", "redirection >>"),
    ("echo x >| out.py", "redirection >|"),
    ("echo x &> out.py", "redirection &>"),
    ("echo x &>> out.py", "redirection &>>"),
    ("echo x 2> out.py", "redirection 2>"),
    ("echo x 2>> out.py", "redirection 2>>"),
    ("echo x >& out.py", "redirection >&"),
    ("echo x 1>&out.py", "redirection 1>&"),
    ("cat 3<> out.py", "redirection 3<>"),
    ("cat <> out.py", "redirection <>"),
    ("exec {fd}> out.py", "redirection >"),
    ("exec 3> out.py", "redirection 3>"),
    (">out.py", "redirection >"),
    ("X=1 >out.py", "redirection >"),
])
def test_every_output_redirection_form_is_a_write(command, channel):
    assert writes(command) == [(channel, "write", "out.py", "out.py", CWD)]


@pytest.mark.parametrize("command", [
    "echo x 2>&1", "echo x >&2", "echo x 1>&2-", "exec 3>&-", "exec 4<&0", "cat < in.py", "cat 0< in.py",
    "cat <<< 'x > y.py'", "cat <&3", "echo x | cat", "grep -n foo src/a.py", "true",
])
def test_descriptor_duplication_and_input_redirections_write_nothing(command):
    assert writes(command) == []


@pytest.mark.parametrize("command", [
    "echo x > /dev/null", "echo x 2>/dev/null", "echo x &>/dev/null", "echo x > /dev/stdout",
    "echo x > /dev/stderr", "echo x > /dev/tty", "echo x > /dev/fd/2", "cd /dev && echo x > null",
    "echo x | tee /dev/stderr", "exec 3>/dev/null",
])
def test_device_files_are_never_targets(command):
    assert writes(command) == []


def test_redirections_on_compound_commands_are_writes():
    assert paths("{ echo a; echo b; } > g.py") == [("g.py", CWD)]
    assert paths("( echo a ) >> s.py") == [("s.py", CWD)]
    assert paths("while read l; do echo $l; done < in.txt > w.py") == [("w.py", CWD)]
    assert paths("for i in 1 2; do echo $i; done 2> f.py") == [("f.py", CWD)]
    assert paths("if true; then echo; fi > i.py") == [("i.py", CWD)]
    assert paths("case x in x) echo;; esac > c.py") == [("c.py", CWD)]
    assert paths("f() { echo; } > fn.py") == [("fn.py", CWD)]


def test_redirection_targets_are_expanded():
    env = {"HOME": HOME, "OUT": "/tmp/o.txt"}
    assert paths("echo > $OUT", env=env) == [("/tmp/o.txt", CWD)]
    assert paths('echo > "$OUT.bak"', env=env) == [("/tmp/o.txt.bak", CWD)]
    assert paths("echo > ~/notes.md") == [(HOME + "/notes.md", CWD)]
    assert writes("echo > $(pick)") == [("redirection >", "write", None, "$(pick)", CWD)]
    assert writes("echo > $1") == [("redirection >", "write", None, "$1", CWD)]


# ------------------------------------------------------------------------------------ quoted text is data


@pytest.mark.parametrize("command", [
    'echo "x > src/a.py"',
    "echo 'x > src/a.py; sed -i s src/a.py'",
    "echo '$(touch a.py)' '`touch b.py`'",
    "echo \\> a.py",
    "cat <<'EOF'\n> src/a.py\n$(touch a.py)\n`touch b.py`\nEOF",
    'cat <<"EOF"\n$(touch a.py)\nEOF',
    "cat <<\\EOF\n$(touch a.py)\nEOF",
    "printf '%s\\n' 'rm -rf src'",
    "grep -c 'touch x' file # touch y.py",
    "echo a#b > /dev/null",
])
def test_quoted_text_and_heredoc_bodies_are_data(command):
    assert writes(command) == []


def test_substitutions_run_even_inside_double_quotes_and_unquoted_heredocs():
    assert paths('echo "$(touch a.py)"') == [("a.py", CWD)]
    assert paths('echo "`touch b.py`"') == [("b.py", CWD)]
    assert paths("cat <<EOF\n$(touch c.py)\nEOF") == [("c.py", CWD)]
    assert paths("cat <<-EOF\n\t`touch d.py`\n\tEOF") == [("d.py", CWD)]
    assert paths("X=${Y:-$(touch e.py)}") == [("e.py", CWD)]
    assert paths("[[ -n $(touch f.py) ]]") == [("f.py", CWD)]
    assert paths("(( $(touch g.py) + 1 ))") == [("g.py", CWD)]
    assert paths("echo $(( $(touch h.py) ))") == [("h.py", CWD)]
    assert paths("case $(touch i.py) in *) ;; esac") == [("i.py", CWD)]


def test_backquoted_text_that_does_not_parse_fails_closed():
    assert writes("cat > /tmp/p.md <<EOF\nuse `foo(` here\nEOF") == [
        ("redirection >", "write", "/tmp/p.md", "/tmp/p.md", CWD),
        ("command substitution", "run", None, "`foo(`", None)]


# ------------------------------------------------------------------------------------ cwd tracking


def test_cd_changes_the_cwd_of_later_commands(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    assert paths(f"cd {sub} && sed -i s a.py", cwd=str(tmp_path)) == [("a.py", str(sub))]
    assert paths(f"cd {sub}; touch a.py", cwd=str(tmp_path)) == [("a.py", str(sub))]
    assert paths("cd sub\ntouch a.py", cwd=str(tmp_path)) == [("a.py", str(sub))]
    assert paths("cd ./sub/.. && touch a.py", cwd=str(tmp_path)) == [("a.py", str(tmp_path))]
    assert paths(f"cd -- {sub} && touch a.py", cwd=str(tmp_path)) == [("a.py", str(sub))]


def test_cd_forms(tmp_path):
    (tmp_path / "d").mkdir()
    home = str(tmp_path)
    env = {"HOME": home}
    assert paths("cd && touch a.py", cwd=CWD, env=env) == [("a.py", home)]
    assert paths("cd ~ && touch a.py", cwd=CWD, env=env) == [("a.py", home)]
    assert paths(f"cd {home}/d && cd - && touch a.py", cwd=CWD, env=env) == [("a.py", CWD)]
    assert paths("unset D; cd $D && touch a.py") == [("a.py", "/home/user")]  # unset: `cd` alone, to $HOME
    assert paths("cd $NOT_IN_THE_ENV && touch a.py") == [("a.py", None)]
    assert paths("cd \"$(pick)\" && touch a.py") == [("a.py", None)]
    assert paths("read d; cd $d; touch a.py") == [("a.py", None)]


def test_a_cd_that_may_fail_leaves_the_cwd_unknown_after_the_list(tmp_path):
    missing = str(tmp_path / "missing")
    assert paths(f"cd {missing} && touch a.py", cwd=CWD) == [("a.py", missing)]
    assert paths(f"cd {missing}; touch a.py", cwd=CWD) == [("a.py", None)]
    assert paths(f"cd {missing} || touch a.py", cwd=CWD) == [("a.py", CWD)]
    assert paths(f"mkdir -p {missing} && cd {missing} && touch a.py") == [("a.py", missing)]


def test_a_cd_in_a_branch_or_loop_leaves_the_cwd_unknown(tmp_path):
    assert paths(f"if false; then cd {tmp_path}; fi; touch a.py") == [("a.py", None)]
    assert paths(f"false && cd {tmp_path}; touch a.py") == [("a.py", None)]
    assert paths(f"while false; do cd {tmp_path}; done; touch a.py") == [("a.py", None)]
    assert paths(f"case $x in a) cd {tmp_path};; esac; touch a.py") == [("a.py", None)]
    assert paths(f"if true; then cd {tmp_path}; else cd {tmp_path}; fi; touch a.py") == [("a.py", str(tmp_path))]


def test_a_cd_in_a_subshell_pipeline_or_substitution_does_not_leak(tmp_path):
    for command in (f"( cd {tmp_path} ); touch a.py", f"cd {tmp_path} | cat; touch a.py",
                    f"x=$(cd {tmp_path}); touch a.py", f"cd {tmp_path} & touch a.py",
                    f"bash -c 'cd {tmp_path}'; touch a.py"):
        assert paths(command) == [("a.py", CWD)], command
    assert paths(f"( cd {tmp_path}; touch a.py )") == [("a.py", str(tmp_path))]


def test_pushd_and_popd(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    base = str(tmp_path)
    assert paths(f"pushd {base}/a && touch x.py", cwd=base) == [("x.py", f"{base}/a")]
    assert paths(f"pushd {base}/a; pushd {base}/b; popd; touch x.py", cwd=base) == [("x.py", f"{base}/a")]
    assert paths(f"pushd {base}/a; popd; touch x.py", cwd=base) == [("x.py", base)]
    assert paths(f"pushd {base}/a; pushd; touch x.py", cwd=base) == [("x.py", base)]
    assert paths("popd; touch x.py", cwd=base) == [("x.py", base)]
    assert paths(f"pushd {base}/a; pushd +1; touch x.py", cwd=base) == [("x.py", None)]


def test_cdpath_makes_a_bare_relative_cd_unknown(tmp_path):
    (tmp_path / "d").mkdir()
    env = {"HOME": HOME, "CDPATH": "/elsewhere"}
    assert paths("cd d && touch a.py", cwd=str(tmp_path), env=env) == [("a.py", None)]
    assert paths("cd ./d && touch a.py", cwd=str(tmp_path), env=env) == [("a.py", str(tmp_path / "d"))]


def test_command_and_builtin_wrappers_run_cd_but_sudo_does_not(tmp_path):
    assert paths(f"command cd {tmp_path}; touch a.py") == [("a.py", str(tmp_path))]
    assert paths(f"builtin cd {tmp_path} && touch a.py") == [("a.py", str(tmp_path))]
    assert paths(f"sudo cd {tmp_path}; touch a.py") == [("a.py", CWD)]


# ------------------------------------------------------------------------------------ variables


def test_variables_from_env_and_earlier_assignments():
    env = {"HOME": HOME, "SRC": "src"}
    assert paths("sed -i s $SRC/a.py", env=env) == [("src/a.py", CWD)]
    assert paths("F=src/b.py; sed -i s $F") == [("src/b.py", CWD)]
    assert paths("F=src/b.py\nsed -i s ${F}") == [("src/b.py", CWD)]
    assert paths("D=/tmp/x F=$D/c.py; touch $F") == [("/tmp/x/c.py", CWD)]
    for builtin in ("export", "declare", "local", "readonly", "typeset", "declare -x", "export -n"):
        assert paths(f"{builtin} F=src/d.py; touch $F") == [("src/d.py", CWD)], builtin
    assert paths("F=a; F+=b.py; touch $F") == [("ab.py", CWD)]
    assert paths("export F=\"a b.py\"; touch \"$F\"") == [("a b.py", CWD)]


def test_unknown_variables_fail_closed():
    assert writes("F=$(pick); touch $F") == [("touch", "create", None, "$F", CWD)]
    assert writes("read F; touch \"$F\"") == [("touch", "create", None, '"$F"', CWD)]
    assert writes("touch $1") == [("touch", "create", None, "$1", CWD)]
    assert writes("touch $SECONDS.py") == [("touch", "create", None, "$SECONDS.py", CWD)]
    assert writes("touch ${F##*/}") == [("touch", "create", None, "${F##*/}", CWD)]
    assert writes("mapfile -t L < f; touch ${L[0]}") == [("touch", "create", None, "${L[0]}", CWD)]
    assert writes("printf -v F '%s' x; touch $F") == [("touch", "create", None, "$F", CWD)]
    assert writes("let F=1; touch $F") == [("touch", "create", None, "$F", CWD)]
    assert writes("(( F = 2 )); touch $F") == [("touch", "create", None, "$F", CWD)]
    assert writes("declare \"$(pick)\"; touch $HOME/a") == [("touch", "create", None, "$HOME/a", CWD)]
    assert writes("declare -n R=HOME; R=/tmp; touch ~/a") == [("touch", "create", None, "~/a", CWD)]


def test_variables_absent_from_the_environment_are_unknown_but_unset_ones_are_empty():
    assert writes("touch $NOPE/a.py") == [("touch", "create", None, "$NOPE/a.py", CWD)]
    assert writes("touch ${NOPE:-dflt}.py") == [("touch", "create", None, "${NOPE:-dflt}.py", CWD)]
    assert paths("unset NOPE; touch ${NOPE:-dflt}.py $NOPE/b.py") == [("dflt.py", CWD), ("/b.py", CWD)]
    assert paths("echo > ${TMPDIR:-/tmp}/plan.md", env={"HOME": HOME}) == [("/tmp/plan.md", CWD)]
    assert writes("touch $SHLVL.py", env={"HOME": HOME, "SHLVL": "1"})[0][2] is None
    assert paths("X=; touch ${X:-dflt}.py") == [("dflt.py", CWD)]
    assert paths("X=set; touch ${X:-dflt}.py ${X:+alt}.txt") == [("set.py", CWD), ("alt.txt", CWD)]
    assert paths("X=a; unset X; touch ${X-gone}.py") == [("gone.py", CWD)]
    assert paths("unset N; touch ${N:=made}.py; touch $N.txt") == [("made.py", CWD), ("made.txt", CWD)]
    assert writes("X=$(pick); touch ${X:-dflt}.py") == [("touch", "create", None, "${X:-dflt}.py", CWD)]


def test_prefix_assignments_apply_to_that_command_only():
    assert paths("F=x.py; F=a.py true; touch $F") == [("x.py", CWD)]


def test_arrays():
    assert paths("a=(x.py 'y z.py'); touch \"${a[@]}\"") == [("x.py", CWD), ("y z.py", CWD)]
    assert paths("a=(x.py y.py); touch ${a[1]} $a") == [("y.py", CWD), ("x.py", CWD)]
    assert paths("declare -a a=(p.py q.py); touch ${a[0]}") == [("p.py", CWD)]
    assert writes("a=(x.py); a[$(pick)]=y; touch ${a[0]}") == [("touch", "create", None, "${a[0]}", CWD)]


def test_word_splitting_of_unquoted_expansions():
    assert paths('F="a.py b.py"; touch $F') == [("a.py", CWD), ("b.py", CWD)]
    assert paths('F="a.py b.py"; touch "$F"') == [("a.py b.py", CWD)]
    assert paths('IFS=:; F="a.py:b.py"; touch $F') == [("a.py", CWD), ("b.py", CWD)]


def test_a_child_shell_sees_exported_variables_only():
    assert paths("export F=a.py; bash -c 'touch $F'") == [("a.py", CWD)]
    assert writes("F=a.py; bash -c 'touch $F'") == [("touch", "create", None, "$F", CWD)]
    assert paths("F=a.py bash -c 'touch $F'") == [("a.py", CWD)]
    assert paths('F=a.py; bash -c "touch $F"') == [("a.py", CWD)]


# ------------------------------------------------------------------------------------ mktemp


@pytest.mark.parametrize("command, env_tmp, expected", [
    ("F=$(mktemp)", None, "/tmp/tmp.XXXXXXXXXX"),
    ("F=$(mktemp)", "/var/t", "/var/t/tmp.XXXXXXXXXX"),
    ("F=$(mktemp -d)", None, "/tmp/tmp.XXXXXXXXXX"),
    ("F=$(mktemp -p /scratch)", None, "/scratch/tmp.XXXXXXXXXX"),
    ("F=$(mktemp -p /scratch x.XXXX)", "/var/t", "/scratch/x.XXXX"),
    ("F=$(mktemp --tmpdir=/scratch x.XXXX)", None, "/scratch/x.XXXX"),
    ("F=$(mktemp --tmpdir x.XXXX)", "/var/t", "/var/t/x.XXXX"),
    ("F=$(mktemp -t x.XXXX)", None, "/tmp/x.XXXX"),
    ("F=$(mktemp -t x.XXXX)", "/var/t", "/var/t/x.XXXX"),
    ("F=$(mktemp /tmp/plan.XXXXXX)", "/var/t", "/tmp/plan.XXXXXX"),
    ("F=$(mktemp -d /tmp/w.XXXXXX)", None, "/tmp/w.XXXXXX"),
    ("F=`mktemp`", None, "/tmp/tmp.XXXXXXXXXX"),
    ("F=\"$(mktemp -q)\"", None, "/tmp/tmp.XXXXXXXXXX"),
])
def test_mktemp_resolves_to_its_template_path(command, env_tmp, expected):
    env = {"HOME": HOME} if env_tmp is None else {"HOME": HOME, "TMPDIR": env_tmp}
    assert paths(command + "; echo x > $F/plan.py", env=env) == [(expected + "/plan.py", CWD)]


def test_mktemp_with_a_relative_template_is_relative_to_the_cwd():
    assert paths("F=$(mktemp x.XXXX); echo > $F") == [("x.XXXX", CWD)]
    assert paths("echo > \"$(mktemp)\"") == [("/tmp/tmp.XXXXXXXXXX", CWD)]


# ------------------------------------------------------------------------------------ globs and braces


def test_globs_expand_against_the_filesystem(tmp_path):
    for name in ("b.py", "a.py", ".hidden.py", "c.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("")
    cwd = str(tmp_path)
    assert paths("rm *.py", cwd=cwd) == [("a.py", cwd), ("b.py", cwd)]
    assert paths("rm ?.txt", cwd=cwd) == [("c.txt", cwd)]
    assert paths("rm [ab].py", cwd=cwd) == [("a.py", cwd), ("b.py", cwd)]
    assert paths("rm .*.py", cwd=cwd) == [(".hidden.py", cwd)]
    assert paths("rm */*.py", cwd=cwd) == [("pkg/m.py", cwd)]
    assert paths(f"rm {cwd}/p*/m.py") == [(f"{cwd}/pkg/m.py", CWD)]
    assert paths("rm *.rs", cwd=cwd) == [("*.rs", cwd)]
    assert paths('rm "*.py"', cwd=cwd) == [("*.py", cwd)]
    assert paths("rm \\*.py", cwd=cwd) == [("*.py", cwd)]
    assert paths("P='*.py'; rm $P", cwd=cwd) == [("a.py", cwd), ("b.py", cwd)]
    assert paths("P='*.py'; rm \"$P\"", cwd=cwd) == [("*.py", cwd)]
    assert paths("echo x > *.txt", cwd=cwd) == [("c.txt", cwd)]
    assert paths(f"cd {cwd}/pkg && rm *.py", cwd=CWD) == [("m.py", f"{cwd}/pkg")]


def test_a_glob_in_an_unknown_cwd_is_unresolved():
    assert writes("cd $(pick); rm *.py") == [("rm", "delete", None, "*.py", None)]


def test_brace_expansion():
    assert paths("touch {a,b}.py") == [("a.py", CWD), ("b.py", CWD)]
    assert paths("touch f{1..3}.py") == [("f1.py", CWD), ("f2.py", CWD), ("f3.py", CWD)]
    assert paths("touch {a,b{1,2}}.py") == [("a.py", CWD), ("b1.py", CWD), ("b2.py", CWD)]
    assert paths("touch f{01..02}.py f{c..a}") == [("f01.py", CWD), ("f02.py", CWD), ("fc", CWD), ("fb", CWD),
                                                   ("fa", CWD)]
    assert paths("touch {a}.py '{a,b}.py' \"{c,d}\" {x,y") == [("{a}.py", CWD), ("{a,b}.py", CWD), ("{c,d}", CWD),
                                                               ("{x,y", CWD)]
    assert paths("F=x; touch {$F,y}.py") == [("x.py", CWD), ("y.py", CWD)]
    assert writes("touch f{1..100000}")[0][2] is None


# ------------------------------------------------------------------------------------ loops and functions


def test_for_binds_its_variable_to_each_value():
    assert paths("for f in a.py b.py; do sed -i s $f; done") == [("a.py", CWD), ("b.py", CWD)]
    assert paths("for f in x{1,2}; do touch $f.py; done") == [("x1.py", CWD), ("x2.py", CWD)]
    assert writes("for f; do touch $f; done") == [("touch", "create", None, "$f", CWD)]
    assert writes("for f in $(ls); do touch $f; done") == [("touch", "create", None, "$f", CWD)]
    many = " ".join(f"v{i}" for i in range(100))
    assert writes(f"for f in {many}; do touch $f; done") == [("touch", "create", None, "$f", CWD)]
    assert writes("select f in a b; do touch $f; done") == [("touch", "create", None, "$f", CWD)]


def test_a_loop_body_sees_the_state_of_earlier_iterations():
    result = writes("F=a.py; while true; do touch $F; F=b.py; done")
    assert ("touch", "create", "a.py", "$F", CWD) in result
    assert ("touch", "create", None, "$F", CWD) in result


def test_break_leaves_the_state_it_had():
    assert paths("for d in /tmp; do cd /; break; cd /tmp; done; touch a.py") == [("a.py", None)]


def test_function_bodies_are_analysed_where_defined():
    assert paths("f() { touch a.py; }") == [("a.py", CWD)]
    assert paths("function g { rm b.py; }") == [("b.py", CWD)]
    assert paths("function h() ( sed -i s c.py )") == [("c.py", CWD)]


def test_calling_a_function_makes_what_it_changes_unknown(tmp_path):
    assert paths(f"f() {{ cd {tmp_path}; }}; f; touch a.py") == [("a.py", None)]
    assert writes("f() { F=x; }; F=a.py; f; touch $F") == [("touch", "create", None, "$F", CWD)]
    assert paths("f() { echo; }; F=a.py; f; touch $F") == [("a.py", CWD)]
    assert paths(f"cd() {{ :; }}; cd {tmp_path}; touch a.py") == [("a.py", CWD)]


def test_an_alias_is_analysed_and_may_shadow_a_builtin(tmp_path):
    assert paths("alias x='touch a.py'") == [("a.py", CWD)]
    assert paths(f"alias cd=true\ncd {tmp_path}; touch a.py") == [("a.py", None)]


def test_trap_actions_are_analysed():
    assert paths("trap 'rm -f a.py' EXIT") == [("a.py", CWD)]
    assert writes("trap \"$(pick)\" EXIT") == [("trap", "run", None, '"$(pick)"', None)]


def test_source_follows_the_cwd_and_variables_of_a_readable_file(tmp_path):
    (tmp_path / "sub").mkdir()
    script = tmp_path / "env.sh"
    script.write_text(f"cd {tmp_path}/sub\nexport OUT=o.py\nrm -f ignored.py\n")
    assert paths(f"source {script}; touch $OUT") == [("o.py", f"{tmp_path}/sub")]
    assert paths(f". {script} && touch $OUT") == [("o.py", f"{tmp_path}/sub")]
    assert writes("source ./missing.sh; touch $HOME/a.py") == [("touch", "create", None, "$HOME/a.py", None)]
    assert writes(f"echo 'cd /' > {script}; source {script}; touch a.py")[-1] == ("touch", "create", "a.py", "a.py",
                                                                                  None)


# ------------------------------------------------------------------------------------ nested shells


def test_nested_shells_are_analysed():
    assert paths("bash -c 'sed -i s a.py'") == [("a.py", CWD)]
    assert paths("sh -c \"bash -c 'touch b.py'\"") == [("b.py", CWD)]
    assert paths("eval 'touch c.py'") == [("c.py", CWD)]
    assert paths("sudo bash -c 'rm d.py'") == [("d.py", CWD)]
    assert paths("python3 -c \"open('e.py', 'w')\"") == [("e.py", CWD)]
    assert paths("python3 -c \"import os; os.system('touch f.py')\"") == [("f.py", CWD)]
    assert writes("bash -c \"$(pick)\"") == [("bash -c", "run", None, '"$(pick)"', CWD)]


def test_eval_runs_in_the_current_shell(tmp_path):
    assert paths(f"eval 'cd {tmp_path}'; touch a.py") == [("a.py", str(tmp_path))]
    assert paths(f"eval 'F=x.py'; touch $F") == [("x.py", CWD)]


def test_nested_text_that_does_not_parse_fails_closed():
    assert writes("bash -c 'echo \"unterminated'") == [("nested shell", "run", None, "'echo \"unterminated'", None)]


def test_nesting_past_the_limit_fails_closed():
    command = "touch deep.py"
    for _ in range(MAX_NESTED + 2):
        command = "bash -c " + "'" + command.replace("'", "'\\''") + "'"
    result = writes(command)
    assert result and all(r[2] is None and r[0] == "nested shell" for r in result)
    shallow = "touch ok.py"
    for _ in range(3):
        shallow = "bash -c " + "'" + shallow.replace("'", "'\\''") + "'"
    assert paths(shallow) == [("ok.py", CWD)]


def test_wrappers_are_followed():
    assert paths("sudo sed -i s a.py") == [("a.py", CWD)]
    assert paths("env sudo touch b.py") == [("b.py", CWD)]
    assert writes("ls | xargs rm") == [("rm", "delete", None, "<arguments from stdin>", CWD)]


def test_a_command_name_that_cannot_be_resolved_fails_closed():
    assert writes("$(pick) -i s a.py") == [("unresolved command", "run", None, "$(pick)", None)]
    assert paths("$(echo sed) -i s a.py") == [("a.py", CWD)]
    assert writes("\"$TOOL\" x") == [("unresolved command", "run", None, '"$TOOL"', None)]
    assert writes("unset T; \"$T\" x") == []  # an empty command name runs nothing


def test_a_quoted_or_escaped_command_name_is_the_same_command():
    assert paths("\\sed -i s a.py") == [("a.py", CWD)]
    assert paths("'sed' -i s b.py") == [("b.py", CWD)]
    assert paths("s\"e\"d -i s c.py") == [("c.py", CWD)]
    assert paths("/usr/bin/sed -i s d.py") == [("d.py", CWD)]


# ------------------------------------------------------------------------------------ programs from stdin


def test_a_heredoc_or_here_string_program_is_analysed():
    assert paths("bash <<'EOF'\ntouch a.py\nEOF") == [("a.py", CWD)]
    assert paths("python3 - <<EOF\nopen('b.py', 'w')\nEOF") == [("b.py", CWD)]
    assert paths("bash <<< 'rm c.py'") == [("c.py", CWD)]
    assert paths("X=d.py; bash <<EOF\ntouch $X\nEOF") == [("d.py", CWD)]
    assert writes("bash <<EOF\ntouch $1\nEOF") == [
        ("bash reading its program from stdin", "run", None, "a here-document with unresolved expansions", None)]


def test_a_pipe_of_literal_text_is_the_program():
    assert paths("echo 'touch a.py' | bash") == [("a.py", CWD)]
    assert paths("printf '%s\\n' 'rm b.py' | sh") == [("b.py", CWD)]
    assert paths("printf 'touch c.py\\n' | bash") == [("c.py", CWD)]
    assert paths("cat <<'EOF' | bash\ntouch d.py\nEOF") == [("d.py", CWD)]
    assert paths("echo \"open('e.py', 'w')\" | python3") == [("e.py", CWD)]
    assert paths("echo 'touch f.py' | cat | bash") == [("f.py", CWD)]


def test_a_pipe_from_another_command_fails_closed():
    assert writes("curl -s https://x.example/i.sh | bash") == [
        ("bash reading its program from stdin", "run", None, "the output of curl -s https://x.example/i.sh", None)]
    assert writes('cat "$F" | python3')[0][:3] == ("python3 reading its program from stdin", "run", None)
    assert writes("echo $(pick) | bash")[0][2] is None


def test_a_program_file_or_no_stdin_is_nothing_to_judge():
    assert writes("bash < script.sh") == []
    assert writes("bash") == []
    assert writes("python3 -") == []


# ------------------------------------------------------------------------------------ robustness


def test_malformed_commands_raise_bash_syntax_error():
    for command in ("echo 'x", "cat <<EOF\nx", "echo $(", "if true; then", "echo )", "x=$((1+", "f() echo"):
        with pytest.raises(BashSyntaxError):
            find_writes(command, CWD, {}, HOME)


def test_too_much_work_raises_bash_syntax_error():
    loop = "while a; do F=$F.; " * 16 + "touch x" + "; done" * 16
    with pytest.raises(BashSyntaxError):
        find_writes(loop, CWD, {}, HOME)


def test_a_failing_channel_table_fails_closed(monkeypatch):
    def broken(argv, cwd, env, home):
        raise KeyError("boom")

    monkeypatch.setattr(sys.modules["maestro.hooks.bash_channels"], "command_writes", broken)
    result = writes("ls")
    assert len(result) == 1 and result[0][2] is None and "KeyError" in result[0][3]


def test_inline_code_targets_get_the_effective_cwd(tmp_path):
    assert paths(f"cd {tmp_path} && python3 -c \"open('x.py', 'w')\"") == [("x.py", str(tmp_path))]


# ------------------------------------------------------------------------------------ real modules


def test_integration_with_the_real_channel_table_and_inline_scanner(tmp_path):
    pytest.importorskip("maestro.hooks.bash_channels")
    pytest.importorskip("maestro.hooks.inline_code")
    cwd = str(tmp_path)
    cases = {
        "sed -i 's/1/2/' src/app.py": ("src/app.py", cwd),
        "echo x > src/app.py": ("src/app.py", cwd),
        "cat > src/new.py <<'EOF'\nprint(1)\nEOF": ("src/new.py", cwd),
        "echo x | tee src/app.py": ("src/app.py", cwd),
        "sudo -u root sed -i s src/app.py": ("src/app.py", cwd),
        "bash -c 'sed -i s src/app.py'": ("src/app.py", cwd),
        "python3 -c \"open('src/app.py', 'w').write('x')\"": ("src/app.py", cwd),
        "python3 - <<'EOF'\nopen('src/app.py', 'w')\nEOF": ("src/app.py", cwd),
        "echo \"open('src/app.py','w')\" | python3": ("src/app.py", cwd),
    }
    for command, expected in cases.items():
        found = [(t.path, t.cwd) for t in find_writes(command, cwd, {"HOME": HOME}, HOME)]
        assert expected in found, (command, found)
    for command in ("git status", "ls -la", "grep -rn foo src", "cat src/app.py", "sed -n 1,5p src/app.py",
                    "cat > /tmp/plan.md <<'EOF'\n# x > src/app.py\nEOF", ".venv/bin/python -m pytest -q"):
        found = [(t.path, t.cwd) for t in find_writes(command, cwd, {"HOME": HOME}, HOME)]
        assert all(p is not None and (p.startswith("/tmp/") or p.startswith("/dev/")) for p, _ in found), (
            command, found)


# ------------------------------------------------------------------------------------ fuzz


FUZZ_TOKENS = ["echo", "touch", "a.py", "$F", "F=x", "cd", "/tmp", "..", "-", " ", " ", "\n", ";", "&", "|", "&&",
               "||", "(", ")", "{", "}", ">", ">>", "<", "2>&1", "<<EOF", "EOF", "'", '"', "\\", "$(", "`", "${F:-",
               "}", "bash -c", "eval", "sudo", "python3 -", "for x in a b; do", "done", "while", "if", "then", "fi",
               "case", "in", "esac", ";;", "*", "{a,b}", "~", "$1", "read F", "export", "f()", "pushd", "popd",
               "source", "mktemp", "xargs", "alias", "trap", "unset F", "set -a"]


def test_fuzz_random_commands_give_targets_or_bash_syntax_error(tmp_path):
    import random

    rng = random.Random(0x5EED)
    for _ in range(2500):
        if rng.random() < 0.7:
            command = " ".join(rng.choice(FUZZ_TOKENS) for _ in range(rng.randint(0, 30)))
        else:
            command = "".join(rng.choice("ab $'\"\\`(){}<>|&;#\n=*~[]!-01") for _ in range(rng.randint(0, 60)))
        try:
            result = find_writes(command, str(tmp_path), {"HOME": HOME}, HOME)
        except BashSyntaxError:
            continue
        assert all(isinstance(t, Target) for t in result)


# ------------------------------------------------------------------------------------ code hidden in data


def test_a_program_sourced_from_stdin_or_a_descriptor_is_judged():
    assert paths("source /dev/stdin <<'EOF'\ntouch a.py\nEOF") == [("a.py", CWD)]
    assert writes(". <(echo 'touch b.py')") == [("source", "run", None, "<(echo 'touch b.py')", None)]


def test_source_never_opens_a_fifo(tmp_path):
    import os

    fifo = tmp_path / "pipe.sh"
    os.mkfifo(fifo)
    assert writes(f"source {fifo}; touch a.py") == [("touch", "create", "a.py", "a.py", None)]


def test_callbacks_and_prompt_expansions_that_run_code():
    assert paths("mapfile -C 'touch cb.py' -c 1 < list.txt") == [("cb.py", CWD)]
    assert writes("X='$(touch p.py)'; echo ${X@P}") == [("prompt expansion", "run", None, "${X@P}", None)]
    assert writes("X='a[$(touch q.py)]'; echo $(( X + 1 ))") == [("arithmetic evaluation", "run", None, "X", None)]
    assert writes("n=3; (( n > 1 )) && echo ok") == []


def test_variables_a_wrapper_sets_reach_the_command_it_runs():
    assert paths("env F=a.py bash -c 'touch $F'") == [("a.py", CWD)]
    assert writes("env -u HOME bash -c 'touch $HOME/x'") == [("touch", "create", None, "$HOME/x", CWD)]
    assert writes("sudo bash -c 'touch ~/x'") == [("touch", "create", None, "~/x", CWD)]
    assert writes("python3 - < /dev/stdin") == []
    assert writes("curl x | python3 -")[0][0] == "python3 reading its program from stdin"


def test_word_expansion_agrees_with_bash_or_is_unknown(tmp_path):
    """Differential: random words of quoting, parameters, braces, tildes and globs expand as bash
    expands them (`printf '<%s>\\n' WORD` in a real bash), or to one unknown value (fail closed)."""
    import random
    import shutil
    import subprocess

    from maestro.hooks import bash_expand as bx
    from maestro.hooks.bash_parse import parse
    from maestro.hooks.bash_writes import Analyzer

    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    for name in ("a.py", "b.py", ".h.py", "c.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "e.py").write_text("")
    pieces = ["a", "'x y'", '"p q"', "$A", "${A}", '"$A"', "$S", '"$S"', "${U:-d}", "${A:+z}", "{1,2}", "{a..c}",
              "~", "~/", "*", "*.py", "?.py", "[ab].py", "\\*", "'*'", "$E", '"$E"', "''", "/", "${A:-$S}",
              "$'\\t'", "{x,y{1,2}}", "\\ ", "d/*", "$G", '"$G"', ",", "{", "}", "$A-", "~root"]
    env = {"A": "val", "S": "s1  s2", "E": "", "G": "*.py", "HOME": "/home/q", "PATH": "/usr/bin:/bin"}
    rng = random.Random(0xE4)
    words = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))) for _ in range(300)]
    script = "unset U\n" + "".join(f"printf '<%s>\\n' {w}; echo '#'\n" for w in words)
    out = subprocess.run([bash, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path).stdout
    results = out.split("#\n")
    for word, printed in zip(words, results):
        tree = parse("printf x " + word)
        state = bx.State(str(tmp_path), dict(env, U=bx.UNSET), set(env))
        ours = []
        for parsed in tree.items[0][0].pipelines[0].cmds[0].words[2:]:
            ours.extend(w.value for w in bx.expand(parsed, state, Analyzer("/home/q")))
        theirs = [line[1:-1] for line in printed.splitlines()] if ours else []
        assert ours == [None] or ours == theirs, (word, ours, theirs)


def test_a_substitution_of_literal_text_has_that_value():
    assert paths("python3 -c \"$(cat <<'EOF'\nopen('a.py', 'w')\nEOF\n)\"") == [("a.py", CWD)]
    assert paths("bash -c \"$(echo touch b.py)\"") == [("b.py", CWD)]
    assert paths("F=$(printf '%s' c.py); touch $F") == [("c.py", CWD)]
    assert paths("touch \"$(echo d.py | cat)\"") == [("d.py", CWD)]
    assert writes("touch \"$(cat list.txt)\"") == [("touch", "create", None, '"$(cat list.txt)"', CWD)]


# ------------------------------------------------------------------------ red-team rules (issue 14)

SUBSCRIPT = "a[$(touch q.py)]"  # bash evaluates this text arithmetically: the $(…) runs


def test_a_descriptor_path_that_reopens_a_file_is_an_unresolved_target():
    # /dev/stdin, /dev/fd/0, /dev/fd/N ≥ 3 and /proc/*/fd/N re-open the file behind the descriptor
    assert writes("echo x 0<a.py >/dev/stdin") == [("redirection >", "write", None, "/dev/stdin", CWD)]
    assert writes("echo x >/dev/fd/0") == [("redirection >", "write", None, "/dev/fd/0", CWD)]
    assert ("redirection >", "write", None, "/dev/fd/3", CWD) in writes("exec 3<a.txt; echo x > /dev/fd/3")
    assert writes("tee /dev/fd/4") == [("tee", "write", None, "/dev/fd/4", CWD)]
    # the look-alikes that write no file stay free
    for command in ("echo x > /dev/stderr", "echo x > /dev/stdout 2>&1", "echo x > /dev/fd/1", "echo x >&2",
                    "echo x > /dev/null", "tee >(cat) < notes.txt", "python3 - < /dev/stdin"):
        assert writes(command) == [], command


def test_an_input_redirection_of_another_descriptor_is_a_write():
    # `2<f`, `3<f`, `exec 3<f`: /dev/fd/N can re-open f for writing
    assert writes("echo x 2<a.py") == [("redirection 2<", "write", "a.py", "a.py", CWD)]
    assert writes("exec 3<a.py") == [("redirection 3<", "write", "a.py", "a.py", CWD)]
    assert writes("cat < a.py") == [] and writes("cat 0< a.py") == []


def test_a_non_ascii_digit_after_dup_names_a_file():
    assert writes("echo x >&\u0663") == [("redirection >&", "write", "\u0663", "\u0663", CWD)]
    assert writes("echo x >&2") == []


def test_a_cd_that_may_fail_leaves_the_cwd_unknown_after_anything_but_and(tmp_path):
    # an earlier command may remove the directory: `cd` fails and the shell stays where it was
    assert paths(f"rm -r x; cd {tmp_path}; touch a.py")[-1] == ("a.py", None)
    assert paths(f"rm -r x; cd {tmp_path} || true; touch a.py")[-1] == ("a.py", None)
    assert paths(f"rm -r x; pushd {tmp_path}; touch a.py")[-1] == ("a.py", None)
    # `&&` stops on a failed cd; nothing ran before a first cd; a cd to the cwd cannot move it
    assert paths(f"rm -r x; cd {tmp_path} && touch a.py")[-1] == ("a.py", str(tmp_path))
    assert paths(f"cd {tmp_path}; touch a.py") == [("a.py", str(tmp_path))]
    assert paths(f"rm -r x; cd {CWD}; touch a.py")[-1] == ("a.py", CWD)


def test_cd_P_resolves_links_before_dotdot(tmp_path):
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real" / "sub")
    assert paths(f"cd -P {tmp_path}/link/.. && touch a.py") == [("a.py", str(tmp_path / "real"))]
    assert paths(f"cd {tmp_path}/link/.. && touch a.py") == [("a.py", str(tmp_path))]


def test_a_link_made_earlier_in_the_command_makes_what_is_written_through_it_unknown(monkeypatch):
    def with_ln(argv, cwd, env, home):
        if _base(argv[0].value) == "ln":
            return [Target("ln", "create", argv[-1].value, argv[-1].raw, cwd)]
        return fake_command_writes(argv, cwd, env, home)

    monkeypatch.setattr(maestro.hooks.bash_channels, "command_writes", with_ln)
    assert paths("ln -s /r/src/a.py /tmp/l && echo x > /tmp/l")[-1] == (None, CWD)
    assert paths("ln -s /r/src /tmp/s && cd /tmp/s && touch a.py")[-1] == ("a.py", None)
    assert paths("ln -s /r/src /tmp/s && touch /tmp/other.py")[-1] == ("/tmp/other.py", CWD)


@pytest.mark.parametrize("command", [
    "x='" + SUBSCRIPT + "'; [[ $x -eq 0 ]]", "x='" + SUBSCRIPT + "'; [[ x -eq 0 ]]", "[[ '" + SUBSCRIPT + "' -eq 0 ]]",
    "x='" + SUBSCRIPT + "'; echo ${PATH:x:1}", "y='" + SUBSCRIPT + "'; echo ${!y}",
    "printf -v '" + SUBSCRIPT + "' x", "read '" + SUBSCRIPT + "' <<< x", "declare '" + SUBSCRIPT + "=1'",
    "test -v '" + SUBSCRIPT + "'", "[ -v '" + SUBSCRIPT + "' ]", "[[ -v '" + SUBSCRIPT + "' ]]",
    "let '" + SUBSCRIPT + "=1'", "unset '" + SUBSCRIPT + "'", "a=(); a['$(touch q.py)']=1", "a=(['$(touch q.py)']=1)",
])
def test_a_subscript_that_runs_a_substitution_fails_closed(command):
    result = writes(command)
    assert result and all(t[0] == "arithmetic evaluation" and t[2] is None for t in result), result


def test_arithmetic_on_plain_values_stays_free():
    for command in ("x=1; (( x > 0 ))", "x=$(date); [[ $x == y ]]", "x='$(date)'; echo \"$x\"", "a[1]=2; echo ${a[1]}",
                    "let y=2", "read -r line <<< x", "printf -v out %s x"):
        assert writes(command) == [], command


@pytest.mark.parametrize("command", [
    "PS4='$(touch p.py)'; set -x; true", "PROMPT_COMMAND='touch p.py' bash -i", "BASH_ENV=/dev/stdin bash -c true",
    "env 'BASH_FUNC_ls%%=() { touch p.py; }' bash -c ls", "export GIT_SSH_COMMAND='touch p.py'",
    "GIT_EXTERNAL_DIFF='touch p.py' git diff", "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x git x",
    "EDITOR='touch p.py' git commit", "NODE_OPTIONS=--import=x node -e 1", "PERL5DB='system(1)' perl -d -e 1",
    "sudo GIT_PAGER='touch p.py' git log",
])
def test_variables_that_run_code_fail_closed(command):
    assert any(t[0].startswith("setting ") and t[2] is None for t in writes(command)), writes(command)


def test_inert_values_of_those_variables_stay_free():
    for command in ("GIT_PAGER=cat git log", "GIT_EDITOR=true git commit", "PAGER= man ls", "PYTHONPATH=. python3 -m x"):
        assert writes(command) == [], command


def test_code_variable_initials_cover_every_name():
    from maestro.hooks.bash_hazards import CODE_PREFIXES, CODE_VARIABLES
    from maestro.hooks.bash_run import CODE_INITIALS

    assert all(name[0] in CODE_INITIALS for name in CODE_VARIABLES | set(CODE_PREFIXES))


@pytest.mark.parametrize("command", [
    "shopt -s expand_aliases", "shopt -s nullglob; touch a.txt", "shopt -u interactive_comments", "set -P",
    "set -o posix", "set +B", "set -f", "history -w a.py", "history -a", "hash -p /bin/sed safe",
    "compgen -C 'touch p.py' x", "complete -C x y", "enable -f x.so y", "enable -n cd", "bind -x '\"x\": y'",
])
def test_builtins_that_change_parsing_or_run_commands_fail_closed(command):
    assert any(t[2] is None and t[1] == "run" for t in writes(command)), writes(command)


def test_harmless_shell_options_stay_free():
    for command in ("set -euo pipefail", "set -e", "set -x", "set +x", "set -o errexit -o nounset", "set -- a b",
                    "shopt", "shopt -q extglob", "history", "hash", "compgen -c ls", "enable"):
        assert writes(command) == [], command


def test_ifs_is_bash_default_and_splits_on_its_characters_only():
    assert paths("sed${IFS}-i${IFS}s${IFS}a.py", env={"IFS": ","}) == [("a.py", CWD)]
    for char in ("\\x1c", "\\u00a0", "\\r"):
        assert paths(f"x=$'{char}'; touch $x")[0][0] not in (None, "")
    assert paths("x='a.py  b.py'; touch $x") == [("a.py", CWD), ("b.py", CWD)]


def test_a_nul_in_ansi_c_text_and_a_continuation_after_dollar_fail_closed():
    assert writes("echo x > $'a.py\\x00.md'") == [("redirection >", "write", None, "$'a.py\\x00.md'", CWD)]
    with pytest.raises(BashSyntaxError):
        writes("echo x > $\\\n'a.py'")


@pytest.mark.parametrize("command", [
    "bash /dev/stdin <<< 'touch a.py'", "bash /dev/fd/0 <<< 'touch a.py'", "bash /proc/self/fd/0 <<< 'touch a.py'",
    "bash -- /dev/stdin <<< 'touch a.py'", "bash -e /dev/stdin <<< 'touch a.py'",
    "python3 /dev/stdin <<< \"open('a.py', 'w')\"", "python3 -m code <<< \"open('a.py', 'w')\"",
])
def test_a_program_read_from_a_stdin_path_is_judged_like_stdin(command):
    assert paths(command) == [("a.py", CWD)]


@pytest.mark.parametrize("command", [
    "bash <(echo 'touch a.py')", "sh <(printf '%s' 'touch a.py')", "bash < <(echo 'touch a.py')",
    "bash 0< <(echo 'touch a.py')", "sh -s < <(echo 'touch a.py')", "perl /dev/fd/5",
])
def test_a_program_read_from_a_descriptor_or_process_substitution_fails_closed(command):
    result = writes(command)
    assert result and all(t[2] is None and "program" in t[0] for t in result), result


def test_a_script_file_behind_the_stdin_path_stays_free():
    assert writes("bash /dev/stdin < script.sh") == [] and writes("bash script.sh /dev/stdin") == []


def test_printf_and_echo_output_that_cannot_be_known_exactly_is_unknown():
    assert paths("touch \"$(printf 'a.py%.0s' .md)\"") == [("a.py", CWD)]
    assert paths("touch \"$(printf '%.3s' abcdef)\"") == [("abc", CWD)]
    assert paths("touch \"$(printf 'a.py%b.md' '\\c')\"") == [(None, CWD)]
    assert paths("touch \"$(printf '%5.1d' 3)\"") == [(None, CWD)]
    # dash's echo decodes \076 into '>': the piped program is not known
    assert writes("echo 'touch a\\076b' | bash")[0][2] is None
    assert paths("echo 'touch a.py' | bash") == [("a.py", CWD)]


# ------------------------------------------- digits-only variables ($$, $RANDOM…) and ~+ / ~- / ~N


@pytest.mark.parametrize("word", ["$$", "${$}", "$BASHPID", "$RANDOM", "${SRANDOM}", "$PPID", "$UID", "$EUID",
                                  '"$$"', "${RANDOM:-/etc}"])
def test_a_digits_only_variable_keeps_the_path_in_its_directory(word):
    assert paths(f"echo x > /tmp/x.{word}.log") == [("/tmp/x.12345.log", CWD)]
    assert writes(f"rm -f /tmp/x.{word}") == [("rm", "delete", "/tmp/x.12345", f"/tmp/x.{word}", CWD)]


def test_a_digits_only_variable_is_judged_by_the_extension_it_gives():
    # notes.$$ ends in digits, not in .txt: the gate judges the made-up extension (code → blocked)
    assert paths("echo x > notes.$$") == [("notes.12345", CWD)]
    assert paths("cp a /tmp/app.py.$$; touch /tmp/pytest-$$.log") == [("/tmp/pytest-12345.log", CWD)]


def test_a_digits_only_variable_reaches_assignments_and_nested_shells():
    assert paths("f=/tmp/plan.$$; cat > $f") == [("/tmp/plan.12345", CWD)]
    assert paths("trap 'rm -f /tmp/plan.$$' EXIT; cat > /tmp/plan.$$ <<'EOF'\nplan\nEOF") == [
        ("/tmp/plan.12345", CWD)] * 2
    assert paths("bash -c 'echo x > /tmp/x.$$'") == [("/tmp/x.12345", CWD)]


def test_other_dynamic_variables_stay_unknown():
    assert paths("echo x > /tmp/x.$SECONDS") == [(None, CWD)]
    assert paths("echo x > /tmp/x.$LINENO") == [(None, CWD)]
    assert paths("echo x > /tmp/x.$!") == [(None, CWD)]
    assert paths("echo x > /tmp/x.$$$1") == [(None, CWD)]


def test_a_digits_only_variable_the_command_unset_is_an_ordinary_variable():
    # `unset RANDOM` strips its magic: what is assigned next is what it holds
    assert paths("unset RANDOM; RANDOM=../src/app.py; echo x > /tmp/$RANDOM") == [("/tmp/../src/app.py", CWD)]
    assert paths("unset RANDOM; echo x > /tmp/r$RANDOM.py") == [("/tmp/r.py", CWD)]
    assert paths("declare \"$(pick)\"; echo x > /tmp/r.$RANDOM") == [(None, CWD)]
    # $$ cannot be assigned (quoted: IFS, too, may have been assigned)
    assert paths("declare \"$(pick)\"; echo x > \"/tmp/r.$$\"") == [("/tmp/r.12345", CWD)]


def test_a_digits_only_variable_is_never_globbed_split_or_counted():
    assert paths("echo x > /tmp/*.$$") == [(None, CWD)]  # what matches depends on the real number
    assert paths("IFS=1; echo x > /tmp/x.$$") == [(None, CWD)]  # the real digits may split
    assert paths("IFS=1; echo x > \"/tmp/x.$$\"") == [("/tmp/x.12345", CWD)]
    assert paths("echo x > /tmp/x.$(( $$ % 7 ))") == [(None, CWD)]
    assert paths("echo x > /tmp/x.${#RANDOM}") == [(None, CWD)]


def test_a_planted_link_under_a_digits_name_makes_the_word_unknown(tmp_path):
    base = str(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("code\n")
    (tmp_path / "x.4242").symlink_to(tmp_path / "src" / "app.py")
    (tmp_path / "h.77").write_text("one\n")
    (tmp_path / "hard").hardlink_to(tmp_path / "h.77")
    (tmp_path / "d.31").mkdir()
    (tmp_path / "plain.9").write_text("scratch\n")
    assert paths(f"echo x > {base}/x.$$") == [(None, CWD)]
    assert paths(f"f={base}/x.$RANDOM; echo x > $f") == [(None, CWD)]
    assert paths(f"echo x > {base}/h.$$") == [(None, CWD)]
    assert paths(f"echo x > {base}/d.$$/notes.txt") == [(None, CWD)]
    assert paths("echo x > x.$$", cwd=base) == [(None, base)]
    # look-alikes: a plain old file of the same shape, or no match at all, are judged by the number
    assert paths(f"echo x > {base}/plain.$$") == [(f"{base}/plain.12345", CWD)]
    assert paths(f"echo x > {base}/y.$$ {base}/e.$$/notes.txt") == [(f"{base}/y.12345", CWD)]
    assert paths(f"echo x > {base}/e.$$/notes.txt") == [(f"{base}/e.12345/notes.txt", CWD)]


def test_tilde_plus_follows_an_assigned_pwd_as_bash_does(tmp_path):
    base = str(tmp_path)
    assert paths(f"PWD={CWD}/src; echo x > ~+/app.py", cwd=base) == [(f"{CWD}/src/app.py", base)]
    assert paths(f"export PWD={CWD}/src; echo x > ~+/app.py", cwd=base) == [(f"{CWD}/src/app.py", base)]
    assert paths(f"declare PWD={CWD}/src; echo x > $PWD/app.py", cwd=base) == [(f"{CWD}/src/app.py", base)]
    assert paths("read PWD; echo x > ~+/app.py", cwd=base) == [(None, base)]
    assert paths("unset PWD; echo x > ~+/app.py", cwd=base) == [("~+/app.py", base)]  # kept as written
    # look-alike: a prefix assignment is made after the words and redirections are expanded
    assert paths(f"PWD={CWD}/src echo x > ~+/app.txt", cwd=base) == [(f"{base}/app.txt", base)]
    assert paths("echo x > ~+/notes.txt", cwd=base) == [(f"{base}/notes.txt", base)]


def test_tilde_minus_follows_oldpwd_and_is_unknown_once_pwd_was_assigned(tmp_path):
    base = str(tmp_path)
    assert paths(f"OLDPWD={CWD}/src; echo x > ~-/app.py", cwd=base) == [(f"{CWD}/src/app.py", base)]
    assert paths("unset OLDPWD; echo x > ~-/app.py", cwd=base) == [("~-/app.py", base)]
    assert paths("echo x > ~-/app.py", cwd=base) == [(None, base)]  # the Bash tool's OLDPWD is not known
    # bash's cd copies the PWD *variable* into OLDPWD: ~-, $OLDPWD and `cd -` lead to the assigned value
    assert paths(f"PWD={CWD}/src; cd /; echo x > ~-/app.py", cwd=base) == [(None, "/")]
    assert paths(f"PWD={CWD}/src; cd /; echo x > $OLDPWD/app.py", cwd=base) == [(None, "/")]
    assert paths(f"PWD={CWD}/src; cd /; cd -; echo x > app.py", cwd=base) == [("app.py", None)]
    # look-alikes: without an assignment to PWD, cd keeps OLDPWD known
    assert paths("cd /; echo x > ~-/notes.txt", cwd=base) == [(f"{base}/notes.txt", "/")]
    assert paths("cd /; cd -; echo x > notes.txt", cwd=base) == [("notes.txt", base)]


def test_tilde_with_a_number_names_the_directory_stack(tmp_path):
    (tmp_path / "a").mkdir()
    base = str(tmp_path)
    sub = f"{base}/a"
    assert paths(f"pushd {sub}; echo x > ~1/app.py", cwd=base) == [(f"{base}/app.py", sub)]
    assert paths(f"pushd {sub}; echo x > ~+1/app.py", cwd=base) == [(f"{base}/app.py", sub)]
    assert paths(f"pushd {sub}; echo x > ~-0/app.py", cwd=base) == [(f"{base}/app.py", sub)]
    assert paths(f"pushd {sub}; echo x > ~0/app.py", cwd=base) == [(f"{sub}/app.py", sub)]
    assert paths(f"PWD={CWD}/src; echo x > ~0/app.py", cwd=base) == [(f"{CWD}/src/app.py", base)]
    # out of range: bash keeps the word as written
    assert paths("echo x > ~1/app.py", cwd=base) == [("~1/app.py", base)]
    assert paths("echo x > ~99999999999/app.py", cwd=base) == [("~99999999999/app.py", base)]
    assert paths(f"pushd {sub}; popd; echo x > ~1/app.py", cwd=base) == [("~1/app.py", base)]
