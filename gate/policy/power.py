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

import dataclasses
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gate.policy.casetest import CaseOutcome, Counts, Direction, log_evalue
from gate.policy.engine import EngineParams, Evaluation
from gate.policy.sequential import CaseStatus, can_decide, status
from gate.policy.suite import PSI_GRID

POWER = 0.8
SUITE_REPS = 400


def _binom_pmf(n: int, p: float) -> list[float]:
    return [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]


def case_detection(
    base: Counts,
    head_rate: float,
    *,
    m: int,
    params: EngineParams,
    max_extra: int | None = None,
    rejected: int = 1,
) -> float:
    """P(the case ends regressed | true head pass rate) — module doc. ``max_extra``: the
    most extra samples the case can get (its share of the run's cap); ``None``: only
    the per-case limit stops it. ``rejected``: how many cases e-BH rejects together (the
    final threshold is m/(α·rejected); sampling stops at the single-case m/α)."""
    seq = params.sequential
    if max_extra is not None:
        seq = dataclasses.replace(
            seq, max_per_case=min(seq.max_per_case, seq.initial + max(0, max_extra))
        )
    bound = math.log(m / params.alpha_case)
    final = math.log(m / (params.alpha_case * max(1, rejected)))
    dist = {s: q for s, q in enumerate(_binom_pmf(seq.initial, head_rate)) if q > 0}
    n = seq.initial
    b_rate = base.passes / base.samples
    detected = 0.0

    def regressed(s: int, n: int) -> bool:
        head = Counts(s, n)
        return (
            log_evalue(base, head, Direction.WORSE) >= final
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
    base: Counts,
    *,
    m: int,
    params: EngineParams,
    power: float = POWER,
    max_extra: int | None = None,
    rejected: int = 1,
) -> float | None:
    """Smallest drop of the pass rate (in steps of 0.01) caught with probability ``power``;
    ``None`` when not even a total failure is."""
    b_rate = base.passes / base.samples
    steps = round(b_rate * 100)

    def caught(rate: float) -> float:
        return case_detection(
            base, rate, m=m, params=params, max_extra=max_extra, rejected=rejected
        )

    if steps == 0 or caught(0.0) < power:
        return None
    lo, hi = 0, steps  # detection is monotone in the drop: bisect the steps
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if caught(max(0.0, b_rate - mid / 100)) >= power:
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
    """What this run could detect, for the histories it had and the cap as this run's
    cases shared it."""

    stable_depths: tuple[int, ...]
    """History lengths of the comparable always-passing cases (sorted)."""
    stable_broken: float | None
    """Mean over those cases of the probability that one is caught when it now always
    fails (``None``: no such case)."""
    stable_half: float | None
    """The same when it now fails half the time."""
    stable_drop: float | None
    """Smallest drop of the pass rate caught with probability 0.8 at the median depth."""
    share: int | None
    """Extra samples one case could get: the cap shared by the cases that needed
    samples (``None``: no cap below the per-case limit)."""
    needed: int
    """Cases that needed extra samples in this run."""
    suite_drop: float | None
    """Smallest drop of the suite pass rate caught with probability 0.8."""
    min_history: int = 0
    decidable_from: int | None = None
    """The shortest history (of an always-passing case) against which a case that now
    fails every sample could be decided with the samples this run could give it (``None``:
    not within ``min_history``)."""


