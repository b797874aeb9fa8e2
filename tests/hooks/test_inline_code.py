"""code_writes(lang, code): the writes inline interpreter code would make, judged by the literal path.

Each language: every write API in several spellings (literal path -> that path; computed path ->
unresolved with the argument as written), the shell-outs (-> Script("sh", …)), and the look-alikes
that must yield nothing (reads, API names inside strings, unrelated methods). Then the failure
modes: code the interpreter would refuse yields nothing, code too deep to analyse fails closed,
and a seeded fuzz never raises.
"""

import random
import subprocess
import sys

import pytest

from testing import ROOT
from maestro.hooks.inline_code import code_writes
from maestro.hooks.targets import Script, Target

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)

U = None  # an unresolved path


def found(lang, code):
    """(action, path) per Target, ("sh", text) per Script, in order."""
    out = []
    for item in code_writes(lang, code):
        if isinstance(item, Script):
            assert item.lang == "sh"
            out.append(("sh", item.code))
        else:
            assert isinstance(item, Target) and item.cwd is None
            out.append((item.action, item.path))
    return out


def only(lang, code):
    items = code_writes(lang, code)
    assert len(items) == 1, items
    return items[0]


# ---- python ---------------------------------------------------------------------------------

PYTHON_WRITES = [
    ("open('src/app.py','w').write('x')", [("write", "src/app.py")]),
    ("open('src/app.py', mode='w')", [("write", "src/app.py")]),
    ("open(file='src/app.py', mode='wb')", [("write", "src/app.py")]),
    ("open('log.txt', 'a')", [("change", "log.txt")]),
    ("open('new.py', 'x')", [("create", "new.py")]),
    ("open('a.py', 'r+')", [("change", "a.py")]),
    ("with open('a.py', 'w') as f:\n    f.write('x')", [("write", "a.py")]),
    ("import io; io.open('a.py', 'w')", [("write", "a.py")]),
    ("import codecs; codecs.open('a.py', 'w', 'utf-8')", [("write", "a.py")]),
    ("import builtins; builtins.open('a.py', 'w')", [("write", "a.py")]),
    ("import gzip; gzip.open('a.gz', 'wb')", [("write", "a.gz")]),
    ("print('x', file=open('src/a.py', 'w'))", [("write", "src/a.py")]),
    ("import json; json.dump({}, open('src/a.py', 'w'))", [("write", "src/a.py")]),
    ("open(b'src/a.py', 'w')", [("write", "src/a.py")]),
    ("open('src/' + 'a.py', 'w')", [("write", "src/a.py")]),
    ("d = 'src'\nopen(f'{d}/a.py', 'w')", [("write", "src/a.py")]),
    ("open(f'src/{name}.py', 'w')", [("write", U)]),
    ("open(path, 'w')", [("write", U)]),
    ("open('a.py', mode)", [("write", "a.py")]),
    ("open(*args)", [("write", U)]),
    ("import os; os.open('a.py', os.O_WRONLY | os.O_CREAT)", [("write", "a.py")]),
    ("from os import open as o, O_RDWR; o('a.py', O_RDWR)", [("write", "a.py")]),
    ("import os; os.open('a.py', 1)", [("write", "a.py")]),
    ("import os; os.open('a.py', flags)", [("write", "a.py")]),
    ("from pathlib import Path; Path('src/app.py').write_text('x')", [("write", "src/app.py")]),
    ("import pathlib; pathlib.Path('src/app.py').write_bytes(b'')", [("write", "src/app.py")]),
    ("from pathlib import Path as P\np = P('src') / 'app.py'\np.write_text('x')", [("write", "src/app.py")]),
    ("from pathlib import Path\nPath('src').joinpath('a.py').write_text('')", [("write", "src/a.py")]),
    ("from pathlib import Path\nPath('src/a.txt').with_suffix('.py').write_text('')", [("write", "src/a.py")]),
    ("from pathlib import Path\nPath('src/x/a.py').parent.joinpath('b.py').touch()", [("create", "src/x/b.py")]),
    ("from pathlib import Path\nPath.cwd() / 'a.py'\n(Path.cwd() / 'a.py').unlink()", [("delete", "a.py")]),
    ("from pathlib import PosixPath\nPosixPath('a.py').unlink(missing_ok=True)", [("delete", "a.py")]),
    ("from pathlib import Path\nPath('d').rmdir()", [("delete", "d")]),
    ("from pathlib import Path\nPath('a.py').rename('b.py')", [("move", "a.py"), ("move onto", "b.py")]),
    ("from pathlib import Path\nPath('a.py').replace(Path('b.py'))", [("move", "a.py"), ("move onto", "b.py")]),
    ("from pathlib import Path\nPath('a.py').open('w')", [("write", "a.py")]),
    ("from pathlib import Path\nPath('a.py').open(mode='a')", [("change", "a.py")]),
    ("from pathlib import Path\nPath('l.py').symlink_to('/etc/x')", [("create", "l.py")]),
    ("from pathlib import Path\nPath('l.py').hardlink_to('x')", [("create", "l.py")]),
    ("from pathlib import Path\nPath.write_text(Path('a.py'), 'x')", [("write", "a.py")]),
    ("p = Path(sys.argv[1])\np.write_text('x')", [("write", U)]),
    ("for f in Path('src').glob('*.py'):\n    f.write_text('')", [("write", U)]),
    ("import shutil; shutil.copy('/tmp/a.py', 'src/app.py')", [("write", "src/app.py")]),
    ("import shutil; shutil.copy2('/tmp/a.py', 'src')", [("write", "src"), ("write", "src/a.py")]),
    ("import shutil; shutil.copyfile('/tmp/a.py', dst='src/b.py')", [("write", "src/b.py")]),
    ("import shutil; shutil.copytree('/tmp/t', 'src')", [("write", "src")]),
    ("from shutil import move as mv; mv('a.py', 'b.py')", [("move", "a.py"), ("move onto", "b.py")]),
    ("import shutil; shutil.move('/tmp/n.py', 'src/')",
     [("move", "/tmp/n.py"), ("move onto", "src/"), ("move onto", "src/n.py")]),
    ("import shutil; shutil.rmtree('src')", [("delete", "src")]),
    ("import os; os.rename('a.py', 'b.py')", [("move", "a.py"), ("move onto", "b.py")]),
    ("import os as o; o.replace('a.py', 'b.py')", [("move", "a.py"), ("move onto", "b.py")]),
    ("import os; os.renames(old='a.py', new='b.py')", [("move", "a.py"), ("move onto", "b.py")]),
    ("import os; os.remove('src/a.py')", [("delete", "src/a.py")]),
    ("from os import remove\nremove('a.py')", [("delete", "a.py")]),
    ("from os import unlink as rm\nrm('a.py')", [("delete", "a.py")]),
    ("from os import *\nunlink('a.py')", [("delete", "a.py")]),
    ("os.unlink('a.py')", [("delete", "a.py")]),  # no import: taken at its word
    ("import os; os.rmdir('d'); os.removedirs('e/f')", [("delete", "d"), ("delete", "e/f")]),
    ("import os; os.truncate('a.py', 0)", [("truncate", "a.py")]),
    ("import os; os.link('x', 'a.py'); os.symlink('x', dst='b.py')", [("create", "a.py"), ("create", "b.py")]),
    ("import os; os.mkfifo('p')", [("create", "p")]),
    ("rm = __import__('os').remove\nrm('a.py')", [("delete", "a.py")]),
    ("import importlib; importlib.import_module('shutil').rmtree('src')", [("delete", "src")]),
    ("import os; r = os.remove; r('a.py')", [("delete", "a.py")]),
    ("import os; os.path.join('src', 'a.py')\nos.remove(os.path.join('src', 'a.py'))", [("delete", "src/a.py")]),
    ("import os; os.remove(str(Path('src') / 'a.py'))", [("delete", "src/a.py")]),
    ("import fileinput\nfor l in fileinput.input('a.py', inplace=True): print(l)", [("change", "a.py")]),
    ("import fileinput\nfileinput.input(['a.py', 'b.py'], inplace=1)", [("change", "a.py"), ("change", "b.py")]),
    ("import tarfile; tarfile.open('x.tar').extractall('src')", [("write", "src")]),
    ("import zipfile; zipfile.ZipFile('x.zip').extractall()", [("write", ".")]),
    ("import zipfile; zipfile.ZipFile('out.zip', 'w')", [("write", "out.zip")]),
    ("import shutil; shutil.unpack_archive('x.tar')", [("write", ".")]),
    ("import urllib.request; urllib.request.urlretrieve('http://x', 'a.py')", [("write", "a.py")]),
    ("exec(\"open('b.py', 'w')\")", [("write", "b.py")]),
    ("exec(code)", [("run", U)]),
    ("import os; open(os.devnull, 'w')", [("write", "/dev/null")]),
    ("a = a + a\nopen(a, 'w')", [("write", U)]),
]

