"""Benchmark: how often a relative cost gate blocks, by simulation of pull requests.

A dataset whose agent's token usage per sample is known. Per simulated project, each case
has its own size (a log-normal mean around 3,000 tokens, spread ×/÷ 1.8) and its own
noise from sample to sample (a log-normal factor whose spread is drawn per case from 5 %
to 35 %: a model's answers vary); one sample in 40 is an outlier that costs three times
as much (an agent that looped). The base branch has seeded a history of 36 samples per
case; the pull request runs ``head`` samples per case. Suites (cases × head samples):
60 × 3, and the small ones 6 × 2, 6 × 3, 12 × 2 and 12 × 3 (``--suites``). Scenarios
(what the pull request changed):

* ``null`` — nothing;
* ``null-2x`` — nothing, but the head ran twice its samples per case;
* ``up5-all`` — every case +5 % (below the bound);
* ``up30-one`` — one case +30 %;
* ``up30-sixth`` — a sixth of the cases +30 %;
* ``up20-all`` — every case +20 % (above the bound);
* ``up30-all`` — every case +30 %.

The gate is ``{metric: total_tokens, max_increase: 0.15}``. **ToolGate** runs each pull
request through its own engine (``gate.policy.engine.evaluate``: the cost test of each
case's samples against the samples its history recorded) and its decision
(``gate.policy.decide.relative_gate``); its column counts the pull requests it fails, and
``not decided`` those whose gate said it could not decide (it passes them). The rules it
is compared with, on the same samples:

* ``clustered t`` — the previous release's rule: the mean per sample over the cases more
  than 15 % above the history's, and a paired t-test over the per-case differences
  (standard error clustered by case) finding it beyond noise at the same alpha;
* ``totals, last base run`` — the head's total tokens against the last base run's total
  (``head`` samples per case), more than 15 % above: what a report of run totals invites;
* ``mean, last base run`` — the head's mean per sample against the last base run's, more
  than 15 % above, no test;
* ``mean, history`` — the head's mean per sample against the 36-sample history's, more
  than 15 % above, no test;
* ``true noise known`` — a reference, not a rule anyone can run: the same decision as
  ToolGate's but told each case's true spread (the log-normal σ the simulation draws
  with) instead of estimating it — the most a test can catch of these samples.

Rates are given with Wilson 95 % intervals.

    python bench/cost_bench.py [--prs 2000] [--seed 11] [--suites 60x3,6x2,6x3,12x2,12x3]
                               [--bound 0.15] [--quick]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Mapping, Sequence
from statistics import NormalDist

import numpy as np

from gate.config import GateConfig
from gate.policy import engine
from gate.policy.decide import relative_gate
from gate.policy.history import BaseHistory, CaseHistory, HistoryEntry, MetricSums
from gate.policy.suite import Better, metric_test

HISTORY = 36
BOUND = 0.15
METRIC = "total_tokens"
OUTLIER_SHARE = 1 / 40
OUTLIER_FACTOR = 3.0
SUITES = ((60, 3), (6, 2), (6, 3), (12, 2), (12, 3))
SCENARIOS: dict[str, tuple[str, float, int]] = {
    # name: (which cases change, factor, head samples multiplier)
    "null": ("none", 1.0, 1),
    "null-2x": ("none", 1.0, 2),
    "up5-all": ("all", 1.05, 1),
    "up30-one": ("one", 1.30, 1),
    "up30-sixth": ("sixth", 1.30, 1),
    "up20-all": ("all", 1.20, 1),
    "up30-all": ("all", 1.30, 1),
}
RULES = (
    "ToolGate",
    "not decided",
    "clustered t",
    "totals, last base run",
    "mean, last base run",
    "mean, history",
    "true noise known",
)


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float, float]:
    """(rate, low, high) of the Wilson score interval."""
    if n == 0:
        return (math.nan, math.nan, math.nan)
    p = k / n
    d = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return p, max(0.0, mid - half), min(1.0, mid + half)


def usage(rng: np.random.Generator, mean: np.ndarray, spread: np.ndarray, k: int) -> np.ndarray:
    """``k`` samples per case of token usage: (cases, k)."""
    noise = rng.lognormal(0.0, spread[:, None], size=(len(mean), k))
    outlier = rng.random((len(mean), k)) < OUTLIER_SHARE
    return np.round(mean[:, None] * noise * np.where(outlier, OUTLIER_FACTOR, 1.0))


def changed(which: str, rng: np.random.Generator, cases: int) -> np.ndarray:
    mask = np.zeros(cases, dtype=bool)
    if which == "all":
        mask[:] = True
    elif which == "one":
        mask[rng.integers(cases)] = True
    elif which == "sixth":
        mask[rng.choice(cases, size=max(1, cases // 6), replace=False)] = True
    return mask


def toolgate_gate(base: np.ndarray, head: np.ndarray, bound: float) -> tuple[bool, bool]:
    """(fails, not decided): the engine's cost test and the decision's ``max_increase``
    rule, on a history that recorded the base samples."""
    cases = len(base)
    ids = [f"case-{i:02d}" for i in range(cases)]
    hist = BaseHistory(
        {
            ids[i]: CaseHistory(
                "h",
                (
                    HistoryEntry(
                        base.shape[1],
                        base.shape[1],
                        {METRIC: MetricSums.of(base[i].tolist())},
                        {METRIC: tuple(base[i].tolist())},
                    ),
                ),
            )
            for i in range(cases)
        }
    )
    head_cases = [
        engine.HeadCase(
            ids[i], "h", tuple(engine.Sample(True, {METRIC: float(v)}) for v in head[i])
        )
        for i in range(cases)
    ]

    def sampler(plan: Mapping[str, int]) -> dict[str, Sequence[engine.Sample]]:
        return {cid: [engine.Sample(True, {METRIC: None})] * k for cid, k in plan.items()}

    gated = [engine.GatedMetric(METRIC, Better.LOWER, max_increase=bound, cost=True)]
    ev = engine.evaluate(hist, head_cases, sampler, gated=gated)
    outcome = relative_gate(GateConfig(metric=METRIC, max_increase=bound), ev)
    assert not outcome.not_checked
    return not outcome.passed, outcome.undecided


def clustered_t_blocks(base: np.ndarray, head: np.ndarray, bound: float, alpha: float) -> bool:
    """The previous release's rule: the mean over cases of per-case means above the bound
    and the clustered paired t-test beyond noise (each one-sided test at half of alpha)."""
    pairs = [(MetricSums.of(b.tolist()), h.tolist()) for b, h in zip(base, head, strict=True)]
    t = metric_test(METRIC, Better.LOWER, pairs, alpha=alpha)
    rel = t.relative
    return rel is not None and rel > bound and t.p_value <= alpha / 2


def known_noise_blocks(
    base: np.ndarray, head: np.ndarray, spread: np.ndarray, bound: float, alpha: float
) -> bool:
    """The reference: each case's shift on the log scale weighed by its true noise
    (σ² (1/n_b + 1/n_h), σ the spread the samples were drawn with); fails when the
    weighted shift is above the bound and its one-sided z-test is significant."""
    d = np.log(head).mean(axis=1) - np.log(base).mean(axis=1)
    w = 1.0 / (spread**2 * (1.0 / base.shape[1] + 1.0 / head.shape[1]))
    shift = float(np.sum(w * d) / np.sum(w))
    z = shift * math.sqrt(float(np.sum(w)))
    return math.expm1(shift) > bound and z >= NormalDist().inv_cdf(1.0 - alpha)


def simulate(
    prs: int, seed: int, cases: int, head_samples: int, scenarios: Sequence[str], bound: float
) -> dict[str, list[int]]:
    alpha = engine.EngineParams().alpha_suite / 2  # the pass rate's test and this gate's
    gate_alpha = alpha  # the cost test's share (the clustered t uses half of it each way)
    blocked = {s: [0] * len(RULES) for s in scenarios}
    for s in scenarios:
        which, factor, mult = SCENARIOS[s]
        for pr in range(prs):
            rng = np.random.default_rng([seed, pr, list(SCENARIOS).index(s), cases, head_samples])
            mean = rng.lognormal(math.log(3000), math.log(1.8), size=cases)
            spread = rng.uniform(0.05, 0.35, size=cases)
            base = usage(rng, mean, spread, HISTORY)
            last = base[:, -head_samples:]  # the last base run
            scale = np.where(changed(which, rng, cases), factor, 1.0)
            head = usage(rng, mean * scale, spread, head_samples * mult)
            fails, undecided = toolgate_gate(base, head, bound)
            rules = (
                fails,
                undecided,
                clustered_t_blocks(base, head, bound, alpha),
                head.sum() > (1 + bound) * last.sum(),
                head.mean() > (1 + bound) * last.mean(),
                # mean over cases of per-case means, as the gate's figure
                head.mean(axis=1).mean() > (1 + bound) * base.mean(axis=1).mean(),
                known_noise_blocks(base, head, spread, bound, gate_alpha),
            )
            for j, hit in enumerate(rules):
                blocked[s][j] += int(hit)
    return blocked


def _suites(text: str) -> list[tuple[int, int]]:
    out = []
    for part in text.split(","):
        c, _, h = part.strip().partition("x")
        out.append((int(c), int(h)))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prs", type=int, default=2000, help="pull requests per scenario")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument(
        "--suites",
        default=",".join(f"{c}x{h}" for c, h in SUITES),
        help="cases x head samples, comma-separated",
    )
    ap.add_argument("--bound", type=float, default=BOUND, help="max_increase, a fraction")
    ap.add_argument("--quick", action="store_true", help="200 pull requests per scenario")
    args = ap.parse_args(argv)
    prs = 200 if args.quick else args.prs
    t0 = time.perf_counter()
    print(
        f"history {HISTORY} samples per case; gate {METRIC} max_increase {args.bound:.0%}; "
        f"{prs} pull requests per scenario, seed {args.seed}"
    )
    print("share of pull requests each rule fails, with Wilson 95 % intervals")
    width = max(len(r) for r in RULES)
    for cases, head_samples in _suites(args.suites):
        got = simulate(prs, args.seed, cases, head_samples, list(SCENARIOS), args.bound)
        print()
        print(f"{cases} cases x {head_samples} head samples (null-2x: {2 * head_samples})")
        print(f"{'scenario':10s}  " + "  ".join(f"{r:>{width}s}" for r in RULES))
        for s, counts in got.items():
            cells = []
            for k in counts:
                p, lo, hi = wilson(k, prs)
                cells.append(f"{p * 100:5.1f} % [{lo * 100:4.1f}, {hi * 100:5.1f}]".rjust(width))
            print(f"{s:10s}  " + "  ".join(cells))
    print(f"({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
