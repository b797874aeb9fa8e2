"""Parametrized tables whose rows are one behaviour class for the archive: `first_on_archive`.

Some tables feed many inputs through one code path of a verb (a validator, a parser: nine invalid settings
files, six bad manifests, three file modes). Against the archive, each row costs a process or two for the
same entry point and the same packaged module; what differs between rows is the logic, which the source run
checks row by row. So the first row runs on both targets (the archive's path is there and behaves) and the
others are `source_only`. Tables whose rows reach different parts of the archive (the payload files, the
launcher's failure modes) are not such tables and keep every row on both targets.
"""

import pytest


def first_on_archive(rows, ids=None):
    """`rows` as pytest params: the first on both targets, the rest on the source target only (`source_only`).
    A row that is a tuple becomes that many arguments, as in a plain `parametrize` table."""
    rows = list(rows)
    ids = list(ids) if ids is not None else [None] * len(rows)
    return [pytest.param(*(row if isinstance(row, tuple) else (row,)), id=ident,
                         marks=() if index == 0 else pytest.mark.source_only)
            for index, (row, ident) in enumerate(zip(rows, ids))]
