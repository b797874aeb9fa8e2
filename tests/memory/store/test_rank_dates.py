"""Dates named in a search query (maestro/memory/store/rank_dates.py) and the entries stamped then."""

import random

import pytest

from maestro.memory.store import rank
from maestro.memory.store.analyze import terms
from maestro.memory.store.rank_dates import matches, mentions

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)


@pytest.mark.parametrize("query, expected", [
    ("what did we decide on 2026-02-04", [(2026, 2, 4)]),
    ("What did Gina find on 1 February, 2023?", [(2023, 2, 1)]),
    ("Who did Maria have dinner with on May 3, 2023?", [(2023, 5, 3)]),
    ("the incident on March 2nd", [(None, 3, 2)]),
    ("the 3rd of March", [(None, 3, 3)]),
    ("When did Melanie go camping in June?", [(None, 6, None)]),
    ("workout class in December 2023", [(2023, 12, None)]),
    ("in sept. 2024 we moved", [(2024, 9, None)]),
    ("beach trips in 2023", [(2023, None, None)]),
])
def test_dates_in_a_query_are_found(query, expected):
    assert mentions(query) == expected


def test_between_two_dates_is_one_range():
    (when,) = mentions("Where was John between August 11 and August 15 2023?")
    assert when[0] == "range"
    assert matches([when], "2023-08-11 09:00") and matches([when], "2023-08-15") and not matches([when], "2023-08-16")


@pytest.mark.parametrize("query", [
    "may I ask what the lease does", "mar the dec meeting", "scored 40 points", "port 5173 and 8000",
    "v2.3.1", "", "HB-211", "the 45th build",
])
def test_words_and_numbers_are_not_dates(query):
    assert mentions(query) == []


def test_an_impossible_day_matches_no_entry():
    found = mentions("February 30, 2023")
    assert not any(matches(found, f"2023-{month:02d}-{day:02d}") for month in (2, 3) for day in range(1, 29))


def test_matches_reads_the_stamp_and_ignores_undated_entries():
    assert matches([(None, 6, None)], "2024-06-30 23:59") and not matches([(None, 6, None)], "2024-07-01")
    assert not matches([(2023, 5, 3)], "") and not matches([(2023, 5, 3)], "garbage")


def test_random_text_never_raises():
    rng = random.Random(7)
    pieces = ["May", "june", "2023", "3rd", "between", "and", "of", ",", " ", "31", "13", "2023-02-30", "-", "dec"]
    for _ in range(300):
        query = "".join(rng.choice(pieces) for _ in range(rng.randrange(12)))
        for when in mentions(query):
            matches([when], "2023-05-03")


def test_an_entry_stamped_on_the_named_day_ranks_first():
    def doc(seq, date, text):
        return rank.Doc(f"daily/{date}.md#{seq}", "daily", "", date, f"daily/{date}.md", text, tuple(terms(text)),
                        seq, "")

    docs = [doc(0, "2026-02-03", "Deploy rolled back after the smoke test failed."),
            doc(0, "2026-02-04", "Deploy rolled back after the smoke test failed."),
            doc(0, "2026-02-05", "Deploy rolled back after the smoke test failed.")]
    corpus = rank.MemoryCorpus(docs)
    assert rank.search("deploy rolled back", corpus)[0][0].date == "2026-02-03"  # a tie: by key
    assert rank.search("deploy rolled back on February 4", corpus)[0][0].date == "2026-02-04"
    assert rank.search("deploy rolled back on 2026-02-05", corpus)[0][0].date == "2026-02-05"


def test_rank_skips_importing_the_dates_module_only_for_queries_that_name_no_month_or_digit():
    """rank._dates_named pre-checks with its own month names: they must be rank_dates' full names."""
    from maestro.memory.store import rank, rank_dates

    assert rank._MONTH_NAMES == rank_dates._FULL_NAMES
    assert rank._dates_named("what did we decide in March") == rank_dates.mentions("what did we decide in March")
