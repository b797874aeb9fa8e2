"""Seeded property test of the Bash gate: write channels × wrappers × quoting × nesting (issue 14, part 1).

A write to src/app.py (a source file under the nonexistent REPO) is blocked however it is wrapped
(sudo, env X=1, timeout 5, nice -n 5, command, nohup, stdbuf -o0), however its target is quoted
(plain, '…', "…", backslashes, $'…', $'\\x..', mixed) and however it is nested (bash -c '…', sh -c "…",
eval, $(…), ( … ), { …; }, if, for, &&, ;, |), up to three levels deep. A read of the same file (or a
write to scratch) composed the same way is never blocked. Each nesting level quotes its inner
command exactly (`quote`), so the composed text means what it says; test_quoting_* checks that with
a real bash when one is installed. `sh -c` text is judged as bash would run it (where sh is dash, the
`$'…'` and `&>` spellings differ, and a static gate errs towards blocking).

Seeds are fixed so a failure reproduces; the failing commands are printed. The source target runs
every case in-process; the pyz target runs a sample through the archive (each call is a process).
"""

import random
import shutil
import subprocess

import pytest

from testing.bash_corpus import REPO, bash_payload, describe, is_allowed, is_policy_block

SEEDS = (0x6D61, 0x6573, 0x7472)
CASES_PER_SEED = 300
PYZ_SAMPLE_PER_SEED = 7  # × 3 seeds × 2 kinds ≈ 40 archive runs
MAX_READ_DEPTH = 3

# ---------------------------------------------------------------------------------------- quoting

TARGET_STYLES = ("plain", "single", "double", "backslash", "ansi", "ansi-hex", "mixed")
WORD_STYLES = ("single", "double", "ansi", "backslash")  # for a whole command passed as one word


def quote(text: str, style: str) -> str:
    """A shell word that bash expands to exactly `text` (no newlines in `text`)."""
    assert "\n" not in text
    if style == "plain":
        assert all(ch.isalnum() or ch in "/._-" for ch in text), text
        return text
    if style == "single":
        return "'" + text.replace("'", "'\\''") + "'"
    if style == "double":
        return '"' + "".join("\\" + ch if ch in '\\"$`' else ch for ch in text) + '"'
    if style == "backslash":
        return "".join("\\" + ch for ch in text)
    if style == "ansi":
        return "$'" + "".join("\\" + ch if ch in "\\'" else ch for ch in text) + "'"
    if style == "ansi-hex":
        return "$'" + "".join(f"\\x{ord(ch):02x}" if ch.isalpha() else ("\\" + ch if ch in "\\'" else ch)
                              for ch in text) + "'"
    if style == "mixed":
        half = len(text) // 2
        return quote(text[:half], "single") + quote(text[half:], "double")
    raise ValueError(style)


# ---------------------------------------------------------------------------------------- pieces

TARGETS = ("src/app.py", "./src/app.py", f"{REPO}/src/app.py", "src//app.py", "src/./app.py")
EXTERNAL_WRAPPERS = ("sudo ", "env X=1 ", "timeout 5 ", "nice -n 5 ", "nohup ", "stdbuf -o0 ")

