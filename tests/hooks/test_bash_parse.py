"""The bash tokenizer/parser (hooks/bash_parse.py): every construct the gate needs to see, and
malformed input that must raise BashSyntaxError (never another exception, never unbounded work)."""

import random
import sys

import pytest

from maestro.hooks import bash_parse as bp
from maestro.hooks.bash_parse import (ARITH, ARRAY, CMDSUB, LIT, PARAM, PROCSUB, QLIT, AndOr, CommandList, Compound,
                                      Pipeline, Simple, parse)
from maestro.hooks.targets import BashSyntaxError

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)


def only(command):
    """The single command of a one-command line."""
    tree = parse(command)
    assert len(tree.items) == 1 and len(tree.items[0][0].pipelines) == 1
    cmds = tree.items[0][0].pipelines[0].cmds
    assert len(cmds) == 1
    return cmds[0]


def argv(command):
    """The literal text of each word of a one-command line (None for a word with expansions)."""
    return [w.literal_text() for w in only(command).words]


def commands(node):
    """Every simple command in document order (including those inside substitutions), as the
    raw text of its words, joined by spaces."""
    out, stack = [], [node]
    while stack:
        item = stack.pop()
        if isinstance(item, CommandList):
            stack.extend(reversed([andor for andor, _ in item.items]))
        elif isinstance(item, AndOr):
            stack.extend(reversed(item.pipelines))
        elif isinstance(item, Pipeline):
            stack.extend(reversed(item.cmds))
        elif isinstance(item, Simple):
            out.append(" ".join(w.raw for w in item.words))
            nested = []
            for word in [a.value for a in item.assigns if a.value] + item.words + [r.target for r in item.redirs]:
                nested.extend(_substitutions(word.parts))
            for r in item.redirs:
                if r.body is not None and not isinstance(r.body, str):
                    nested.extend(_substitutions(r.body.parts))
            stack.extend(reversed(nested))
        elif isinstance(item, Compound):
            kids = []
            for arm in item.arms or ():
                kids.extend(x for x in arm if isinstance(x, (CommandList, Compound, Simple)))
            if item.body is not None:
                kids.append(item.body)
            for word in item.words or ():
                kids.extend(_substitutions(word.parts))
            stack.extend(reversed(kids))
    return out


def _substitutions(parts):
    found = []
    for part in parts:
        if part[0] == CMDSUB and part[1] is not None:
            found.append(part[1])
        elif part[0] == PROCSUB:
            found.append(part[2])
        elif part[0] == PARAM:
            for word in (part[2], part[4]):
                if word is not None:
                    found.extend(_substitutions(word.parts))
        elif part[0] == ARITH:
            found.extend(_substitutions(part[1].parts))
    return found


# ------------------------------------------------------------------------------------ words and quoting


def test_quotes_backslashes_and_ansi_c_quoting_give_literal_text():
    assert argv("echo 'a b' \"c d\" e\\ f $'g\\th' $\"i\" j'k'\"l\"") == ["echo", "a b", "c d", "e f", "g\th", "i",
                                                                         "jkl"]
    assert argv("echo \"a\\\"b\\$c\\\\d\\e\"") == ["echo", 'a"b$c\\d\\e']
    assert argv("echo $'\\x41\\101\\u00e9\\n\\'\\c@'") == ["echo", "AA\u00e9\n'\x00"]
    assert argv("echo a\\\nb") == ["echo", "ab"]
    assert argv("echo ''") == ["echo", ""]


def test_quoted_and_unquoted_text_are_told_apart():
    word = only("echo a'*'\"$X\"").words[1]
    assert word.parts[0] == (LIT, "a")
    assert word.parts[1] == (QLIT, "*")
    assert word.parts[2][0] == PARAM and word.parts[2][1] == "X" and word.parts[2][5] is True


def test_comments_start_only_at_a_word_start():
    assert argv("echo a#b # comment > x") == ["echo", "a#b"]
    assert commands(parse("echo a;# c\n# only a comment\necho b")) == ["echo a", "echo b"]
    assert argv("echo ${#x} $#")[0] == "echo"


def test_parameter_expansions():
    parts = only("echo $X ${Y} ${Z:-d e} ${W#p} ${#V} ${!U} ${a[@]} $1 $@ ${10}").words
    params = [w.parts[0] for w in parts[1:]]
    assert [(p[1], p[3]) for p in params] == [("X", None), ("Y", None), ("Z", ":-"), ("W", "other"), ("V", "other"),
                                              ("U", "other"), ("a", None), ("1", None), ("@", None), ("10", None)]
    assert params[2][4].raw == "d e"
    assert params[6][2].raw == "@"
    for op in (":-", "-", ":=", "=", ":+", "+", ":?", "?"):
        assert only(f"echo ${{X{op}v}}").words[1].parts[0][3] == op


