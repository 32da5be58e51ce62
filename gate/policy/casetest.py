"""The per-case test: a case's head samples against its base history.

**The test.** Base history: s_b passes of n_b samples; head: s_h of n_h. The null
hypothesis of the regression test is "head passes at least as often as base"
(p_h ≥ p_b). Its evidence is the likelihood-ratio e-value (universal inference)

    E = m(s_b, f_b) · m(s_h, f_h) / sup_{p_h ≥ p_b} p_b^s_b (1 − p_b)^f_b · p_h^s_h (1 − p_h)^f_h

where f = n − s and m is the marginal likelihood of a count under the prior

    π = w₁ · (p = 1) + w₀ · (p = 0) + (1 − w₁ − w₀) · Beta(½, ½),
    m(s, f) = w₁·[f = 0] + w₀·[s = 0] + (1 − w₁ − w₀) · B(s + ½, f + ½) / B(½, ½),

with w₁ = :data:`SPIKE_PASS` and w₀ = :data:`SPIKE_FAIL`: most cases of a tool-calling
suite always pass (some always fail), and the point masses let a long run of passes be
evidence that the case *is* an always-passing one. The supremum has a closed form: when
head's rate is at least base's, the unrestricted maximum (each side at its own rate, and
then E ≤ 1); otherwise both sides at the pooled rate (s_b + s_h)/(n_b + n_h).

Why this test: it is exact (no normal approximation, valid for any counts, also 0 and
n) and, unlike Fisher's or Barnard's exact test, it stays valid **however often it is
looked at**. For every null (p_b, p_h) the numerator over the likelihood at the truth is
a nonnegative martingale in the head samples with mean 1, and the denominator is at
least that likelihood, so by Ville's inequality P(E ever ≥ 1/a) ≤ a — whatever the
stopping rule, the number of looks, or the other cases. That is what lets extra samples
go to undecided cases (:mod:`gate.policy.sequential`). A case's reported p-value is the
anytime-valid p = min(1, 1/E). The improvement test is the mirror image (null p_h ≤ p_b).

**The family.** One PR tests every comparable case; the false-block rate is controlled
per PR, not per case, with the e-Benjamini–Hochberg procedure at α (:func:`ebh`): with m
cases and their e-values in decreasing order E₍₁₎ ≥ E₍₂₎ ≥ …, reject the k* largest, k* =
max{k : E₍ₖ₎ ≥ m / (α·k)}. When nothing changed every case is a true null, so the
probability of any rejection (a false block) is the FDR, at most α — and e-BH needs no
independence between cases (extra samples couple them through the per-PR cap) and
accepts e-values taken at stopping times.

**The minimum practical effect.** A rejected case is *regressed* only when its pass rate
fell by at least :data:`MIN_EFFECT` (base rate − head rate); a significant but smaller
drop — a long history makes a 2-point drop significant — is reported as unchanged with
a note. Likewise *improved* needs a rise of at least MIN_EFFECT.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

from gate.model import CaseOutcome as CaseOutcome
from gate.model import CaseTest, Comparability
from gate.model import Counts as Counts

SPIKE_PASS = 0.3
"""w₁: the prior's mass on a case that always passes."""
SPIKE_FAIL = 0.05
"""w₀: the prior's mass on a case that always fails."""
MIN_EFFECT = 0.10
"""Smallest change of a case's pass rate that can make it regressed or improved."""

_LOG_PI = math.log(math.pi)


class Direction(enum.StrEnum):
    """Which change a test looks for."""

    WORSE = "worse"
    BETTER = "better"


def _xlogy(c: int, p: float) -> float:
    return c * math.log(p) if c else 0.0


def log_kt(s: int, f: int) -> float:
    """log of B(s + ½, f + ½) / B(½, ½): the Beta(½, ½) marginal likelihood of one sequence
    with s passes and f failures."""
    return math.lgamma(s + 0.5) + math.lgamma(f + 0.5) - math.lgamma(s + f + 1) - _LOG_PI


def log_marginal(c: Counts) -> float:
    """log m(s, f) under the spike-and-slab prior (module doc)."""
    s, f = c.passes, c.failures
    # in log space: the slab's term underflows for long mixed histories
    terms = [math.log(1.0 - SPIKE_PASS - SPIKE_FAIL) + log_kt(s, f)]
    if f == 0:
        terms.append(math.log(SPIKE_PASS))
    if s == 0:
        terms.append(math.log(SPIKE_FAIL))
    top = max(terms)
    return top + math.log(math.fsum(math.exp(t - top) for t in terms))


