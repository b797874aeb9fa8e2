"""The write-channel table (maestro/hooks/bash_channels*.py): what one expanded simple command writes.

`command_writes(argv, cwd, env, home)` gets one simple command as Words and answers Targets (writes
the program makes itself), Runs (commands it runs: wrappers, xargs, find -exec) and Scripts (program
text: `bash -c`, `python -c`, …). Each case below is summarised as tuples:
    Target -> (action, path) or (action, path, "tree");  Script -> ("script", lang, code);
    Run -> ("run", [values]).
Paths under CWD do not exist (lexical cases); cases that depend on the filesystem use tmp_path.
"""

import os
import random
import shlex
import subprocess
import sys

import pytest

from maestro.hooks.bash_channels import UNANALYSED, command_writes, program_name, scan
from maestro.hooks.bash_channels_awk import awk_program_effects
from maestro.hooks.bash_channels_scripts import sed_script_effects
from maestro.hooks.targets import Run, Script, Target, Word

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)

CWD = "/nonexistent-maestro/repo"
STDIN = "<arguments from stdin>"


def words(*values):
    return [Word(v, v, True) for v in values]


def unknown(raw):
    return Word(None, raw, False)


def writes(argv, cwd=CWD):
    if isinstance(argv, str):
        argv = words(*shlex.split(argv))
    return command_writes(argv, cwd, {}, "/nonexistent-home")


def summary(items):
    out = []
    for item in items:
        if isinstance(item, Target):
            out.append((item.action, item.path, "tree") if item.tree else (item.action, item.path))
        elif isinstance(item, Script):
            out.append(("script", item.lang, item.code))
        else:
            assert isinstance(item, Run)
            out.append(("run", [w.value for w in item.argv]))
    return out


def check(command, expected, cwd=CWD):
    assert summary(writes(command, cwd)) == expected, command


# ----------------------------------------------------------------------------------------------- sed

SED = [
    ("sed -i 's/a/b/' src/app.py", [("change", "src/app.py")]),
    ("sed -i.bak 's/a/b/' src/app.py", [("change", "src/app.py")]),
    ("sed -Ei 's/a/b/' src/app.py", [("change", "src/app.py")]),
    ("sed -ni '1p' src/app.py", [("change", "src/app.py")]),
    ("sed -i '' 's/a/b/' src/app.py", [("change", "src/app.py")]),
    ("sed --in-place 's/a/b/' src/app.py", [("change", "src/app.py")]),
    ("sed --in-place=.orig 's/a/b/' src/app.py", [("change", "src/app.py")]),
    ("sed --in-pl 's/a/b/' src/app.py", [("change", "src/app.py")]),
    ("sed 's/a/b/' -i src/app.py", [("change", "src/app.py")]),
    ("sed -e 's/a/b/' -i src/a.py src/b.py", [("change", "src/a.py"), ("change", "src/b.py")]),
    ("sed --expression='s/a/b/' --in-place src/app.py", [("change", "src/app.py")]),
    ("sed -E -i -e 's/a/b/' -e 's/c/d/' -- src/app.py", [("change", "src/app.py")]),
    ("/usr/bin/sed -i 's/a/b/' src/app.py", [("change", "src/app.py")]),
    ("gsed -i 's/a/b/' src/app.py", [("change", "src/app.py")]),
    ("sed -i 's/a/b/'", []),
    ("sed -n '1,20p' src/app.py", []),
    ("sed 's/a/b/' src/app.py", []),
    ("sed -n '/w/p' src/app.py", []),
    ("sed 's/w/W/g' src/app.py", []),
    ("sed -E 's/(w)+/x/2' src/app.py", []),
    ("sed '/^#/d;s/ *$//' src/app.py", []),
    ("sed -n '$p' src/app.py", []),
    ("sed 'y/abc/xyz/' src/app.py", []),
    ("sed '1a\\\nwrite this' src/app.py", []),
    ("sed '/x/i inserted w text' src/app.py", []),
    ("sed ':a;N;$!ba;s/\\n/ /g' src/app.py", []),
    ("sed 's|/w|/e|' src/app.py", []),
    ("sed --version", []),
    ("sed -n '1w out.txt' src/app.py", [("write", "out.txt")]),
    ("sed '/x/w src/app.py' data", [("write", "src/app.py")]),
    ("sed 's/a/b/w changed.txt' src/app.py", [("write", "changed.txt")]),
    ("sed 's/a/b/gw /tmp/x' src/app.py", [("write", "/tmp/x")]),
    ("sed -n '/x/{W out\n}' f", [("write", "out")]),
    ("sed -e '1e touch x' f", [("script", "sh", "touch x")]),
    ("sed 's/.*/rm &/e' f", [("run", None)]),
    ("sed --sandbox 's/a/b/w out' f", []),
]


@pytest.mark.parametrize("command,expected", SED)
def test_sed(command, expected):
    check(command, expected)


def test_sed_channels_read_as_messages():
    [target] = writes("sed -i 's/a/b/' src/app.py")
    assert f"{target.channel} would {target.action} {target.word}" == "sed -i would change src/app.py"
    assert target.cwd == CWD
    [target] = writes("sed -n '1w out.txt' f")
    assert (target.channel, target.word) == ("sed w", "out.txt")


def test_sed_unknown_script_or_file_fails_closed():
    [target] = writes([Word("sed", "sed"), unknown('"$S"'), Word("f", "f")])
    assert (target.path, target.word) == (None, '"$S"')
    found = writes([Word("sed", "sed"), Word("-i", "-i"), Word("s/a/b/", "s/a/b/"), unknown("$F")])
    assert summary(found) == [("change", None)] and found[0].word == "$F"


def test_sed_reads_its_script_file(tmp_path):
    (tmp_path / "w.sed").write_text("s/a/b/\n1w out.txt\n")
    (tmp_path / "plain.sed").write_text("s/a/b/g\n")
    check("sed -f w.sed data", [("write", "out.txt")], cwd=str(tmp_path))
    check("sed -f plain.sed data", [], cwd=str(tmp_path))
    check("sed -f missing.sed data", [("run", None)], cwd=str(tmp_path))
    check("sed -f - data", [("run", None)], cwd=str(tmp_path))


def test_sed_script_parser_finds_only_real_commands():
    assert sed_script_effects("s/w/x/;/w/d;y/w/e/") == []
    assert sed_script_effects("1{w a.txt\n}") == [("w", "a.txt")]
    assert sed_script_effects("$!{N};s/x/y/w b") == [("w", "b")]
    assert sed_script_effects("\\,w,d") == []
    assert sed_script_effects("s/a/b/ ; e date") == [("e", "date")]
    assert sed_script_effects("a\\\n  w not a command\\\n  w still text\np") == []


# ------------------------------------------------------------------------------------ perl, ruby

PERL_RUBY = [
    ("perl -pi -e 's/a/b/' src/app.py", [("change", "src/app.py"), ("script", "perl", "s/a/b/")]),
    ("perl -i.bak -pe 's/a/b/' src/app.py", [("change", "src/app.py"), ("script", "perl", "s/a/b/")]),
    ("perl -p -i -e 's/a/b/' src/a.py src/b.py",
     [("change", "src/a.py"), ("change", "src/b.py"), ("script", "perl", "s/a/b/")]),
    ("perl -i -0777 -pe 's/a/b/' src/app.py", [("change", "src/app.py"), ("script", "perl", "s/a/b/")]),
    ("perl -pie 's/a/b/' src/app.py", [("change", "src/app.py")]),  # -i takes "e": s/a/b/ is the script file
    ("perl -e 'print 1'", [("script", "perl", "print 1")]),
    ("perl -E 'say 1' -e 'say 2'", [("script", "perl", "say 1\nsay 2")]),
    ("perl -lne 'print if /x/' f", [("script", "perl", "print if /x/")]),
    ("perl -MFile::Temp -e 1", [("script", "perl", "1")]),
    ("perl -I lib -e 1", [("script", "perl", "1")]),
    ("perl script.pl src/app.py", []),
    ("perl", [("script", "perl", None)]),
    ("perl -", [("script", "perl", None)]),
    ("perl -v", []),
    ("perl5.36 -e 1", [("script", "perl", "1")]),
    ("ruby -i -pe 'sub(/a/, \"b\")' src/app.rb", [("change", "src/app.rb"), ("script", "ruby", 'sub(/a/, "b")')]),
    ("ruby -i.orig -ne 'print' f", [("change", "f"), ("script", "ruby", "print")]),
    ("ruby -e 'File.write(\"x\", 1)'", [("script", "ruby", 'File.write("x", 1)')]),
    ("ruby -r json -e 1", [("script", "ruby", "1")]),
    ("ruby -E UTF-8 -e 1", [("script", "ruby", "1")]),
    ("ruby script.rb", []),
    ("ruby", [("script", "ruby", None)]),
]


@pytest.mark.parametrize("command,expected", PERL_RUBY)
def test_perl_and_ruby(command, expected):
    check(command, expected)


def test_perl_unknown_code_fails_closed():
    found = writes([Word("perl", "perl"), Word("-e", "-e"), unknown('"$CODE"')])
    assert summary(found) == [("run", None)] and found[0].word == '"$CODE"'


# ------------------------------------------------------------------------------------------ editors

EDITORS = [
    ("ed -s src/app.py", [("change", "src/app.py"), ("change", None)]),
    ("ex -s src/app.py", [("change", "src/app.py"), ("change", None)]),
    ("vim -es -c '%s/a/b/' -c wq src/app.py", [("change", "src/app.py"), ("change", None)]),
    ("vim -e -s src/app.py", [("change", "src/app.py"), ("change", None)]),
    ("vi -e src/app.py", [("change", "src/app.py"), ("change", None)]),
    ("nvim --headless +'%s/a/b/' +wq src/app.py", [("change", "src/app.py"), ("change", None)]),
    ("vim.basic -u NONE src/app.py", [("change", "src/app.py"), ("change", None)]),
    ("ex", [("change", None)]),
    ("vim --version", []),
    ("nano --help", []),
]


@pytest.mark.parametrize("command,expected", EDITORS)
def test_editors(command, expected):
    check(command, expected)


# --------------------------------------------------------------------------------------------- awk

