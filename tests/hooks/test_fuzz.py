"""Seeded fuzz of the `gate` and `inject` hooks: malformed and odd payloads never crash, never open.

Oracle. No flag is ever created for the gate, so rc 0 is acceptable only for a well-formed payload
whose path is free by policy (scratch, harness, non-code). Every generated "must block" payload is
either malformed (bad JSON, wrong types, invalid session id, unusable path) or names a code path
outside every scratch root, so its only acceptable answer is exit 2 with one of the three known
stderr texts; a separate family of well-formed free paths must answer exit 0 with no output.
In-process runs go through `maestro.cli.main` (fast; they call the source tree whatever the target, so they are
`source_only`: the pyz run would repeat them); ~300 more go through the built archive as real processes, in the
archive's own run (MAESTRO_TEST_TARGET=pyz) only: the source run would start the same 300 processes again.
"""

import concurrent.futures
import json
import os
import random
import subprocess
import sys

import pytest

from testing import PYZ
from testing.paths import TARGET

SEED = 0x6D61657374726F  # "maestro"
SID = "fuzz-session"
ROOT = "/nonexistent-maestro"

GATE_FAIL_CLOSED = (
    "ORCHESTRATOR GATE: could not read the hook payload; failing closed for edits — "
    "likely a harness change or a malformed path, report it to the user.\n"
)
SUBAGENT_LINE = 'A subagent never inherits "edit it yourself"; only the main session can hold that grant.\n'
CODE_EXTS = ["py", "ts", "tsx", "js", "mjs", "sh", "go", "rs", "c", "h", "java", "scala", "rb", "php", "ipynb", "swift",
             "kt", "cs", "cpp", "vue", "sql", "bash", "pl", "lua"]
NONCODE_NAMES = ["README.md", "notes.txt", "LICENSE", ".gitignore", "package.json", ".env", ".env.local", "a.yaml",
                 "Cargo.lock", "pyproject.toml", "doc.rst", "data.csv", "icon.svg", "CHANGELOG", "x.JSON", "y.Md"]
ODD_CHARS = ("abcXYZ019_-. ~#%&+=,;@!$()[]{}'\"\\`\t\u00e9\u00df\u0131\u0130\u03a9\u0416\u4e2d\u6587\U0001F600"
             "\u200b\u202e\ufeff\u0301\u2028\u2029\u00a0\uffff")
KEYS = ["session_id", "cwd", "tool_input", "agent_id", "agent_type", "tool_name", "hook_event_name", "prompt"]


def dumps(r, value) -> bytes:
    """JSON bytes, escaped or raw UTF-8 at random; always escaped when lone surrogates would not encode."""
    text = json.dumps(value, ensure_ascii=r.random() < 0.5)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value).encode("ascii")