def test_command_substitutions_run_also_inside_double_quotes_and_backquotes():
    assert commands(parse('echo "$(touch a)" `touch b` "`touch c`" $(x $(touch d))')) == [
        'echo "$(touch a)" `touch b` "`touch c`" $(x $(touch d))', "touch a", "touch b", "touch c",
        "x $(touch d)", "touch d"]
    assert commands(parse("echo $(case x in a) touch e;; esac)")) == ["echo $(case x in a) touch e;; esac)",
                                                                      "touch e"]


def test_process_substitution():
    words = only("diff <(sort a) >(tee b) x<(touch c)").words
    assert [p[0] for p in words[1].parts] == [PROCSUB]
    assert words[2].parts[0][1] == ">"
    assert commands(parse("diff <(sort a) >(tee b) x<(touch c)"))[1:] == ["sort a", "tee b", "touch c"]


def test_arithmetic_has_no_redirections_but_its_substitutions_run():
    node = only("(( a > b ))")
    assert node.kind == "arith" and node.redirs == []
    assert only("echo $(( 1 > 2 ))").redirs == []
    assert only("echo $[1<2]").redirs == []
    assert commands(parse("(( $(touch x) ))")) == ["touch x"]
    assert only("((echo hi) )").kind == "subshell"


def test_conditional_expressions_have_no_redirections():
    node = only("[[ a > b && c < d || ( -f x ) ]]")
    assert node.kind == "cond" and node.redirs == []
    node = only("[[ $x =~ ^(a|b)+[[:space:]]$ ]]")
    assert node.words[-1].raw == "^(a|b)+[[:space:]]$"
    assert commands(parse("[[ -n $(touch y) ]]")) == ["touch y"]


def test_assignments_and_arrays():
    node = only("A=1 B+=x C[2]=y D=(p 'q r') E= cmd arg=1")
    assert [(a.name, a.append, a.index and a.index.raw) for a in node.assigns] == [
        ("A", False, None), ("B", True, None), ("C", False, "2"), ("D", False, None), ("E", False, None)]
    assert [w.raw for w in node.assigns[3].array] == ["p", "'q r'"]
    assert [w.raw for w in node.words] == ["cmd", "arg=1"]
    declared = only("declare -a x=(1 2) y=3").words
    assert declared[2].parts[1][0] == ARRAY and [w.raw for w in declared[2].parts[1][1]] == ["1", "2"]
    assert only("a[$(touch z)]=1").assigns[0].index.raw == "$(touch z)"


# ------------------------------------------------------------------------------------ redirections


@pytest.mark.parametrize("text, fd, op, target", [
    (">f", "", ">", "f"), (">>f", "", ">>", "f"), (">|f", "", ">|", "f"), ("&>f", "", "&>", "f"),
    ("&>>f", "", "&>>", "f"), ("2>f", "2", ">", "f"), ("2>>f", "2", ">>", "f"), ("2>&1", "2", ">&", "1"),
    (">&2", "", ">&", "2"), (">&f", "", ">&", "f"), ("3<>f", "3", "<>", "f"), ("<>f", "", "<>", "f"),
    ("<f", "", "<", "f"), ("<&3", "", "<&", "3"), ("{fd}>f", "{fd}", ">", "f"), ("10> f", "10", ">", "f"),
    ("<<<'s'", "", "<<<", "'s'"), ("> 'a b'", "", ">", "'a b'"),
])
def test_every_redirection_form(text, fd, op, target):
    node = only("cmd " + text)
    assert [(r.fd, r.op, r.target.raw) for r in node.redirs] == [(fd, op, target)]
    assert [w.raw for w in node.words] == ["cmd"]


def test_redirections_anywhere_in_a_command_and_on_compound_commands():
    node = only(">a cmd 2>b arg <c")
    assert [w.raw for w in node.words] == ["cmd", "arg"] and len(node.redirs) == 3
    for command in ("{ a; } > f", "( a ) > f", "while a; do b; done > f", "if a; then b; fi > f",
                    "for x in y; do b; done > f", "case x in y) ;; esac > f", "[[ a ]] > f", "(( 1 )) > f"):
        assert [r.target.raw for r in only(command).redirs] == ["f"], command
    assert only("f() { a; } > out").body.redirs[0].target.raw == "out"


def test_a_digit_word_before_a_process_substitution_is_not_a_descriptor():
    node = only("echo 2>(cat)")
    assert node.redirs == [] and node.words[1].parts[1][0] == PROCSUB


# ------------------------------------------------------------------------------------ heredocs


def test_heredoc_bodies_are_read_after_the_line():
    node = only("cat <<EOF > out\nline $X\nEOF")
    heredoc = node.redirs[0]
    assert heredoc.op == "<<" and node.redirs[1].target.raw == "out"
    assert heredoc.body.raw == "line $X\n" and heredoc.body.parts[1][0] == PARAM