PYTHON_SCRIPTS = [
    ("import os; os.system('sed -i s/a/b/ src/app.py')", "sed -i s/a/b/ src/app.py"),
    ("from os import system as s; s('rm x')", "rm x"),
    ("import os; os.popen('touch a.py').read()", "touch a.py"),
    ("import subprocess; subprocess.run('echo x > a.py', shell=True)", "echo x > a.py"),
    ("import subprocess as sp; sp.call(['sed', '-i', 's/a/b/', 'a.py'])", "sed -i s/a/b/ a.py"),
    ("import subprocess; subprocess.check_call(('rm', 'a b.py'))", "rm 'a b.py'"),
    ("from subprocess import Popen; Popen(['git', 'log'])", "git log"),
    ("import subprocess; subprocess.check_output(args=['ls'])", "ls"),
    ("import subprocess; subprocess.run(['sed', '-i', 's/a/b/', f])", 'sed -i s/a/b/ "$UNKNOWN_INLINE_VALUE"'),
    ("import subprocess; cmd = ['rm', 'a.py']\nsubprocess.run(cmd)", "rm a.py"),
    ("import subprocess; subprocess.run(['rm x', 'sh'], shell=True)", "rm x"),
    ("import subprocess; subprocess.run('ls')", "ls"),
    ("import subprocess; subprocess.run('rm a.py', shell=True, cwd='sub')", "cd sub && rm a.py"),
    ("import subprocess; subprocess.run(['rm', 'a.py'], cwd=d)", 'cd "$UNKNOWN_INLINE_VALUE" && rm a.py'),
    ("import subprocess; subprocess.getoutput('rm a')", "rm a"),
    ("import os; os.execvp('sed', ['sed', '-i', 's/x/y/', 'f.py'])", "sed -i s/x/y/ f.py"),
    ("import os; os.execl('/bin/rm', 'rm', 'a.py')", "/bin/rm a.py"),
    ("import subprocess, sys; subprocess.run([sys.executable, '-c', 'open(1)'])", "python3 -c 'open(1)'"),
]