# ----------------------------------------------------------------------------------------- builders


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def word(self, alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", lo=1, hi=12):
        return "".join(self.r.choice(alphabet) for _ in range(self.r.randint(lo, hi)))

    def odd_text(self, lo=0, hi=40):
        return "".join(self.r.choice(ODD_CHARS) for _ in range(self.r.randint(lo, hi)))

    def valid_sid(self):
        return self.word("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-", 1, 64)

    def invalid_sid(self):
        r = self.r
        return r.choice([
            "", "a" * 65, "../bad", "a b", "a;b", "a/b", "é", "a\u0000", "a\n", " x", 5, 0, None, True, [], {}, ["x"], 1.5,
            self.valid_sid() + r.choice("/ .;$\\\u00e9\u0000"),
        ])

    def wrong_type(self, exclude=()):
        r = self.r
        options = [None, True, False, 0, -1, 2**70, 1.5, -0.0, 1e308, "", " ", [], {}, [1, "a"], {"a": None},
                   {"file_path": "/tmp/x.md"}, ["/tmp/x.md"], "\u0000"]
        value = r.choice(options)
        while type(value) in exclude:
            value = r.choice(options)
        return value

    def code_name(self):
        r = self.r
        stem = r.choice([self.word(), "x", "main", "README.md", "notes.txt", "a.b", ".hidden", "LICENSE", "x.json"])
        return f"{stem}.{r.choice(CODE_EXTS)}"

    def blocked_path(self):
        """(path, cwd): a well-formed edit target that is code outside every scratch root."""
        r = self.r
        name = self.code_name()
        segs = [self.word() for _ in range(r.randint(0, 4))]
        repo = "/".join([ROOT] + segs)
        choice = r.randrange(22)
        if choice == 0:
            return f"{repo}/{name}", r.choice([None, repo, "/tmp", "", "/tmp/x"])
        if choice == 1:  # relative to a non-scratch cwd, with dot segments that stay inside the root
            return "./" + "/".join(segs + ["..", "."] + [name]), f"{ROOT}/a/b/c/d/e"
        if choice == 2:  # climbing out of scratch
            return "../" * r.randint(3, 12) + name, "/tmp/a/b"
        if choice == 3:
            return f"/tmp/../etc/{name}", r.choice([None, "/tmp"])
        if choice == 4:
            return f"/tmp/../{ROOT.strip('/')}/{name}", None
        if choice == 5:
            return "//" + f"{ROOT.strip('/')}/{name}", None
        if choice == 6:  # trailing slashes never hide a code basename
            return f"{repo}/{name}" + "/" * r.randint(1, 3), None
        if choice == 7:  # anchored scratch/harness near-misses
            near = r.choice(["tmpx", "tmp.d", "private", "private/tmpx", f"{ROOT.strip('/')}/tmp",
                             f"{ROOT.strip('/')}/Desktop", f"{ROOT.strip('/')}/.claudex", f"{ROOT.strip('/')}/x.codex",
                             f"{ROOT.strip('/')}/.Claude", f"{ROOT.strip('/')}/_claude"])
            return f"/{near}/{name}", None
        if choice == 8:  # tilde is not expanded
            return f"~/Desktop/{name}", repo
        if choice == 9:  # odd unicode inside a code name under the root (no '/', no NUL)
            stem = self.odd_text(1, 30).replace("/", "_").replace("\u0000", "_").replace(".", "_")
            return f"{repo}/{stem}.{r.choice(CODE_EXTS)}", None
        if choice == 10:  # lone surrogates: escaped in JSON, unencodable for the file system
            return f"{repo}/\ud800{self.word()}.{r.choice(CODE_EXTS)}", None
        if choice == 11:
            return f"{repo}/\udcff{self.word()}.{r.choice(CODE_EXTS)}", None
        if choice == 12:  # Windows-style code paths (`c:/…` is a relative POSIX path: judged against a Windows cwd)
            path = r.choice([f"C:\\repo\\src\\{name}", f"c:/repo/{name}", f"\\\\server\\share\\{name}",
                             f"C:\\repo\\.claude\\..\\src\\{name}", f"D:\\r\\.claudex\\{name}"])
            return path, "C:\\repo" if path.startswith("c:/") else r.choice([None, "C:\\repo"])
        if choice == 13:
            return f"src\\{name}", "C:\\repo"
        if choice == 14:  # a harness name earlier in the path, cancelled by '..'
            return f"{repo}/.claude/../{name}", None
        if choice == 15:
            return f"{repo}/tmp/../../{name}", None
        if choice == 16:  # spaces and dots around
            return f"{repo}/ {name}", None
        if choice == 17:
            return f"file:/tmp/{name}", repo
        if choice == 18:
            return f"{repo}/{name}", "relative/not/a/root"
        if choice == 19:  # very long but legal-looking path: ENAMETOOLONG or blocked, never allowed
            return f"{repo}/" + "/".join(self.word(hi=60) for _ in range(r.randint(50, 120))) + f"/{name}", None
        if choice == 20:
            return f"{repo}/{'x' * r.randint(256, 600)}.{r.choice(CODE_EXTS)}", None
        return f"/{name}", None

    def allowed_path(self):
        """(path, cwd, key): a well-formed edit target that the policy frees without a grant."""
        r = self.r
        tag = f"maestro-fuzz-nonexistent-{self.word()}"
        name = r.choice([self.code_name(), r.choice(NONCODE_NAMES), self.word()])
        choice = r.randrange(12)
        key = "notebook_path" if r.random() < 0.1 else "file_path"
        if choice == 0:
            return f"/tmp/{tag}/{name}", r.choice([None, "", f"{ROOT}/repo", "/"]), key
        if choice == 1:
            return f"/private/tmp/{tag}/{name}", None, key
        if choice == 2:
            return f"{os.environ['TMPDIR']}/{tag}/{name}", None, key
        if choice == 3:
            return f"{tag}/{name}", "/tmp", key
        if choice == 4:
            return f"/tmp//{tag}/./{name}" + r.choice(["", "/"]), None, key
        if choice == 5:
            return f"/tmp/../tmp/{tag}/{name}", None, key
        if choice == 6:
            return f"{ROOT}/{self.word()}/{r.choice(NONCODE_NAMES)}", None, key
        if choice == 7:
            return f"{r.choice(NONCODE_NAMES)}", f"{ROOT}/{self.word()}", key
        if choice == 8:
            return f"{ROOT}/{self.word()}/{r.choice(['.claude', '.codex'])}/{self.word()}/{name}", None, key
        if choice == 9:
            return r.choice([f"C:\\repo\\docs\\{r.choice(NONCODE_NAMES)}", f"C:\\repo\\.claude\\{name}",
                             f"\\\\srv\\share\\.codex\\{name}"]), r.choice([None, "C:\\repo"]), key
        if choice == 10:  # odd but encodable unicode in scratch
            stem = self.odd_text(1, 30).replace("/", "_").replace("\u0000", "_")
            return f"/tmp/{tag}/{stem}.{r.choice(CODE_EXTS)}", None, key
        return f"/tmp/{tag}/\udc80{name}", None, key  # surrogateescape-encodable: a real byte name

    def body(self, path, cwd, key="file_path", sid=None):
        body = {"session_id": sid if sid is not None else self.valid_sid(), "tool_input": {key: path}}
        if cwd is not None:
            body["cwd"] = cwd
        r = self.r
        if r.random() < 0.3:
            body["tool_name"] = r.choice(["Edit", "Write", "MultiEdit", "NotebookEdit", 5])
        if r.random() < 0.2:
            body["tool_input"]["content"] = self.odd_text()
        if r.random() < 0.2:
            body["x_" + self.word()] = self.wrong_type()
        return body


def gate_blocked_payload(g: Gen) -> bytes:
    """A payload for which only exit 2 is acceptable."""
    r = g.r
    path, cwd = g.blocked_path()
    body = g.body(path, cwd)
    if r.random() < 0.15:
        body[r.choice(["agent_id", "agent_type"])] = r.choice([g.word(), " x", g.odd_text(1, 5) + "a"])
    return dumps(r, body)


def gate_malformed_payload(g: Gen) -> bytes:
    """A payload that is malformed even if its path would be free: fail closed is the only answer."""
    r = g.r
    path, cwd, key = g.allowed_path()
    body = g.body(path, cwd, key)
    kind = r.randrange(16)
    if kind == 0:
        body["session_id"] = g.invalid_sid()
    elif kind == 1:
        del body["session_id"]
    elif kind == 2:
        body["tool_input"] = g.wrong_type(exclude=(dict,))
    elif kind == 3:
        body["tool_input"] = {key: g.wrong_type(exclude=(str, type(None)))}
    elif kind == 4:
        body["tool_input"] = {key: r.choice(["", " ", "\t", "\n", "\u3000", "\u00a0 ", "\u2028"])}
    elif kind == 5:
        body["tool_input"] = {key: path[: r.randint(0, len(path))] + "\u0000" + path}
    elif kind == 6:
        body["cwd"] = g.wrong_type(exclude=(str, type(None)))
    elif kind == 7:
        body["tool_input"] = r.choice([{}, {"path": path}, {"file_path": None}, {"notebook_path": None},
                                       {"FILE_PATH": path}])
    elif kind == 8:
        del body["tool_input"]
    elif kind == 9:  # lone high surrogate in an otherwise free POSIX path (unencodable)
        if path[1:2] == ":" or path.startswith("\\"):
            body["session_id"] = g.invalid_sid()
        else:
            body["tool_input"] = {key: path + "\ud83d"}
    elif kind == 10:
        body["cwd"] = "/tmp/\u0000"
        body["tool_input"] = {key: "x.py"}
    text = dumps(r, body).decode("utf-8")
    if kind == 11:  # truncated JSON
        return text[: r.randint(0, len(text) - 1)].encode()
    if kind == 12:  # trailing garbage or a second document
        return (text + r.choice([" x", "{}", "]", ",", "\u0000", " 1"])).encode()
    if kind == 13:  # non-standard constants anywhere
        return text.replace("{", '{"n": %s, ' % r.choice(["NaN", "Infinity", "-Infinity"]), 1).encode()
    if kind == 14:  # invalid UTF-8 inserted somewhere
        raw = text.encode()
        at = r.randint(0, len(raw))
        return raw[:at] + r.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"\xfe\xff"]) + raw[at:]
    if kind == 15:  # duplicate key: the last one wins and it is invalid
        return (text.replace("{", '{"session_id": "%s", ' % SID, 1)[:-1] + ', "session_id": 5}').encode()
    return text.encode()