AWK = [
    ("awk '{print > \"out.txt\"}' f", [("write", "out.txt")]),
    ("awk '{print $1 >> \"log.txt\"}' f", [("write", "log.txt")]),
    ("awk '{printf \"%s\\n\", $0 > \"src/app.py\"}' f", [("write", "src/app.py")]),
    ("awk '{ printf(\"%s\\n\", $0) > \"o.txt\" }' f", [("write", "o.txt")]),
    ("awk '{print $0 > $1 \".txt\"}' f", [("write", None)]),
    ("awk '{print > out}' f", [("write", None)]),
    ("gawk -i inplace '{sub(/a/, \"b\")} 1' src/app.py", [("change", "src/app.py")]),
    ("gawk --include=inplace '1' a.py v=1 b.py", [("change", "a.py"), ("change", "b.py")]),
    ("awk '@include \"inplace\"; {print}' src/app.py", [("change", "src/app.py")]),
    ("awk 'BEGIN { system(\"rm -f x\") }'", [("script", "sh", "rm -f x")]),
    ("awk '{ system(cmd) }' f", [("run", None)]),
    ("awk '{ print | \"sort -u\" }' f", [("script", "sh", "sort -u")]),
    ("awk 'BEGIN { \"date\" | getline d; print d }'", [("script", "sh", "date")]),
    ("awk '{ cmd | getline x }' f", [("run", None)]),
    ("awk '{ if ($1 > 3) print $1 }' f", []),
    ("awk '$3 > 10 && $2 >= 1 { n++ } END { print n }' f", []),
    ("awk '{ print ($1 > $2) }' f", []),
    ("awk '/a>b/ { print }' f", []),
    ("awk -F'>' '{ print $2 }' f", []),
    ("awk '{ print \"x > y\" }' f", []),
    ("awk '# print > \"c\"\n{ print }' f", []),
    ("awk '{ x = $1 / 2 > 3; print x }' f", []),
    ("awk -v n=3 'NR > n { print }' f", []),
    ("awk '{ print $1, $2 > \"/dev/stderr\" }' f", [("write", "/dev/stderr")]),
    ("mawk 'END { print NR }' f", []),
    ("awk --version", []),
]


@pytest.mark.parametrize("command,expected", AWK)
def test_awk(command, expected):
    check(command, expected)


def test_awk_reads_program_file(tmp_path):
    (tmp_path / "w.awk").write_text('{ print > "out.txt" }\n')
    check("awk -f w.awk data", [("write", "out.txt")], cwd=str(tmp_path))
    check("awk -f missing.awk data", [("run", None)], cwd=str(tmp_path))


def test_awk_program_scanner():
    assert awk_program_effects('{ a[$1] = $2 } END { for (k in a) print k, a[k] > "sum.txt" }') == [
        ("file", "sum.txt", '"sum.txt"')]
    assert awk_program_effects("{ n = n / 2 / 3 }") == []
    assert awk_program_effects('{ print "a" }\n{ if (x > "w") y = 1 }') == []


# ------------------------------------------------------------------------------------- file tools

FILES = [
    ("tee src/app.py", [("write", "src/app.py")]),
    ("tee -a log.txt src/app.py", [("write", "log.txt"), ("write", "src/app.py")]),
    ("tee --append out", [("write", "out")]),
    ("tee", []),
    ("cp /tmp/a.py src/app.py", [("write", "src/app.py")]),
    ("cp -f -- /tmp/a.py src/app.py", [("write", "src/app.py")]),
    ("cp a.py b.py src/", [("write", "src/a.py"), ("write", "src/b.py")]),
    ("cp -t src a.py", [("write", "src/a.py")]),
    ("cp --target-directory=src a.py", [("write", "src/a.py")]),
    ("cp -T a.py src/", [("write", "src/")]),
    ("cp src/app.py /tmp/", [("write", "/tmp/app.py")]),
    ("cp src/app.py", []),
    ("mv src/old.py src/new.py", [("move onto", "src/new.py"), ("delete", "src/old.py")]),
    ("mv -f /tmp/a.py src/", [("move onto", "src/", "tree"), ("move onto", "src/a.py"), ("delete", "/tmp/a.py")]),
    ("mv src/app.py /tmp/x.py", [("move onto", "/tmp/x.py"), ("delete", "src/app.py")]),
    ("install -m 755 /tmp/tool src/tool.py", [("write", "src/tool.py")]),
    ("install -D -t src/bin a.py", [("write", "src/bin/a.py")]),
    ("install -d src/newdir", []),
    ("ln -sf /tmp/x.py src/app.py", [("create", "src/app.py"), ("link to", "/tmp/x.py")]),
    ("ln -s /tmp/x.py src/", [("create", "src/x.py"), ("link to", "/tmp/x.py")]),
    ("ln src/app.py /tmp/alias.py", [("create", "/tmp/alias.py"), ("hard-link", "src/app.py")]),
    ("ln -s -t src /tmp/a.py", [("create", "src/a.py"), ("link to", "/tmp/a.py")]),
    ("link src/app.py /tmp/x", [("create", "/tmp/x"), ("hard-link", "src/app.py")]),
    ("cp -l src/app.py /tmp/x.py", [("write", "/tmp/x.py"), ("hard-link", "src/app.py")]),
    ("cp -al src /tmp/snapshot", [("write", "/tmp/snapshot", "tree"), ("hard-link", "src", "tree")]),
    ("rsync -a /tmp/x.py src/app.py", [("write", "src/app.py", "tree")]),
    ("rsync -av /tmp/pkg/ src/", [("write", "src/", "tree")]),
    ("rsync -a src/ backup-host:/srv/src/", []),
    ("rsync -a user@host:/x/ /tmp/y/", [("write", "/tmp/y/", "tree")]),
    ("rsync -n -a /tmp/x/ src/", []),
    ("rsync -a --remove-source-files src/ host:/x/", [("delete", "src/", "tree")]),
    ("rsync --log-file=/tmp/r.log -a a/ host:b/", [("write", "/tmp/r.log")]),
    ("dd if=/dev/zero of=src/app.py bs=1 count=0", [("write", "src/app.py")]),
    ("dd if=src/app.py of=/dev/null", [("write", "/dev/null")]),
    ("dd if=src/app.py", []),
    ("truncate -s 0 src/app.py", [("truncate", "src/app.py")]),
    ("truncate --size=0 a b", [("truncate", "a"), ("truncate", "b")]),
    ("rm src/app.py", [("delete", "src/app.py")]),
    ("rm -f src/a.py src/b.py", [("delete", "src/a.py"), ("delete", "src/b.py")]),
    ("rm -rf src", [("delete", "src", "tree")]),
    ("rm -r -- -weird", [("delete", "-weird", "tree")]),
    ("rm --recursive --force build", [("delete", "build", "tree")]),
    ("unlink src/app.py", [("delete", "src/app.py")]),
    ("rmdir src/empty", [("delete", "src/empty", "tree")]),
    ("shred -u src/app.py", [("delete", "src/app.py")]),
    ("sort -o src/app.py src/app.py", [("write", "src/app.py")]),
    ("sort --output=sorted.txt f", [("write", "sorted.txt")]),
    ("sort -k2 -t, -u f", []),
    ("uniq in.txt out.txt", [("write", "out.txt")]),
    ("uniq -c in.txt", []),
    ("sponge src/app.py", [("write", "src/app.py")]),
    ("xxd -r dump.hex src/app.py", [("write", "src/app.py")]),
    ("xxd src/app.py", []),
    ("iconv -f latin1 -t utf-8 -o src/app.py in.txt", [("write", "src/app.py")]),
    ("dos2unix src/app.py", [("change", "src/app.py")]),
    ("rename 's/x/y/' src/a.py", [("delete", "src/a.py"), ("write", None)]),
]


@pytest.mark.parametrize("command,expected", FILES)
def test_file_tools(command, expected):
    check(command, expected)


def test_cp_into_an_existing_directory_writes_the_basename(tmp_path):
    (tmp_path / "src").mkdir()
    check("cp /tmp/a.py src", [("write", "src/a.py")], cwd=str(tmp_path))
    # /tmp/a.py does not exist yet: it may be a directory made earlier, so src is judged as a tree too
    check("mv /tmp/a.py src", [("move onto", "src", "tree"), ("move onto", "src/a.py"), ("delete", "/tmp/a.py")],
          cwd=str(tmp_path))
    check("cp /tmp/a.py newname.py", [("write", "newname.py")], cwd=str(tmp_path))
    check("ln -s /tmp/a.py src", [("create", "src/a.py")], cwd=str(tmp_path))  # tmp_path is scratch
    check("ln -sfn /tmp/a.py src", [("create", "src")], cwd=str(tmp_path))  # -n: src itself is replaced


def test_cp_recursive_of_a_directory_is_a_tree(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "one.py").write_text("")
    check("cp -r pkg dest", [("write", "dest", "tree")], cwd=str(tmp_path))
    check("cp -r one.py dest.py", [("write", "dest.py")], cwd=str(tmp_path))
    check("mv pkg /tmp/elsewhere", [("move onto", "/tmp/elsewhere", "tree"), ("delete", "pkg", "tree")],
          cwd=str(tmp_path))


def test_copy_with_an_unknown_source_into_a_directory_is_a_tree_of_that_directory():
    found = writes([Word("cp", "cp"), unknown('"$f"'), Word("/tmp/", "/tmp/")])
    assert summary(found) == [("write", "/tmp/", "tree")]
    found = writes([Word("cp", "cp"), Word("a.py", "a.py"), unknown('"$DEST"')])
    assert summary(found) == [("write", None)] and found[0].word == '"$DEST"'


def test_touch_writes_only_when_it_creates(tmp_path):
    (tmp_path / "exists.py").write_text("")
    check("touch exists.py", [], cwd=str(tmp_path))
    check("touch new.py exists.py", [("create", "new.py")], cwd=str(tmp_path))
    check("touch -c new.py", [], cwd=str(tmp_path))
    check("touch -d yesterday new.py", [("create", "new.py")], cwd=str(tmp_path))
    check("touch rel.py", [("create", "rel.py")], cwd=None)  # cwd unknown: counted as a write


def test_unresolved_operands_of_writers_fail_closed():
    for program in ("rm", "tee", "truncate", "touch", "shred"):
        found = writes([Word(program, program), unknown("$F")])
        assert [(t.path, t.word) for t in found] == [(None, "$F")], program
    found = writes([Word("dd", "dd"), Word("if=x", "if=x"), unknown('of="$OUT"')])
    assert summary(found) == [("write", None)]


