"""The index's fingerprint names analyze.VERSION (index.fingerprint): a change to what the analyzer
returns must come with a new VERSION, or every existing index keeps rows analyzed the old way. This pins
the analyzer's code (analyze.py and stem.py, docstrings and comments left out) to the VERSION it was
released as; on a failure, bump analyze.VERSION and record the new digest here."""

import ast
import hashlib
from pathlib import Path

import pytest

from maestro.memory.store import analyze, index

pytestmark = pytest.mark.source_only

PINNED = {1: "ef513120a9a72d0768a52f0e6922c83d5d39dfa23c373a6dd256f6b9ca1264e5",
          2: "2a4668632a5e047607241f7c26831bf9f8631fb7386f4bae90f9008f70d41fbf",  # 2: ASCII text split without `re` (same terms; tests/memory/store/test_analyze_words.py)
          3: "746d7904d8ec08214a5f80d6d3e0e273942c5ffab39860b286209bc87a5b01da"}  # 3: the word splitter made public (word_runs, for relevance.py); same terms — shipped with index format 8, which rebuilds every index anyway


def code_digest() -> str:
    """The digest of the analyzer's code as the interpreter sees it (comments, docstrings and layout do
    not count)."""
    digest = hashlib.sha256()
    for name in ("analyze.py", "stem.py"):
        path = Path(analyze.__file__).with_name(name)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                    and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
        digest.update(name.encode() + b"\0" + ast.dump(tree).encode() + b"\0")
    return digest.hexdigest()


def test_the_analyzer_code_is_pinned_to_its_version():
    assert PINNED.get(analyze.VERSION) == code_digest(), (
        "the analyzer (analyze.py / stem.py) changed: bump analyze.VERSION and pin the new digest "
        f"{code_digest()} under it in {Path(__file__).name}")


def test_the_fingerprint_names_the_analyzer_version(monkeypatch):
    before = index.fingerprint()
    monkeypatch.setattr(index, "ANALYZER_VERSION", analyze.VERSION + 1)
    assert index.fingerprint() != before
