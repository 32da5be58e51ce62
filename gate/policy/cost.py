"""The cost test: did what a sample costs (tokens, steps, tool calls, money) rise or fall
across the cases, against how much each case's own samples vary? docs/policy.md ("Cost
gates against the base history") says why each case's own noise is the one that matters.

Both tests are stratified permutation tests (cases are the strata): every figure a test
weighs or scales by is a function of each case's pooled values, which a permutation
leaves unchanged, and its statistic's permutation mean and variance are exact
(``bench/cost_bench.py`` measures how often an unchanged pull request is called beyond
noise).

**The mean per sample** (:attr:`CostResult.change`): D = Σ_c (head mean − base mean),
permutation variance Σ_c S²_c (1/n_h + 1/n_b), S²_c the variance of the case's pooled
values (ddof 1). Up to :data:`MC_CASES` cases the p-value is the permutation
distribution's own, from :data:`MC_DRAWS` seeded draws of every case's head positions
(``(1 + draws at least as extreme) / (1 + draws)``: valid, and the same on every run);
above, the normal law.

**The typical case** (:attr:`CostEvidence.typical`, what a ``max_increase`` gate compares
with its bound):

1. per case c, every value (base and head together, N_c of them) is put on a log scale,
   y = log(x + δ_c), with δ_c = 0 when every value is positive and a hundredth of the
   case's median value when one is 0 (a zero stays finite);
2. each case is centred on the median of its y and scaled by their spread s_c — the
   median absolute deviation × 1.4826 (the standard deviation when more than half the
   values are equal) — and clipped to ±:data:`CLIP`;
3. D_c = mean of the head's z − mean of the base's z; its permutation variance is
   V_c = S²_c (1/n_h + 1/n_b) (S²_c the variance of its z);
4. T = Σ w_c D_c / √(Σ w_c² V_c) with w_c = 1/s_c; the one-sided p-value of a rise from
   the normal law, 1 − Φ(T) (the terms are bounded: the law fits from a few cases on).

Its size (:func:`_typical`): per case the Hodges–Lehmann shift on the log scale,
averaged over the cases as a random-effects meta-analysis does (each case weighs 1/(its
own noise + the spread of the cases' shifts)), put back on the ratio scale: +0.31 means
the typical case costs 31 % more per sample. A case whose values are all equal, base and
head, weighs nothing in the test, and counts as a shift of 0 measured without noise in
the size.

Pure, numpy only, deterministic: the draws are seeded, no file I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from gate.policy.stats import Floats

CLIP = 3.0
"""Standardised values beyond ±CLIP are clipped (winsorised)."""
MAD_SCALE = 1.4826
"""Median absolute deviation × this = the standard deviation of a normal law."""
OFFSET_SHARE = 0.01
"""δ_c, the log scale's offset, as a share of the case's median value."""
MAX_DRIVERS = 3
"""Cases named as driving a rise of the mean that the typical case does not share."""
MC_CASES = 30
"""Up to this many cases, the mean's test draws its permutation distribution."""
MC_DRAWS = 2000
"""Draws of the permutation distribution (seeded: the same p-value on every run)."""
_BLOCK = 2048
"""Cases whose head-minus-base differences are held at once."""
_NORMAL = NormalDist()


@dataclass(frozen=True, slots=True)
class CostCase:
    """One comparable case's values of one cost metric: the base history's recorded
    samples and this run's initial head samples (n/a values left out)."""

    case_id: str
    base: Sequence[float]
    head: Sequence[float]


@dataclass(frozen=True, slots=True)
class CostEvidence:
    """What the cost test found, besides the means and the mean's p-value of a rise."""

    typical: float | None
    """The typical case's relative change per sample (module doc); ``None`` without a
    case that varied (then nothing changed: every value equal on both sides)."""
    p_fall: float
    """The mean's test: one-sided p-value of a fall (the suite test's ``p_value`` is the
    rise's)."""
    typical_p_rise: float
    """The typical case's test: one-sided p-value of a rise."""
    typical_p_fall: float
    """The typical case's test: one-sided p-value of a fall."""
    z: float
    """The typical case's test statistic T (0 without a case that varied)."""
    head_samples: int
    """Head samples per case (the most of any case)."""
    base_samples: int
    """Base samples per case (the median over the cases)."""
    drivers: tuple[str, ...] = ()
    """The cases that moved the mean per sample the most (largest rise first)."""
    noise: float = 0.0
    """√(Σ w² S²) over the varying cases: with ``z`` and the sample counts, what more
    head samples would make of the statistic (:func:`samples_to_decide`)."""
    base_noise: float = 0.0
    """√(Σ w² S² / n_b): the part of the noise that more head samples do not shrink."""


@dataclass(frozen=True, slots=True)
class CostResult:
    """The cost test of one metric over the comparable cases."""

    cases: int
    """Cases with a value on both sides."""
    base_mean: float | None
    """Mean over those cases of the base history's per-case means (per sample)."""
    head_mean: float | None
    change: float | None
    """head_mean − base_mean."""
    p_rise: float
    """The mean's test: one-sided p-value of a rise."""
    evidence: CostEvidence