def log_max_likelihood(c: Counts) -> float:
    """sup_p log p^s (1 − p)^f (0 with no samples)."""
    if c.samples == 0:
        return 0.0
    p = c.passes / c.samples
    return _xlogy(c.passes, p) + _xlogy(c.failures, 1.0 - p)


def log_evalue(base: Counts, head: Counts, direction: Direction = Direction.WORSE) -> float:
    """log E of the test "head is ``direction`` than base" (module doc); ≤ 0 whenever head's
    rate is on the other side of base's."""
    num = log_marginal(base) + log_marginal(head)
    # head rate vs base rate without division: s_h·n_b against s_b·n_h
    h, b = head.passes * base.samples, base.passes * head.samples
    toward = h < b if direction is Direction.WORSE else h > b
    if toward:
        pooled = Counts(base.passes + head.passes, base.samples + head.samples)
        den = log_max_likelihood(pooled)
    else:
        den = log_max_likelihood(base) + log_max_likelihood(head)
    return num - den


def p_value(log_e: float) -> float:
    """The anytime-valid p-value of an e-value: min(1, 1/E)."""
    return 1.0 if log_e <= 0 else math.exp(-log_e)


def ebh(log_e: Sequence[float], alpha: float) -> list[bool]:
    """e-Benjamini–Hochberg at level α over the given log e-values (module doc): which
    hypotheses are rejected. m is the number of e-values."""
    m = len(log_e)
    if m == 0:
        return []
    order = sorted(range(m), key=lambda i: (-log_e[i], i))
    k_star = 0
    for k, i in enumerate(order, start=1):
        if log_e[i] >= math.log(m / (alpha * k)):
            k_star = k
    rejected = [False] * m
    for i in order[:k_star]:
        rejected[i] = True
    return rejected


def single_bound(m: int, alpha: float) -> float:
    """log of m/α: an e-value this large is rejected by e-BH whatever the others are."""
    return math.log(m / alpha)


@dataclass(frozen=True, slots=True)
class CaseInput:
    """What the final classification needs of one case."""

    case_id: str
    comparability: Comparability
    base: Counts | None
    head: Counts
    extra_samples: int
    still_sampling: bool
    """The stopping rule wanted more samples when a cap stopped it."""


def classify(
    cases: Sequence[CaseInput], *, alpha: float, min_effect: float = MIN_EFFECT
) -> dict[str, CaseTest]:
    """Case id → its outcome, in the order of ``cases``: e-BH at α over the comparable
    cases' regression e-values (and separately over their improvement e-values), the
    minimum practical effect, and the stopping rule's last word for the rest."""
    if len({c.case_id for c in cases}) != len(cases):
        raise ValueError("case ids must be distinct")
    tested = [c for c in cases if c.comparability is Comparability.COMPARABLE]
    worse: dict[str, float] = {}
    better: dict[str, float] = {}
    for c in tested:
        assert c.base is not None
        worse[c.case_id] = log_evalue(c.base, c.head, Direction.WORSE)
        better[c.case_id] = log_evalue(c.base, c.head, Direction.BETTER)
    ids = [c.case_id for c in tested]
    rej_w = dict(zip(ids, ebh([worse[i] for i in ids], alpha), strict=True))
    rej_b = dict(zip(ids, ebh([better[i] for i in ids], alpha), strict=True))
    out: dict[str, CaseTest] = {}
    for c in cases:
        if c.comparability is not Comparability.COMPARABLE or c.base is None:
            out[c.case_id] = CaseTest(
                CaseOutcome.NOT_COMPARABLE,
                c.comparability,
                head_passes=c.head.passes,
                head_samples=c.head.samples,
                extra_samples=c.extra_samples,
            )
            continue
        b_rate, h_rate = c.base.rate, c.head.rate
        change = None if b_rate is None or h_rate is None else h_rate - b_rate
        small = False
        if rej_w[c.case_id] and change is not None and -change >= min_effect - 1e-12:
            outcome = CaseOutcome.REGRESSED
        elif rej_b[c.case_id] and change is not None and change >= min_effect - 1e-12:
            outcome = CaseOutcome.IMPROVED
        else:
            small = rej_w[c.case_id] or rej_b[c.case_id]
            outcome = CaseOutcome.UNDECIDED if c.still_sampling else CaseOutcome.UNCHANGED
        lw, lb = worse[c.case_id], better[c.case_id]
        out[c.case_id] = CaseTest(
            outcome,
            c.comparability,
            c.base.passes,
            c.base.samples,
            head_passes=c.head.passes,
            head_samples=c.head.samples,
            extra_samples=c.extra_samples,
            p_worse=p_value(lw),
            p_better=p_value(lb),
            log_e_worse=lw,
            log_e_better=lb,
            change=change,
            below_min_effect=small,
        )
    return out
