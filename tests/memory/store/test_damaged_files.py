"""Issue 10 §3 "one bad byte never hides memory": a track file that is not UTF-8.

Before: `memory snapshot` exited 3, session-start printed no memory at all, `repair` skipped the
file and `add` refused it forever. Now the snapshot shows it with U+FFFD and names it (with the
command that fixes it), `repair --confirm` recodes it (original bytes backed up next to it as
`<file>.bak.<ms>`), and `add` names that command until then.
"""

import datetime
import json
import os
from pathlib import Path

import pytest

from maestro.memory.store import repair, snapshot
from maestro.memory.store.layout import Layout
from maestro.util.text import utf16_len

REPAIR_HINT = "memory repair --confirm"


def write(path, entries):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(("\n§\n".join(entries) + "\n").encode())


def every_track(root, project):
    """One entry in each track file the snapshot reads; returns {track: path}."""
    lay = Layout(str(root))
    today = datetime.date.today().isoformat()
    paths = {track: lay.target(track, project) for track in ("memory", "user", "key", "project", "reference")}
    paths = {track: target.path for track, target in paths.items()}
    paths["daily"] = lay.target("daily", date=today).path
    for track, path in paths.items():
        write(Path(path), [f"[2024-04-01 09:00] [summary:{track}] {track} entry"])
    return paths


def damage(path, at=b" entry"):
    """Put one undecodable byte into the file (as a stray Latin-1 editor save would)."""
    Path(path).write_bytes(Path(path).read_bytes().replace(at, b" \xe9ntry", 1))


@pytest.mark.parametrize("track", ["memory", "user", "key", "project", "reference", "daily"])
def test_one_bad_byte_in_any_track_keeps_every_track_and_names_the_file(mem_root, project, track):
    paths = every_track(mem_root, str(project.resolve()))
    damage(paths[track])
    snap = snapshot.render(str(mem_root), project=str(project.resolve()))
    for name in paths:
        shown = f"{name} \ufffdntry" if name == track else f"{name} entry"
        assert shown in snap.text, (name, snap.text)
    assert snap.damaged == ((paths[track], f"not UTF-8 (byte {Path(paths[track]).read_bytes().index(0xE9)})"),)
    lines = [line for line in snap.text.splitlines() if paths[track] in line]
    assert len(lines) == 1 and lines[0].endswith(REPAIR_HINT)
    assert snap.text.endswith(snapshot.NOTE + "\n") and not snap.empty


def test_a_half_written_multibyte_character_at_the_end_is_shown_too(mem_root):
    mem_root.mkdir(parents=True)
    (mem_root / "MEMORY.md").write_bytes("kept entry\n§\ncut caf\u00e9".encode()[:-1])  # killed mid-character
    snap = snapshot.render(str(mem_root))
    assert "kept entry\n---\ncut caf\ufffd\n" in snap.text and len(snap.damaged) == 1


def test_a_damaged_file_the_branch_filter_hides_still_gets_its_line(mem_root, project):
    key = Layout(str(mem_root)).target("key", str(project.resolve())).path
    os.makedirs(os.path.dirname(key))
    Path(key).write_bytes(b"[branch:other] \xff\n")
    snap = snapshot.render(str(mem_root), project=str(project.resolve()), branch="main")
    assert not snap.empty and "# Project Key Memory" not in snap.text and key in snap.text


def test_the_damaged_line_survives_clipping(mem_root):
    write(mem_root / "MEMORY.md", ["x" * 1500])
    (mem_root / "USER.md").write_bytes(b"\xff" + b"u" * 3000 + b"\n")
    snap = snapshot.render(str(mem_root), max_chars=1200, caps={"memory": 100000, "user": 100000})
    assert utf16_len(snap.text) <= 1200
    assert str(mem_root / "USER.md") in snap.text and snap.text.endswith(snapshot.NOTE + "\n")


# -------------------------------------------------------------------------------------------- repair


def test_repair_dry_run_plans_the_recode_and_writes_nothing(maestro, mem_root):
    write(mem_root / "MEMORY.md", ["fine"])
    (mem_root / "USER.md").write_bytes(b"caf\xe9 one\n\xc2\n")
    result = maestro("memory", "repair")
    assert result.rc == 0, result
    assert f"would repair {mem_root / 'USER.md'}: entries 1 -> 1" in result.out
    assert "not UTF-8 (byte 3): each undecodable byte becomes U+FFFD" in result.out
    assert "changed 1 (dry run" in result.out
    assert (mem_root / "USER.md").read_bytes() == b"caf\xe9 one\n\xc2\n"
    assert sorted(p.name for p in mem_root.iterdir()) == ["MEMORY.md", "USER.md"]