PYTHON_NOTHING = [
    "open('x.json')", "open('x.json', 'r')", "open('x', 'rb')", "open('x', mode='rt')",
    "import json; json.load(open(p))", "print(open(p).read())", "Path('a.py').read_text()",
    "from pathlib import Path; Path('a.py').open()", "from pathlib import Path; Path('a.py').open('rb')",
    "import os; os.open('a.py', os.O_RDONLY)", "import os; os.open('a', os.O_RDONLY | os.O_CLOEXEC)",
    "print('open(\"src/a.py\", \"w\")')", "x = \"os.remove('a.py')\"",
    "# open('a.py', 'w')\nprint(1)", "'abc'.replace('a', 'b')", "df.rename(columns={'a': 'b'})",
    "s.unlink(path)", "zf.open('name', 'w')", "text.open('w')",
    "import shutil; shutil.which('git')", "import os; os.path.exists('a.py')", "import os; os.listdir('.')",
    "import subprocess", "def open(p, m): pass",
    "import sys; print(sys.version)", "import fileinput\nfor l in fileinput.input('a.py'): print(l)",
    "from pathlib import PurePath; PurePath('a.py').with_suffix('.txt')",
    "eval('1 + 1')", "exec('print(1)')", "import os; os.makedirs('d', exist_ok=True)",
]


@pytest.mark.parametrize("code,expected", PYTHON_WRITES)
def test_python_write_apis(code, expected):
    assert found("python", code) == expected


@pytest.mark.parametrize("code,command", PYTHON_SCRIPTS)
def test_python_shell_outs_are_shell_scripts(code, command):
    assert found("python", code) == [("sh", command)]


@pytest.mark.parametrize("code", PYTHON_NOTHING)
def test_python_reads_and_lookalikes_write_nothing(code):
    assert code_writes("python", code) == []


def test_python_channels_and_words_read_as_a_message():
    assert only("python", "open('src/app.py','w')") == Target("python open(…, 'w')", "write", "src/app.py", "src/app.py")
    assert only("python", "from pathlib import Path\nPath('a.py').write_text('')").channel == "python Path.write_text"
    assert only("python", "import shutil; shutil.rmtree('src')") == Target(
        "python shutil.rmtree", "delete", "src", "src", None, True)
    assert only("python", "from os import remove as rm; rm('a')").channel == "python os.remove"
    unresolved = only("python", "open(f'src/{name}.py', 'w')")
    assert (unresolved.path, unresolved.word) == (None, "f'src/{name}.py'")
    long = only("python", "open(" + "x" * 200 + ", 'w')")
    assert long.path is None and len(long.word) <= 80


def test_python_move_source_is_judged_as_a_tree():
    source, destination = code_writes("python", "import os; os.rename('src', '/tmp/src')")
    assert (source.tree, destination.tree) == (True, False)


def test_python_unresolved_shell_command_fails_closed():
    assert found("python", "import os; os.system(cmd)") == [("run", U)]
    assert found("python", "import os; os.system(f'rm {x}')") == [("run", U)]
    assert found("python", "import subprocess; subprocess.run(cmd_list)") == [("run", U)]
    assert found("python", "import subprocess; subprocess.run(['git', *rest])") == [("run", U)]
    assert only("python", "import os; os.system(cmd)").word == "cmd"


def test_python_chdir_judges_both_readings_of_a_relative_path():
    assert found("python", "import os; os.chdir('src'); open('a.py', 'w')") == [
        ("write", "a.py"), ("write", "src/a.py")]
    assert found("python", "import os; os.chdir('/tmp'); open('/etc/x', 'w')") == [("write", "/etc/x")]
    assert found("python", "import os; os.chdir(d); open('a.txt', 'w')") == [("write", "a.txt"), ("write", U)]
    assert found("python", "import os; os.chdir('sub'); os.system('rm a')") == [("sh", "rm a"), ("sh", "cd sub && rm a")]


def test_python_name_bound_twice_is_unknown():
    assert found("python", "p = 'a.txt'\np = 'src/a.py'\nopen(p, 'w')") == [("write", U)]
    assert found("python", "import os\nos = 1\nos.remove('a')") == []


def test_python_code_that_does_not_compile_writes_nothing():
    assert code_writes("python", "open('a.py', 'w'") == []
    assert code_writes("python", "open('a.py', 'w')\x00") == []
    assert code_writes("python", "  open('a.py','w')") == []  # IndentationError: python runs nothing


def test_python_code_too_deep_to_analyse_fails_closed_without_raising():
    for code in ("open(" + "-" * 100000 + "1, 'w')", "x = " + "a." * 30000 + "b", "(" * 250 + ")" * 250,
                 "f(" * 150 + ")" * 150, "exec('exec(\\'' * 1)"):
        result = code_writes("python", code)
        assert all(isinstance(item, (Target, Script)) for item in result)
    nested = "open('a.py','w')"
    for _ in range(12):
        nested = f"exec({nested!r})"
    assert any(item.path is None for item in code_writes("python", nested))


# ---- node -----------------------------------------------------------------------------------