def garbage_payload(g: Gen) -> bytes:
    r = g.r
    kind = r.randrange(9)
    if kind == 0:
        return bytes(r.randrange(256) for _ in range(r.randint(0, 64)))
    if kind == 1:
        return g.odd_text(0, 64).encode("utf-8", "surrogatepass")
    if kind == 2:
        return dumps(r, r.choice([None, 1, "x", [], [{"session_id": SID}], True, 1.5, "{}"]))
    if kind == 3:  # deep nesting, in a field of an otherwise free payload
        depth = r.choice([1500, 5000, 100000])
        open_, close = r.choice([("[", "]"), ('{"a":', "}")])
        return ('{"session_id":"%s","tool_input":{"file_path":"/tmp/x.md"},"deep":%s1%s}'
                % (SID, open_ * depth, close * depth)).encode()
    if kind == 4:  # deep nesting as the tool input
        depth = r.choice([1500, 100000])
        return ('{"session_id":"%s","tool_input":%s%s}' % (SID, "[" * depth, "]" * depth)).encode()
    if kind == 5:
        return r.choice([b"", b" ", b"\n\t\r ", b"\x00", b"{}", b"{} ", b"\xef\xbb\xbf{}", b"{\"\":\"\"}"])
    if kind == 6:  # raw control characters inside strings (strict JSON forbids them)
        return ('{"session_id":"%s","tool_input":{"file_path":"/tmp/a%sb.md"}}' % (SID, r.choice("\x00\x01\n\t\x1f"))).encode()
    if kind == 7:
        return '{"session_id":"%s","tool_input":{"file_path":"/tmp/x.md"}'.encode() % SID.encode()
    keys = r.sample(KEYS, r.randint(0, len(KEYS)))
    return dumps(r, {k: g.wrong_type() for k in keys})


