"""tests/testing/archive_batch.py: the corpus tables judged by the archive's own code in one process."""

import pytest

from testing import ROOT, archive_batch
from testing.bash_corpus import bash_payload, is_allowed, is_policy_block


def test_the_archive_judges_each_payload_as_its_gate_process_would(built_pyz, maestro):
    payloads = [bash_payload("ls -la"), bash_payload("sed -i 's/a/b/' src/app.py"), "{not json"]
    batch = archive_batch.judge_all("gate", payloads, archive=built_pyz)
    assert is_allowed(batch[0]) and is_policy_block(batch[1], "src/app.py")
    for judged, payload in zip(batch, payloads):
        alone = maestro("gate", stdin=payload)
        assert (judged.rc, judged.out, judged.err) == (alone.rc, alone.out, alone.err)


def test_a_path_that_is_not_an_archive_is_refused_not_judged_from_the_source_tree():
    with pytest.raises(AssertionError, match="No module named 'maestro'|not imported from the archive"):
        archive_batch.judge_all("gate", [bash_payload("ls")], archive=ROOT / "dist" / "no-such.pyz")