# ---------------------------------------------------------------------------------------------- find

FIND = [
    ("find . -name '*.py'", []),
    ("find src -type f -newer x -print", []),
    ("find src -name '*.pyc' -delete", [("delete", "src", "tree")]),
    ("find a b -delete", [("delete", "a", "tree"), ("delete", "b", "tree")]),
    ("find -name x -delete", [("delete", ".", "tree")]),
    ("find -L src -delete", [("delete", "src", "tree")]),
    ("find . -name -delete -print", []),  # -delete is -name's pattern here
    ("find . -type f -exec sed -i 's/a/b/' {} +", [("run", ["sed", "-i", "s/a/b/", None])]),
    ("find . -exec rm {} ;", [("run", ["rm", None])]),
    ("find . -exec grep -l x {} ; -print", [("run", ["grep", "-l", "x", None])]),
    ("find . -ok mv {} {}.bak ;", [("run", ["mv", None, None])]),
    ("find . -execdir rm x.py ;", [("delete", "x.py")]),
    ("find . -fprint list.txt", [("write", "list.txt")]),
    ("find . -fprintf out.txt '%p\\n'", [("write", "out.txt")]),
    ("find . -fls ls.txt", [("write", "ls.txt")]),
]


@pytest.mark.parametrize("command,expected", FIND)
def test_find(command, expected):
    check(command, expected)


def test_find_execdir_runs_in_an_unknown_directory():
    [target] = writes("find . -execdir rm x.py ;")
    assert target.cwd is None  # a relative path there cannot be resolved


# ----------------------------------------------------------------------------------- archives, net

ARCHIVES = [
    ("tar -xzf x.tgz", [("extract into", ".", "tree")]),
    ("tar xzf x.tgz", [("extract into", ".", "tree")]),
    ("tar xvfz x.tgz -C src", [("extract into", "src", "tree")]),
    ("tar -xf x.tar -C /tmp/out", [("extract into", "/tmp/out", "tree")]),
    ("tar --extract --file=x.tar --directory=src", [("extract into", "src", "tree")]),
    ("tar -x -f x.tar -C a -C b", [("extract into", "a/b", "tree")]),
    ("tar -xPf x.tar", [("extract into", ".", "tree"), ("extract into", None)]),
    ("tar -x --to-command='sh -c x' -f x.tar", [("script", "sh", "sh -c x")]),
    ("tar -xOf x.tar a.txt", []),
    ("tar -tf x.tar", []),
    ("tar tvf x.tar", []),
    ("tar -czf /tmp/x.tgz src", [("write", "/tmp/x.tgz")]),
    ("tar czf /tmp/x.tgz src", [("write", "/tmp/x.tgz")]),
    ("tar -cf - src", []),
    ("tar -rf src/archive.tar new.txt", [("write", "src/archive.tar")]),
    ("tar --create --file out.tar src", [("write", "out.tar")]),
    ("unzip x.zip", [("extract into", ".", "tree")]),
    ("unzip -o x.zip -d src", [("extract into", "src", "tree")]),
    ("unzip -qd/tmp/x x.zip", [("extract into", "/tmp/x", "tree")]),
    ("unzip x.zip -x '*.md' -d out", [("extract into", "out", "tree")]),
    ("unzip -l x.zip", []),
    ("unzip -t x.zip", []),
    ("unzip -p x.zip a.py", []),
    ("zip -r /tmp/out.zip src", [("write", "/tmp/out.zip")]),
    ("zip -m out.zip a.py", [("write", "out.zip"), ("delete", "a.py")]),
    ("7z x a.7z -osrc", [("extract into", "src", "tree")]),
    ("7z l a.7z", []),
    ("gunzip src/app.py.gz", [("write", "src/app.py"), ("delete", "src/app.py.gz")]),
    ("gzip -d x.tgz", [("write", "x.tar"), ("delete", "x.tgz")]),
    ("gzip -dk data.gz", [("write", "data")]),
    ("gzip src/app.py", [("write", "src/app.py.gz"), ("delete", "src/app.py")]),
    ("gzip -c src/app.py", []),
    ("gunzip -c x.gz", []),
    ("gzip -t x.gz", []),
    ("gunzip notcompressed", []),
    ("bunzip2 a.py.bz2", [("write", "a.py"), ("delete", "a.py.bz2")]),
    ("xz -d a.py.xz", [("write", "a.py"), ("delete", "a.py.xz")]),
    ("zstd -d a.py.zst", [("write", "a.py")]),
    ("zstd -d a.zst -o src/app.py", [("write", "src/app.py")]),
    ("cpio -idv", [("extract into", ".", "tree")]),
    ("cpio -it", []),
]


@pytest.mark.parametrize("command,expected", ARCHIVES)
def test_archives(command, expected):
    check(command, expected)


NETWORK = [
    ("curl https://example.com/a.py", []),
    ("curl -fsSL https://example.com/install.sh", []),
    ("curl -o src/app.py https://example.com/a", [("write", "src/app.py")]),
    ("curl --output src/app.py https://example.com/a", [("write", "src/app.py")]),
    ("curl --output=src/app.py https://example.com/a", [("write", "src/app.py")]),
    ("curl -sSo src/app.py https://example.com/a", [("write", "src/app.py")]),
    ("curl -o - https://example.com/a", []),
    ("curl -O https://example.com/dl/app.py?x=1", [("write", "app.py")]),
    ("curl -sSLO https://example.com/dl/app.py", [("write", "app.py")]),
    ("curl --remote-name https://example.com/dl/app.py", [("write", "app.py")]),
    ("curl --output-dir src -O https://example.com/dl/app.py", [("write", "src/app.py")]),
    ("curl --output-dir /tmp -o x.py https://e/x", [("write", "/tmp/x.py")]),
    ("curl -O https://a/x.py -O https://a/y.py", [("write", "x.py"), ("write", "y.py")]),
    ("curl --remote-name-all https://a/x.py https://a/y.py", [("write", "x.py"), ("write", "y.py")]),
    ("curl -OJ https://example.com/download", [("write", ".", "tree")]),
    ("curl -D headers.txt https://e/", [("write", "headers.txt")]),
    ("curl -H 'Accept: x' -d @body.json https://e/", []),
    ("curl -K cfg https://e/", [("write files named in", None)]),
    ("wget https://example.com/dl/app.py", [("write", "app.py")]),
    ("wget https://example.com/", [("write", "index.html")]),
    ("wget -O src/app.py https://example.com/a", [("write", "src/app.py")]),
    ("wget --output-document=src/app.py https://example.com/a", [("write", "src/app.py")]),
    ("wget -qO- https://example.com/a", []),
    ("wget -O - https://example.com/a", []),
    ("wget -P /tmp/dl https://example.com/x.py", [("write", "/tmp/dl/x.py")]),
    ("wget -r -np -nd https://example.com/", [("write", ".", "tree")]),
    ("wget -m -P mirror https://example.com/", [("write", "mirror", "tree")]),
    ("wget --spider https://example.com/", []),
    ("wget -e output_document=src/app.py https://e/", [("write", "src/app.py")]),
]


@pytest.mark.parametrize("command,expected", NETWORK)
def test_network(command, expected):
    check(command, expected)


# --------------------------------------------------------------------------------------------- patch, git

GIT = [
    ("patch -p1 -i fix.patch", [("change", ".", "tree")]),
    ("patch src/app.py fix.patch", [("change", "src/app.py")]),
    ("patch -o /tmp/out.py src/app.py fix.patch", [("write", "/tmp/out.py")]),
    ("patch --dry-run -p1 -i fix.patch", []),
    ("git apply fix.patch", [("change", ".", "tree")]),
    ("git apply --index fix.patch", [("change", ".", "tree")]),
    ("git apply --check fix.patch", []),
    ("git apply --stat fix.patch", []),
    ("git apply --numstat --summary fix.patch", []),
    ("git apply --cached fix.patch", []),
    ("git apply --unsafe-paths fix.patch", [("change", ".", "tree"), ("change", None)]),
    ("git am < mbox", [("change", ".", "tree")]),
    ("git am --abort", []),
    ("git checkout -- src/app.py", [("change", "src/app.py")]),
    ("git checkout HEAD~1 -- src/a.py src/b.py", [("change", "src/a.py"), ("change", "src/b.py")]),
    ("git checkout main -- .", [("change", ".", "tree")]),
    ("git checkout .", [("change", ".", "tree")]),
    ("git checkout '*.py'", [("change", ".", "tree")]),
    ("git checkout main", []),
    ("git checkout -b feature/x", []),
    ("git checkout -B feature origin/main", []),
    ("git checkout --orphan fresh", []),
    ("git checkout v1.2", []),
    ("git checkout -f", [("change", CWD, "tree")]),
    ("git checkout -p", [("change", CWD, "tree")]),
    ("git checkout -", []),
    ("git checkout release/v1.2", []),
    ("git restore src/app.py", [("change", "src/app.py")]),
    ("git restore --source=HEAD~2 --worktree src/app.py", [("change", "src/app.py")]),
    ("git restore --staged src/app.py", []),
    ("git restore -S -W src/app.py", [("change", "src/app.py")]),
    ("git restore .", [("change", ".", "tree")]),
    ("git rm src/app.py", [("delete", "src/app.py")]),
    ("git rm -r --cached src", []),
    ("git rm -n src/app.py", []),
    ("git mv src/old.py src/new.py", [("move onto", "src/new.py"), ("delete", "src/old.py")]),
    ("git clean -fdx", [("delete", ".", "tree")]),
    ("git clean -fd src", [("delete", "src", "tree")]),
    ("git clean -n", []),
    ("git clean --dry-run -d", []),
    ("git reset --hard", [("change", CWD, "tree")]),
    ("git reset --hard origin/main", [("change", CWD, "tree")]),
    ("git reset HEAD~1", []),
    ("git reset --soft HEAD~1", []),
    ("git reset -- src/app.py", []),
    ("git stash", [("change", CWD, "tree")]),
    ("git stash -u", [("change", CWD, "tree")]),
    ("git stash push -m wip", [("change", CWD, "tree")]),
    ("git stash push -- src/app.py", [("change", "src/app.py")]),
    ("git stash pop", [("change", CWD, "tree")]),
    ("git stash apply stash@{1}", [("change", CWD, "tree")]),
    ("git stash list", []),
    ("git stash show -p", []),
    ("git stash drop", []),
    ("git switch main", []),
    ("git switch -c feature", []),
    ("git switch --discard-changes main", [("change", CWD, "tree")]),
    ("git branch -D old", []),
    ("git commit -am 'fix: x'", []),
    ("git add -A", []),
    ("git log --oneline -5", []),
    ("git diff HEAD~1 -- src/app.py", []),
    ("git diff --output=/tmp/d.diff", [("write", "/tmp/d.diff")]),
    ("git status --short", []),
    ("git show HEAD:src/app.py", []),
    ("git fetch origin", []),
    ("git push -u origin feature", []),
    ("git merge --no-ff feature", []),
    ("git pull --rebase", []),
    ("git rebase main", []),
    ("git cherry-pick abc123", []),
    ("git revert HEAD", []),
    ("git --no-pager log", []),
    ("git -C src status", []),
    ("git merge-file src/app.py base.py theirs.py", [("change", "src/app.py")]),
    ("git merge-file -p src/app.py base.py theirs.py", []),
    ("git read-tree -u -m HEAD", [("change", CWD, "tree")]),
    ("git checkout-index -f -- src/app.py", [("write", "src/app.py")]),
    ("git worktree add ../wt main", [("write", "../wt", "tree")]),
    ("git clone https://github.com/o/repo.git", [("write", "repo", "tree")]),
    ("git clone https://github.com/o/repo.git vendor/repo", [("write", "vendor/repo", "tree")]),
    ("git archive -o /tmp/src.tar HEAD", [("write", "/tmp/src.tar")]),
    ("git rebase -x 'sed -i s/a/b/ f' main", [("script", "sh", "sed -i s/a/b/ f")]),
    ("git bisect run pytest -q", [("run", ["pytest", "-q"])]),
    ("git submodule foreach git pull", [("script", "sh", "git pull")]),
    ("git -c alias.fix='!sed -i s/a/b/ src/app.py' fix", [("script", "sh", "sed -i s/a/b/ src/app.py")]),
    ("git -c alias.co=checkout co -- src/app.py", [("change", "src/app.py")]),
    ("git -c core.pager='tee src/app.py' log", [("script", "sh", "tee src/app.py")]),
    ("git -c user.name=x commit -m y", []),
]


