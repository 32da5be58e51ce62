"""Suite-level tests: did the pass rate, or a gated metric, get worse across the suite —
a broad small drop that no single case shows?

Both tests compare each case with itself (head against the case's own base history) and
treat the case, not the sample, as the unit: the samples of one case share that case's
pass probability, so pooling them across cases as if they were independent would
overstate the evidence. Both use only each case's **initial** head samples: their
number is fixed before any outcome is seen, so the per-case means are unbiased, which
samples added where a case looked bad would not be.

**Pass rate: exact stratified conditional test** (:func:`pass_rate_test`). Each case is
a stratum: a 2×2 table of base and head samples by passed/failed. Given the table's
margins (how many samples on each side, how many failures in all), the head's failures
x_c follow a hypergeometric law when nothing changed, whatever the case's own pass
probability — the nuisance parameters drop out exactly. Against "head's odds of failing
are ψ times base's, in every case", the conditional likelihood ratio of case c is

    LR_c(ψ) = ψ^x_c · Σ_x w_c(x) / Σ_x w_c(x) ψ^x,   w_c(x) = C(n_h, x) · C(n_b, F_c − x),

and the suite's e-value is the average over a grid of odds ratios Ψ = :data:`PSI_GRID` of
the product over cases: E = (1/|Ψ|) Σ_ψ Π_c LR_c(ψ). Conditionally on all margins the
cases are independent and each LR_c has mean 1, so E has mean at most 1 and
P(E ≥ 1/α) ≤ α: the test is exact, with no normal approximation and no bootstrap
noise. A case that never failed, or never passed, on either side has one possible table
and LR = 1: only cases with failures weigh in. This is the exact counterpart of the
Cochran–Mantel–Haenszel test with cases as strata; a clustered z-test was as powerful in
the benchmark but only approximately valid with 60 cases of which most have zero
variance, and it is not monotone in the head's failures (one more failure can widen the
standard error more than it moves the mean), which this test is.

**Gated metrics: clustered paired t-test** (:func:`metric_test`). A metric's value is a
mean of scores in [0, 1], not a count, so there is no exact conditional law. Per case
d_c = head mean − base mean (signed so that positive is the gate's bad direction); the
test statistic is t = d̄ / (s_d / √C) over the C cases with a value on both sides, with
s_d the standard deviation of the d_c: the cluster-robust (CR1) standard error with
cases as clusters, which makes no assumption about how the samples inside a case
depend on each other. One-sided p-value from Student's t with C − 1 degrees of freedom.

**Cost metrics: the cost test** (:func:`cost_suite_test`, :mod:`gate.policy.cost`): each
case's head samples against the values its history recorded, the noise being how much a
case's own samples vary; it never blocks by itself (a ``max_increase`` gate decides with
it, ``gate.policy.decide.relative_gate``).

Both block only when the estimated change in the bad direction is at least
:data:`SUITE_MIN_EFFECT` (2 points), so a negligible but consistent shift on a
deterministic suite does not block; the thresholds in ``gates:`` still bound the level.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

from gate.policy.casetest import Counts, p_value
from gate.policy.cost import CostCase, CostEvidence, cost_test
from gate.policy.history import MetricSums

PSI_GRID = (1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0)
"""Odds ratios of failing (head ÷ base) that the pass-rate test averages over."""
SUITE_MIN_EFFECT = 0.02
"""Smallest worsening of the suite's pass rate or a gated metric that can block."""


class Better(enum.StrEnum):
    """Which way a metric is good: a ``min`` gate means higher, a ``max`` gate lower."""

    HIGHER = "higher"
    LOWER = "lower"


class Method(enum.StrEnum):
    EXACT_CONDITIONAL = "exact stratified conditional test (cases as strata)"
    CLUSTERED_T = "paired t-test, standard error clustered by case"
    STRATIFIED = "stratified permutation test of each case's samples against its history"