def _offsets(x: Floats, valid: np.ndarray) -> Floats:
    """δ_c per case (module doc): 0 when every value is positive; else a hundredth of the
    median value, of the mean positive value when the median is 0, 1 when every value
    is 0."""
    med = np.nanmedian(np.where(valid, x, np.nan), axis=1)
    pos = np.where(valid & (x > 0), x, np.nan)
    with np.errstate(invalid="ignore"):
        count = np.sum(~np.isnan(pos), axis=1)
        mean_pos = np.where(count > 0, np.nansum(pos, axis=1) / np.maximum(count, 1), np.nan)
    ref = np.where(med > 0, med, mean_pos)
    offset = np.where(np.isfinite(ref) & (ref > 0), ref * OFFSET_SHARE, 1.0)
    return np.where(np.all(~valid | (x > 0), axis=1), 0.0, offset)


def _pad(rows: Sequence[Sequence[float]]) -> tuple[Floats, np.ndarray]:
    width = max((len(r) for r in rows), default=0)
    out = np.full((len(rows), max(width, 1)), np.nan)
    for i, r in enumerate(rows):
        if len(r):
            out[i, : len(r)] = r
    return out, ~np.isnan(out)


def cost_test(cases: Sequence[CostCase]) -> CostResult:
    """The test of one cost metric over the comparable cases (module doc). Cases without
    a value on either side are left out."""
    used = [c for c in cases if len(c.base) and len(c.head)]
    if not used:
        return CostResult(0, None, None, None, 1.0, CostEvidence(None, 1.0, 1.0, 1.0, 0.0, 0, 0))
    base, bv = _pad([[max(0.0, float(v)) for v in c.base] for c in used])
    head, hv = _pad([[max(0.0, float(v)) for v in c.head] for c in used])
    nb = bv.sum(axis=1).astype(np.float64)
    nh = hv.sum(axis=1).astype(np.float64)
    b_mean = np.nansum(base, axis=1) / nb
    h_mean = np.nansum(head, axis=1) / nh
    base_mean = float(b_mean.mean())
    head_mean = float(h_mean.mean())
    pooled = np.concatenate([base, head], axis=1)
    pv = np.concatenate([bv, hv], axis=1)
    mean_rise, mean_fall = _mean_test(pooled, pv, base.shape[1], nb, nh)

    # 1. the log scale, per case
    delta = _offsets(pooled, pv)
    y = np.where(pv, np.log(np.where(pv, pooled + delta[:, None], 1.0)), np.nan)
    # 2. centre and spread of each case's pooled values (a permutation leaves them be)
    centre = np.nanmedian(y, axis=1)
    spread = MAD_SCALE * np.nanmedian(np.abs(y - centre[:, None]), axis=1)
    n_all = pv.sum(axis=1)
    mean_y = np.nansum(y, axis=1) / n_all
    sq = np.nansum((y - mean_y[:, None]) ** 2, axis=1)
    sd = np.sqrt(np.where(n_all > 1, sq / np.maximum(n_all - 1, 1), 0.0))
    spread = np.where(spread > 1e-12, spread, sd)
    varies = spread > 1e-12
    # 3. clipped standardised values, the head-minus-base difference and its variance
    s = np.where(varies, spread, 1.0)
    z = np.clip((y - centre[:, None]) / s[:, None], -CLIP, CLIP)
    k = base.shape[1]
    zb, zh = z[:, :k], z[:, k:]
    d = np.nansum(zh, axis=1) / nh - np.nansum(zb, axis=1) / nb
    z_mean = np.nansum(z, axis=1) / n_all
    s2 = np.nansum((z - z_mean[:, None]) ** 2, axis=1) / np.maximum(n_all - 1, 1)
    # 4. the weighted sum over the cases that varied
    w = np.where(varies, 1.0 / s, 0.0)
    num = float(np.sum(w * d))
    noise_sq = float(np.sum(w * w * s2))
    var = float(np.sum(w * w * s2 * (1.0 / nh + 1.0 / nb)))
    t = num / math.sqrt(var) if var > 0 else 0.0
    typical_rise = 1.0 - _NORMAL.cdf(t) if var > 0 else 1.0
    typical_fall = _NORMAL.cdf(t) if var > 0 else 1.0
    typical = _typical(y, k, spread, nb, nh, varies) if varies.any() else None
    contribution = h_mean - b_mean
    order = np.argsort(-contribution, kind="stable")
    drivers = tuple(used[int(i)].case_id for i in order[:MAX_DRIVERS] if contribution[i] > 0)
    evidence = CostEvidence(
        typical=typical,
        p_fall=mean_fall,
        typical_p_rise=typical_rise,
        typical_p_fall=typical_fall,
        z=t,
        head_samples=int(nh.max()),
        base_samples=int(np.median(nb)),
        drivers=drivers,
        noise=math.sqrt(noise_sq),
        base_noise=math.sqrt(float(np.sum(w * w * s2 / nb))),
    )
    return CostResult(len(used), base_mean, head_mean, head_mean - base_mean, mean_rise, evidence)