@pytest.mark.parametrize("command,expected", GIT)
def test_git_and_patch(command, expected):
    check(command, expected)


def test_git_targets_are_relative_to_dash_c(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "src").mkdir()
    repo = str(tmp_path / "repo")
    [target] = writes("git -C repo checkout -- src/app.py", cwd=str(tmp_path))
    assert (target.path, target.cwd) == ("src/app.py", repo)
    [target] = writes("git reset --hard", cwd=str(tmp_path / "repo" / "src"))
    assert (target.path, target.tree, target.word) == (repo, True, "the work tree")
    [target] = writes("git --work-tree=/tmp/wt stash", cwd=repo)
    assert (target.path, target.tree) == ("/tmp/wt", True)
    [target] = command_writes(words("git", "reset", "--hard"), repo, {"GIT_WORK_TREE": "../wt"}, "/h")
    assert target.path == os.path.join(repo, "../wt")
    [target] = writes("git checkout src", cwd=repo)  # an existing directory: a path, not a branch
    assert (target.path, target.tree) == ("src", True)
    check("git checkout src/deleted.py", [("change", "src/deleted.py")], cwd=repo)  # under an existing dir
    check("git checkout deleted.py", [("change", "deleted.py")], cwd=repo)
    check("git checkout feature/login", [], cwd=repo)


def test_git_checkout_of_a_branch_named_like_a_path_switches(tmp_path):
    git_dir = tmp_path / "repo" / ".git"
    (git_dir / "refs" / "heads" / "src").mkdir(parents=True)
    (git_dir / "refs" / "heads" / "src" / "fix").write_text("0" * 40 + "\n")
    (git_dir / "refs" / "remotes" / "origin").mkdir(parents=True)
    (git_dir / "refs" / "remotes" / "origin" / "fix.parser").write_text("0" * 40 + "\n")
    (git_dir / "packed-refs").write_text("# pack-refs\n" + "0" * 40 + " refs/tags/v2.beta\n")
    (tmp_path / "repo" / "src").mkdir()
    repo = str(tmp_path / "repo")
    check("git checkout src/fix", [], cwd=repo)  # a branch, although src/ is a directory
    check("git checkout fix.parser", [], cwd=repo)  # a remote branch checked out by its short name
    check("git checkout v2.beta", [], cwd=repo)  # a packed tag
    check("git checkout src/app.py", [("change", "src/app.py")], cwd=repo)
    check("git checkout src/fix -- src/app.py", [("change", "src/app.py")], cwd=repo)


def test_git_unknown_words_fail_closed():
    found = writes([Word("git", "git"), unknown("$SUB"), Word("x", "x")])
    assert summary(found) == [("run", None)]
    found = writes([Word("git", "git"), Word("checkout", "checkout"), Word("--", "--"), unknown('"$F"')])
    assert summary(found) == [("change", None)] and found[0].word == '"$F"'


# ------------------------------------------------------------------------------------------- wrappers