NODE_WRITES = [
    ("const fs = require('fs'); fs.writeFileSync('src/a.js', 'x')", [("write", "src/a.js")]),
    ("require('fs').writeFileSync(\"src/a.js\", 'x')", [("write", "src/a.js")]),
    ("require('node:fs').appendFileSync('log.txt', 'x')", [("change", "log.txt")]),
    ("fs.writeFile('a.js', 'x', () => {})", [("write", "a.js")]),
    ("fs.promises.writeFile('a.js', 'x')", [("write", "a.js")]),
    ("const fsp = require('fs/promises'); await fsp.writeFile('a.js', '')", [("write", "a.js")]),
    ("import { promises as p } from 'fs'; p.rm('src', { recursive: true })", [("delete", "src")]),
    ("const {writeFileSync: w, readFileSync} = require('fs'); w('a.js', 'x'); readFileSync('b')", [("write", "a.js")]),
    ("import { rename as mv } from 'fs'; mv('a.js', 'b.js')", [("move", "a.js"), ("move onto", "b.js")]),
    ("import * as f from 'fs'; f.unlink('a.js', cb)", [("delete", "a.js")]),
    ("import f from 'node:fs'; f.rmSync('dist', {force: true})", [("delete", "dist")]),
    ("fs.createWriteStream('out.js')", [("write", "out.js")]),
    ("fs.renameSync('a.js', 'b.js')", [("move", "a.js"), ("move onto", "b.js")]),
    ("fs.unlinkSync('a.js'); fs.rmdirSync('d')", [("delete", "a.js"), ("delete", "d")]),
    ("fs.copyFileSync('/tmp/a.js', 'src/a.js')", [("write", "src/a.js")]),
    ("fs.cpSync('/tmp/t', 'src', {recursive: true})", [("write", "src")]),
    ("fs.truncateSync('a.js')", [("truncate", "a.js")]),
    ("fs.symlinkSync('/x', 'l.js'); fs.linkSync('x', 'h.js')", [("create", "l.js"), ("create", "h.js")]),
    ("fs.openSync('a.js', 'w'); fs.openSync('b.js', 'a+'); fs.openSync('c.js', 'r')", [("write", "a.js"), ("change", "b.js")]),
    ("fs.open('a.js', flags, cb)", [("write", "a.js")]),
    ("fs.writeFileSync(path.join(__dirname, 'src', 'a.js'), '')", [("write", "src/a.js")]),
    ("fs.writeFileSync('src/' + 'a.js', '')", [("write", "src/a.js")]),
    ("fs.writeFileSync(`src/a.js`, '')", [("write", "src/a.js")]),
    ("fs.writeFileSync(`src/${n}.js`, '')", [("write", U)]),
    ("fs.writeFileSync(p, '')", [("write", U)]),
    ("writeFileSync(p, '')", [("write", U)]),
    ("['a', 'b'].forEach(fs.unlinkSync)", [("delete", U)]),
    ("const x = /'/; fs.writeFileSync('src/a.js', '')", [("write", "src/a.js")]),
    ("// fs.writeFileSync('x')\nfs.writeFileSync('a.js', '') /* fs.rmSync('y') */", [("write", "a.js")]),
    ("console.log(`${fs.writeFileSync('a.js', '')}`)", [("write", "a.js")]),
    ("require('fs-extra').outputFileSync('a.js', '')", [("write", "a.js")]),
    ("process.chdir('src'); fs.writeFileSync('a.js', '')", [("write", "a.js"), ("write", "src/a.js")]),
    ("fs.writeFileSync\n  ('a.js', '')", [("write", "a.js")]),
]

NODE_SCRIPTS = [
    ("require('child_process').execSync('sed -i s/a/b/ a.js')", ["sed -i s/a/b/ a.js"]),
    ("const cp = require('child_process'); cp.exec('rm a.js', cb)", ["rm a.js"]),
    ("const { execSync: run } = require('child_process'); run('rm a')", ["rm a"]),
    ("import { spawnSync } from 'node:child_process'; spawnSync('sed', ['-i', 's/a/b/', 'a.js'])",
     ["sed -i s/a/b/ a.js"]),
    ("child_process.spawn('rm', ['a b.js'], {stdio: 'inherit'})", ["rm 'a b.js'"]),
    ("child_process.execFileSync('git', ['status'])", ["git status"]),
    ("child_process.spawnSync('ls')", ["ls"]),
    ("child_process.spawnSync('rm', ['x'], {shell: true})", ["rm x"]),
    ("child_process.spawnSync('sed', ['-i', 's/a/b/', f])", ['sed -i s/a/b/ "$UNKNOWN_INLINE_VALUE"']),
    ("require('child_process').execSync('rm a', {cwd: 'sub'})", ["cd sub && rm a"]),
]

NODE_NOTHING = [
    "console.log('fs.writeFileSync(\"src/a.js\")')", "console.log(\"fs.rmSync('src')\")",
    "fs.readFileSync('a.js', 'utf8')", "fs.existsSync('a.js')", "fs.readdirSync('.')",
    "JSON.parse(fs.readFileSync('package.json'))", "let s = 'abc'; s.replace('a', 'b')",
    "/re/.exec(s)", "obj.rename('x')", "db.open('x', 'w')", "x.unlink(y)", "const t = `a ${b} c`",
    "// fs.writeFileSync('a.js', '')", "/* require('fs').rmSync('src') */", "exec('rm -rf src')",
    "function writeFile(p) {}", "fs.openSync('a.js')", "fs.openSync('a.js', 'r')",
    "process.stdout.write('x')", "console.log(1 / 2 / 3)",
]


@pytest.mark.parametrize("code,expected", NODE_WRITES)
def test_node_write_apis(code, expected):
    assert found("node", code) == expected


