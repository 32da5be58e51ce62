"""numpy helpers for the statistics layer: masked means and standard deviations over
ragged groups, slice sums, and a seeded bootstrap.

Conventions (every function here follows them):

* a value that does not apply ("n/a", ``None`` in a sample score) is ``NaN`` in the input
  arrays and is left out of every sum and count; ``NaN`` never reaches results.json —
  a statistic with no data is reported as ``None`` together with its count, so "too few
  samples" is always an explicit result;
* groups of rows (the samples of one case) are contiguous, given by their start offsets,
  so per-group sums are one ``np.add.reduceat`` call, never a Python loop per sample;
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
    """Per-group (per-case) statistics of a rows × metrics array.

    ``mean[g, k]`` is NaN where ``n[g, k] == 0``; ``std[g, k]`` is NaN where
    ``n[g, k] < 2``.
    """

    mean: Floats
    std: Floats
    n: Ints


def group_stats(values: Floats, starts: Ints) -> GroupStats:
    """Mean, sample std (ddof=1) and count of the non-NaN values of each group of rows.

    ``values`` is rows × metrics; group ``g`` is rows ``starts[g] : starts[g+1]`` (every
    group non-empty). Two-pass std (deviations from the group mean), which stays exact
    for the 0/1 values most metrics take.
    """
    valid = ~np.isnan(values)
    zeroed = np.where(valid, values, 0.0)
    n = np.add.reduceat(valid.astype(np.int64), starts, axis=0)
    sums = np.add.reduceat(zeroed, starts, axis=0)
    mean = safe_divide(sums, n)
    sizes = np.diff(np.append(starts, values.shape[0]))
    row_mean = np.repeat(np.nan_to_num(mean), sizes, axis=0)
    dev = np.where(valid, values - row_mean, 0.0)
    ss = np.add.reduceat(dev * dev, starts, axis=0)
    std = np.sqrt(safe_divide(ss, n - 1))
    return GroupStats(mean=mean, std=std, n=n)


def safe_divide(num: Floats, den: NDArray[np.int64] | Floats) -> Floats:
    """``num / den`` where ``den > 0``, NaN elsewhere (no warnings)."""
    den_f = np.asarray(den, dtype=np.float64)
    ok = den_f > 0
    out = np.full(np.broadcast(num, den_f).shape, np.nan)
    np.divide(num, den_f, out=out, where=ok)
    return out


def std_over_rows(values: Floats) -> tuple[Floats, Ints]:
    """Sample std (ddof=1) over axis 0 of the non-NaN values, and their count."""
    valid = ~np.isnan(values)
    n = valid.sum(axis=0).astype(np.int64)
    mean = safe_divide(np.where(valid, values, 0.0).sum(axis=0), n)
    dev = np.where(valid, values - np.nan_to_num(mean), 0.0)
    std = np.sqrt(safe_divide((dev * dev).sum(axis=0), n - 1))
    return std, n


def bootstrap_ratio_ci(
    num: Floats,
    den: Floats,
    *,
    seed: int,
    reps: int,
    level: float = 0.95,
    chunk: int = 32,
) -> tuple[Floats, Floats]:
    """Percentile bootstrap interval of ``Σ_c num[c,k] / Σ_c den[c,k]`` over cases.

    Each replicate draws the cases with replacement (multinomial counts ``w``) and
    computes ``Σ w·num / Σ w·den``: with ``num`` the per-case means (0 where n/a) and
    ``den`` the 0/1 "has a value" mask this is the mean over cases of per-case means; with
    per-case sums it is a pooled ratio. A replicate in which no drawn case has a value is
    left out (the interval is conditional on the metric applying). The weighting is a
    matrix product, so all metrics share one draw and no Python loop runs per case.
    Returns (low, high), NaN where fewer than 2 cases have a value.
    """
    cases, k = num.shape
    low = np.full(k, np.nan)
    high = np.full(k, np.nan)
    if cases == 0:
        return low, high
    rng = np.random.default_rng(seed)
    stacked = np.concatenate([num, den], axis=1)
    est = np.empty((reps, k))
    for start in range(0, reps, chunk):
        b = min(chunk, reps - start)
        draws = rng.integers(0, cases, size=(b, cases))
        offsets = (np.arange(b, dtype=np.int64) * cases)[:, None]
        weights = np.bincount((draws + offsets).ravel(), minlength=b * cases)
        sums = weights.reshape(b, cases).astype(np.float64) @ stacked
        est[start : start + b] = safe_divide(sums[:, :k], sums[:, k:])
    enough = (den > 0).sum(axis=0) >= 2
    for j in np.flatnonzero(enough):
        col = est[:, j]
        col = col[~np.isnan(col)]
        if col.size:
            tail = (1.0 - level) / 2.0
            low[j], high[j] = np.quantile(col, [tail, 1.0 - tail])
    return low, high


def bootstrap_reps(cases: int) -> int:
    """Replicates for a bootstrap over ``cases`` cases: 2·10⁶ ÷ cases, within [200, 2000].

    Small datasets get 2,000 replicates (a stable 95% interval); large ones fewer, since
    their interval is narrow anyway and the cost is replicates × cases.
    """
    if cases <= 0:
        return 0
    return int(min(2000, max(200, 2_000_000 // cases)))


def fisher_one_sided_all_pass(n_base: int, n_head: int, head_passes: int) -> float:
    """One-sided Fisher exact p-value for base ``n_base``/``n_base`` passes against head
    ``head_passes``/``n_head``: P(base passes ≥ n_base | margins) = C(n_base + head_passes,
    n_base) / C(n_base + n_head, n_base)."""
    from math import comb

    return comb(n_base + head_passes, n_base) / comb(n_base + n_head, n_base)


def fisher_one_sided_all_fail(n_base: int, n_head: int) -> float:
    """p-value for a total drop: base all pass (``n_base``), head all fail (``n_head``)."""
    return fisher_one_sided_all_pass(n_base, n_head, 0)


def clean(x: float) -> float | None:
    """A NaN becomes ``None`` (n/a); anything else a plain float."""
    return None if x != x else float(x)