def huge_payloads():
    """A few 1 MB strings in every position (kept few to bound the run time)."""
    big_word = "y" * (1 << 20)
    big_path = f"{ROOT}/" + "/".join(["seg"] * (1 << 18)) + "/x.py"
    return [
        json.dumps({"session_id": SID, "tool_input": {"file_path": f"{ROOT}/{big_word}.py"}}).encode(),
        json.dumps({"session_id": SID, "tool_input": {"file_path": big_path}}).encode(),
        json.dumps({"session_id": SID, "cwd": "/tmp/" + big_word, "tool_input": {"file_path": "x.py"}}).encode(),
        json.dumps({"session_id": big_word, "tool_input": {"file_path": "/tmp/x.md"}}).encode(),
        json.dumps({"session_id": SID, "tool_input": {"file_path": f"{ROOT}/x.py", "content": big_word}}).encode(),
        json.dumps({"session_id": SID, "tool_input": {"file_path": "/tmp/x.md"}, "x": big_word})[:-2].encode(),
    ]


def check_gate_block(result, raw):
    assert result.rc == 2, (result, raw[:300])
    assert result.out == "", (result, raw[:300])
    assert "Traceback" not in result.err
    if result.err != GATE_FAIL_CLOSED:
        assert result.err.startswith("ORCHESTRATOR GATE (source code): "), (result, raw[:300])
        assert result.err.count(SUBAGENT_LINE) <= 1