@dataclass(frozen=True, slots=True)
class SuiteTest:
    """One suite-level test."""

    name: str
    """``case_passed`` for the pass rate, else the metric's name."""
    method: Method
    better: Better
    cases: int
    """Cases with data on both sides."""
    base_mean: float | None
    head_mean: float | None
    change: float | None
    """head mean − base mean over those cases (means of per-case means)."""
    se: float | None
    """Clustered standard error of ``change`` (standard deviation of the per-case
    changes ÷ √cases): shown with the change; the pass-rate decision does not use it."""
    p_value: float
    """For the pass rate the e-value's p = min(1, 1/E); for a metric Student's t
    (one-sided, in the bad direction)."""
    alpha: float
    blocked: bool
    slice: str | None = None
    """The slice of a gate that names one (its cases only)."""
    max_increase: float | None = None
    """The relative bound of a ``max_increase`` gate on this cost metric."""
    reported: bool = False
    """A cost metric only reported (the Cost group): it blocks nothing."""
    cost: CostEvidence | None = None
    """The cost test's evidence (:data:`Method.STRATIFIED` only)."""

    @property
    def relative(self) -> float | None:
        """The change as a fraction of the base mean (``None`` without one, or a base
        mean of 0)."""
        if self.change is None or not self.base_mean:
            return None
        return self.change / self.base_mean

    @property
    def p_rise(self) -> float:
        """One-sided p-value of a rise of the metric."""
        return self.p_value if self.better is Better.LOWER else 1.0 - self.p_value

    @property
    def p_fall(self) -> float:
        """One-sided p-value of a fall of the metric."""
        if self.cost is not None:
            return self.cost.p_fall
        return 1.0 - self.p_rise

    @property
    def beyond_noise(self) -> bool:
        """The change of the means is significant in its direction. For a cost metric
        (:mod:`gate.policy.cost`): the mean per sample's test or the typical case's, each
        one-sided in the direction of the change at alpha — one criterion with a
        ``max_increase`` gate, which fails only on a rise the typical case's test finds, so
        the table never calls within noise a rise that failed a gate. For another metric,
        each one-sided test at half of alpha."""
        if self.change is None or self.cases == 0 or abs(self.change) < 1e-12:
            return False
        if self.cost is not None:
            rise = self.change > 0
            mean = self.p_rise if rise else self.p_fall
            typical = self.cost.typical_p_rise if rise else self.cost.typical_p_fall
            return min(mean, typical) <= self.alpha
        return min(self.p_value, 1.0 - self.p_value) <= self.alpha / 2


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _logsumexp(xs: Sequence[float]) -> float:
    m = max(xs)
    return m + math.log(math.fsum(math.exp(x - m) for x in xs))


def log_lr_case(base: Counts, head: Counts, psis: Sequence[float] = PSI_GRID) -> list[float]:
    """log LR_c(ψ) for each ψ (module doc): the conditional likelihood ratio of head's
    failures given the case's margins."""
    nb, nh = base.samples, head.samples
    total_fail = base.failures + head.failures
    x = head.failures
    lo, hi = max(0, total_fail - nb), min(nh, total_fail)
    if lo == hi:
        return [0.0] * len(psis)
    xs = range(lo, hi + 1)
    lw = [_log_comb(nh, k) + _log_comb(nb, total_fail - k) for k in xs]
    norm0 = _logsumexp(lw)
    out = []
    for psi in psis:
        lp = math.log(psi)
        out.append(x * lp - _logsumexp([w + k * lp for w, k in zip(lw, xs, strict=True)]) + norm0)
    return out


def _clustered(diffs: Sequence[float]) -> tuple[float, float | None]:
    c = len(diffs)
    mean = math.fsum(diffs) / c
    if c < 2:
        return mean, None
    var = math.fsum((d - mean) ** 2 for d in diffs) / (c - 1)
    return mean, math.sqrt(var / c)


def _untested(name: str, method: Method, better: Better, alpha: float) -> SuiteTest:
    """A test without a case with data on both sides: nothing to tell, nothing blocked."""
    return SuiteTest(name, method, better, 0, None, None, None, None, 1.0, alpha, False)