def detectability(
    bases: Sequence[Counts],
    *,
    params: EngineParams,
    gated_metrics: int = 0,
    needed: int = 0,
    rejected: int = 0,
) -> Detectability:
    """The figures for this run's histories (the comparable cases' base counts), its cap
    as shared by the ``needed`` cases that wanted samples (at least one: a broken case is
    one of them), and e-BH's threshold as the run's ``rejected`` regressions set it (a
    case breaking beside them needs less evidence than a case alone)."""
    seq = params.sequential
    m = len(bases)
    cap = seq.cap(m)
    share = cap // max(1, needed)
    limit = seq.max_per_case - seq.initial
    share_or_none = share if share < limit else None
    stable = sorted(b.samples for b in bases if b.samples and b.failures == 0)
    broken = half = drop = None
    if stable and m:
        by_depth = Counter(stable)

        def caught(rate: float) -> float:
            """The mean over the always-passing cases of the chance one is caught."""
            return sum(
                k
                * case_detection(
                    Counts(n, n), rate, m=m, params=params, max_extra=share, rejected=rejected
                )
                for n, k in by_depth.items()
            ) / len(stable)

        broken, half = caught(0.0), caught(0.5)
        median = stable[len(stable) // 2]
        drop = case_detectable_drop(
            Counts(median, median), m=m, params=params, max_extra=share, rejected=rejected
        )
    suite = suite_detectable_drop(
        bases,
        initial=seq.initial,
        alpha=params.alpha_suite / (1 + gated_metrics),
        min_effect=params.suite_min_effect,
    )
    most = min(seq.max_per_case, seq.initial + (share if share_or_none is not None else limit))
    decidable = next(
        (
            n
            for n in range(1, max(seq.min_history, 1) + 1)
            if m
            and can_decide(
                Counts(n, n),
                most=most,
                log_bound=math.log(m / params.alpha_case),
                min_effect=params.min_effect,
            )
        ),
        None,
    )
    return Detectability(
        tuple(stable),
        broken,
        half,
        drop,
        share_or_none,
        needed,
        suite,
        seq.min_history,
        decidable,
    )


def _times(rate: float) -> str:
    """A failure rate in words: "1 time in 3" when it is close to one, else a percentage."""
    if rate <= 0:
        return "never"
    k = round(1 / rate)
    if k >= 2 and abs(1 / rate - k) <= 0.05 * k:
        return f"1 time in {k}"
    return f"{rate * 100:.0f} % of the time"


def pct(p: float) -> str:
    """A probability in words that never rounds a miss up to a certainty (or the
    reverse): 99.6 % is "more than 99 %", 0.4 % "less than 1 %"."""
    if p >= 1 - 1e-12:
        return "100 %"
    if p <= 1e-12:
        return "0 %"
    if p > 0.99:
        return "more than 99 %"
    if p < 0.01:
        return "less than 1 %"
    return f"{p * 100:.0f} %"


def _depths(depths: Sequence[int]) -> str:
    lo, hi = depths[0], depths[-1]
    if lo == hi:
        return f"{lo} of {lo} base samples"
    return f"{lo}–{hi} base samples, median {depths[len(depths) // 2]}"


def _rates(detect: Detectability) -> str:
    """ "100 % when it now always fails, and 61 % when it fails half the time, and 80 %
    when it fails 1 time in 3": what a case that always passed is caught with."""
    assert detect.stable_broken is not None
    rates = [f"{pct(detect.stable_broken)} when it now always fails"]
    if detect.stable_half is not None:
        rates.append(
            f"{pct(detect.stable_half)} when it fails half the time"
            if detect.stable_half > 1e-12
            else "never when it fails half the time"
        )
    if detect.stable_drop is not None and detect.stable_drop < 1.0:
        rates.append(f"80 % when it fails {_times(detect.stable_drop)}")
    return rates[0] if len(rates) == 1 else ", ".join(rates[:-1]) + ", and " + rates[-1]


def _cases(n: int) -> str:
    return f"{n:,} case" if n == 1 else f"{n:,} cases"


def _up(text: str) -> str:
    return text[:1].upper() + text[1:]


def _seeding(detect: Detectability, recorded: bool = False) -> str:
    """What history would let a case be decided, and how to get it: a base run seeds it;
    recorded runs (a ``replay`` agent) cannot be sampled again, so their history comes
    from the base branch's recorded runs."""
    if recorded:
        depth = detect.decidable_from or detect.min_history
        return (
            f"{depth} recorded samples per case would decide it. Score the base branch's "
            "recorded runs and pass their results.json as the baseline"
        )
    if detect.decidable_from is None:
        return "A longer history would decide it: toolgate check --base-run seeds one"
    return (
        f"From {detect.decidable_from} base samples on it could be; toolgate check "
        f"--base-run seeds {detect.min_history}"
    )


def sentences(
    evaluation: Evaluation, detect: Detectability, *, recorded: bool = False
) -> list[str]:
    """The comment's paragraph on power and spend, one sentence per item: every
    probability is for this run's histories and its cap as its cases shared it.
    ``recorded``: the runs were recorded elsewhere (no sample can be added)."""
    out: list[str] = []
    if detect.stable_depths and detect.stable_broken is not None:
        shown = _depths(detect.stable_depths)
        if detect.stable_broken <= 1e-12:
            out.append(
                f"No case that always passed ({shown}) can be caught in this run. Against so "
                "short a history, even one that now fails every sample is not significant. "
                f"{_up(_seeding(detect, recorded))}."
            )
        else:
            shared = (
                f" (extra samples shared by the {detect.needed} cases that needed them: up "
                f"to {detect.share} each)"
                if detect.share is not None and detect.needed > 1
                else ""
            )
            unless = " and breaks without a hard failure" if evaluation.spend.held_back else ""
            out.append(
                f"A case that always passed ({shown}){unless} is caught in this run with "
                f"{_rates(detect)}{shared}."
            )
    if detect.suite_drop is not None:
        out.append(
            f"A suite-wide drop of the pass rate by {detect.suite_drop * 100:.0f} points would be "
            "caught with 80 % probability."
        )
    sp = evaluation.spend
    n_cases = len(evaluation.cases)
    parts = [f"{sp.initial} on the {n_cases} cases"]
    if sp.seed:
        parts.append(
            f"{sp.seed} seeding the base history of {sp.seeded} case(s) up to "
            f"{detect.min_history} samples"
        )
    if sp.extra:
        parts.append(f"{sp.extra} extra on {_cases(sp.sampled)} still open (at most {sp.cap})")
    elif not sp.seed:
        if not sp.undecided:
            parts.append("no extra samples (no case needed them)")
        elif sp.cap == 0 and recorded:
            parts.append("no extra samples (recorded runs cannot add any)")
        elif sp.cap == 0:
            parts.append("no extra samples (none allowed)")
        else:
            parts.append("no extra samples")
    out.append(f"This run spent {sp.total} samples: {', '.join(parts)}.")
    if sp.held_back:
        out.append(
            f"{_cases(sp.held_back)} with a hard failure got no extra samples. The hard "
            f"failure already fails the gate (up to {sp.saved} samples saved)."
        )
    futile = [i for i in evaluation.cases if i in evaluation.undecidable]
    if futile:
        depths = sorted(
            c.base.samples
            for i, c in evaluation.cases.items()
            if i in evaluation.undecidable and c.base
        )
        lo, hi = depths[0], depths[-1]
        history = f"{lo}" if lo == hi else f"{lo}–{hi}"
        out.append(
            f"{_cases(len(futile))} got no extra samples: none could decide them "
            f"({_shown(futile)}). Against {history} base sample{'' if hi == 1 else 's'}, even "
            f"a case that now fails every sample is not significant. "
            f"{_up(_seeding(detect, recorded))}."
        )
    undecided = [
        i
        for i, c in evaluation.cases.items()
        if c.outcome is CaseOutcome.UNDECIDED
        and i not in evaluation.held_back
        and i not in evaluation.undecidable
    ]
    if undecided:
        out.append(
            f"{len(undecided)} case(s) stayed undecided when the sampling cap was reached: "
            f"{_shown(undecided)}."
        )
    return out


def _shown(ids: Sequence[str]) -> str:
    return ", ".join(ids[:5]) + (f", … (+{len(ids) - 5})" if len(ids) > 5 else "")