def test_repair_confirm_recodes_keeps_a_backup_and_the_snapshot_is_clean_again(maestro, mem_root):
    original = b"[2024-04-01 09:00] caf\xe9 one\n\xa7\n[2024-04-02 09:00] two\n"
    (mem_root).mkdir(parents=True)
    (mem_root / "USER.md").write_bytes(original)
    result = maestro("memory", "repair", "--confirm", "--json")
    assert result.rc == 0, result
    (item,) = [f for f in json.loads(result.out)["files"] if f["changed"]]
    assert item["recoded"] == "not UTF-8 (byte 22)" and item["file"] == str(mem_root / "USER.md")
    assert os.path.dirname(item["backup"]) == str(mem_root) and Path(item["backup"]).read_bytes() == original
    assert oct(os.stat(item["backup"]).st_mode & 0o777) == "0o600"
    fixed = (mem_root / "USER.md").read_text(encoding="utf-8")
    assert fixed == "[2024-04-01 09:00] caf\ufffd one\n\ufffd\n§\n[2024-04-02 09:00] two\n"  # and unglued
    assert not snapshot.render(str(mem_root)).damaged
    again = maestro("memory", "repair", "--confirm")
    assert again.rc == 0 and "changed 0" in again.out


def test_repair_recodes_archives_and_reference_without_splitting_them(maestro, mem_root, project):
    lay = Layout(str(mem_root))
    reference = lay.target("reference", str(project.resolve())).path
    archive = lay.target("key", str(project.resolve())).archive
    os.makedirs(os.path.dirname(reference))
    Path(reference).write_bytes(b"# Notes\n\xff build\n[2024-01-01] same entry\n")
    Path(archive).write_bytes(b"[id:0000000a] a\n\xff\n[2024-01-01] glued\n")
    result = maestro("memory", "repair", "--confirm")
    assert result.rc == 0, result
    assert Path(reference).read_text(encoding="utf-8") == "# Notes\n\ufffd build\n[2024-01-01] same entry\n"
    assert Path(archive).read_text(encoding="utf-8") == "[id:0000000a] a\n\ufffd\n[2024-01-01] glued\n"


def test_repair_never_writes_through_a_symlinked_track_file(maestro, mem_root, tmp_path):
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_bytes(b"not \xff mine\n")
    mem_root.mkdir(parents=True)
    (mem_root / "MEMORY.md").symlink_to(elsewhere)
    result = maestro("memory", "repair", "--confirm")
    assert result.rc == 0 and "changed 0" in result.out
    assert elsewhere.read_bytes() == b"not \xff mine\n" and (mem_root / "MEMORY.md").is_symlink()


def test_the_boot_repair_leaves_a_damaged_file_for_a_person(mem_root):
    write(mem_root / "MEMORY.md", ["fine"])
    (mem_root / "USER.md").write_bytes(b"\xff\n")
    report = repair.repair_once_if_flag_missing(str(mem_root))
    (item,) = [f for f in report.files if f.file.endswith("USER.md")]
    assert item.error == "not UTF-8 (byte 0)" and not item.changed
    assert (mem_root / "USER.md").read_bytes() == b"\xff\n"


# ----------------------------------------------------------------------------------------------- add


def test_add_to_a_damaged_track_names_repair_then_works_after_it(maestro, mem_root):
    mem_root.mkdir(parents=True)
    (mem_root / "USER.md").write_bytes(b"prefers \xff tea\n")
    refused = maestro("memory", "add", "user", "likes coffee")
    assert refused.rc == 4, refused
    (line,) = refused.err.strip().splitlines()
    assert "not UTF-8" in line and str(mem_root / "USER.md") in line and line.endswith(REPAIR_HINT)
    assert maestro("memory", "repair", "--confirm").rc == 0
    added = maestro("memory", "add", "user", "likes coffee")
    assert added.rc == 0, added
    assert (mem_root / "USER.md").read_text(encoding="utf-8").startswith("prefers \ufffd tea\n§\n")
