"""numpy helpers for the statistics layer: masked means and standard deviations over
ragged groups, slice sums, and a seeded bootstrap.

Conventions (every function here follows them):

* a value that does not apply ("n/a", ``None`` in a sample score) is ``NaN`` in the input
  arrays and is left out of every sum and count; ``NaN`` never reaches results.json —
  a statistic with no data is reported as ``None`` together with its count, so "too few
  samples" is always an explicit result;
* samples are laid out as a cases × samples × metrics array, so per-case figures are
  reductions over one axis, never a Python loop per sample;
* the standard deviation over samples is the *sample* standard deviation (ddof=1),
  the unbiased estimate of the spread between repeated runs; it needs at least 2 values;
* anything random takes an explicit seed (``numpy.random.default_rng(seed)``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]
Bools = NDArray[np.bool_]

Z_ALPHA_TWO_SIDED_05 = 1.959963984540054
"""z quantile for a two-sided test at α = 0.05."""
Z_POWER_80 = 0.8416212335729143
"""z quantile for power 0.8."""


@dataclass(frozen=True, slots=True)
class GroupStats:
    """Per-case statistics over samples (cases × metrics).

    ``mean[g, k]`` is NaN where ``n[g, k] == 0``; ``std[g, k]`` is NaN where
    ``n[g, k] < 2``.
    """

    mean: Floats
    std: Floats
    n: Ints


def safe_divide(num: Floats, den: NDArray[np.int64] | Floats) -> Floats:
    """``num / den`` where ``den > 0``, NaN elsewhere (no warnings)."""
    den_f = np.asarray(den, dtype=np.float64)
    ok = den_f > 0
    out = np.full(np.broadcast(num, den_f).shape, np.nan)
    np.divide(num, den_f, out=out, where=ok)
    return out


def pass_hat_k(passes: Floats, sampled: Floats | Ints, k: int) -> Floats:
    """pass^k per group: the chance that ``k`` samples drawn from the group's ``sampled``
    all pass, ``C(passes, k) / C(sampled, k)`` — τ-bench's unbiased estimator of "every
    one of k tries succeeds" from n ≥ k tries (with n = k: 1 when every sample passed,
    else 0). NaN where fewer than ``k`` were sampled, or ``k`` < 1."""
    c = np.rint(np.asarray(passes, dtype=np.float64))
    n = np.asarray(sampled, dtype=np.float64)
    out = np.ones(c.shape)
    for i in range(k):  # the product form of the ratio of binomials: no overflow
        out *= np.clip(c - i, 0.0, None) / np.maximum(n - i, 1.0)
    out[(n < k) | (k < 1)] = np.nan
    return out


def pass_hat_curve(rates: Floats, sampled: Floats | Ints, k_max: int) -> tuple[float | None, ...]:
    """pass^k for k = 1 … ``k_max``: per k, the mean over the cases with at least k
    samples of :func:`pass_hat_k` (``rates`` × ``sampled`` passes of ``sampled``);
    ``None`` for a k no case reaches."""
    n = np.asarray(sampled, dtype=np.float64)
    passes = np.asarray(rates, dtype=np.float64) * n
    out: list[float | None] = []
    for k in range(1, k_max + 1):
        per = pass_hat_k(passes, n, k)
        known = per[~np.isnan(per)]
        out.append(round(float(known.mean()), 12) if known.size else None)
    return tuple(out)


def pooled_ratio(num: Floats, den: Floats) -> Floats:
    """``num / den``, and 0.0 where ``den`` is 0: with no call made, no call was unnecessary."""
    return np.where(den > 0, num / np.maximum(den, 1.0), 0.0)


BOOTSTRAP_REPS = 2000
"""Bootstrap replicates."""
BOOTSTRAP_GROUPS = 2000
"""Most resampling units: above this many cases, cases are dealt into this many groups."""


def bootstrap_ratio_ci(
    num: Floats,
    den: Floats,
    *,
    seed: int,
    reps: int = BOOTSTRAP_REPS,
    groups: int = BOOTSTRAP_GROUPS,
    level: float = 0.95,
) -> tuple[Floats, Floats]:
    """Percentile bootstrap interval of ``Σ_c num[c,k] / Σ_c den[c,k]`` over cases.

    Each replicate draws the cases with replacement (multinomial counts ``w``) and
    computes ``Σ w·num / Σ w·den``: with ``num`` the per-case means (0 where n/a) and
    ``den`` the 0/1 "has a value" mask this is the mean over cases of per-case means; with
    per-case sums it is a pooled ratio. A replicate in which no drawn case has a value is
    left out (the interval is conditional on the metric applying).

    Cost is bounded: with more than ``groups`` cases, the cases are first dealt at random
    (seeded) into ``groups`` groups and the groups are resampled. For a sum of
    independent cases this gives the same interval up to Monte-Carlo error: a group total
    has m times a case's variance, and resampling G = C/m groups gives the variance of a
    C-case total either way. The weighting is one matrix product, so all metrics share one
    draw and no Python loop runs per case. Returns (low, high), NaN where fewer than 2
    cases have a value.
    """
    cases, k = num.shape
    low = np.full(k, np.nan)
    high = np.full(k, np.nan)
    if cases < 2:
        return low, high
    # only the columns with an interval are resampled (the draws are the same either way)
    enough = np.flatnonzero((den > 0).sum(axis=0) >= 2)
    if not enough.size:
        return low, high
    rng = np.random.default_rng(seed)
    if cases > groups:
        # a random partition: the cases in a seeded random order, cut into `groups`
        # contiguous runs of (nearly) equal size; a group's sum is taken column by column
        # in row order, so summing num's and den's columns apart gives the same numbers
        # without a cases-sized copy of both side by side
        perm = rng.permutation(cases)
        bounds = (np.arange(groups, dtype=np.int64) * cases) // groups
        units = np.concatenate([_group_sums(a, perm, bounds, enough) for a in (num, den)], axis=1)
        del perm
    else:
        units = np.concatenate([num[:, enough], den[:, enough]], axis=1)
    g = units.shape[0]
    # reps × g draws, turned into per-replicate counts in place (one such buffer at a
    # time: 32 MB each at the default 2,000 × 2,000).
    draws = rng.integers(0, g, size=(reps, g))
    draws += (np.arange(reps, dtype=np.int64) * g)[:, None]
    counts = np.bincount(draws.ravel(), minlength=reps * g)
    del draws
    weights = counts.astype(np.float64).reshape(reps, g)
    del counts
    sums = weights @ units
    del weights
    est = safe_divide(sums[:, : enough.size], sums[:, enough.size :])
    tail = (1.0 - level) / 2.0
    for at, j in enumerate(enough):
        col = est[:, at]
        col = col[~np.isnan(col)]
        if col.size:
            low[j], high[j] = np.quantile(col, [tail, 1.0 - tail])
    return low, high


def _group_sums(a: Floats, perm: Ints, bounds: Ints, cols: Ints, block: int = 8) -> Floats:
    """``np.add.reduceat(a[perm][:, cols], bounds, axis=0)`` a block of columns at a time:
    the same sums (each column is summed down its rows alone), without a copy of the
    whole of ``a`` in the permuted order."""
    return np.concatenate(
        [
            np.add.reduceat(a[:, cols[j : j + block]][perm], bounds, axis=0)
            for j in range(0, max(cols.size, 1), block)
        ],
        axis=1,
    )


def fisher_one_sided_all_pass(n_base: int, n_head: int, head_passes: int) -> float:
    """One-sided Fisher exact p-value for base ``n_base``/``n_base`` passes against head
    ``head_passes``/``n_head``: P(base passes ≥ n_base | margins) = C(n_base + head_passes,
    n_base) / C(n_base + n_head, n_base)."""
    from math import comb

    return comb(n_base + head_passes, n_base) / comb(n_base + n_head, n_base)


def clean(x: float) -> float | None:
    """A NaN becomes ``None`` (n/a); anything else a plain float."""
    return None if x != x else float(x)