@pytest.mark.parametrize("code,commands", NODE_SCRIPTS)
def test_node_child_process_is_a_shell_script(code, commands):
    assert found("node", code) == [("sh", command) for command in commands]


@pytest.mark.parametrize("code", NODE_NOTHING)
def test_node_reads_and_lookalikes_write_nothing(code):
    assert code_writes("node", code) == []


def test_node_channel_and_word():
    assert only("node", "fs.writeFileSync('a.js', '')") == Target("node fs.writeFileSync", "write", "a.js", "a.js")
    assert only("node", "fs.writeFileSync(`src/${n}.js`, '')").word == "`src/${n}.js`"
    assert found("node", "require('child_process').execSync(cmd)") == [("run", U)]
    assert found("node", "require('child_process').spawnSync('rm', args)") == [("run", U)]


# ---- perl -----------------------------------------------------------------------------------

PERL_WRITES = [
    ("open(FH, '>', 'src/a.pl'); print FH 'x'; close FH", [("write", "src/a.pl")]),
    ("open(my $fh, '>>', \"log.txt\") or die", [("change", "log.txt")]),
    ("open(my $fh, '+<', 'a.pl')", [("change", "a.pl")]),
    ("open(my $fh, '>:encoding(UTF-8)', 'a.pl')", [("write", "a.pl")]),
    ("open(FH, \">src/a.pl\") || die", [("write", "src/a.pl")]),
    ("open FH, \">src/a.pl\" or die", [("write", "src/a.pl")]),
    ("open(FH, '>> a.pl')", [("change", "a.pl")]),
    ("open(my $fh, '>', $file)", [("write", U)]),
    ("open(my $fh, $mode, 'a.pl')", [("write", "a.pl")]),
    ("open(G, \">$g\")", [("write", U)]),
    ("open(G, $spec)", [("write", U)]),
    ("open(my $fh, q{>}, q{a.pl})", [("write", "a.pl")]),
    ("unlink 'a.pl', 'b.pl'", [("delete", "a.pl"), ("delete", "b.pl")]),
    ("unlink(qw(c.pl d.pl))", [("delete", "c.pl"), ("delete", "d.pl")]),
    ("unlink $f", [("delete", U)]),
    ("for (@x) { unlink; }", [("delete", U)]),
    ("rename('x.pl', 'y.pl')", [("move", "x.pl"), ("move onto", "y.pl")]),
    ("rename 'x.pl', 'y.pl' or die", [("move", "x.pl"), ("move onto", "y.pl")]),
    ("rmdir('d'); truncate('a.pl', 0)", [("delete", "d"), ("truncate", "a.pl")]),
    ("symlink('/x', 'l.pl'); link('x', 'h.pl')", [("create", "l.pl"), ("create", "h.pl")]),
    ("use File::Copy; copy('/tmp/a.pl', 'src/b.pl')", [("write", "src/b.pl")]),
    ("use File::Copy; copy('/tmp/a.pl', 'src')", [("write", "src"), ("write", "src/a.pl")]),
    ("File::Copy::move('a.pl', 'b.pl')", [("move", "a.pl"), ("move onto", "b.pl")]),
    ("use File::Path qw(rmtree); rmtree('src')", [("delete", "src")]),
    ("use Fcntl; sysopen(FH, 'a.pl', O_WRONLY|O_CREAT)", [("write", "a.pl")]),
    ("print \"@{[ unlink 'a.pl' ]}\"", [("delete", "a.pl")]),
    ("chdir 'src'; unlink 'a.pl'", [("delete", "a.pl"), ("delete", "src/a.pl")]),
]

PERL_SCRIPTS = [
    ("system('sed -i s/a/b/ x.pl')", ["sed -i s/a/b/ x.pl"]),
    ("system 'rm', '-f', 'x.pl'", ["rm -f x.pl"]),
    ("system('sed', '-i', 's/a/b/', $f)", ['sed -i s/a/b/ "$UNKNOWN_INLINE_VALUE"']),
    ("exec('rm x')", ["rm x"]),
    ("my $o = `rm -f y.pl`", ["rm -f y.pl"]),
    ("my $o = qx{touch z.pl}", ["touch z.pl"]),
    ("my $o = qx'rm $x'", ["rm $x"]),
    ("open(my $p, '|-', 'tee', 'out.pl')", ["tee out.pl"]),
    ("open(P, '| tee out.pl')", ["tee out.pl"]),
    ("open(P, 'rm x |')", ["rm x"]),
    ("readpipe('rm x')", ["rm x"]),
]

PERL_NOTHING = [
    "open(FH, '<', 'a.pl')", "open(FH, 'a.pl')", "open(FH, \"<$f\")", "open(my $fh, '<:raw', $f)",
    "open(STDERR, '>&', STDOUT)", "open(OLD, '>&STDOUT')", "print 'unlink(\"x\")'", "s/'/\"/g; print 1",
    "my %h = (open => 1, unlink => 2)", "$obj->unlink('x')", "$h{open}", "print \"rename('a', 'b')\"",
    "# unlink 'a.pl'\nprint 1", "my @x = grep { /open/ } @y", "print q{system('rm x')}",
    "tr/a-z/A-Z/", "y/'//", "sub copy { 1 }", "truncate(FH, 0)", "print <<'EOF';\nunlink('a.pl');\nEOF\n",
]


@pytest.mark.parametrize("code,expected", PERL_WRITES)
def test_perl_write_apis(code, expected):
    assert found("perl", code) == expected


