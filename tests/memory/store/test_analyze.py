"""The analyzer of memory search (maestro/memory/store/analyze.py, stem.py): what an entry and a query become."""

import pathlib
import random
import subprocess
import sys

import pytest

from maestro.memory.store import analyze
from maestro.memory.store.analyze import terms
from maestro.memory.store.stem import stem

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)

# Porter's own examples (1980 paper) and the reference implementation's voc/output pairs.
PORTER = {
    "caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
    "feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled", "motoring": "motor",
    "sing": "sing", "conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop",
    "tanned": "tan", "falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail",
    "filing": "file", "happy": "happi", "sky": "sky", "relational": "relat", "conditional": "condit",
    "rational": "ration", "valenci": "valenc", "digitizer": "digit", "conformabli": "conform",
    "radicalli": "radic", "differentli": "differ", "vileli": "vile", "analogousli": "analog",
    "vietnamization": "vietnam", "predication": "predic", "operator": "oper", "feudalism": "feudal",
    "decisiveness": "decis", "hopefulness": "hope", "callousness": "callous", "formaliti": "formal",
    "sensitiviti": "sensit", "sensibiliti": "sensibl", "triplicate": "triplic", "formative": "form",
    "formalize": "formal", "electriciti": "electr", "electrical": "electr", "hopeful": "hope",
    "goodness": "good", "revival": "reviv", "allowance": "allow", "inference": "infer", "airliner": "airlin",
    "gyroscopic": "gyroscop", "adjustable": "adjust", "defensible": "defens", "irritant": "irrit",
    "replacement": "replac", "adjustment": "adjust", "dependent": "depend", "adoption": "adopt",
    "homologou": "homolog", "communism": "commun", "activate": "activ", "angulariti": "angular",
    "homologous": "homolog", "effective": "effect", "bowdlerize": "bowdler", "probate": "probat",
    "rate": "rate", "cease": "ceas", "controll": "control", "roll": "roll", "generalization": "gener",
}


@pytest.mark.parametrize("word, expected", sorted(PORTER.items()))
def test_the_stemmer_follows_porter(word, expected):
    assert stem(word) == expected


def test_short_numeric_and_non_ascii_words_are_not_stemmed():
    for word in ("is", "v2", "2024", "übungen", "naïve", "日本語"):
        assert stem(word) == word


def test_inflected_forms_meet_on_one_term():
    assert terms("Running the failing tests") == terms("run failed test")
    assert terms("migrations") == terms("migration") == ["migrat"]


def test_stopwords_go_and_content_words_stay():
    assert terms("the of and to was it") == []
    assert terms("do not squash after the merge") == ["not", "squash", "after", "merg"]


def test_identifiers_split_into_their_parts():
    assert terms("write_guard.py") == ["write", "guard", "py"]
    assert terms("src/app-main.ts") == ["src", "app", "main", "ts"]
    assert terms("HB-211 v2.3") == ["hb", "211", "v2", "3"]


def test_camel_case_gives_its_parts_and_the_whole_word():
    assert terms("StoreError") == ["store", "error", "storeerror"]
    assert terms("HTTPServer") == ["http", "server", "httpserver"]
    assert terms("storeError") == ["store", "error", "storeerror"]
    assert "github" in terms("GitHub") and "github" in terms("github")
    assert terms("NASA nasa") == ["nasa", "nasa"]  # one case: one word


def test_unicode_is_casefolded_and_kept():
    assert terms("Straße") == terms("STRASSE") == terms("strasse")
    assert terms("ÜBUNG übung") == ["übung", "übung"]
    assert terms("日本語のテキスト") == ["日本語のテキスト"]
    assert terms("deploy 🚀 done ✅") == ["deploi", "done"]


@pytest.mark.parametrize("text", ["", "   ", "\n\t", "!!! ... ---", "___", "§"])
def test_nothing_to_index_gives_no_terms(text):
    assert terms(text) == []


def test_random_text_never_raises_and_is_stable():
    rng = random.Random(11)
    alphabet = "aZ_-./:1 \t\néßÜ日本😀\u0301\u200b\x00İıǅ"
    for _ in range(400):
        text = "".join(rng.choice(alphabet) if rng.random() < 0.7 else chr(rng.randrange(0x110000))
                       for _ in range(rng.randrange(40)))
        text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        first = terms(text)
        analyze._memo.clear()
        assert terms(text) == first
        assert all(isinstance(t, str) and t and not any(c.isspace() or c == "_" for c in t) for t in first)


def test_the_stem_memo_stays_bounded(monkeypatch):
    monkeypatch.setattr(analyze, "_MEMO_LIMIT", 10)
    analyze._memo.clear()
    terms(" ".join(f"word{i}x" for i in range(25)))
    assert len(analyze._memo) <= 10
    assert terms("running") == ["run"]


def test_search_modules_are_cheap_to_import():
    """The inject hook analyzes and ranks every real prompt: neither module may pull in json, argparse,
    dataclasses, sqlite3 or datetime (rank imports datetime only when today is given)."""
    root = str(pathlib.Path(analyze.__file__).parents[3])
    code = (f"import sys; sys.path.insert(0, {root!r}); import maestro.memory.store.rank, maestro.memory.store.analyze; "
            "print(sorted(m for m in ('json', 'argparse', 'dataclasses', 'sqlite3', 'datetime') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_index_side_of_recall_is_cheap_to_import():
    """Recall imports the index modules on every real prompt: none may pull in re, contextlib,
    collections, subprocess, datetime, json or argparse (the SQLite binding itself is imported when a
    search opens the index, not with the modules)."""
    root = str(pathlib.Path(analyze.__file__).parents[3])
    modules = ("index", "index_corpus", "index_topk", "index_bits", "index_files", "index_rows", "layout", "rank")
    code = (f"import sys; sys.path.insert(0, {root!r}); "
            + "; ".join(f"import maestro.memory.store.{name}" for name in modules) + "; "
            "print(sorted(m for m in ('re', 'contextlib', 'collections', 'subprocess', 'datetime', 'json', "
            "'argparse', '_sqlite3', 'sqlite3') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
