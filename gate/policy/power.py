"""What a run could detect, and what it spent, in words.

**One case** (:func:`case_detection`): the probability that a case with this base
history ends *regressed* when its true head pass rate is r, computed exactly: the
distribution of the head's passes is carried through the sampling plan round by round
(binomial draws, absorbing the cases that the stopping rule decides), then the final
test applies. It assumes the case alone is rejected (e-BH's single-case bound m/α; with
other regressed cases the bound is lower, so this is a floor) and that the per-run cap
does not stop it. :func:`case_detectable_drop` searches the smallest drop of the pass rate
detected with probability 0.8.

**The suite** (:func:`suite_detectable_drop`): the smallest drop of the suite's pass rate,
every case's rate scaled by the same factor, that the pass-rate test
(:func:`gate.policy.suite.pass_rate_test`) detects with probability 0.8, by a seeded
simulation of the initial head samples against the actual histories (the same draws for
every factor, so the estimate is monotone and reproducible).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gate.policy.casetest import CaseOutcome, Counts, Direction, log_evalue
from gate.policy.engine import EngineParams, Evaluation
from gate.policy.sequential import CaseStatus, status
from gate.policy.suite import PSI_GRID

POWER = 0.8
SUITE_REPS = 400


def _binom_pmf(n: int, p: float) -> list[float]:
    return [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]


def case_detection(base: Counts, head_rate: float, *, m: int, params: EngineParams) -> float:
    """P(the case ends regressed | true head pass rate) — module doc."""
    seq = params.sequential
    bound = math.log(m / params.alpha_case)
    dist = {s: q for s, q in enumerate(_binom_pmf(seq.initial, head_rate)) if q > 0}
    n = seq.initial
    b_rate = base.passes / base.samples
    detected = 0.0

    def regressed(s: int, n: int) -> bool:
        head = Counts(s, n)
        return (
            log_evalue(base, head, Direction.WORSE) >= bound
            and b_rate - s / n >= params.min_effect - 1e-12
        )

    for batch in (*seq.batches, 0):
        nxt: dict[int, float] = {}
        k = min(batch, seq.max_per_case - n)
        for s, q in dist.items():
            st = status(base, Counts(s, n), log_bound=bound, params=seq)
            if st is CaseStatus.SAMPLING and k > 0:
                for j, w in enumerate(_binom_pmf(k, head_rate)):
                    if w > 0:
                        nxt[s + j] = nxt.get(s + j, 0.0) + q * w
            elif regressed(s, n):
                detected += q
        if not nxt:
            break
        dist, n = nxt, n + k
    return min(1.0, detected)


def case_detectable_drop(
    base: Counts, *, m: int, params: EngineParams, power: float = POWER
) -> float | None:
    """Smallest drop of the pass rate (in steps of 0.01) caught with probability ``power``;
    ``None`` when not even a total failure is."""
    b_rate = base.passes / base.samples
    steps = round(b_rate * 100)
    if steps == 0 or case_detection(base, 0.0, m=m, params=params) < power:
        return None
    lo, hi = 0, steps  # detection is monotone in the drop: bisect the steps
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if case_detection(base, max(0.0, b_rate - mid / 100), m=m, params=params) >= power:
            hi = mid
        else:
            lo = mid
    return hi / 100


def _lgamma_table(n: int) -> np.ndarray:
    return np.array([math.lgamma(k + 1) for k in range(n + 1)])


def suite_detectable_drop(
    bases: Sequence[Counts],
    *,
    initial: int,
    alpha: float,
    min_effect: float,
    power: float = POWER,
    seed: int = 0,
    reps: int = SUITE_REPS,
) -> float | None:
    """Smallest drop of the suite pass rate detected with probability ``power`` (module
    doc); ``None`` without histories, or when not even a total failure is detected."""
    used = [b for b in bases if b.samples]
    if not used:
        return None
    nb = np.array([b.samples for b in used], dtype=np.int64)
    fb = np.array([b.failures for b in used], dtype=np.int64)
    rate = 1.0 - fb / nb
    lg = _lgamma_table(int(nb.max()) + initial + 1)
    u = np.random.default_rng(seed).random((reps, len(used), initial))
    lps = np.log(np.array(PSI_GRID))
    xs = np.arange(initial + 1)

    def detected(r: float) -> float:
        ph = rate * (1.0 - r)
        x = (u >= ph[None, :, None]).sum(axis=2)  # head failures per rep and case
        total = fb[None, :] + x
        k = total[..., None] - xs  # base failures if head had xs failures
        ok = (k >= 0) & (k <= nb[None, :, None]) & (xs <= total[..., None])
        kk = np.clip(k, 0, None)
        lw = (lg[initial] - lg[xs] - lg[initial - xs]) + (
            lg[nb][None, :, None] - lg[kk] - lg[np.clip(nb[None, :, None] - kk, 0, None)]
        )
        lw = np.where(ok, lw, -np.inf)
        top0 = lw.max(-1)
        norm0 = top0 + np.log(np.exp(lw - top0[..., None]).sum(-1))
        t = lw[..., None, :] + xs * lps[:, None]
        top = t.max(-1)
        norm = top + np.log(np.exp(t - top[..., None]).sum(-1))
        llr = (x[..., None] * lps - norm + norm0[..., None]).sum(axis=1)
        mx = llr.max(-1)
        log_e = mx + np.log(np.exp(llr - mx[:, None]).mean(-1))
        drop = (rate[None, :] - (1 - x / initial)).mean(axis=1)
        return float(((log_e >= math.log(1 / alpha)) & (drop >= min_effect - 1e-12)).mean())

    if detected(1.0) < power:
        return None
    lo, hi = 0.0, 1.0
    for _ in range(12):
        mid = (lo + hi) / 2
        if detected(mid) >= power:
            hi = mid
        else:
            lo = mid
    return hi * float(rate.mean())


@dataclass(frozen=True, slots=True)
class Detectability:
    """What this run could detect."""

    stable_history: int | None
    """Median history length of the always-passing cases (``None``: none)."""
    stable_drop: float | None
    """Smallest drop of such a case's pass rate caught with probability 0.8."""
    stable_half: float | None
    """Probability that such a case is caught when it now fails half the time."""
    suite_drop: float | None
    """Smallest drop of the suite pass rate caught with probability 0.8."""