def _mean_test(
    pooled: Floats, valid: np.ndarray, k: int, nb: Floats, nh: Floats
) -> tuple[float, float]:
    """The mean per sample's test (module doc): one-sided p-values of a rise and of a
    fall, from each case's base values then head values (the first ``k`` columns are the
    base's). Without noise (no case's samples vary) any change is beyond it."""
    base, head = pooled[:, :k], pooled[:, k:]
    n = valid.sum(axis=1)
    centre = np.nansum(pooled, axis=1) / n
    sq = np.nansum((pooled - centre[:, None]) ** 2, axis=1)
    s2 = np.where(n > 1, sq / np.maximum(n - 1, 1), 0.0)
    d = float(np.sum(np.nansum(head, axis=1) / nh - np.nansum(base, axis=1) / nb))
    var = float(np.sum(s2 * (1.0 / nh + 1.0 / nb)))
    if var <= 0:
        return (0.0 if d > 0 else 1.0), (0.0 if d < 0 else 1.0)
    if len(pooled) > MC_CASES:
        z = d / math.sqrt(var)
        return 1.0 - _NORMAL.cdf(z), _NORMAL.cdf(z)
    # The permutation distribution, drawn: n_h head positions per case among its values
    # (never the padding), D = Σ (head mean − base mean) = Σ (N/n_b)(head mean − mean).
    keys = np.random.default_rng(0).random((MC_DRAWS, *pooled.shape))
    keys[:, ~valid] = np.inf
    k = int(nh.max())
    order = np.argpartition(keys, k - 1, axis=2)[:, :, :k] if k < keys.shape[2] else None
    values = np.broadcast_to(np.where(valid, pooled, 0.0), keys.shape)
    if order is None:
        order = np.argsort(keys, axis=2)
    first = np.take_along_axis(values, order, axis=2)
    # a case with fewer head samples than another takes the smallest keys among its picks
    if int(nh.min()) < k:
        rank = np.argsort(np.take_along_axis(keys, order, axis=2), axis=2)
        first = np.take_along_axis(first, rank, axis=2)
    take = np.arange(first.shape[2])[None, None, :] < nh[None, :, None]
    head_mean = np.where(take, first, 0.0).sum(axis=2) / nh
    draws = ((n / nb) * (head_mean - centre)).sum(axis=1)
    tol = 1e-9 * max(1.0, abs(d))
    rise = (1 + int(np.count_nonzero(draws >= d - tol))) / (MC_DRAWS + 1)
    fall = (1 + int(np.count_nonzero(draws <= d + tol))) / (MC_DRAWS + 1)
    return rise, fall


def _typical(
    y: Floats, k: int, spread: Floats, nb: Floats, nh: Floats, varies: np.ndarray
) -> float:
    """The typical case's relative change (module doc): HL_c, the median of the case's
    head-minus-base differences on the log scale (0, measured without noise, for a case
    whose values are all equal), averaged with random-effects weights 1/(v_c + τ²) —
    v_c = s_c² (1/n_h + 1/n_b) the case's own noise, τ² the spread of the cases' shifts
    beyond it (the method of moments: the shifts' variance less their mean noise) — and
    put back on the ratio scale."""
    hl = np.zeros(y.shape[0])
    for a in range(0, y.shape[0], _BLOCK):
        yb, yh = y[a : a + _BLOCK, :k], y[a : a + _BLOCK, k:]
        diffs = (yh[:, :, None] - yb[:, None, :]).reshape(yb.shape[0], -1)
        part = varies[a : a + _BLOCK]
        hl[a : a + _BLOCK][part] = np.nanmedian(diffs[part], axis=1)
    v = np.where(varies, spread**2 * (1.0 / nh + 1.0 / nb), 0.0)
    tau2 = max(0.0, float(np.var(hl, ddof=1) - np.mean(v))) if len(hl) > 1 else 0.0
    exact = v + tau2 <= 0
    if exact.any():  # no spread beyond noise, and cases measured without any
        return math.expm1(float(np.mean(hl[exact])))
    w = 1.0 / (v + tau2)
    return math.expm1(float(np.sum(w * hl) / np.sum(w)))


def samples_to_decide(evidence: CostEvidence, alpha: float, limit: int) -> int | None:
    """The head samples per case (more than this run took, at most ``limit``) with which
    the observed shift would be a rise beyond noise at ``alpha``; ``None`` when even
    ``limit`` would not do (the base history's own noise is too large: it needs more
    base samples)."""
    if evidence.z <= 0 or evidence.noise <= 0:
        return None
    need = _NORMAL.inv_cdf(1.0 - alpha)
    # T·√var is the weighted shift; var(n) = noise²/n + base_noise² for n head samples
    shift = evidence.z * math.sqrt(
        evidence.noise**2 / max(evidence.head_samples, 1) + evidence.base_noise**2
    )
    for n in range(evidence.head_samples + 1, limit + 1):
        if shift / math.sqrt(evidence.noise**2 / n + evidence.base_noise**2) >= need:
            return n
    return None