@pytest.mark.parametrize("code,commands", PERL_SCRIPTS)
def test_perl_shell_outs_are_shell_scripts(code, commands):
    assert found("perl", code) == [("sh", command) for command in commands]


@pytest.mark.parametrize("code", PERL_NOTHING)
def test_perl_reads_and_lookalikes_write_nothing(code):
    assert code_writes("perl", code) == []


def test_perl_interpolated_command_fails_closed():
    assert found("perl", "my $o = `rm $f`") == [("run", U)]
    assert found("perl", "system($cmd)") == [("run", U)]
    assert found("perl", "system(@cmd)") == [("run", U)]


# ---- ruby -----------------------------------------------------------------------------------

RUBY_WRITES = [
    ("File.write('src/a.rb', 'x')", [("write", "src/a.rb")]),
    ("File.write 'src/a.rb', 'x'", [("write", "src/a.rb")]),
    ("IO.write(\"a.rb\", 'x'); File.binwrite('b.rb', '')", [("write", "a.rb"), ("write", "b.rb")]),
    ("File.open('a.rb', 'w') { |f| f.puts 1 }", [("write", "a.rb")]),
    ("File.open('a.rb', 'a+') do |f| end", [("change", "a.rb")]),
    ("File.open('c.rb', mode: 'w')", [("write", "c.rb")]),
    ("File.open('c.rb', File::WRONLY | File::CREAT)", [("write", "c.rb")]),
    ("File.new('n.rb', 'w')", [("write", "n.rb")]),
    ("open('k.rb', 'w')", [("write", "k.rb")]),
    ("File.open(path, 'w')", [("write", U)]),
    ("File.open('a.rb', mode)", [("write", "a.rb")]),
    ("File.write(\"src/#{n}.rb\", 'x')", [("write", U)]),
    ("File.delete('a.rb', 'b.rb')", [("delete", "a.rb"), ("delete", "b.rb")]),
    ("File.unlink('a.rb')", [("delete", "a.rb")]),
    ("File.rename('a.rb', 'b.rb')", [("move", "a.rb"), ("move onto", "b.rb")]),
    ("File.truncate('a.rb', 0)", [("truncate", "a.rb")]),
    ("File.symlink('/x', 'l.rb')", [("create", "l.rb")]),
    ("FileUtils.cp('/tmp/a.rb', 'src/b.rb')", [("write", "src/b.rb")]),
    ("FileUtils.cp '/tmp/a.rb', 'src'", [("write", "src"), ("write", "src/a.rb")]),
    ("FileUtils.mv 'a.rb', 'b.rb'", [("move", "a.rb"), ("move onto", "b.rb")]),
    ("FileUtils.rm_rf(%w[src lib])", [("delete", "src"), ("delete", "lib")]),
    ("FileUtils.rm(['a.rb', 'b.rb'])", [("delete", "a.rb"), ("delete", "b.rb")]),
    ("FileUtils.rm_f 'a.rb'", [("delete", "a.rb")]),
    ("FileUtils.touch('t.rb')", [("create", "t.rb")]),
    ("FileUtils.ln_s('/x', 'l.rb')", [("create", "l.rb")]),
    ("FileUtils.install('/tmp/a.rb', 'bin/a.rb')", [("write", "bin/a.rb")]),
    ("FileUtils.rm(Dir.glob('*.rb'))", [("delete", U)]),
    ("Pathname.new('a.rb').write('x'); Pathname('b.rb').delete", [("write", "a.rb"), ("delete", "b.rb")]),
    ("puts \"#{File.delete('a.rb')}\"", [("delete", "a.rb")]),
    ("File.write(File.join('src', 'a.rb'), '')", [("write", "src/a.rb")]),
    ("Dir.chdir('src'); File.write('a.rb', '')", [("write", "a.rb"), ("write", "src/a.rb")]),
]

RUBY_SCRIPTS = [
    ("system('sed -i s/a/b/ x.rb')", ["sed -i s/a/b/ x.rb"]),
    ("system 'rm', '-f', 'x.rb'", ["rm -f x.rb"]),
    ("system('sed', '-i', 's/a/b/', f)", ['sed -i s/a/b/ "$UNKNOWN_INLINE_VALUE"']),
    ("system({'A' => '1'}, 'rm x')", ["rm x"]),
    ("system('rm x', chdir: 'sub')", ["cd sub && rm x"]),
    ("exec('rm x')", ["rm x"]),
    ("`rm y.rb`", ["rm y.rb"]),
    ("%x{touch z.rb}", ["touch z.rb"]),
    ("IO.popen('rm x')", ["rm x"]),
    ("IO.popen(['rm', 'x'])", ["rm x"]),
    ("Open3.capture2('rm', 'x')", ["rm x"]),
    ("open('|rm -rf src')", ["rm -rf src"]),
]

RUBY_NOTHING = [
    "File.read('a.rb')", "File.open('b.rb') { |f| f.read }", "File.open('b.rb', 'r')", "File.exist?('a.rb')",
    "puts 'File.write(\"a.rb\", 1)'", "puts %q{FileUtils.rm_rf('src')}", "# File.delete('a.rb')\nputs 1",
    "x = <<~EOS\n  File.write('a.rb')\nEOS\nputs x", "s.gsub(/'/, '\"')", "obj.write('a.rb')",
    "Dir.glob('*.rb')", "File.basename('a.rb')", "h = { open: 1 }", "x.system", "a % 2",
    "=begin\nFile.write('a.rb', '')\n=end\nputs 1",
]