def check_gate_allow(result, raw):
    assert (result.rc, result.out, result.err) == (0, "", ""), (result, raw[:300])


def assert_no_side_effects(home):
    assert not (home / ".maestro" / "logs" / "crashes.log").exists(), "an unexpected exception was recorded"
    assert not (home / ".maestro" / "direct-edit").exists()


# -------------------------------------------------------------------------------------- in-process gate
# `maestro.in_process` calls the source tree under either target: these run once, in the source run.
IN_PROCESS = pytest.mark.source_only


@IN_PROCESS
def test_gate_fuzz_code_paths_never_open_without_a_grant(maestro, home):
    g = Gen(SEED)
    for _ in range(3000):
        raw = gate_blocked_payload(g)
        check_gate_block(maestro.in_process("gate", stdin=raw), raw)
    assert_no_side_effects(home)


@IN_PROCESS
def test_gate_fuzz_malformed_payloads_fail_closed(maestro, home):
    g = Gen(SEED + 1)
    for _ in range(2500):
        raw = gate_malformed_payload(g)
        result = maestro.in_process("gate", stdin=raw)
        assert (result.rc, result.out, result.err) == (2, "", GATE_FAIL_CLOSED), (result, raw[:300])
    assert_no_side_effects(home)


@IN_PROCESS
def test_gate_fuzz_garbage_and_huge_payloads_fail_closed(maestro, home):
    g = Gen(SEED + 2)
    for _ in range(1500):
        raw = garbage_payload(g)
        result = maestro.in_process("gate", stdin=raw)
        assert (result.rc, result.out, result.err) == (2, "", GATE_FAIL_CLOSED), (result, raw[:300])
    for raw in huge_payloads():
        check_gate_block(maestro.in_process("gate", stdin=raw), raw)
    assert_no_side_effects(home)


@IN_PROCESS
def test_gate_fuzz_free_paths_are_allowed(maestro, home):
    g = Gen(SEED + 3)
    for _ in range(1200):
        path, cwd, key = g.allowed_path()
        body = g.body(path, cwd, key)
        if g.r.random() < 0.2:  # subagents may edit free paths too
            body["agent_id"] = g.word()
        raw = dumps(g.r, body)
        check_gate_allow(maestro.in_process("gate", stdin=raw), raw)
    assert_no_side_effects(home)


# ------------------------------------------------------------------------------------ in-process inject

INJECT_PROMPTS = [
    "edit it yourself", "don't edit it yourself", "ok", "OK!", "fix the bug", "codex model", "what time is it?",
    "sen yap", "sen yapma", '"edit it yourself"', "second opinion", "update README.md", "3.5 dollars", "",
]


def inject_payload(g: Gen):
    """(raw, well_formed)."""
    r = g.r
    kind = r.randrange(10)
    if kind < 4:  # well formed, odd prompts
        prompt = r.choice([
            g.odd_text(0, 200),
            r.choice(INJECT_PROMPTS) + r.choice(["", " ", ".", "!", "\n", " " + g.odd_text(0, 20)]),
            " ".join(g.word(hi=10) for _ in range(r.randint(0, 40))),
            g.odd_text(0, 10) + r.choice(INJECT_PROMPTS) + g.odd_text(0, 10),
            "\ud800" + r.choice(INJECT_PROMPTS) + "\udfff",
        ])
        body = {"session_id": g.valid_sid(), "prompt": prompt}
        if r.random() < 0.3:
            body[r.choice(KEYS[1:-1])] = g.wrong_type()
        return dumps(r, body), True
    if kind == 4:
        return json.dumps({"session_id": g.invalid_sid(), "prompt": r.choice(INJECT_PROMPTS)}).encode(), False
    if kind == 5:
        body = {"session_id": g.valid_sid(), "prompt": g.wrong_type(exclude=(str,))}
        if r.random() < 0.5:
            del body["prompt"]
        return json.dumps(body).encode(), False
    if kind == 6:
        text = json.dumps({"session_id": g.valid_sid(), "prompt": r.choice(INJECT_PROMPTS)})
        return text[: r.randint(0, len(text) - 1)].encode(), False
    if kind == 7:
        raw = json.dumps({"session_id": g.valid_sid(), "prompt": g.odd_text(1, 30)}, ensure_ascii=False).encode()
        at = r.randint(0, len(raw))
        return raw[:at] + b"\xff" + raw[at:], False
    if kind == 8:
        depth = r.choice([10, 3000, 100000])
        return ('{"session_id":"%s","prompt":"ok","x":%s%s}' % (SID, "[" * depth, "]" * depth)).encode(), depth < 1000
    return garbage_payload(g), False