WRAPPERS = [
    ("env sed -i s/a/b/ f", [("run", ["sed", "-i", "s/a/b/", "f"])]),
    ("env -i PATH=/bin HOME=/x sed -i s/a/b/ f", [("run", ["sed", "-i", "s/a/b/", "f"])]),
    ("/usr/bin/env -i -u X -- sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("env -S 'sed -i s/a/b/' f", [("run", ["sed", "-i", "s/a/b/", "f"])]),
    ("env", []),
    ("env X=1", []),
    ("sudo sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("sudo -u www-data -g web -E -- sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("sudo --user=root VAR=1 sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("sudo -l sed", []),
    ("sudo -s", [("script", "sh", None)]),
    ("sudo -e src/app.py", [("change", "src/app.py")]),
    ("sudoedit src/app.py", [("change", "src/app.py")]),
    ("doas -u root sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("timeout 5 sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("timeout -k 2 -s KILL 10s sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("timeout --signal=TERM --preserve-status 1m pytest", [("run", ["pytest"])]),
    ("nice -n 10 sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("nice -10 make", [("run", ["make"])]),
    ("nice", []),
    ("ionice -c 3 rm f", [("run", ["rm", "f"])]),
    ("ionice -p 123", []),
    ("nohup sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("time -p sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("time -o /tmp/t.txt ls", [("write", "/tmp/t.txt"), ("run", ["ls"])]),
    ("command sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("command -p sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("command -v sed", []),
    ("command -V sed", []),
    ("builtin eval 'x'", [("run", ["eval", "x"])]),
    ("exec sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("exec -a name sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("exec", []),
    ("stdbuf -o0 -eL sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("stdbuf --output=0 grep x", [("run", ["grep", "x"])]),
    ("chronic sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("setsid -f sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("unbuffer sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("busybox sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("xargs grep x", [("run", ["grep", "x", None])]),
    ("xargs sed -i s/a/b/", [("run", ["sed", "-i", "s/a/b/", None])]),
    ("xargs -0 -n 1 rm -f", [("run", ["rm", "-f", None])]),
    ("xargs -d '\\n' -P 4 -r rm", [("run", ["rm", None])]),
    ("xargs -a list.txt rm", [("run", ["rm", None])]),
    ("xargs -I{} cp {} /tmp/", [("run", ["cp", None, "/tmp/"])]),
    ("xargs -I % sh -c 'echo %'", [("run", ["sh", "-c", None])]),
    ("xargs", []),
    ("xargs -0", []),
    ("watch -n 2 'git status'", [("script", "sh", "git status")]),
    ("flock /tmp/lock sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("flock -c 'sed -i x f' /tmp/lock", [("script", "sh", "sed -i x f")]),
    ("strace -f -o /tmp/s.txt make", [("write", "/tmp/s.txt"), ("run", ["make"])]),
    ("su -c 'sed -i x f' root", [("script", "sh", "sed -i x f")]),
    ("uv run pytest -q", [("run", ["pytest", "-q"])]),
    ("uv run --with requests python -c 'print(1)'", [("run", ["python", "-c", "print(1)"])]),
    ("poetry run python -m pytest", [("run", ["python", "-m", "pytest"])]),
    ("pipenv run sed -i x f", [("run", ["sed", "-i", "x", "f"])]),
    ("bundle exec rake", [("run", ["rake"])]),
    ("conda run -n env python x.py", [("run", ["python", "x.py"])]),
    ("uv pip install x", []),
]


@pytest.mark.parametrize("command,expected", WRAPPERS)
def test_wrappers(command, expected):
    check(command, expected)


def test_xargs_stdin_words_are_unknown():
    [run] = writes("xargs sed -i s/a/b/")
    assert run.stdin_targets_unknown is True
    assert run.argv[-1] == Word(None, STDIN, False)


def test_xargs_replace_strings_make_their_words_unknown():
    [run] = writes("xargs -I{} mv {} {}.bak")
    assert [(w.value, w.raw) for w in run.argv] == [("mv", "mv"), (None, "{}"), (None, "{}.bak")]
    check("xargs --replace cp {} /tmp/", [("run", ["cp", None, "/tmp/"])])
    check("xargs -i cp {} /tmp/", [("run", ["cp", None, "/tmp/"])])
    check("xargs -I % -- sh -c 'echo %'", [("run", ["sh", "-c", None])])
    [run] = writes([Word("xargs", "xargs"), Word("-I", "-I"), unknown('"$R"'), Word("cp", "cp"), Word("a", "a"),
                    Word("/tmp/", "/tmp/")])
    assert [w.value for w in run.argv] == ["cp", None, None]  # an unknown replace string may be anywhere
    [target] = writes("xargs -I{} {} --version")
    assert (target.path, target.word) == (None, "{}")


def test_find_exec_braces_are_an_unknown_word():
    [run] = writes("find . -exec rm {} +")
    assert run.argv[-1] == Word(None, "{}", False)


def test_wrappers_nest_through_the_engine():
    """Each wrapper answers a Run; resolving Runs again reaches the writer."""
    items = writes("sudo env X=1 timeout 5 nice -n 1 sed -i 's/a/b/' src/app.py")
    for _ in range(10):
        if not items or not isinstance(items[0], Run):
            break
        items = command_writes(items[0].argv, CWD, {}, "/h")
    assert summary(items) == [("change", "src/app.py")]


def test_wrappers_that_change_directory_resolve_their_command_there():
    [target] = writes("env -C src sed -i s/a/b/ app.py")
    assert (target.path, target.cwd) == ("app.py", CWD + "/src")
    [target] = writes("sudo -D /srv sudo sed -i x f")
    assert (target.path, target.cwd) == ("f", "/srv")
    [script] = writes("env --chdir=/tmp bash -c 'sed -i x f'")  # shell text: the engine sees the cd
    assert (script.lang, script.code) == ("sh", "cd -- '/tmp' || exit\nsed -i x f")
    [target] = writes("env --chdir=/tmp python3 -c 'open(1)'")
    assert (target.path, target.channel) == (None, "python code")  # other program text there: fail closed
    [target] = writes("find . -execdir sh -c 'rm x' ;")
    assert (target.path, target.channel) == (None, "sh code")
    [target] = writes("uv run --directory src sed -i x app.py")
    assert target.cwd == CWD + "/src"


# ------------------------------------------------------------------------------- shells, interpreters

INTERPRETERS = [
    ("bash -c 'sed -i s/a/b/ f'", [("script", "sh", "sed -i s/a/b/ f")]),
    ("sh -c 'echo hi'", [("script", "sh", "echo hi")]),
    ("bash -ec 'echo hi'", [("script", "sh", "echo hi")]),
    ("bash -lc 'echo hi'", [("script", "sh", "echo hi")]),
    ("bash -xc 'echo hi' name arg", [("script", "sh", "echo hi")]),
    ("bash -o pipefail -c 'echo hi'", [("script", "sh", "echo hi")]),
    ("bash --norc --noprofile -c 'echo hi'", [("script", "sh", "echo hi")]),
    ("bash -c -e 'echo hi'", [("script", "sh", "echo hi")]),
    ("zsh -c 'echo hi'", [("script", "sh", "echo hi")]),
    ("dash -c 'echo hi'", [("script", "sh", "echo hi")]),
    ("ksh -c 'echo hi'", [("script", "sh", "echo hi")]),
    ("fish -c 'echo hi'", [("script", "sh", "echo hi")]),
    ("fish --command='echo hi'", [("script", "sh", "echo hi")]),
    ("/bin/bash -c 'echo hi'", [("script", "sh", "echo hi")]),
    ("bash script.sh", []),
    ("bash -x ./run.sh arg", []),
    ("bash", [("script", "sh", None)]),
    ("sh -s", [("script", "sh", None)]),
    ("bash -s -- arg", [("script", "sh", None)]),
    ("sh -", [("script", "sh", None)]),
    ("bash -n script.sh", []),
    ("bash --version", []),
    ("eval 'sed -i x f'", [("script", "sh", "sed -i x f")]),
    ("eval echo hi", [("script", "sh", "echo hi")]),
    ("eval", []),
    ("source ./env.sh", []),
    (". ./env.sh", []),
    ("python -c 'print(1)'", [("script", "python", "print(1)")]),
    ("python3 -c 'print(1)'", [("script", "python", "print(1)")]),
    ("python3.12 -c 'print(1)'", [("script", "python", "print(1)")]),
    ("/usr/bin/python3 -I -S -u -c 'x'", [("script", "python", "x")]),
    ("python3 -W ignore -X utf8 -c 'x'", [("script", "python", "x")]),
    ("python3 -Wignore -Bc 'x' arg", [("script", "python", "x")]),
    ("python3 -c'x'", [("script", "python", "x")]),
    ("pypy3 -c 'x'", [("script", "python", "x")]),
    ("python3 -m pytest -q", []),
    ("python3 -m http.server", []),
    ("python3 script.py --write src/app.py", []),
    ("python3 -", [("script", "python", None)]),
    ("python3", [("script", "python", None)]),
    ("python3 -u", [("script", "python", None)]),
    ("python3 -V", []),
    ("python3 --version", []),
    ("node -e 'x'", [("script", "node", "x")]),
    ("node --eval 'x'", [("script", "node", "x")]),
    ("node --eval='x'", [("script", "node", "x")]),
    ("node -p '1+1'", [("script", "node", "1+1")]),
    ("node --print '1+1'", [("script", "node", "1+1")]),
    ("node -r ts-node/register -e 'x'", [("script", "node", "x")]),
    ("nodejs -e 'x'", [("script", "node", "x")]),
    ("node app.js", []),
    ("node --test", []),
    ("node", [("script", "node", None)]),
    ("node -", [("script", "node", None)]),
    ("node -v", []),
    ("bun -e 'x'", [("script", "node", "x")]),
    ("bun run build", []),
    ("deno eval 'x'", [("script", "node", "x")]),
    ("deno run main.ts", []),
]


@pytest.mark.parametrize("command,expected", INTERPRETERS)
def test_shells_and_interpreters(command, expected):
    check(command, expected)


def test_unknown_program_text_fails_closed():
    for program, flag in (("bash", "-c"), ("python3", "-c"), ("node", "-e"), ("ruby", "-e")):
        found = writes([Word(program, program), Word(flag, flag), unknown('"$CODE"')])
        assert [(type(t), t.path, t.word) for t in found] == [(Target, None, '"$CODE"')], program
    found = writes([Word("eval", "eval"), Word("echo", "echo"), unknown("$X")])
    assert summary(found) == [("run", None)]


def test_unknown_words_written_as_options_may_carry_code():
    for program in ("python3", "node", "perl", "ruby", "bash"):
        [target] = writes([Word(program, program), unknown('"-c$CODE"' if program != "node" else '--eval="$X"')])
        assert target.path is None, program
    assert writes([Word("python3", "python3"), unknown('"$SCRIPT"')]) == []  # a program file: outside the table
    assert writes([Word("bash", "bash"), unknown('"$SCRIPT"')]) == []


def test_languages_without_an_analysis_fail_closed():
    for command in ("php -r 'echo 1;'", "lua -e 'x'", "Rscript -e 'x'", "osascript -e 'x'", "pwsh -c 'x'",
                    "php -r'echo 1;'", "julia --eval 'x'"):
        [target] = writes(command)
        assert target.path is None, command
    check("php artisan migrate", [])


def test_script_word_is_the_program_text_as_written():
    [script] = command_writes([Word("bash", "bash"), Word("-c", "-c"), Word("echo hi", "'echo hi'")], CWD, {}, "/h")
    assert (script.code, script.word) == ("echo hi", "'echo hi'")


MORE = [
    ("scp host:/srv/app.py src/", [("write", "src/app.py")]),
    ("scp -P 2222 -i key host:/x.py /tmp/x.py", [("write", "/tmp/x.py")]),
    ("scp src/app.py host:/srv/", []),
    ("yq -i '.version = \"2\"' pyproject.yaml", [("change", "pyproject.yaml")]),
    ("yq '.version' pyproject.yaml", []),
    ("fallocate -l 1M src/blob.bin", [("write", "src/blob.bin")]),
    ("unix2dos -n in.txt src/out.py", [("write", "src/out.py")]),
    ("git worktree remove ../wt", [("delete", "../wt", "tree")]),
    ("git worktree list", []),
    ("git sparse-checkout set src", [("change", CWD, "tree")]),
    ("git sparse-checkout list", []),
    ("git submodule update --init", [("change", CWD, "tree")]),
    ("git submodule status", []),
    ("git -c core.editor='sed -i x' commit", [("script", "sh", "sed -i x")]),
    ("git filter-branch --tree-filter 'rm -f x' HEAD", [("script", "sh", "rm -f x")]),
    ("git difftool -x 'cp' HEAD", [("script", "sh", "cp")]),
    ("git grep -Ovim foo", [("script", "sh", "vim")]),
    ("git grep -O foo", []),
    ("git bundle create /tmp/r.bundle --all", [("write", "/tmp/r.bundle")]),
    ("git format-patch -o /tmp/p HEAD~1", [("write", "/tmp/p", "tree")]),  # -o DIR: files land there
    ("script -q -c 'make' /tmp/typescript.log", [("write", "/tmp/typescript.log"), ("script", "sh", "make")]),
    ("sudo -R /srv/root sed -i x f", [("change", "f")]),
    ("nix-shell --run 'sed -i x f'", [("script", "sh", "sed -i x f")]),
]


@pytest.mark.parametrize("command,expected", MORE)
def test_more_channels(command, expected):
    check(command, expected)


def test_chroot_makes_paths_unresolvable():
    [target] = writes("sudo -R /srv/root sed -i x f")
    assert target.cwd is None


ALL_CASES = MORE + SED + PERL_RUBY + EDITORS + AWK + FILES + FIND + ARCHIVES + NETWORK + GIT + WRAPPERS + INTERPRETERS


@pytest.mark.parametrize("command", sorted({command for command, _ in ALL_CASES}))
def test_every_target_reads_as_a_message(command):
    for item in writes(command):
        if isinstance(item, Target):
            message = f"{item.channel} would {item.action} {item.word}"
            assert item.channel and item.action and item.word, message
            assert item.word == item.word.strip() and "\n" not in item.action, message


def test_messages_name_the_channel_and_the_word():
    samples = {
        "cp /tmp/a.py src/app.py": "cp would write src/app.py",
        "mv src/a.py /tmp/a.py": "mv would move onto /tmp/a.py",
        "rm -f src/a.py": "rm would delete src/a.py",
        "truncate -s0 src/a.py": "truncate would truncate src/a.py",
        "tar -xzf x.tgz": "tar -x would extract into the current directory",
        "git apply fix.patch": "git apply would change the files named in the patch",
        "git reset --hard": "git reset --hard would change the work tree",
        "curl -o src/a.py https://e/a": "curl -o would write src/a.py",
        "ln src/a.py /tmp/a": "ln would hard-link src/a.py",
    }
    for command, expected in samples.items():
        messages = [f"{t.channel} would {t.action} {t.word}" for t in writes(command)]
        assert expected in messages, (command, messages)


def test_git_config_with_an_unknown_value_fails_closed_only_for_commands():
    git = Word("git", "git")
    dash_c = Word("-c", "-c")
    assert writes([git, dash_c, unknown('"user.name=$NAME"'), Word("commit", "commit")]) == []
    [target] = writes([git, dash_c, unknown('"core.pager=$P"'), Word("log", "log")])
    assert target.path is None
    [target] = writes([git, dash_c, unknown('"$SETTING"'), Word("log", "log")])
    assert target.path is None


# ------------------------------------------------------------------------------- outside the table

OUTSIDE = [
    "./script.sh src/app.py", "./find.py -delete", "cp2 a b", "bin/git.sh reset --hard",
    "pytest -q", "make test", "npm run build", "cargo test", "go test ./...", "ls -la", "cat src/app.py",
    "grep -rn TODO src", "rg foo", "head -n 20 f", "echo hi", "printf x", "jq . f.json", "diff a b",
    "mkdir -p build", "chmod +x run.sh", "wc -l f", "cut -d, -f1 f", "black --check .", "ruff check src",
    "./scripts/build.sh", "docker ps", "kubectl get pods", "zcat x.gz", "ssh host ls",
]


@pytest.mark.parametrize("command", OUTSIDE)
def test_programs_outside_the_table_write_nothing(command):
    assert writes(command) == []


def test_an_unknown_command_name_fails_closed():
    [target] = writes([unknown("$(which sed)"), Word("-i", "-i"), Word("x", "x"), Word("f", "f")])
    assert (target.path, target.word) == (None, "$(which sed)")


def test_empty_argv_writes_nothing():
    assert command_writes([], CWD, {}, "/h") == []


# ---------------------------------------------------------------------------------------- helpers


@pytest.mark.parametrize("raw,name", [
    ("/usr/bin/sed", "sed"), ("sed", "sed"), ("python3", "python"), ("python3.12", "python"),
    ("python2.7", "python"), ("pypy3", "python"), ("/usr/local/bin/python3.11", "python"), ("gawk", "awk"),
    ("mawk", "awk"), ("gsed", "sed"), ("gtar", "tar"), ("vim.basic", "vim"), ("nodejs", "node"),
    ("perl5.36", "perl"), ("grm", "rm"), ("pytest", "pytest"), ("git", "git"), ("gzip", "gzip"),
    ("node18", "node"), ("bash5", "bash"), ("gtimeout", "timeout"), ("script.sh", "script.sh"), ("cp2", "cp2"),
    ("find.py", "find.py"), ("./git.sh", "git.sh"), ("gcc", "gcc"), ("grep", "grep"), ("mawk1.3", "awk"),
])
def test_program_names_are_normalised(raw, name):
    assert program_name(raw) == name


def test_every_program_of_the_table_has_a_handler():
    import importlib

    from maestro.hooks import bash_channels
    for name, module in bash_channels.LAZY.items():
        handlers = importlib.import_module("maestro.hooks.bash_channels_" + module).HANDLERS
        assert name in handlers, (name, module)
    from maestro.hooks import bash_channels_wrappers

    assert set(bash_channels_wrappers.HANDLERS) == set(bash_channels.WRAPPERS)


def test_scan_handles_bundles_attached_values_and_long_prefixes():
    opts, operands = scan(words("-abo", "out", "--file=x", "--verb", "op", "--", "-z"), "o", ("file",), "",
                          (), ("verbose",))
    assert [(k, w.value if w else None) for k, w in opts] == [("a", None), ("b", None), ("o", "out"),
                                                              ("file", "x"), ("verbose", None)]
    assert [w.value for w in operands] == ["op", "-z"]
    opts, operands = scan(words("cmd", "-x"), permute=False)
    assert opts == [] and [w.value for w in operands] == ["cmd", "-x"]


# ------------------------------------------------------------------------------------ robustness

ALPHABET = ["-", "--", "-i", "-c", "-e", "-o", "-x", "-C", "-f", "-t", "x", "src/app.py", "{}", ";", "+", "=",
            "a=b", "of=x", "--in-place", "--output", "print > \"f\"", "s/a/b/w f", ":", "host:x", "http://a/b.py",
            "'", "\"", "\\", "", " ", "\n", "(", ")", "|", ">", "--exec", "-exec", "-delete", "alias.x=!y", "!",
            "-p", "//a//", "-S", "-d", "-r"]


def test_fuzz_never_raises():
    rng = random.Random(1402)
    from maestro.hooks import bash_channels
    programs = sorted(set(bash_channels.LAZY) | set(bash_channels.WRAPPERS)) + ["python3", "gawk", "/usr/bin/env"]
    for _ in range(6000):
        argv = [Word(rng.choice(programs), "p")]
        for _ in range(rng.randint(0, 8)):
            if rng.random() < 0.1:
                argv.append(Word(None, "$X", False))
            else:
                text = rng.choice(ALPHABET) if rng.random() < 0.8 else "".join(
                    rng.choice("-=/:.{}'\"\\ xwe>|;\n") for _ in range(rng.randint(0, 6)))
                argv.append(Word(text, text, True))
        cwd = rng.choice([CWD, None, "/tmp"])
        result = command_writes(argv, cwd, {}, "/h")
        assert isinstance(result, list)
        for item in result:
            assert isinstance(item, (Target, Run, Script))
            assert not (isinstance(item, Target) and item.channel.startswith(UNANALYSED)), ([w.value for w in argv],
                                                                                         item)


def test_fuzz_scripts_never_raise():
    rng = random.Random(7)
    pieces = ["s", "/", "w", " ", "e", "\\", "\n", ";", "{", "}", "a", "y", "print", ">", '"', "(", ")", "|",
              "getline", "system", "#", "[", "]", "@include", "x", "1", "$", ",", "!"]
    for _ in range(4000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        sed_script_effects(text)
        awk_program_effects(text)


def test_hostile_awk_programs_stay_linear_and_fail_closed():
    effects = awk_program_effects("{ print ( " * 20000)
    assert effects[-1] == ("file", None, "<a program too long to analyse>")
    assert awk_program_effects("{ system( " * 20000)[-1][1] is None


def test_pathological_arguments_terminate():
    assert len(writes("rmdir -p //a//b//")) < 10
    assert len(writes("env -S '-S -S -S -S' sed")) <= 1


def test_deep_wrapper_nesting_is_bounded():
    argv = words(*(["env", "-C", "d"] * 400 + ["sed", "-i", "x", "f"]))
    result = command_writes(argv, CWD, {}, "/h")
    assert any(isinstance(t, Target) and t.path is None for t in result)


def test_import_is_light():
    code = ("import sys; import maestro.hooks.bash_channels; "
            "bad = [m for m in ('re', 'shlex', 'json', 'collections', 'dataclasses', 'subprocess') "
            "if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=30,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert out.stdout.strip() == "[]", out.stderr


# ------------------------------------------------------------------------ links and trees made in one command


def test_a_symlink_is_judged_as_a_write_to_what_it_points_to(outside_tmp):
    tmp_path = outside_tmp
    (tmp_path / "src").mkdir()
    (tmp_path / ".claude").mkdir()
    check("ln -s src/app.py notes.md", [("create", "notes.md"), ("link to", "src/app.py")], cwd=str(tmp_path))
    # relative to the link's directory, not the cwd
    check("ln -s ../src/app.py .claude/l", [("create", ".claude/l"), ("link to", ".claude/../src/app.py")],
          cwd=str(tmp_path))
    # a directory target: a tree
    check("ln -s ../src .claude/s", [("create", ".claude/s"), ("link to", ".claude/../src", "tree")],
          cwd=str(tmp_path))
    check("cp -s src/app.py .claude/cs", [("write", ".claude/cs"), ("link to", ".claude/src/app.py")],
          cwd=str(tmp_path))


def test_a_symlink_made_in_scratch_or_to_a_doc_stays_judged_by_its_target():
    check("ln -s /tmp/a.md notes.md", [("create", "notes.md"), ("link to", "/tmp/a.md")])
    # a link made in scratch is free: writes through it are the engine's to follow
    check("ln -s src/app.py /tmp/link", [("create", "/tmp/link")])


def test_a_directory_copied_into_a_directory_is_a_tree(outside_tmp):
    tmp_path = outside_tmp
    (tmp_path / "x.md").mkdir()
    (tmp_path / "src").mkdir()
    check("cp -r x.md src/", [("write", "src/x.md", "tree")], cwd=str(tmp_path))
    check("mv x.md src/", [("move onto", "src/x.md", "tree"), ("delete", "x.md", "tree")], cwd=str(tmp_path))
    check("cp -r src /tmp/backup", [("write", "/tmp/backup", "tree")], cwd=str(tmp_path))


def writes_argv(values):
    return writes(words(*values))


def fails_closed(items):
    return any(isinstance(i, Target) and i.path is None for i in items)


def runs(items):
    """The argv of every Run / the code of every Script, flattened for assertions."""
    out = []
    for item in items:
        if isinstance(item, Run):
            out.append(" ".join(w.value or "?" for w in item.argv))
        elif isinstance(item, Script):
            out.append((item.lang, item.code))
    return out


@pytest.mark.parametrize("command, key", [
    ("git config alias.x '!echo x > src/app.py'", "alias.x"),
    ("git config core.hooksPath /tmp/hooks", "core.hooksPath"),
    ("git config --global core.fsmonitor 'sh x'", "core.fsmonitor"),
    ("git config diff.py.textconv cat", "diff.py.textconv"),
    ("git config filter.x.clean cat", "filter.x.clean"),
    ("git config include.path /tmp/cfg", "include.path"),
    ("git config set credential.helper x", "credential.helper"),
    ("git config --add sequence.editor x", "sequence.editor"),
])
def test_git_config_storing_a_command_fails_closed(command, key):
    found = writes(command)
    assert fails_closed(found) and any(t.word == key for t in found if isinstance(t, Target)), found


@pytest.mark.parametrize("command", ["git config user.name x", "git config --get alias.x",
                                     "git config -l", "git config core.autocrlf false", "git config get core.pager"])
def test_git_config_of_plain_settings_or_reads_is_allowed(command):
    assert writes(command) == []


def test_git_config_file_option_writes_that_file():
    assert summary(writes("git config -f src/app.py a.b c")) == [("write", "src/app.py")]


@pytest.mark.parametrize("env", [
    {"GIT_EXTERNAL_DIFF": "echo x > src/app.py; true"}, {"GIT_SSH_COMMAND": "echo x > src/app.py"},
    {"GIT_EDITOR": "echo x > src/app.py"}, {"EDITOR": "echo x > src/app.py"},
])
def test_git_runs_commands_from_its_environment(env):
    found = command_writes(words("git", "commit"), CWD, env, "/nonexistent-home")
    assert ("sh", next(iter(env.values()))) in runs(found)


@pytest.mark.parametrize("env", [
    {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "alias.x", "GIT_CONFIG_VALUE_0": "!sh"},
    {"GIT_CONFIG_PARAMETERS": "'core.fsmonitor=echo x'"}, {"GIT_CONFIG_COUNT": "x"},
    {"GIT_CONFIG_GLOBAL": "/tmp/cfg"},
])
def test_git_settings_from_the_environment_that_run_commands_fail_closed(env):
    assert fails_closed(command_writes(words("git", "status"), CWD, env, "/nonexistent-home"))


def test_git_settings_from_the_environment_that_run_nothing_are_allowed():
    env = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "x",
           "GIT_CONFIG_PARAMETERS": "'color.ui=never'"}
    assert command_writes(words("git", "status"), CWD, env, "/nonexistent-home") == []


def test_env_split_string_is_split_where_it_stands():
    assert runs(writes("env -S sed -i s/1/2/ src/app.py")) == ["sed -i s/1/2/ src/app.py"]
    assert runs(writes_argv(["env", "-S", "ls -la"])) == ["ls -la"]
    assert runs(writes("env -i -u X -- ls")) == ["ls"]


def test_flock_with_the_file_first_runs_its_command():
    assert runs(writes_argv(["flock", "/tmp/lock", "-c", "echo x > src/app.py"])) == [("sh", "echo x > src/app.py")]
    assert runs(writes("flock /tmp/lock sed -i x f")) == ["sed -i x f"]


def test_perl_options_that_still_run_or_carry_code():
    assert ("perl", "1") in runs(writes_argv(["perl", "-V", "-e", "1"]))
    assert summary(writes("perl -V -pi -e s/1/2/ src/app.py"))[0] == ("change", "src/app.py")
    assert fails_closed(writes_argv(["perl", '-MPOSIX;system("x")', "-e", "1"]))
    assert not fails_closed(writes_argv(["perl", "-MPOSIX", "-e", "1"]))
    assert writes("perl -v") == []
    assert fails_closed(command_writes(words("perl", "-d", "-e", "1"), CWD, {"PERL5DB": "system(1)"}, "/h"))


def test_node_print_flag_and_inline_modules():
    assert runs(writes_argv(["node", "-p", "-e", "1+1"])) == [("node", "1+1")]
    assert runs(writes_argv(["node", "-p", "1+1"])) == [("node", "1+1")]
    assert fails_closed(writes_argv(["node", "--import", "data:text/javascript,x", "-e", "1"]))
    assert fails_closed(command_writes(words("node", "-e", "1"), CWD,
                                       {"NODE_OPTIONS": "--import=data:text/javascript,x"}, "/h"))
    assert not fails_closed(writes_argv(["node", "-r", "ts-node/register", "-e", "1"]))


@pytest.mark.parametrize("command", [
    "ed -p --help -s src/app.py", "ex -c --help -s -c 1d src/app.py", "vim -u --version -es src/app.py",
    "vim -es src/app.py -T --help", "ex -s src/app.py -- --help",
])
def test_help_as_an_option_argument_does_not_stop_an_editor(command):
    assert ("change", "src/app.py") in summary(writes(command))


def test_editor_help_alone_is_allowed():
    assert writes("vim --help") == [] and writes("ed --version") == []


def test_unzip_exclude_list_and_uniq_D_and_zip_TT():
    assert writes("unzip -oq /tmp/evil.zip -x --help") != []
    assert summary(writes("uniq -D /etc/passwd src/app.py")) == [("write", "src/app.py")]
    assert ("sh", "echo x > src/app.py; true") in runs(
        writes_argv(["zip", "-q", "/tmp/x.zip", "f", "-T", "-TT", "echo x > src/app.py; true"]))


@pytest.mark.parametrize("command, inner", [
    ("taskset -c 0 bash -c X", "bash -c X"), ("chrt -o 0 bash -c X", "bash -c X"),
    ("prlimit --nofile=100 bash -c X", "bash -c X"), ("unshare -r bash -c X", "bash -c X"),
    ("nsenter -t 1 bash -c X", "bash -c X"), ("gdb -batch -ex run --args bash -c X", "bash -c X"),
    ("valgrind -q bash -c X", "bash -c X"), ("mytool --run python3 -c X", "python3 -c X"),
])
def test_programs_outside_the_table_that_run_a_command(command, inner):
    assert inner in runs(writes(command))


@pytest.mark.parametrize("command", ["grep -r python .", "which bash", "echo node", "pytest -k bash tests"])
def test_an_interpreter_name_without_a_code_option_runs_nothing(command):
    assert writes(command) == []


def test_python_reading_its_program_from_dev_or_running_code_modules():
    assert runs(writes("python3 /dev/stdin")) == [("python", None)]
    assert runs(writes_argv(["python3", "-m", "timeit", "-s", "open('a.py','w')", "pass"])) == [
        ("python", "open('a.py','w')\npass")]
    assert runs(writes("python3 -m code")) == [("python", None)]
    assert writes("python3 -m pytest -q") == []


def test_posixly_correct_makes_a_trailing_help_a_file_name():
    env = {"POSIXLY_CORRECT": "1"}
    assert summary(command_writes(words("rm", "src/app.py", "--help"), CWD, env, "/h")) == [("delete", "src/app.py")]
    assert ("change", "src/app.py") in summary(command_writes(words("sed", "-i", "s/1/2/", "src/app.py", "--help"),
                                                              CWD, env, "/h"))
    assert command_writes(words("rm", "--help", "src/app.py"), CWD, env, "/h") == []
    assert writes("rm src/app.py --help") == []  # GNU permutation: --help is an option


def test_sed_label_ends_at_whitespace():
    assert summary(writes_argv(["sed", "1bx;:x w src/app.py", "/etc/passwd"])) == [("write", "src/app.py")]
    assert writes_argv(["sed", ":a;N;ba", "f"]) == []


def test_awk_piping_text_into_an_interpreter_fails_closed():
    assert fails_closed(writes_argv(["awk", 'BEGIN{print "echo x > src/app.py" | "sh"}']))
    assert runs(writes_argv(["awk", '{print $1 | "sort -u"}', "f"])) == [("sh", "sort -u")]


# ------------------------------------------------------------------ second red-team round (issue 14)
# Each attack case below writes a source file for real (see test_gate_bash_attacks_2.py); each
# look-alike is an ordinary command that must stay allowed.


def _engine(command, cwd=CWD):
    from maestro.hooks.bash_writes import find_writes

    return find_writes(command, cwd, {"HOME": "/nonexistent-home", "PATH": "/usr/bin"}, "/nonexistent-home")


def _blocks_repo(command, cwd=CWD):
    """True when some target is unresolved or lands in the repository (not under /tmp)."""
    for t in _engine(command, cwd):
        if t.path is None:
            return True
        full = os.path.normpath(os.path.join(t.cwd or "/", t.path))
        if not full.startswith("/tmp"):
            return True
    return False


@pytest.mark.parametrize("command", [
    "git reset --ha", "git reset --har HEAD", "git checkout --for", "git switch --discard-ch main",
    "git switch -q --orphan zz",
])
def test_git_long_options_are_matched_by_unique_prefix(command):
    assert summary(writes(command)) == [("change", CWD, "tree")], command


@pytest.mark.parametrize("command", ["git reset --soft HEAD~1", "git reset --mixed", "git checkout -b feat",
                                     "git switch main", "git switch -c feat", "git checkout --orphan fresh"])
def test_git_look_alikes_of_abbreviated_options_write_nothing(command):
    assert writes(command) == [], command


@pytest.mark.parametrize(("command", "code"), [
    ("git fetch -q --upload-pack='touch src/x.py; :' .", "touch src/x.py; :"),
    ("git fetch --upload=evil origin", "evil"),
    ("git ls-remote --upload-pack=evil .", "evil"),
    ("git clone -u evil . /tmp/c", "evil"),
    ("git clone -uevil . /tmp/c", "evil"),
    ("git pull --upload-pack evil origin", "evil"),
    ("git push --receive-pack=evil . HEAD:x", "evil"),
    ("git push --exec=evil . HEAD:x", "evil"),
    ("git archive --remote=. --exec=evil HEAD", "evil"),
])
def test_git_transport_commands_are_shell_text(command, code):
    assert ("script", "sh", code) in summary(writes(command)), command


def test_git_config_env_of_a_command_setting_fails_closed():
    found = writes("git --config-env=alias.x=X x")
    assert any(isinstance(t, Target) and t.path is None for t in found)
    assert writes("git --config-env=user.name=NAME commit -m x") == []
    assert writes("git fetch origin") == []


def test_git_format_patch_output_directory_is_a_tree():
    assert summary(writes("git format-patch -1 -o src --suffix=.py")) == [("write", "src", "tree")]
    assert summary(writes("git format-patch -1 --suffix=.py")) == [("write", ".", "tree")]
    assert writes("git format-patch -1") == [] and writes("git format-patch --stdout -1 -o src") == []


@pytest.mark.parametrize("command", ["tar --remove-files -cf /tmp/x.tar src/app.py",
                                     "tar -cf /tmp/r.tar src/app.py --remove-files",
                                     "tar cf /tmp/r.tar --remove-files src/app.py",
                                     "tar -C src -cf /tmp/r.tar --remove-files app.py"])
def test_tar_remove_files_deletes_what_it_archives(command):
    assert any(isinstance(t, Target) and t.action == "delete" for t in writes(command)), command
    assert _blocks_repo(command)


def test_tar_create_without_remove_files_writes_only_the_archive():
    assert summary(writes("tar -czf /tmp/x.tgz src")) == [("write", "/tmp/x.tgz")]


@pytest.mark.parametrize("command", [
    "cp -a /tmp/into-src .claude/x && echo pwned > .claude/x/app.py",
    "cp -P /tmp/into-src /tmp/y && echo pwned > /tmp/y/app.py",
    "cp -r /tmp/into-src /tmp/y && echo pwned > /tmp/y/app.py",
    "cp --no-dereference /tmp/l /tmp/y && echo pwned > /tmp/y",
    "rsync -a /tmp/links/ /tmp/y/ && echo pwned > /tmp/y/app.py",
    "tar -xf /tmp/l.tar -C /tmp/d && echo pwned > /tmp/d/into-src/app.py",
    "unzip /tmp/l.zip -d /tmp/d && echo pwned > /tmp/d/into-src/app.py",
    "cd /tmp/d && cpio -i < /tmp/l.cpio && echo pwned > /tmp/d/into-src/app.py",
])
def test_a_write_under_links_copied_or_restored_earlier_is_unresolved(command):
    assert any(t.path is None for t in _engine(command)), command


@pytest.mark.parametrize("command", ["cp -r src /tmp/backup", "cp src/app.py /tmp/app.py && echo x > /tmp/app.log",
                                     "tar -xf /tmp/a.tar -C /tmp/b && cat /tmp/b/x > /tmp/out",
                                     "cp /tmp/a /tmp/b && echo x > /tmp/b"])
def test_copies_and_extractions_elsewhere_keep_later_writes_resolved(command):
    assert not _blocks_repo(command), command


@pytest.mark.parametrize("command", [
    "echo 'open(\"src/app.py\",\"w\").write(\"x\")' | python3 -i -c pass",
    "python3 -i -c pass <<< 'open(\"src/app.py\",\"w\").write(\"x\")'",
    "python3 -ic pass <<< 'open(\"src/app.py\",\"w\").write(\"x\")'",
    "PYTHONINSPECT=1 python3 -c pass <<< 'open(\"src/app.py\",\"w\").write(\"x\")'",
    "perl -MExtUtils::Command -e rm_f src/app.py", "perl -MExtUtils::Command -we rm_f src/app.py",
    "perl -MExtUtils::Command -e cp /etc/passwd src/app.py", "perl -MExtUtils::Command -e mv src/app.py /tmp/m",
    "perl -MExtUtils::Command -e touch src/new.py", "perl -MExtUtils::Command -e rm_rf src",
    "perl -MExtUtils::Command -e 'rm_f()' src/app.py",
    "python3 -m json.tool /tmp/x.json src/app.py", "python3 -m zipfile -e /tmp/evil.zip .",
    "python3 -m zipfile -c src/app.py /etc/passwd", "python3 -m tarfile -e /tmp/evil.tar",
    "python3 -m gzip -d src/app.py.gz",
])
def test_interpreter_channels_of_the_second_round_block(command):
    assert _blocks_repo(command), command


@pytest.mark.parametrize("command", [
    "python3 -m json.tool in.json", "python3 -m json.tool /tmp/in.json /tmp/out.json", "python3 -m pytest -q",
    "python3 -m zipfile -l /tmp/a.zip", "python3 -m tarfile -c /tmp/a.tar src", "python3 -i -c pass",
    "echo hi | python3 script.py -i", "perl -MExtUtils::Command -e cat README.md", "python3 -m http.server",
    "python3 -m venv /tmp/venv",
])
def test_interpreter_look_alikes_stay_allowed(command):
    assert not _blocks_repo(command), command


@pytest.mark.parametrize("command", [
    "make -f - <<< $'all:\\n\\techo x > src/app.py'", "make --file=- <<< $'all: ; rm src/app.py'",
    "make -f /dev/stdin <<< $'all:\\n\\t@rm src/app.py'", "make -E 'x: ; rm src/app.py' x",
    "make -f - <<< $'all:\\n\\t$(shell rm src/app.py)'", "cat mk | make -f -",
    "tclsh <<< 'exec sh -c {echo x > src/app.py}'", "echo 'exec rm src/app.py' | tclsh",
    "echo 'set c exec; $c rm src/app.py' | tclsh", "expect -c 'spawn sh'",
    "gdb -batch -ex 'shell echo x > src/app.py'", "gdb -batch -ex '!rm src/app.py'",
    "gdb -batch -ex 'pipe echo | sh -c \"rm src/app.py\"'", "gdb -batch -ex 'she rm src/app.py'",
    "gdb -batch -ex 'dump memory src/app.py 0 1'", "gdb -batch -x cmds.gdb",
    "echo 'shell rm src/app.py' | gdb -batch",
    "tmux -L rt new -d 'echo x > src/app.py'", "tmux new-session -d -s w 'rm src/app.py'",
    "tmux new-window 'rm src/app.py'", "tmux run-shell 'rm src/app.py'", "tmux send-keys -t w 'rm src/app.py' Enter",
    "tmux splitw -h rm src/app.py", "tmux -c 'rm src/app.py'", "screen -dm rm src/app.py",
    "screen -dmS s sh -c 'rm src/app.py'", "screen -S s -X stuff 'rm src/app.py\\n'",
    "sqlite3 /tmp/db '.output src/app.py' 'select 1;'", "sqlite3 :memory: '.once src/app.py' 'select 1;'",
    "sqlite3 /tmp/db '.shell rm src/app.py'", "echo '.output src/app.py' | sqlite3",
    "sqlite3 /tmp/db \"select writefile('src/app.py', 'x')\"", "sqlite3 -cmd '.system rm src/app.py' /tmp/db",
    "sqlite3 /tmp/db '.read /tmp/cmds'", "cat /tmp/cmds | sqlite3 /tmp/db",
    "gio remove src/app.py", "gio trash src/app.py", "gio save src/app.py <<< pwned",
    "gio move src/app.py /tmp/moved", "gio copy /etc/passwd src/app.py", "gio copy /etc/passwd file://$PWD/src/app.py",
])
def test_tools_running_their_own_program_text_block(command):
    assert _blocks_repo(command), command


@pytest.mark.parametrize("command", [
    "make test", "make -C docs html", "make -j4 -f Makefile all", "make -f - <<< $'all:\\n\\techo hi > /tmp/x'",
    "tclsh <<< 'puts hi'", "tclsh script.tcl", "gdb -batch -ex bt ./prog core", "gdb -batch -ex 'info registers'",
    "gdb -batch -ex 'shell echo x > /tmp/gdb.log'", "tmux ls", "tmux new -s dev -d", "tmux kill-server",
    "tmux send-keys -t dev 'pytest -q' Enter", "screen -ls", "screen -r dev",
    "sqlite3 db.sqlite 'select 1'", "sqlite3 db.sqlite .tables .schema", "echo 'select 1;' | sqlite3 db.sqlite",
    "sqlite3 db.sqlite '.output /tmp/out.csv' 'select 1;'", "sqlite3 -safe db.sqlite '.shell rm x'",
    "gio list .", "gio info README.md", "gio copy src/app.py /tmp/app.py",
])
def test_tools_look_alikes_stay_allowed(command):
    assert not _blocks_repo(command), command


@pytest.mark.parametrize("command", [
    "shuf -o src/app.py /etc/passwd", "shuf --output=src/app.py /etc/passwd",
    "openssl enc -base64 -in /etc/passwd -out src/app.py", "openssl req -new -keyout src/k.py -out /tmp/r",
    "sdiff -o src/app.py /etc/passwd /etc/passwd", "logsave src/app.py true", "logsave /tmp/log rm src/app.py",
    "csplit -s -f src/app. -b '%.0dpy' /etc/passwd 5", "cd src && csplit /etc/passwd 5",
    "split -n 1 --additional-suffix=.py /etc/passwd src/x", "split -n 400 /etc/passwd src/app.",
    "split -l 1 --filter='cat > src/app.py' /etc/passwd",
    "cd src && ar x /tmp/evil.a", "ar x --output src /tmp/evil.a", "ar rcs src/app.py /tmp/o.o",
    "mktemp -p src --suffix=.py", "mktemp --tmpdir=src tmp.XXXX.py", "mktemp src/x.XXXX.py",
    "TMPDIR=src mktemp -t x.XXXX --suffix=.py", "mktemp -p src x.XXXXXX",
])
def test_utilities_writing_a_named_file_block(command):
    assert _blocks_repo(command), command


@pytest.mark.parametrize("command", [
    "shuf -n 3 list.txt", "shuf -o /tmp/s list.txt", "openssl rand -hex 16", "openssl sha256 README.md",
    "openssl enc -base64 -in README.md -out /tmp/b64", "sdiff a.txt b.txt", "split -l 10 big.txt /tmp/part.",
    "csplit -f /tmp/pp big.txt 5", "ar t /tmp/lib.a", "ar x --output /tmp/o /tmp/lib.a", "mktemp", "mktemp -d",
    "mktemp /tmp/x.XXXX", "mktemp -u -p src", "mktemp -d -p src", "mktemp --tmpdir x.XXXX.py",
])
def test_utilities_look_alikes_stay_allowed(command):
    assert not _blocks_repo(command), command


def test_the_gate_knows_every_maestro_verb():
    """maestro_writes fails closed on a word that is not a maestro verb (`parallel maestro ::: rollback`
    hands it `:::`): its list must be cli.VERBS exactly, or a new verb would be blocked (or a removed one kept)."""
    from maestro.cli import VERBS
    from maestro.hooks.bash_channels_maestro import MAESTRO_VERBS

    assert MAESTRO_VERBS == frozenset(VERBS)


@pytest.mark.parametrize("argv, expected", [
    ("maestro install", [("change", "settings.json")]),
    ("maestro uninstall --yes", [("change", "settings.json")]),
    ("maestro install --help", []),
    ("maestro ::: rollback", [("run", None)]),
    ("python3 -- maestro.pyz rollback --last", [("change", CWD, "tree")]),
    ("python3 -m maestro.cli rollback x", [("change", CWD, "tree")]),
    ("python3 -m maestro.commands.rollback --last", [("run", None)]),
    ("sh bin/maestro checkpoints prune", [("change", CWD, "tree")]),
    ("python3 -- tool.py --json", []),
])
def test_maestro_reached_by_every_road(argv, expected, monkeypatch, tmp_path):
    """The gate-mend review (r21): each road to maestro's writing verbs; install/uninstall change settings.json."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    found = writes(argv)
    summary = [(t.action, os.path.basename(t.path) if t.path and not t.tree else t.path) + (("tree",) if t.tree else ())
               for t in found]
    assert summary == expected, found