@pytest.mark.parametrize("code,expected", RUBY_WRITES)
def test_ruby_write_apis(code, expected):
    assert found("ruby", code) == expected


@pytest.mark.parametrize("code,commands", RUBY_SCRIPTS)
def test_ruby_shell_outs_are_shell_scripts(code, commands):
    assert found("ruby", code) == [("sh", command) for command in commands]


@pytest.mark.parametrize("code", RUBY_NOTHING)
def test_ruby_reads_and_lookalikes_write_nothing(code):
    assert code_writes("ruby", code) == []


def test_ruby_interpolated_command_fails_closed():
    assert found("ruby", "`rm #{f}`") == [("run", U)]
    assert found("ruby", "system(cmd)") == [("run", U)]


# ---- contract -------------------------------------------------------------------------------

def test_unknown_language_is_a_value_error():
    with pytest.raises(ValueError):
        code_writes("php", "unlink('a.php');")


def test_importing_the_module_loads_neither_re_nor_ast():
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import maestro.hooks.inline_code; "
             "print(sorted({'re', 'ast', 'json', 'maestro.hooks.inline_python'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(ROOT)], capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stderr


@pytest.mark.parametrize("lang,call", [("node", "fs.writeFileSync("), ("perl", "unlink "), ("ruby", "File.write ")])
def test_thousands_of_overlapping_calls_fail_closed(lang, call):
    result = code_writes(lang, call * 5000)
    assert any(item.path is None and item.word == "(code too long to analyse)" for item in result)


def test_shell_out_words_name_the_command_as_written():
    assert code_writes("python", "import os; os.system('rm a')")[0].word == "'rm a'"
    assert code_writes("node", "require('child_process').execSync(`rm a`)")[0].word == "`rm a`"
    assert code_writes("perl", "system 'rm', 'a'")[0].word == "'rm', 'a'"


@pytest.mark.parametrize("lang", ["node", "perl", "ruby"])
def test_unterminated_code_with_a_write_api_fails_closed(lang):
    code = {"node": "fs.writeFileSync('a.js", "perl": "unlink 'a.pl", "ruby": "File.write('a.rb"}[lang]
    assert any(item.path is None for item in code_writes(lang, code))


# ---- fuzz -----------------------------------------------------------------------------------

FRAGMENTS = {
    "python": ["open(", "'a.py'", ", 'w')", "Path(", ").write_text(", "os.remove(", "import os", "\n", "(", ")",
               "[", "]", "{", "}", "f'{", "'", '"', "\\", "#", ":", "lambda x:", "exec(", "subprocess.run(",
               "shell=True", " as ", "from os import ", "*", "**", ",", "=", "+", "/", "\x00", "\ue000", "é"],
    "node": ["fs.writeFileSync(", "'a.js'", "`${", "}`", "require('fs')", "/", "/*", "*/", "//", "\n", "(", ")",
             "{", "}", "[", "]", "'", '"', "`", "\\", ",", "const {w} = ", "execSync(", "\ue000", "\ue0011\ue001"],
    "perl": ["open(", "FH", ", '>'", ", 'a.pl')", "unlink ", "qw(", "q{", "}", "s/", "/", "'", '"', "`", "qx{",
             "<<EOF", "\nEOF\n", "#", "$", "@{[", "]}", "(", ")", ";", " or die", "=pod\n", "=cut\n", "\\", "->"],
    "ruby": ["File.write(", "'a.rb'", "%w[", "%x{", "}", "]", "<<~EOS", "\nEOS\n", "#{", "`", "'", '"', "/",
             "=begin\n", "=end\n", "FileUtils.rm_rf ", "(", ")", ",", "%", "Pathname(", ").delete", "\\", "?"],
}


@pytest.mark.parametrize("lang", ["python", "node", "perl", "ruby"])
def test_fuzz_random_and_malformed_code_never_raises(lang):
    rng = random.Random(f"maestro-inline-{lang}")
    pieces = FRAGMENTS[lang]
    for _ in range(1500):
        if rng.random() < 0.2:
            code = "".join(rng.choice("()[]{}'\"`/\\#$@%<>=;,.\n ab\x00\ue000\ue001") for _ in range(rng.randint(0, 200)))
        else:
            code = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
        result = code_writes(lang, code)
        assert isinstance(result, list)
        for item in result:
            assert isinstance(item, (Target, Script))
            if isinstance(item, Target):
                assert item.path is None or isinstance(item.path, str)
                assert isinstance(item.word, str) and item.word
                assert item.word != "(code the gate could not analyse)", code  # no internal error


@pytest.mark.parametrize("lang,unit", [("python", "("), ("python", "["), ("python", "-"), ("python", "not "),
                                        ("node", "("), ("node", "{"), ("perl", "("), ("ruby", "[")])
def test_deeply_nested_code_answers_without_raising(lang, unit):
    code = unit * 50000 + "x"
    result = code_writes(lang, code)
    assert isinstance(result, list)


# ---- dynamic access to write APIs (inline_python_dynamic.py, inline_node.py computed members) ----