def pass_rate_test(
    pairs: Sequence[tuple[Counts, Counts]],
    *,
    alpha: float,
    min_effect: float = SUITE_MIN_EFFECT,
) -> SuiteTest:
    """The pass-rate test over (base history, initial head samples) per comparable case."""
    usable = [(b, h) for b, h in pairs if b.samples and h.samples]
    if not usable:
        return _untested("case_passed", Method.EXACT_CONDITIONAL, Better.HIGHER, alpha)
    sums = [0.0] * len(PSI_GRID)
    for b, h in usable:
        for j, v in enumerate(log_lr_case(b, h)):
            sums[j] += v
    log_e = _logsumexp(sums) - math.log(len(PSI_GRID))
    base_rates = [b.passes / b.samples for b, _ in usable]
    head_rates = [h.passes / h.samples for _, h in usable]
    change, se = _clustered([h - b for b, h in zip(base_rates, head_rates, strict=True)])
    blocked = log_e >= math.log(1.0 / alpha) and -change >= min_effect - 1e-12
    return SuiteTest(
        "case_passed",
        Method.EXACT_CONDITIONAL,
        Better.HIGHER,
        len(usable),
        math.fsum(base_rates) / len(usable),
        math.fsum(head_rates) / len(usable),
        change,
        se,
        p_value(log_e),
        alpha,
        blocked,
    )


def metric_test(
    name: str,
    better: Better,
    pairs: Sequence[tuple[MetricSums, Sequence[float | None]]],
    *,
    alpha: float,
    min_effect: float = SUITE_MIN_EFFECT,
) -> SuiteTest:
    """The clustered paired t-test of one gated metric over (base history sums, initial
    head values) per comparable case; cases where the metric is n/a on a side are left
    out."""
    base_means: list[float] = []
    head_means: list[float] = []
    for sums, values in pairs:
        head = MetricSums.of(values)
        if sums.mean is not None and head.mean is not None:
            base_means.append(sums.mean)
            head_means.append(head.mean)
    c = len(base_means)
    if c == 0:
        return _untested(name, Method.CLUSTERED_T, better, alpha)
    change, se = _clustered([h - b for b, h in zip(base_means, head_means, strict=True)])
    bad = -change if better is Better.HIGHER else change
    if se is None:
        p = 1.0
    elif se == 0.0:
        p = 0.0 if bad > 0 else 1.0
    else:
        p = student_t_sf(bad / se, c - 1)
    blocked = p <= alpha and bad >= min_effect - 1e-12
    return SuiteTest(
        name,
        Method.CLUSTERED_T,
        better,
        c,
        math.fsum(base_means) / c,
        math.fsum(head_means) / c,
        change,
        se,
        p,
        alpha,
        blocked,
    )


def cost_suite_test(
    name: str,
    cases: Sequence[tuple[str, Sequence[float], Sequence[float]]],
    *,
    alpha: float,
) -> SuiteTest:
    """The cost test of one cost metric over (case id, the history's recorded values, the
    initial head values) per comparable case (:func:`gate.policy.cost.cost_test`): lower
    is better, ``p_value`` is the rise's; it blocks nothing by itself."""
    got = cost_test([CostCase(cid, b, h) for cid, b, h in cases])
    return SuiteTest(
        name,
        Method.STRATIFIED,
        Better.LOWER,
        got.cases,
        got.base_mean,
        got.head_mean,
        got.change,
        None,
        got.p_rise,
        alpha,
        False,
        cost=got.evidence,
    )


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b), the regularized incomplete beta function."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(ln) * _betacf(a, b, x) / a
    return 1.0 - math.exp(ln) * _betacf(b, a, 1.0 - x) / b


def student_t_sf(t: float, df: int) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom."""
    if df < 1:
        raise ValueError("df must be ≥ 1")
    tail = 0.5 * regularized_beta(df / (df + t * t), df / 2.0, 0.5)
    return tail if t >= 0 else 1.0 - tail