@IN_PROCESS
def test_inject_fuzz_never_crashes_and_malformed_input_revokes(maestro, home):
    from maestro.hooks import guidance as messages

    g = Gen(SEED + 4)
    flag_dir = home / ".maestro" / "direct-edit"
    contexts = {"", messages.MODEL_SETUP, messages.LOOP_DIRECTIVE}
    payloads = [inject_payload(g) for _ in range(3200)]
    big_prompt = " ".join(g.word(hi=12) for _ in range(150_000))[: 1 << 20]  # ~1 MB, short words only
    payloads += [(json.dumps({"session_id": SID, "prompt": big_prompt + suffix}).encode(), True)
                 for suffix in ("", " fix it", " edit it yourself")]
    seen_rc = {0: 0, 2: 0}
    for raw, well_formed in payloads:
        result = maestro.in_process("inject", stdin=raw)
        assert result.rc in (0, 2), (result, raw[:300])
        assert "Traceback" not in result.err
        seen_rc[result.rc] += 1
        if result.rc == 2:
            assert not well_formed, (result, raw[:300])
            assert result.out == ""
            assert result.err in (
                "ORCHESTRATOR INJECT: invalid hook JSON; direct-edit authorization revoked.\n",
                "ORCHESTRATOR INJECT: invalid hook payload; direct-edit authorization revoked.\n",
            ), (result, raw[:300])
            assert not flag_dir.exists() or not any(p.name.endswith(".flag") for p in flag_dir.iterdir())
        else:
            assert well_formed, (result, raw[:300])
            assert result.err == ""
            assert result.out in contexts, (result, raw[:300])
    assert seen_rc[0] > 1000 and seen_rc[2] > 1000
    assert not (home / ".maestro" / "logs" / "crashes.log").exists()


# ---------------------------------------------------------------------------------- built archive gate


@pytest.mark.skipif(TARGET != "pyz", reason="runs in the archive's own run (MAESTRO_TEST_TARGET=pyz)")
@pytest.mark.skipif(not PYZ.is_file(), reason=f"no built archive at {PYZ}")
def test_gate_fuzz_through_the_built_archive(home):
    g = Gen(SEED + 5)
    cases = []
    for index in range(300):
        if index % 5 == 0:
            path, cwd, key = g.allowed_path()
            cases.append((dumps(g.r, g.body(path, cwd, key)), 0))
        elif index % 5 in (1, 2):
            cases.append((gate_blocked_payload(g), 2))
        elif index % 5 == 3:
            cases.append((gate_malformed_payload(g), 2))
        else:
            cases.append((garbage_payload(g), 2))
    env = dict(os.environ)

    def run(case):
        raw, _ = case
        proc = subprocess.run([sys.executable, "-I", "-S", str(PYZ), "gate"], input=raw, capture_output=True, env=env,
                              timeout=60)
        return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run, cases))
    for (raw, expected), (rc, out, err) in zip(cases, results):
        assert "Traceback" not in err, (raw[:300], err)
        assert (rc, out) == (expected, ""), (raw[:300], rc, err)
        if expected == 0:
            assert err == ""
        else:
            assert err == GATE_FAIL_CLOSED or err.startswith("ORCHESTRATOR GATE (source code): "), (raw[:300], err)
    assert_no_side_effects(home)
