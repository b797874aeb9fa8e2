"""The pure three-way merge of one synced file (maestro/memory/store/sync_merge.py): per entry against the
version both sides last agreed on; only a change on both sides is a conflict."""

from maestro.memory.store.sync_merge import UNKNOWN, keyed, merge, todo_id, version, versions
import pytest

pytestmark = pytest.mark.in_process  # never runs the archive (tests/testing/in_process.py)

A = "[id:0000000a] [2024-05-01 10:00] [summary:a] decision a"
A2 = "[id:0000000a] [2024-05-01 10:00] [summary:a2] decision a, edited"
A3 = "[id:0000000a] [2024-05-01 10:00] [summary:a3] decision a, edited elsewhere"
B = "[id:0000000b] [2024-05-01 10:01] [summary:b] decision b"
P = "[2024-05-01 10:02] [summary:p] a timeline note"
P2 = "[2024-05-01 10:02] [summary:p2] a timeline note, edited"


def agreed(*entries):
    return versions(list(entries))


def test_a_one_sided_edit_travels_either_way():
    mine = merge([A2, B], [A, B], agreed(A, B))
    assert mine.entries == [A2, B] and mine.conflicts == [] and mine.agreed == {"0000000b": version(B),
                                                                                "0000000a": version(A)}
    theirs = merge([A, B], [A2, B], agreed(A, B))
    assert theirs.entries == [A2, B] and theirs.updated == 1 and theirs.agreed["0000000a"] == version(A2)


def test_a_one_sided_deletion_travels_either_way():
    assert merge([B], [A, B], agreed(A, B)).entries == [B]
    taken = merge([A, B], [B], agreed(A, B))
    assert taken.entries == [B] and taken.removed == 1 and "0000000a" not in taken.agreed


def test_only_a_change_on_both_sides_is_a_conflict_and_the_local_side_is_kept_meanwhile():
    both = merge([A2], [A3], agreed(A))
    assert both.entries == [A2] and both.agreed == {"0000000a": version(A)}
    assert both.conflicts == [{"id": "0000000a", "kind": "modifiedBoth", "local": A2, "remote": A3}]
    assert merge([], [A3], agreed(A)).conflicts[0]["kind"] == "deletedLocal"
    assert merge([A2], [], agreed(A)).conflicts[0]["kind"] == "deletedRemote"
    assert merge([A2], [A2], agreed(A)).conflicts == []  # the same edit on both sides agrees


def test_an_unknown_base_makes_every_difference_a_conflict_but_agreement_is_agreement():
    base = {"0000000a": UNKNOWN}
    assert merge([A], [A], base).conflicts == []
    assert merge([A], [A2], base).conflicts[0]["kind"] == "modifiedBoth"
    assert merge([A], [], base).conflicts[0]["kind"] == "deletedRemote"


def test_entries_without_an_id_are_matched_by_body_an_edit_is_a_deletion_and_an_addition():
    edited = merge([P2, A], [P, A], agreed(P, A))
    assert edited.entries == [P2, A] and edited.conflicts == []
    taken = merge([P, A], [P2, A], agreed(P, A))
    assert sorted(taken.entries) == sorted([P2, A]) and taken.conflicts == []
    both = merge([P2], [P, A], agreed(P))  # deleted+added here, nothing agreed on A yet: A is a remote addition
    assert sorted(both.entries) == sorted([P2, A])


def test_order_local_first_then_remote_additions_and_the_remote_order_once_nothing_differs():
    assert merge([B], [A], {}).entries == [B, A]
    assert merge([B, A], [A, B], agreed(A, B)).entries == [A, B]  # nothing to exchange: byte-identical to remote


def test_keys_an_id_seen_twice_is_keyed_by_body_and_the_same_bytes_twice_are_kept_once():
    dup = "[id:0000000a] [2024-05-01 10:05] [summary:x] another entry reusing a's id"
    assert list(keyed([A, dup, A]))[0] == "0000000a" and len(keyed([A, dup, A])) == 2


def test_todo_ids_come_from_the_todo_header():
    todo = "[2024-05-01 10:00] [id: 1234abcd] [status: open]\nship it"
    assert todo_id(todo) == "1234abcd" and todo_id("<!-- header -->") is None