DYNAMIC_PYTHON = [
    "getattr(__builtins__, 'open')('src/app.py', 'w').write('pwned')",
    "__builtins__.open('src/app.py', 'w').write('pwned')",
    "import os; getattr(os, 'sys' + 'tem')('echo pwned > src/app.py')",
    "import os; getattr(os, 'system')('echo pwned > src/app.py')",
    "import os; os.__dict__['system']('echo pwned > src/app.py')",
    "import os; list(map(os.system, ['echo pwned > src/app.py']))",
    "import pty; pty.spawn(['sh', '-c', 'echo pwned > src/app.py'])",
    "import ctypes; ctypes.CDLL(None).system(b'echo pwned > src/app.py')",
    "import code; code.InteractiveInterpreter().runsource('open(\"src/app.py\",\"w\")')",
    "import logging; logging.basicConfig(filename='src/app.py'); logging.error('pwned')",
    "import logging; logging.getLogger().addHandler(logging.FileHandler('src/app.py'))",
    'import os\n@os.system\n@lambda f: "echo pwned > src/app.py"\nclass X: pass\n',
    "globals()['__builtins__'].open('src/app.py','w')",
    "m = 'o' + 's'; __import__(m).system('x')",
    "import importlib; importlib.import_module('o' + 's').system('x')",
    "import timeit; timeit.timeit('open(\"src/app.py\",\"w\")')",
]


@pytest.mark.parametrize("code", DYNAMIC_PYTHON)
def test_python_reaching_a_write_api_dynamically_fails_closed(code):
    assert (("run", U) in found("python", code)) or any(
        action != "run" and path == "src/app.py" for action, path in found("python", code))


@pytest.mark.parametrize("code", [
    "import os; print(getattr(os, 'sep'))", "import os; print(os.getcwd())",
    "print(vars())", "x = {'a': 1}; print(getattr(x, 'get')('a'))", "import os; print(os.path.join('a', 'b'))",
    "print(sorted(map(str, [3, 1])))",
])
def test_python_with_harmless_dynamic_access_writes_nothing(code):
    assert ("run", U) not in found("python", code)


@pytest.mark.parametrize("code", [
    'require("child_process")["exec"+"Sync"]("echo x > src/app.py")',
    'const fs = require("fs"); fs[name]("src/app.py", "x")',
    'const cp = require("child_process"); cp["exec"]("x")',
])
def test_node_computed_member_of_fs_or_child_process_fails_closed(code):
    assert ("run", U) in found("node", code)


def test_node_plain_member_access_is_unchanged():
    assert found("node", 'const fs = require("fs"); console.log(fs.existsSync("a"))') == []
    assert found("node", 'const a = [1]; console.log(a[0])') == []


# ------------------------------------------------ string evaluation (third attack round): fail closed


@pytest.mark.parametrize(("lang", "code"), [
    ("node", 'eval("require(\\"fs\\").unlinkSync(\\"src/app.py\\")")'),
    ("node", 'Function("r", "r(\\"fs\\").rmSync(\\"src/app.py\\")")(require)'),
    ("node", 'new Function("x")()'),
    ("node", 'require("vm").runInNewContext("r(\\"fs\\").unlinkSync(\\"src/app.py\\")", {r: require})'),
    ("perl", 'eval q{unlink "src/app.py"}'),
    ("perl", 'eval "unlink q{src/app.py}"'),
    ("perl", 'my $code = shift; eval $code'),
    ("ruby", 'eval("File.delete(\\"src/app.py\\")")'),
    ("ruby", 'Object.new.instance_eval("File.delete(1)")'),
])
def test_code_built_from_strings_at_run_time_fails_closed(lang, code):
    found = code_writes(lang, code)
    assert any(isinstance(t, Target) and t.path is None and t.action == "run" for t in found), found


@pytest.mark.parametrize(("lang", "code"), [
    ("node", 'console.log(JSON.parse("{}"))'),
    ("node", 'const evaluate = 1; console.log(evaluate, "eval(x)")'),
    ("perl", 'eval { 1 }; print "eval"'),
    ("ruby", 'x.instance_eval { 1 }; puts "eval"'),
])
def test_block_eval_and_the_word_in_strings_stay_allowed(lang, code):
    assert code_writes(lang, code) == []


@pytest.mark.parametrize(("code", "path"), [
    ('import cProfile; cProfile.run("1", "src/app.py")', "src/app.py"),
    ('import profile; profile.runctx("1", {}, {}, "src/app.py")', "src/app.py"),
    ('import cProfile; cProfile.Profile().dump_stats("src/app.py")', "src/app.py"),
    ('import py_compile; py_compile.compile("src/util.py", cfile="src/app.py")', "src/app.py"),
    ('import tarfile; tarfile.open("/tmp/e.tar").extract("src/app.py")', "."),
    ('from distutils.file_util import copy_file; copy_file("/tmp/x", "src/app.py")', "src/app.py"),
    ('import readline; readline.write_history_file("src/app.py")', "src/app.py"),
    ('import wave; wave.open("src/app.py", "wb")', "src/app.py"),
])
def test_standard_library_writers_from_the_third_attack_round(code, path):
    assert [t.path for t in code_writes("python", code) if isinstance(t, Target)] == [path]


def test_pipes_template_runs_shell_text_and_fails_closed():
    found = code_writes("python", 'import pipes; t = pipes.Template(); t.append("rm src/app.py", "--")')
    assert [(t.path, t.action) for t in found] == [(None, "run")]


@pytest.mark.parametrize("code", ['import wave; print(wave.open("a.wav").getnframes())', 'import cProfile; cProfile.run("1")',
                                  'import readline; readline.read_history_file("/tmp/h")'])
def test_standard_library_readers_stay_allowed(code):
    assert code_writes("python", code) == []