def detectability(
    bases: Sequence[Counts], *, params: EngineParams, gated_metrics: int = 0
) -> Detectability:
    """The figures for this run's histories (the comparable cases' base counts)."""
    m = len(bases)
    stable = sorted(b.samples for b in bases if b.samples and b.failures == 0)
    if stable and m:
        n = stable[len(stable) // 2]
        typical = Counts(n, n)
        drop = case_detectable_drop(typical, m=m, params=params)
        half = case_detection(typical, 0.5, m=m, params=params)
    else:
        n, drop, half = None, None, None
    suite = suite_detectable_drop(
        bases,
        initial=params.sequential.initial,
        alpha=params.alpha_suite / (1 + gated_metrics),
        min_effect=params.suite_min_effect,
    )
    return Detectability(n, drop, half, suite)


def _times(rate: float) -> str:
    """A failure rate in words: "1 time in 3" when it is close to one, else a percentage."""
    if rate <= 0:
        return "never"
    k = round(1 / rate)
    if k >= 2 and abs(1 / rate - k) <= 0.05 * k:
        return f"1 time in {k}"
    return f"{rate * 100:.0f} % of the time"


def sentences(evaluation: Evaluation, detect: Detectability) -> list[str]:
    """The comment's paragraph on power and spend, one sentence per item."""
    out: list[str] = []
    if detect.stable_history is not None:
        if detect.stable_drop is not None:
            out.append(
                f"A case that always passed ({detect.stable_history} of {detect.stable_history} "
                f"base samples) and now fails {_times(detect.stable_drop)} would be caught with "
                f"80 % probability"
                + (
                    f"; one that now fails half the time, with {detect.stable_half * 100:.0f} %."
                    if detect.stable_half is not None
                    else "."
                )
            )
        else:
            out.append(
                f"With {detect.stable_history} base samples of an always-passing case, not even a "
                "case that now always fails is caught with 80 % probability: the base history "
                "is too short."
            )
    if detect.suite_drop is not None:
        out.append(
            f"A suite-wide drop of the pass rate by {detect.suite_drop * 100:.0f} points would be "
            "caught with 80 % probability."
        )
    sp = evaluation.spend
    n_cases = len(evaluation.cases)
    why = (
        f"{sp.extra} extra on {len(sp.per_case)} undecided case(s) (at most {sp.cap})"
        if sp.extra
        else "no extra samples (no case was undecided)"
    )
    out.append(f"This run spent {sp.total} samples: {sp.initial} on the {n_cases} cases, {why}.")
    undecided = [c.case_id for c in evaluation.cases if c.outcome is CaseOutcome.UNDECIDED]
    if undecided:
        shown = ", ".join(undecided[:5]) + (
            f", … (+{len(undecided) - 5})" if len(undecided) > 5 else ""
        )
        out.append(
            f"{len(undecided)} case(s) stayed undecided when the sampling cap was reached: {shown}."
        )
    return out
