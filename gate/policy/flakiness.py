"""The variance guard's question: is the head significantly flakier than its base history?

How much a case's outcome varies between samples is p(1 − p); its unbiased estimate from
s passes of n ≥ 2 samples is the *spread*

    v = s · f / (n · (n − 1))     (f = n − s; 0 for a stable case, at most ½)

Per comparable case with at least 2 samples on each side, d_c = v_head − v_base (head:
its initial samples, whose number does not depend on their outcomes). When nothing
changed, head and base samples of a case are exchangeable, so — given the case's
margins — both spreads have the same expectation and E[d_c] = 0, whatever the case's
pass probability. The guard's e-value bets on the d_c being positive, case after case,
and averages over a grid of bet sizes Λ = :data:`LAMBDAS`:

    E = (1/|Λ|) Σ_λ Π_c (1 + λ · 2 d_c)          (2 d_c ∈ [−1, 1], λ < 1)

The cases are independent, so E has mean at most 1 and P(E ≥ 1/α) ≤ α: the guard fails
when E ≥ 1/α — a head that is flakier than its base history beyond noise, whether
because stable cases became flaky (in either direction: a noisier model makes always-
failing cases pass sometimes too) or flaky ones became flakier.

An absolute flakiness level is not a question about the change: cases that are flaky
on the head *and* were flaky in the base history are listed as a warning, never a
block. Only an explicit ceiling (``ceiling``, the share of flaky head cases) blocks on
the level itself.

Unlike the regression tests, this guard is not monotone in the head's failures, by
nature: turning the one pass of a case that fails otherwise into a failure makes it
*less* flaky.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from gate.model import FlakinessInfo
from gate.policy.casetest import Counts

LAMBDAS = (0.1, 0.2, 0.35, 0.5, 0.7, 0.9)
"""Bet sizes the guard's e-value averages over."""


def spread(c: Counts) -> float | None:
    """The unbiased estimate of p(1 − p); ``None`` with fewer than 2 samples."""
    if c.samples < 2:
        return None
    return c.passes * c.failures / (c.samples * (c.samples - 1))


def flaky(c: Counts) -> bool:
    """Both outcomes seen."""
    return 0 < c.passes < c.samples


@dataclass(frozen=True, slots=True)
class FlakinessCase:
    """One case as the guard sees it."""

    case_id: str
    base: Counts | None
    """The base history; ``None`` when not comparable."""
    head_initial: Counts
    head: Counts
    """Every head sample (initial and extra), for the flaky lists and the ceiling."""


def flakiness_test(
    cases: Sequence[FlakinessCase], *, alpha: float, ceiling: float | None = None
) -> FlakinessInfo:
    """The guard over every case (module doc)."""
    diffs: list[float] = []
    vb: list[float] = []
    vh: list[float] = []
    for c in cases:
        if c.base is None:
            continue
        b, h = spread(c.base), spread(c.head_initial)
        if b is None or h is None:
            continue
        vb.append(b)
        vh.append(h)
        diffs.append(h - b)
    if diffs:
        logs = [math.fsum(math.log1p(lam * 2.0 * d) for d in diffs) for lam in LAMBDAS]
        top = max(logs)
        log_e = top + math.log(math.fsum(math.exp(x - top) for x in logs) / len(LAMBDAS))
    else:
        log_e = 0.0
    head_flaky = tuple(c.case_id for c in cases if flaky(c.head))
    already = tuple(
        c.case_id for c in cases if flaky(c.head) and c.base is not None and flaky(c.base)
    )
    seen = set(already)
    newly = tuple(i for i in head_flaky if i not in seen)
    share = len(head_flaky) / len(cases) if cases else 0.0
    over = ceiling is not None and share > ceiling + 1e-9
    return FlakinessInfo(
        cases=len(diffs),
        base_spread=math.fsum(vb) / len(vb) if vb else None,
        head_spread=math.fsum(vh) / len(vh) if vh else None,
        p_value=1.0 if log_e <= 0 else math.exp(-log_e),
        alpha=alpha,
        flakier=log_e >= math.log(1.0 / alpha),
        head_flaky=head_flaky,
        already_flaky=already,
        newly_flaky=newly,
        head_share=share,
        ceiling=ceiling,
        over_ceiling=over,
    )
