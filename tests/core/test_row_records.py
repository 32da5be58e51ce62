"""The sample records of a bound table, read a block of cases at a time
(:meth:`gate.pipeline._scorepool.RowRecords.of_case`): whatever the sources (in memory,
spooled, records out of file order), the block boundaries and the table's order, each case
gets exactly its records, in its rows' order."""

from __future__ import annotations

import os
import random
from array import array
from dataclasses import dataclass

import numpy as np
import pytest

from gate.pipeline._scorepool import RowRecords, _Spool


@dataclass
class _Table:
    order: np.ndarray
    sizes: np.ndarray

    @property
    def starts(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)


def _record(row: int) -> bytes:
    return b'{"row":%d,"pad":"%s"}' % (row, b"x" * (row % 7))


@pytest.mark.parametrize("block", [1, 3, 256])
def test_of_case__mixed_sources_any_order__each_case_its_records(block: int) -> None:
    rnd = random.Random(block)
    spool = _Spool()
    try:
        records = RowRecords()
        records.BLOCK = block
        row = 0
        for n, spooled, shuffled in [(7, False, False), (40, True, False), (25, True, True)]:
            rows = list(range(row, row + n))
            if not spooled:
                records.add_memory([_record(r) for r in rows])
            else:
                key = len(records._sources)
                # The file holds the records in another order than the rows when shuffled.
                placed = rnd.sample(rows, n) if shuffled else rows
                offsets, lengths = array("q", [0] * n), array("q", [0] * n)
                at = 0
                with open(spool.path(key), "wb") as fh:
                    for r in placed:
                        data = _record(r)
                        fh.write(data)
                        offsets[r - row], lengths[r - row] = at, len(data)
                        at += len(data)
                records.add_spooled(spool, key, offsets, lengths)
            row += n
        # 40 cases of 0 or more rows each (cut points anywhere, repeats allowed).
        cuts = [0, *sorted(rnd.choices(range(row + 1), k=39)), row]
        sizes = np.diff(np.array(cuts, dtype=np.int64))
        order = np.array(rnd.sample(range(row), row), dtype=np.int64)
        records.bind(_Table(order, sizes))  # type: ignore[arg-type]
        starts = _Table(order, sizes).starts
        for case in [*range(len(sizes)), 0, len(sizes) - 1, 5]:
            a = int(starts[case])
            want = [_record(int(r)) for r in order[a : a + int(sizes[case])]]
            assert records.of_case(case) == want, case
    finally:
        spool.close()
    assert not os.path.exists(spool.root)