def test_quoted_heredoc_delimiters_make_the_body_plain_text():
    for delimiter in ("'EOF'", '"EOF"', "\\EOF", "E'O'F"):
        node = only(f"cat <<{delimiter}\n$(touch x) `y`\nEOF")
        assert node.redirs[0].body == "$(touch x) `y`\n", delimiter


def test_dash_heredocs_strip_leading_tabs():
    assert only("cat <<-EOF\n\t\tindented\n\tEOF").redirs[0].body.raw == "indented\n"


def test_several_heredocs_on_one_line_and_commands_after_them():
    tree = parse("cat <<A; cat <<'B' | sh\na body\nA\nb body\nB\necho after")
    first = tree.items[0][0].pipelines[0].cmds[0]
    second = tree.items[1][0].pipelines[0].cmds[0]
    assert first.redirs[0].body.raw == "a body\n" and second.redirs[0].body == "b body\n"
    assert commands(tree)[-1] == "echo after"


def test_heredocs_inside_substitutions_and_their_substitutions():
    assert commands(parse("x=$(cat <<EOF\n$(touch in)\nEOF\n)")) == ["", "cat", "touch in"]
    assert only("cat <<EOF\nEOF").redirs[0].body.raw == ""


def test_a_heredoc_delimiter_with_a_dollar_is_literal():
    assert only("cat <<$X\nbody\n$X").redirs[0].body.raw == "body\n"


# ------------------------------------------------------------------------------------ lists and compounds


def test_lists_pipelines_and_operators():
    tree = parse("a | b |& c && d || e & f; g\nh")
    assert [len(andor.pipelines) for andor, _ in tree.items] == [3, 1, 1, 1]
    assert [bg for _, bg in tree.items] == [True, False, False, False]
    assert tree.items[0][0].ops == ["&&", "||"]
    assert [len(p.cmds) for p in tree.items[0][0].pipelines] == [3, 1, 1]
    assert parse("! a | b").items[0][0].pipelines[0].negated
    assert commands(parse("time -p a | b")) == ["a", "b"]
    assert commands(parse("a &&\n b ||\n c |\n d")) == ["a", "b", "c", "d"]
    assert parse("time").items[0][0].pipelines[0].cmds == []


def test_compound_commands():
    assert only("( a; b )").kind == "subshell"
    assert only("{ a; b; }").kind == "group"
    node = only("if a; then b; elif c; then d; else e; fi")
    assert node.kind == "if" and len(node.arms) == 2 and node.body is not None
    node = only("for x in 1 2; do a; done")
    assert (node.kind, node.name, [w.raw for w in node.words]) == ("for", "x", ["1", "2"])
    assert only("for x; do a; done").words is None
    assert only("for x do a; done").words is None
    assert only("for x in a b; { c; }").kind == "for"
    assert only("for ((i=0; i<3; i++)); do a; done").kind == "arith_for"
    assert only("select x in a b; do c; done").kind == "select"
    assert only("while a; do b; done").kind == "while"
    assert only("until a; do b; done").kind == "until"
    assert only("{ { a; } }").kind == "group"
    assert only("coproc cat").kind == "coproc"
    assert only("coproc NAME { cat; }").name == "NAME"


def test_case_items_patterns_and_terminators():
    node = only("case $x in\n a|b) one;;\n (c) two;&\n *) three;;&\n d) ;;\n e) last\nesac")
    assert [[w.raw for w in arm[0]] for arm in node.arms] == [["a", "b"], ["c"], ["*"], ["d"], ["e"]]
    assert [arm[2] for arm in node.arms] == [";;", ";&", ";;&", ";;", ""]
    assert node.arms[3][1] is None
    assert only("case x in esac").arms == []


def test_functions():
    for text in ("f() { a; }", "f () { a; }", "function f { a; }", "function f() { a; }", "f() ( a )",
                 "f()\n{\n a\n}"):
        node = only(text)
        assert node.kind == "function" and node.name == "f", text
    assert commands(parse("f() { touch x; }")) == ["touch x"]


def test_reserved_words_are_plain_words_outside_command_position():
    assert argv("echo if then fi done { } [[ ]] !") == ["echo", "if", "then", "fi", "done", "{", "}", "[[", "]]",
                                                        "!"]
    assert argv("echo {a,b} {x}")[1:] == ["{a,b}", "{x}"]


# ------------------------------------------------------------------------------------ malformed input