# {W} is where a wrapper goes, {T} the quoted target; a callable gets (r) and builds inline code.
WRITE_CHANNELS = (
    "{W}echo x > {T}", "{W}printf 'x\\n' >> {T}", "{W}cat /tmp/in.txt >| {T}", "{W}echo x &> {T}",
    "{W}echo x &>> {T}", "{W}echo x 1> {T}", "{W}ls 2> {T}", "{W}cat <> {T}",
    "{W}sed -i 's/a/b/' {T}", "{W}sed -i.bak -e 's/a/b/' {T}", "{W}sed --in-place 's/a/b/' {T}",
    "{W}sed -E -i 's/a/b/' {T}", "{W}perl -pi -e 's/a/b/' {T}", "{W}ruby -i -pe '$_.upcase!' {T}",
    "echo data | {W}tee {T}", "echo data | {W}tee -a /tmp/log.txt {T}", "{W}cp /tmp/in.py {T}",
    "{W}mv /tmp/in.py {T}", "{W}install -m 644 /tmp/in.py {T}", "{W}ln -sf /tmp/in.py {T}",
    "{W}rsync -a /tmp/in.py {T}", "{W}dd if=/tmp/in.py of={T}", "{W}truncate -s 0 {T}", "{W}touch {T}",
    "{W}rm -f {T}", "{W}unlink {T}", "{W}sort -o {T} /tmp/in.txt", "{W}curl -sSo {T} https://example.com/x",
    "{W}wget -qO {T} https://example.com/x", "{W}git checkout -- {T}", "{W}git restore {T}",
    "{W}git rm -q {T}", "printf '%s\\n' ',s/a/b/' w q | {W}ed -s {T}", "{W}vim -es -c '%s/a/b/' -c wq {T}",
    "{W}ex -sc '%s/a/b/|x' {T}", "{W}patch {T} /tmp/fix.diff", "echo {T} | {W}xargs rm -f",
    "{W}find {T} -delete", "{W}find . -name app.py -exec rm -f {T} ';'",
    lambda r: "{W}python3 -c " + quote("open('src/app.py','w').write('x')", r.choice(WORD_STYLES)),
    lambda r: "{W}node -e " + quote("require('fs').writeFileSync('src/app.py','x')", r.choice(WORD_STYLES)),
    lambda r: "{W}perl -e " + quote('open(my $f, ">", "src/app.py") or die', r.choice(WORD_STYLES)),
    lambda r: "{W}ruby -e " + quote('File.write("src/app.py", "x")', r.choice(WORD_STYLES)),
)

READ_CHANNELS = (
    "{W}cat {T}", "{W}grep -n 'def ' {T}", "{W}sed -n '1,20p' {T}", "{W}sed 's/a/b/' {T}", "{W}head -n 5 {T}",
    "{W}tail -n 20 {T}", "{W}wc -l {T}", "{W}awk '{print $1}' {T}", "{W}git diff -- {T}",
    "{W}git log --oneline -- {T}", "{W}diff {T} /tmp/other.py", "{W}cp {T} /tmp/copy.py", "{W}sort {T}",
    "{W}perl -ne 'print if /x/' {T}", "{W}ls -la {T}", "{W}stat {T}", "{W}cat {T} > /tmp/out.txt",
    "{W}cat {T} 2>&1 | tail -n 3", "{W}tee /tmp/log.txt < {T}", "{W}pytest -q {T} 2>&1 | tail -5",
    "{W}rg -n foo {T}", "{W}tar -czf /tmp/x.tgz {T}", "{W}dd if={T} of=/tmp/copy.py",
    "{W}sed -i 's/a/b/' /tmp/scratch.py", "{W}echo x > /tmp/scratch.py", "{W}rm -f /tmp/scratch.py",
    "{W}echo 'x > src/app.py'", "{W}git show HEAD:{T}", "{W}grep -c x {T} > /dev/null",
    lambda r: "{W}python3 -c " + quote("print(open('src/app.py').read())", r.choice(WORD_STYLES)),
    lambda r: "{W}node -e " + quote("console.log(require('fs').readFileSync('src/app.py','utf8'))",
                                    r.choice(WORD_STYLES)),
)


def wrapper_prefix(r: random.Random) -> str:
    """0-2 external wrappers, sometimes under `command` (a builtin, so only outermost)."""
    prefix = "".join(r.choice(EXTERNAL_WRAPPERS) for _ in range(r.choice((0, 0, 1, 1, 2))))
    if r.random() < 0.15:
        prefix = "command " + prefix
    return prefix


def innermost(r: random.Random, channels) -> str:
    channel = r.choice(channels)
    template = channel(r) if callable(channel) else channel
    target = quote(r.choice(TARGETS), r.choice(TARGET_STYLES))
    return template.replace("{W}", wrapper_prefix(r)).replace("{T}", target)


def nest(r: random.Random, command: str) -> str:
    """One level of nesting around `command`, quoting it exactly where it becomes a word."""
    form = r.choice(("bash -c", "sh -c", "eval", "$()", "subshell", "group", "if", "for", "&&", ";", "|"))
    wrapper = r.choice(("",) * 3 + EXTERNAL_WRAPPERS)
    if form == "bash -c":
        return f"{wrapper}bash -c {quote(command, r.choice(WORD_STYLES))}"
    if form == "sh -c":
        return f"{wrapper}sh -c {quote(command, 'double')}"
    if form == "eval":
        return f"eval {quote(command, r.choice(WORD_STYLES))}"
    if form == "$()":
        return f'echo "$( {command} )"'  # the space keeps `$( (` from reading as arithmetic `$((`
    if form == "subshell":
        return f"( {command} )"
    if form == "group":
        return f"{{ {command}; }}"
    if form == "if":
        return f"if true; then {command}; fi"
    if form == "for":
        return f"for i in 1; do {command}; done"
    if form == "&&":
        return f"true && {command}"
    if form == ";":
        return f"echo start; {command}"
    return f"echo data | {command}"


