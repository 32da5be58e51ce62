"""The reduction's memory: batches consumed while the table is assembled give the same
table, and the reduction's own buffers stay a bounded multiple of the value matrix.

The peak is measured with :mod:`tracemalloc` (numpy reports its buffers to it), relative
to the size of the value matrix, so the bound holds on any machine: it is set between
what this code allocates and what the code before it allocated on the same inputs
(written beside it). (A consumed batch is freed as it is copied, but the table's matrix
is allocated whole first, so tracemalloc, which counts allocations, not touched pages,
cannot show that saving: the resident-set figures of bench/notes.md do.)
"""

from __future__ import annotations

import itertools
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from gate.config import PassCheck
from gate.policy.reduce import reduce_arrays
from gate.policy.table import CaseMeta, SampleRows, assemble

METRICS = tuple(f"m{j}" for j in range(28))
CASES, SAMPLES, BATCHES = 6_000, 5, 8
CHECKS = tuple(c.value for c in PassCheck)


def _metas() -> list[CaseMeta]:
    return [CaseMeta(f"c{i}", i + 1, None, (), False, (), ()) for i in range(CASES)]


def _batches() -> list[SampleRows]:
    """The case-samples in file order (sample-major, as a runner writes them), cut into
    ``BATCHES`` batches like a fork pool's chunks."""
    rng = np.random.default_rng(5)
    case = np.tile(np.arange(CASES), SAMPLES)
    sample = np.repeat(np.arange(SAMPLES), CASES)
    n = case.shape[0]
    cuts = np.linspace(0, n, BATCHES + 1).astype(int)
    out = []
    for a, b in itertools.pairwise(cuts):
        k = b - a
        values = rng.random((k, len(METRICS)))  # a batch at a time: no whole-run copy
        values[values < 0.2] = np.nan
        out.append(
            SampleRows(
                names=METRICS,
                check_names=CHECKS,
                case=case[a:b].copy(),
                sample=sample[a:b].copy(),
                extra=np.zeros(k, dtype=np.bool_),
                passed=rng.random(k) < 0.5,
                values=values,
                calls=rng.integers(0, 4, k).astype(np.float64),
                calls_no_tool=np.zeros(k),
                checks=rng.integers(0, 1 << len(CHECKS), k),
                latency=rng.random(k) * 1000,
                usage={"prompt_tokens": rng.integers(1, 900, k).astype(np.float64)},
                usage_floats=frozenset(),
                called={},
                per_tool={},
                confusion={},
                malformed={},
                hard=[],
            )
        )
    return out


@contextmanager
def _traced() -> Iterator[Callable[[], int]]:
    """The peak of traced memory inside the block, above what was traced at its start."""
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    peak = [0]
    try:
        yield lambda: peak[0]
    finally:
        peak[0] = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()


def test_assemble__consumed_or_not__the_same_table() -> None:
    metas = _metas()
    kept = _batches()
    a = assemble(metas, kept)
    b = assemble(metas, _batches(), consume=True)
    assert len(kept) == BATCHES  # not consumed: the caller's batches are left as they were
    assert np.array_equal(a.order, b.order)
    for name in ("case", "sample", "extra", "passed", "calls", "checks", "latency"):
        assert np.array_equal(getattr(a.rows, name), getattr(b.rows, name)), name
    assert a.rows.values.tobytes() == b.rows.values.tobytes()
    assert np.array_equal(a.rows.usage["prompt_tokens"], b.rows.usage["prompt_tokens"])
    assert a.failed_checks_by_case() == b.failed_checks_by_case()


def test_reduce_arrays__many_cases__buffers_a_fraction_of_the_rows() -> None:
    table = assemble(_metas(), _batches())
    rows = table.rows
    values_bytes = rows.values.nbytes
    with _traced() as peak:
        reduce_arrays(
            values=rows.values,
            passed=rows.passed,
            calls=rows.calls,
            calls_no_tool=rows.calls_no_tool,
            sizes=table.sizes,
            regular=SAMPLES,
            slices={"tag=a": np.arange(CASES) % 2 == 0},
            seed=1,
        )
        table.failed_checks_by_case()
    # Measured: 10.8x the value matrix (6.7 MB) at 6,000 cases: the bootstrap's
    # 2,000 x 2,000 draws dominate at this size; the code before this: 17.3x (the draws
    # twice over, a rows x checks matrix of bits, cases-sized copies held twice).
    assert peak() < 14.0 * values_bytes, f"peak {peak() / values_bytes:.2f}x the values"