@pytest.mark.parametrize("command", [
    "echo 'x", 'echo "x', "echo `x", "echo $(x", "echo ${x", "echo $((1+2", "cat <<EOF\nbody", "cat <<EOF",
    "( a", "a )", "{ a; ", "if a; then b", "if a; fi", "while a; do b", "for x in a; do b", "case x in a) b",
    "a | ", "a &&", "a ;; b", "{ a; } b", "f() echo", "echo ${}", "echo ${1a}", "echo >", "echo > ;", "fi",
    "then", "done", "}", "echo $'x", "[[ a", "((", "echo <(a", "x=(a b", "for 1x in a; do b; done", "a & & b",
    "echo $[1", "{ }", "()", "if then fi", "case x in (a b) c;; esac",
])
def test_malformed_input_raises_bash_syntax_error(command):
    with pytest.raises(BashSyntaxError):
        parse(command)


def test_nesting_past_the_limit_raises_bash_syntax_error():
    for prefix, opener, closer in (("echo ", "$(", ")"), ("", "( ", ")"), ("", "{ ", "; }"), ("echo ", '"$(', ')"'),
                                   ("echo ", "${x:-", "}"), ("", "if a; then ", "; fi")):
        with pytest.raises(BashSyntaxError):
            parse(prefix + opener * 200 + "a" + closer * 200)
    parse("echo " + "$(" * 10 + "a" + ")" * 10)


def test_a_command_over_one_mebibyte_is_refused():
    with pytest.raises(BashSyntaxError, match="too long"):
        parse("x" * ((1 << 20) + 1))
    with pytest.raises(BashSyntaxError, match="too long"):
        parse("echo " + "a" * (8 << 20))


def test_arithmetic_guesses_that_fail_are_re_read_a_bounded_number_of_times():
    with pytest.raises(BashSyntaxError):
        parse("((" * 30 + "a) " * 30)


# ------------------------------------------------------------------------------------ fuzz


TOKENS = ["echo", "a", "b.py", " ", " ", "\t", "\n", ";", "&", "|", "&&", "||", "(", ")", "{", "}", "<", ">", ">>",
          "2>&1", "<<EOF", "<<'E'", "<<-X", "EOF", "E", "X", "'", '"', "\\", "$", "$(", "${", "`", "$((", "))", "#",
          "if", "then", "fi", "for", "in", "do", "done", "case", "esac", ";;", "while", "function", "[[", "]]",
          "=", "x=", "~", "*", "?", "[", "]", ",", "{a,b}", "$'", "\\n", "!", "time", "<(", ">(", "((", "0", "{fd}>"]


def _random_commands(seed, count):
    rng = random.Random(seed)
    for _ in range(count):
        if rng.random() < 0.5:
            yield "".join(rng.choice(TOKENS) for _ in range(rng.randint(0, 40)))
        else:
            yield "".join(rng.choice("ab $'\"\\`(){}<>|&;#\n\t=*~[]!-0123456789") for _ in range(rng.randint(0, 60)))


def test_fuzz_random_and_malformed_commands_give_a_tree_or_bash_syntax_error():
    for command in _random_commands(0x9A45E, 4000):
        try:
            parse(command)
        except BashSyntaxError:
            pass


def test_fuzz_mutations_of_valid_commands():
    rng = random.Random(7)
    seeds = ["cat > f <<'EOF'\nx\nEOF\necho $(a \"b\" `c`) ${d:-e} | tee g && { h; } || (i) &",
             "for x in a b; do case $x in a) y;; esac; done > out 2>&1",
             "if [[ $a == b ]]; then (( c > 1 )); fi; f() { g <(h) >(i); }"]
    for _ in range(3000):
        text = list(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            k = rng.randrange(len(text) + 1)
            action = rng.random()
            if action < 0.4 and text:
                del text[min(k, len(text) - 1)]
            elif action < 0.8:
                text.insert(k, rng.choice("'\"`$(){}<>|&;\n\\#"))
            else:
                text = text[:k]
        try:
            parse("".join(text))
        except BashSyntaxError:
            pass


def test_parsing_work_is_bounded_by_the_input_size():
    """Deterministic bound: the number of parser calls grows linearly with the input length."""
    calls = [0]
    parser_files = bp.__file__.rpartition("/")[0] + "/bash_"  # bash_lex, bash_parse_compound, bash_heredoc…

    def profiler(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(parser_files):
            calls[0] += 1

    samples = list(_random_commands(0xB0D, 150)) + [
        "echo " + "a b " * 500, "x=$(" * 30 + ")" * 30, "((" * 16 + "a" + ")" * 16, "echo '" + "x" * 5000 + "'",
        "cat <<EOF\n" + "line\n" * 1000 + "EOF", "a; " * 1000, "[[ " + "a && " * 300 + "b ]]"]
    for command in samples:
        calls[0] = 0
        sys.setprofile(profiler)
        try:
            parse(command)
        except BashSyntaxError:
            pass
        finally:
            sys.setprofile(None)
        assert calls[0] <= 40 * (len(command) + 10), (command[:60], calls[0])