def compose(r: random.Random, channels) -> str:
    command = innermost(r, channels)
    for _ in range(r.randint(0, MAX_READ_DEPTH)):
        command = nest(r, command)
    return command


def cases(seed: int, channels) -> list:
    r = random.Random(seed)
    return [compose(r, channels) for _ in range(CASES_PER_SEED)]


def selected(maestro, seed, commands):
    if maestro.target == "pyz":
        return random.Random(seed).sample(commands, PYZ_SAMPLE_PER_SEED)
    return commands


# ------------------------------------------------------------------------------------------ tests


@pytest.mark.parametrize("seed", SEEDS)
def test_a_write_to_source_is_blocked_however_it_is_wrapped_quoted_or_nested(maestro, seed):
    commands = selected(maestro, seed, cases(seed, WRITE_CHANNELS))
    misses = []
    for command in commands:
        result = maestro("gate", stdin=bash_payload(command))
        if not is_policy_block(result):
            misses.append(f"  {command!r} → {describe(result)}")
    assert not misses, f"seed {seed:#x}: {len(misses)} of {len(commands)} writes not blocked:\n" + "\n".join(misses[:25])


@pytest.mark.parametrize("seed", SEEDS)
def test_a_read_is_never_blocked_however_it_is_wrapped_quoted_or_nested(maestro, seed):
    commands = selected(maestro, seed + 1, cases(seed + 1, READ_CHANNELS))
    false_blocks = []
    for command in commands:
        result = maestro("gate", stdin=bash_payload(command))
        if not is_allowed(result):
            false_blocks.append(f"  {command!r} → {describe(result)}")
    assert not false_blocks, (f"seed {seed + 1:#x}: {len(false_blocks)} of {len(commands)} reads blocked:\n"
                              + "\n".join(false_blocks[:25]))


def test_the_generators_cover_every_wrapper_style_and_nesting_form():
    commands = [c for seed in SEEDS for c in cases(seed, WRITE_CHANNELS) + cases(seed + 1, READ_CHANNELS)]
    text = "\n".join(commands)
    for needle in ("sudo ", "env X=1 ", "timeout 5 ", "nice -n 5 ", "command ", "nohup ", "stdbuf -o0 ",
                   "bash -c ", "sh -c \"", "eval ", '"$( ', "( ", "{ ", "if true; then", "for i in 1; do",
                   "true && ", "echo start; ", "echo data | ", "$'", "\\s\\r\\c", "$'\\x73"):
        assert needle in text, needle
    depths = {c.count("bash -c") + c.count("sh -c") + c.count("eval ") for c in commands}
    assert max(depths) >= 3


# -------------------------------------------------------------------- the generator means what it says

needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="needs a bash to check the quoting")


@needs_bash
@pytest.mark.parametrize("style", TARGET_STYLES)
@pytest.mark.in_process
def test_quoting_round_trips_through_bash(style):
    texts = ["src/app.py", "./src/app.py", "src//app.py"]
    if style != "plain":
        texts += ["it's \"x\" $HOME `id` \\ end", "a'b'c", "$(rm -rf src)", "tab\there"]
    for text in texts:
        out = subprocess.run(["bash", "--norc", "-c", "printf %s " + quote(text, style)],
                             capture_output=True, text=True, timeout=10).stdout
        assert out == text, (style, text, out)


@needs_bash
@pytest.mark.in_process
def test_every_generated_command_is_valid_bash():
    commands = [c for seed in SEEDS for c in cases(seed, WRITE_CHANNELS) + cases(seed + 1, READ_CHANNELS)]
    script = "\n".join(f"f{index}() {{\n{command}\n}}" for index, command in enumerate(commands))
    result = subprocess.run(["bash", "--norc", "-n"], input=script, capture_output=True, text=True, timeout=30)
    assert (result.returncode, result.stderr) == (0, "")
