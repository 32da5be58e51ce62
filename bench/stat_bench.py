"""Benchmark: how often each policy fails the gate, by simulation of thousands of pull requests.

A 60-case dataset and an agent whose per-case pass probability is known. Base
probabilities are drawn per simulated project from a realistic mix: 70 % of the cases
always pass, 15 % pass 90–99 % of the time, 10 % pass 50–90 %, 5 % always fail. Scenarios
(what the PR changed):

* ``null`` — nothing: head probabilities are the base's;
* ``broken`` — one always-passing case now always fails;
* ``three`` — three always-passing cases now pass half the time;
* ``x085`` — every case's pass probability × 0.85;
* ``flaky`` — one case that passed 90 % of the time now passes 30 %.

**Today's policies** are re-implemented as the documentation of the current release
states them: ``samples: N`` compares the head's N samples per case with the previous base
run's N (a regression is stable pass → stable fail, ``regressions.max_new_failures: 0``);
``confirm: {max_extra_samples: 5}`` re-runs apparent flips (1 extra sample at N = 3) and
keeps a regression only when every extra sample fails; the variance guard
``max_flaky_share: 0.1`` fails the gate when more than 10 % of the head's cases are flaky. The
three peer rules: one run, any pass → fail is a regression; three runs, a case passes on ≥ 2 of
3; five runs, a case regressed when the normal-approximation 95 % interval of the
difference of its pass rates lies above 0. "Samples per PR" counts the head run and one
base run of the same size; "the base branch failing its own check" is a base run checked
against the previous base run with the same rules.

**The new policy** (``gate.policy.engine`` with its defaults): the base history is built
by chaining ``--chain`` base runs, each checked against the history so far and then
appended to it (as the baseline-refresh workflow does); the PR is checked against the
history at the end of the chain. "Samples per PR" counts the PR's run and one base
refresh (the chain's last run); "the base branch failing its own check" counts every
chained base run that failed. Thousands of PRs go through a vectorised re-implementation of the
rules here; a sample of them (``--check``), chains included, also goes through the engine
modules themselves, both fed the same sample outcomes (a counter-based random stream keyed
by project, run, case and sample), and the two are compared verdict for verdict, case
outcome for case outcome and sample count for sample count.

Rates are given with Wilson 95 % intervals.

    python bench/stat_bench.py [--prs 5000] [--chain 50] [--check 20] [--seed 7]
                               [--young 5 10 20] [--quick]

A second table repeats the new policy on the same PRs after only ``--young`` base runs:
what a project gets while its history is still short. ``--quick`` runs 300 PRs per
scenario on a 20-run chain (young: 5, 10) with 8 engine-checked projects.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gate.policy import engine, history, sequential
from gate.policy.casetest import SPIKE_FAIL, SPIKE_PASS, CaseOutcome
from gate.policy.flakiness import LAMBDAS
from gate.policy.suite import PSI_GRID

CASES = 60
SCENARIOS = ("null", "broken", "three", "x085", "flaky")
TITLES = {
    "null": "PRs that changed nothing but failed the gate",
    "broken": "one always-passing case broken",
    "three": "three cases 1.0 → 0.5",
    "x085": "every case × 0.85",
    "flaky": "one flaky case 0.9 → 0.3",
}
N_ALWAYS, N_HIGH, N_MID = 42, 9, 6  # and 3 that always fail
FLAKY_CASE = N_ALWAYS  # the first of the 90–99 % cases, set to 0.9 in the flaky scenario

Floats = np.ndarray
Ints = np.ndarray
Bools = np.ndarray


# --------------------------------------------------------------------------- worlds


def base_probabilities(rng: np.random.Generator, worlds: int) -> Floats:
    return np.concatenate(
        [
            np.ones((worlds, N_ALWAYS)),
            rng.uniform(0.90, 0.99, (worlds, N_HIGH)),
            rng.uniform(0.50, 0.90, (worlds, N_MID)),
            np.zeros((worlds, CASES - N_ALWAYS - N_HIGH - N_MID)),
        ],
        axis=1,
    )


def scenario(name: str, p: Floats) -> tuple[Floats, Floats]:
    """(base, head) probabilities."""
    base, head = p.copy(), p.copy()
    if name == "broken":
        head[:, 0] = 0.0
    elif name == "three":
        head[:, :3] = 0.5
    elif name == "x085":
        head = head * 0.85
    elif name == "flaky":
        base[:, FLAKY_CASE] = 0.9
        head = base.copy()
        head[:, FLAKY_CASE] = 0.3
    return base, head


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float, float]:
    """(rate, low, high) of the Wilson score interval."""
    if n == 0:
        return math.nan, math.nan, math.nan
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return p, max(0.0, mid - half), min(1.0, mid + half)


# ------------------------------------------------------------ the shared sample stream

_U64 = np.uint64


def _mix(z: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 arrays (wrapping arithmetic)."""
    z = z + _U64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
    return z ^ (z >> _U64(31))


def uniforms(seed: int, world: Any, run: int, case: Any, k: Any) -> Floats:
    """A uniform in [0, 1) per (project, run, case, sample index), the same wherever it is
    asked for: the fast rules and the engine see the same outcomes."""
    w = np.atleast_1d(np.asarray(world, dtype=np.uint64))
    c = np.atleast_1d(np.asarray(case, dtype=np.uint64))
    kk = np.atleast_1d(np.asarray(k, dtype=np.uint64))
    h = _mix(np.atleast_1d(np.asarray(seed, dtype=np.uint64)) ^ _U64(0x5DEECE66D))
    h = _mix(h ^ w)
    h = _mix(h ^ np.atleast_1d(np.asarray(run, dtype=np.uint64)))
    h = _mix(h ^ c)
    h = _mix(h ^ kk)
    return (h >> _U64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


# ------------------------------------------------- the new rules, vectorised over PRs


@dataclass(frozen=True)
class Rules:
    """The engine's defaults, restated (checked against the engine at start-up)."""

    alpha_case: float
    alpha_suite: float
    alpha_flaky: float
    initial: int
    batches: tuple[int, ...]
    max_per_case: int
    futility_effect: float
    futility_ratio: float
    min_effect: float
    suite_min_effect: float
    window: int
    min_history: int
    extra_per_case: float
    base_extra_per_case: float

    @classmethod
    def defaults(cls) -> Rules:
        p = engine.EngineParams()
        s = p.sequential
        return cls(
            p.alpha_case,
            p.alpha_suite,
            p.alpha_flaky,
            s.initial,
            s.batches,
            s.max_per_case,
            s.futility_effect,
            s.futility_ratio,
            p.min_effect,
            p.suite_min_effect,
            history.HISTORY_WINDOW,
            s.min_history,
            sequential.EXTRA_PER_CASE,
            sequential.BASE_EXTRA_PER_CASE,
        )


class Tables:
    def __init__(self, n: int) -> None:
        self.lg_half = np.array([math.lgamma(k + 0.5) for k in range(n)])
        self.lg_one = np.array([math.lgamma(k + 1) for k in range(n)])


def _xlogy(c: Ints, p: Floats) -> Floats:
    safe = np.where(c > 0, p, 1.0)
    return np.where(c > 0, c * np.log(safe), 0.0)


def _log_marg(t: Tables, s: Ints, f: Ints) -> Floats:
    slab = math.log(1.0 - SPIKE_PASS - SPIKE_FAIL) + (
        t.lg_half[s] + t.lg_half[f] - t.lg_one[s + f] - math.log(math.pi)
    )
    with np.errstate(divide="ignore"):
        spikes = np.log(SPIKE_PASS * (f == 0) + SPIKE_FAIL * (s == 0))
    return np.logaddexp(slab, spikes)


def log_e(t: Tables, sb: Ints, nb: Ints, sh: Ints, nh: Ints, worse: bool = True) -> Floats:
    fb, fh = nb - sb, nh - sh
    num = _log_marg(t, sb, fb) + _log_marg(t, sh, fh)
    h, b = sh * nb, sb * nh
    toward = h < b if worse else h > b
    free = (
        _xlogy(sb, sb / np.maximum(nb, 1))
        + _xlogy(fb, fb / np.maximum(nb, 1))
        + _xlogy(sh, sh / np.maximum(nh, 1))
        + _xlogy(fh, fh / np.maximum(nh, 1))
    )
    pooled_p = (sb + sh) / np.maximum(nb + nh, 1)
    pooled = _xlogy(sb + sh, pooled_p) + _xlogy(fb + fh, 1.0 - pooled_p)
    return num - np.where(toward, pooled, free)


def log_futility(sb: Ints, nb: Ints, sh: Ints, nh: Ints, effect: float) -> Floats:
    pb = (sb + 0.5) / (nb + 1)
    q = pb - effect
    ok = q > 0
    q = np.where(ok, q, 0.5)
    val = sh * np.log(pb / q) + (nh - sh) * np.log((1 - pb) / (1 - q))
    return np.where(ok, val, np.inf)


def ebh(le: Floats, valid: Bools, alpha: float) -> Bools:
    m = valid.sum(axis=1)
    x = np.where(valid, le, -np.inf)
    order = np.argsort(-x, axis=1, kind="stable")
    srt = np.take_along_axis(x, order, axis=1)
    k = np.arange(1, x.shape[1] + 1)[None, :]
    with np.errstate(divide="ignore"):
        ok = srt >= np.log(np.maximum(m, 1)[:, None] / (alpha * k))
    ok &= k <= m[:, None]
    kstar = np.where(ok.any(axis=1), x.shape[1] - np.argmax(ok[:, ::-1], axis=1), 0)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(x.shape[1])[None, :].repeat(x.shape[0], 0), axis=1)
    return valid & (rank < kstar[:, None])


def suite_log_e(t: Tables, sb: Ints, nb: Ints, sh: Ints, nh: Ints, valid: Bools) -> Floats:
    fb, fh = nb - sb, nh - sh
    total = fb + fh
    # only tables with more than one possible split weigh in (a case that never failed,
    # or never passed, on either side has LR = 1): compute those cells alone
    lo = np.maximum(0, total - nb)
    hi = np.minimum(nh, total)
    wi, ci = np.nonzero(valid & (hi > lo))
    lps = np.log(np.array(PSI_GRID))
    llr = np.zeros((sb.shape[0], lps.size))
    if wi.size:
        nb_, nh_, tot, fh_ = nb[wi, ci], nh[wi, ci], total[wi, ci], fh[wi, ci]
        xs = np.arange(int(nh_.max()) + 1)
        k = tot[:, None] - xs
        ok = (xs <= nh_[:, None]) & (k >= 0) & (k <= nb_[:, None])
        kk = np.clip(k, 0, None)
        nhx = np.maximum(nh_[:, None] - xs, 0)
        lw = (t.lg_one[nh_][:, None] - t.lg_one[xs] - t.lg_one[nhx]) + (
            t.lg_one[nb_][:, None] - t.lg_one[kk] - t.lg_one[np.clip(nb_[:, None] - kk, 0, None)]
        )
        lw = np.where(ok, lw, -np.inf)
        top0 = lw.max(-1)
        norm0 = top0 + np.log(np.exp(lw - top0[:, None]).sum(-1))
        tt = lw[:, None, :] + xs * lps[:, None]
        top = tt.max(-1)
        norm = top + np.log(np.exp(tt - top[..., None]).sum(-1))
        cell = fh_[:, None] * lps - norm + norm0[:, None]
        np.add.at(llr, wi, cell)
    mx = llr.max(-1)
    return mx + np.log(np.exp(llr - mx[:, None]).mean(-1))


def flaky_log_e(sb: Ints, nb: Ints, sh: Ints, nh: Ints, valid: Bools) -> Floats:
    vb = sb * (nb - sb) / np.maximum(nb * (nb - 1), 1)
    vh = sh * (nh - sh) / np.maximum(nh * (nh - 1), 1)
    use = valid & (nb >= 2) & (nh >= 2)
    d = np.where(use, vh - vb, 0.0)
    lam = np.array(LAMBDAS)
    lg = np.log1p(lam[None, None, :] * 2.0 * d[..., None]).sum(axis=1)
    mx = lg.max(-1)
    return mx + np.log(np.exp(lg - mx[:, None]).mean(-1))


@dataclass
class FastRun:
    block: Bools
    regressed: Bools
    improved: Bools
    suite: Bools
    flaky: Bools
    spent: Ints
    passes: Ints
    samples: Ints


def fast_check(
    rules: Rules,
    t: Tables,
    seed: int,
    worlds: Ints,
    run: int,
    p: Floats,
    hs: Ints,
    hn: Ints,
    *,
    base_run: bool = False,
) -> FastRun:
    """One check of every project at once: the engine's rules (gate.policy.engine).
    ``base_run``: a base-branch run, which first brings every case's history up to
    ``min_history`` samples (the samples numbered after the initial ones)."""
    wn, cn = p.shape
    w = worlds[:, None, None]
    c = np.arange(cn)[None, :, None]
    valid = hn > 0
    n0 = rules.initial
    s = (uniforms(seed, w, run, c, np.arange(n0)[None, None, :]) < p[..., None]).sum(-1)
    s0 = s.copy()
    n = np.full(p.shape, n0)
    seeded = np.zeros(wn, dtype=np.int64)
    if base_run:
        need = np.clip(rules.min_history - hn - n0, 0, None)
        if need.any():
            kmax = int(need.max())
            ks = n[..., None] + np.arange(kmax)[None, None, :]
            u = uniforms(seed, w, run, c, ks)
            x = ((u < p[..., None]) & (np.arange(kmax)[None, None, :] < need[..., None])).sum(-1)
            s, n = s + x, n + need
            seeded = need.sum(axis=1)
    m = valid.sum(axis=1)
    with np.errstate(divide="ignore"):
        bound = np.log(np.maximum(m, 1) / rules.alpha_case)
    cap = np.floor(m * (rules.base_extra_per_case if base_run else rules.extra_per_case))
    cap = cap.astype(np.int64)
    le = log_e(t, hs, hn, s, n)
    spent = np.zeros(wn, dtype=np.int64)
    log_b = math.log(rules.futility_ratio)
    # extra samples only where they could decide: a total failure over every sample the
    # case could get would be a regression (gate.policy.sequential.can_decide)
    most = np.minimum(rules.max_per_case, n + cap[:, None])
    decidable = (
        valid
        & (hs >= (rules.min_effect - 1e-12) * np.maximum(hn, 1))
        & (log_e(t, hs, hn, np.zeros_like(most), most) >= bound[:, None])
    )
    for b in rules.batches:
        fut = log_futility(hs, hn, s, n, rules.futility_effect)
        samp = decidable & (le < bound[:, None]) & (fut < log_b) & (n < rules.max_per_case)
        if not samp.any():
            break
        key = np.where(samp, -le, np.inf)
        order = np.argsort(key, axis=1, kind="stable")
        want = np.where(samp, np.minimum(b, rules.max_per_case - n), 0)
        want_sorted = np.take_along_axis(want, order, axis=1)
        before = np.cumsum(want_sorted, axis=1) - want_sorted
        room = (cap - spent)[:, None]
        give_sorted = np.clip(np.minimum(want_sorted, room - before), 0, None)
        give = np.zeros_like(want)
        np.put_along_axis(give, order, give_sorted, axis=1)
        if not give.any():
            break
        kmax = int(give.max())
        ks = n[..., None] + np.arange(kmax)[None, None, :]
        u = uniforms(seed, w, run, c, ks)
        x = ((u < p[..., None]) & (np.arange(kmax)[None, None, :] < give[..., None])).sum(-1)
        s, n = s + x, n + give
        spent += give.sum(axis=1)
        gi = np.nonzero(give)
        le[gi] = log_e(t, hs[gi], hn[gi], s[gi], n[gi])
    fut = log_futility(hs, hn, s, n, rules.futility_effect)
    rej_w = ebh(le, valid, rules.alpha_case)
    rej_b = ebh(log_e(t, hs, hn, s, n, worse=False), valid, rules.alpha_case)
    change = s / n - hs / np.maximum(hn, 1)
    regressed = rej_w & (-change >= rules.min_effect - 1e-12)
    improved = rej_b & ~regressed & (change >= rules.min_effect - 1e-12)
    m_suite = np.maximum(m, 1)
    d = np.where(valid, s0 / n0 - hs / np.maximum(hn, 1), 0.0).sum(axis=1) / m_suite
    suite = (
        (suite_log_e(t, hs, hn, s0, np.full(p.shape, n0), valid) >= math.log(1 / rules.alpha_suite))
        & (-d >= rules.suite_min_effect - 1e-12)
        & (m > 0)
    )
    flaky = flaky_log_e(hs, hn, s0, np.full(p.shape, n0), valid) >= math.log(1 / rules.alpha_flaky)
    del fut
    return FastRun(
        block=regressed.any(axis=1) | suite | flaky,
        regressed=regressed,
        improved=improved,
        suite=suite,
        flaky=flaky,
        spent=spent + n0 * cn + seeded,
        passes=s,
        samples=n,
    )


class FastHistory:
    """Per-project, per-case base history as a ring of per-run chunks with the engine's
    window rule (drop the oldest runs while more than ``window`` samples)."""

    def __init__(self, worlds: int, cases: int, slots: int, window: int) -> None:
        self.s = np.zeros((worlds, cases, slots), dtype=np.int32)
        self.n = np.zeros((worlds, cases, slots), dtype=np.int32)
        self.start = np.zeros((worlds, cases), dtype=np.int64)
        self.count = np.zeros((worlds, cases), dtype=np.int64)
        self.hs = np.zeros((worlds, cases), dtype=np.int64)
        self.hn = np.zeros((worlds, cases), dtype=np.int64)
        self.slots, self.window = slots, window

    def append(self, s: Ints, n: Ints) -> None:
        if int(self.count.max()) >= self.slots:
            raise RuntimeError("history ring too small")
        pos = (self.start + self.count) % self.slots
        i, j = np.indices(pos.shape)
        self.s[i, j, pos], self.n[i, j, pos] = s, n
        self.count += 1
        self.hs += s
        self.hn += n
        while True:
            over = (self.hn > self.window) & (self.count > 1)
            if not over.any():
                break
            oi, oj = np.nonzero(over)
            st = self.start[oi, oj]
            self.hs[oi, oj] -= self.s[oi, oj, st]
            self.hn[oi, oj] -= self.n[oi, oj, st]
            self.s[oi, oj, st] = 0
            self.n[oi, oj, st] = 0
            self.start[oi, oj] = (st + 1) % self.slots
            self.count[oi, oj] -= 1


@dataclass
class NewPolicyResult:
    prs: FastRun
    base_blocks: int
    base_runs: int
    refresh_spent: Ints
    hs: Ints
    hn: Ints


def run_new_policy(
    rules: Rules, t: Tables, seed: int, base: Floats, heads: dict[str, Floats], chain: int
) -> tuple[dict[str, FastRun], int, int, Ints, Ints, Ints]:
    """The chain of base runs, then one PR per project for each head."""
    worlds = np.arange(base.shape[0])
    slots = rules.window // rules.initial + 2
    hist = FastHistory(base.shape[0], base.shape[1], slots, rules.window)
    blocks = runs = 0
    last = np.zeros(base.shape[0], dtype=np.int64)
    for r in range(chain):
        out = fast_check(rules, t, seed, worlds, r, base, hist.hs, hist.hn)
        if r > 0:
            blocks += int(out.block.sum())
            runs += base.shape[0]
        hist.append(out.passes, out.samples)
        last = out.spent
    prs = {
        name: fast_check(rules, t, seed, worlds, chain, head, hist.hs, hist.hn)
        for name, head in heads.items()
    }
    return prs, blocks, runs, last, hist.hs.copy(), hist.hn.copy()


COLD = ("null", "broken", "three", "x085", "flaky", "config", "config_broken")
"""The cold-start scenarios: the five above, a PR that only changes the agent's
configuration (another model name and endpoint, the same behaviour) and one that changes
it and breaks an always-passing case."""
COLD_TITLES = {
    **TITLES,
    "config": "a configuration-only PR (other model and endpoint) that failed the gate",
    "config_broken": "another model and endpoint, one always-passing case broken",
}
SETUP_CHANGED = ("config", "config_broken")


def cold_heads(pairs: dict[str, tuple[Floats, Floats]]) -> dict[str, Floats]:
    heads = {s: pairs[s][1] for s in SCENARIOS if s != "flaky"}
    heads["config"] = pairs["null"][1]
    heads["config_broken"] = pairs["broken"][1]
    return heads


def pr_run(name: str) -> int:
    """The run index of a PR in the cold start (0: the seeded base run, 1: the refresh):
    the configuration PRs draw their own samples."""
    return 3 if name in SETUP_CHANGED else 2


def run_cold(
    rules: Rules, t: Tables, seed: int, base: Floats, heads: dict[str, Floats]
) -> tuple[dict[str, FastRun], Ints, Ints, Ints, int, int]:
    """The cold start: one seeded base run (``--base-run``), one ordinary refresh, then
    one PR per project for each head. Returns the PRs, the refresh's samples per project,
    the most samples of one case in the seeding run per project, the history length at
    the PR, and the base runs that failed their own check (of how many)."""
    worlds = np.arange(base.shape[0])
    slots = rules.window // rules.initial + 2
    hist = FastHistory(base.shape[0], base.shape[1], slots, rules.window)
    seeding = fast_check(rules, t, seed, worlds, 0, base, hist.hs, hist.hn, base_run=True)
    hist.append(seeding.passes, seeding.samples)
    refresh = fast_check(rules, t, seed, worlds, 1, base, hist.hs, hist.hn, base_run=True)
    hist.append(refresh.passes, refresh.samples)
    prs = {
        name: fast_check(rules, t, seed, worlds, pr_run(name), head, hist.hs, hist.hn)
        for name, head in heads.items()
    }
    blocks = int(refresh.block.sum())
    return prs, refresh.spent, seeding.samples.max(axis=1), hist.hn.copy(), blocks, base.shape[0]


def cold_table(
    rules: Rules, t: Tables, seed: int, pairs: dict[str, tuple[Floats, Floats]]
) -> dict[str, Any]:
    """The cold-start table: each scenario's rate, and the samples it took."""
    heads = cold_heads(pairs)
    a, refresh_a, seeded_a, hn_a, blocks_a, runs_a = run_cold(
        rules, t, seed, pairs["null"][0], heads
    )
    b, refresh_b, seeded_b, _, blocks_b, runs_b = run_cold(
        rules, t, seed + 1, pairs["flaky"][0], {"flaky": pairs["flaky"][1]}
    )
    prs = {**a, **b}
    print()
    print(
        "cold start: one seeded base run (`--base-run`), one ordinary refresh, then the PR "
        f"(policy.min_history {rules.min_history}):"
    )
    print()
    print(
        "| "
        + " | ".join(COLD_TITLES[s] for s in COLD)
        + " | the refresh failing its own check | samples per PR (head + refresh) "
        + "| most samples of one case in the seeding run |"
    )
    print("|" + "--:|" * (len(COLD) + 3))
    cells = [cell(int(prs[s].block.sum()), prs[s].block.size) for s in COLD]
    per_pr = [
        float((prs[s].spent + (refresh_b if s == "flaky" else refresh_a)).max()) for s in COLD
    ]
    seeding = int(max(seeded_a.max(), seeded_b.max()))
    print(
        "| "
        + " | ".join(cells)
        + f" | {cell(blocks_a + blocks_b, runs_a + runs_b)} | at most {max(per_pr):.0f} "
        + f"| {seeding} |"
    )
    print()
    print(
        "samples per PR (head + refresh), mean by scenario: "
        + ", ".join(
            f"{s} {float((prs[s].spent + (refresh_b if s == 'flaky' else refresh_a)).mean()):.1f}"
            for s in COLD
        )
    )
    for s in COLD:
        out = prs[s]
        reg = out.regressed.any(axis=1).mean() * 100
        print(
            f"  {s:13s} failed by: regressed case {reg:5.1f} %, "
            f"suite pass rate {out.suite.mean() * 100:5.1f} %, "
            f"flakier {out.flaky.mean() * 100:5.1f} %"
        )
    print(f"base history at the PR: mean {hn_a.mean():.1f} samples per case")
    return {"prs": prs, "per_pr": max(per_pr), "seeding": seeding}


# ----------------------------------------------- the engine on the same sample stream


def engine_chain(
    seed: int, world: int, base: Floats, heads: dict[str, Floats], chain: int
) -> tuple[list[tuple[bool, int, frozenset[str]]], dict[str, tuple[bool, int, frozenset[str]]]]:
    """The engine modules on one project: every chained base run and every PR, with the
    same outcomes as the fast rules. Returns (blocked, spent, regressed ids) per run."""
    ids = [f"case-{i:02d}" for i in range(CASES)]

    def check(
        hist: history.BaseHistory | None, run: int, p: Floats
    ) -> tuple[engine.Evaluation, list[engine.HeadCase]]:
        def outcomes(case: int, start: int, k: int) -> list[engine.Sample]:
            u = uniforms(seed, world, run, case, np.arange(start, start + k))
            return [engine.Sample(bool(x < p[case])) for x in u]

        head = [
            engine.HeadCase(
                ids[i], "h", tuple(outcomes(i, 0, engine.EngineParams().sequential.initial))
            )
            for i in range(CASES)
        ]
        taken = {h.case_id: len(h.samples) for h in head}

        def sampler(plan: Any) -> dict[str, list[engine.Sample]]:
            got = {}
            for cid, k in plan.items():
                got[cid] = outcomes(ids.index(cid), taken[cid], k)
                taken[cid] += k
            return got

        return engine.evaluate(hist, head, sampler), head

    def summary(ev: engine.Evaluation) -> tuple[bool, int, frozenset[str]]:
        reg = frozenset(i for i, c in ev.cases.items() if c.outcome is CaseOutcome.REGRESSED)
        return ev.blocked, ev.spend.total, reg

    hist: history.BaseHistory | None = None
    runs = []
    for r in range(chain):
        ev, head = check(hist, r, base)
        runs.append(summary(ev))
        hist = history.extend(hist, engine.case_runs(head, ev))
    prs = {name: summary(check(hist, chain, ph)[0]) for name, ph in heads.items()}
    return runs, prs


def fast_chain_record(
    rules: Rules,
    t: Tables,
    seed: int,
    world: int,
    base: Floats,
    heads: dict[str, Floats],
    chain: int,
) -> tuple[list[tuple[bool, int, frozenset[str]]], dict[str, tuple[bool, int, frozenset[str]]]]:
    """The fast rules on the same single project, run by run, for the comparison."""
    ids = [f"case-{i:02d}" for i in range(CASES)]
    wv = np.array([world])
    slots = rules.window // rules.initial + 2
    hist = FastHistory(1, CASES, slots, rules.window)

    def summary(out: FastRun) -> tuple[bool, int, frozenset[str]]:
        return (
            bool(out.block[0]),
            int(out.spent[0]),
            frozenset(ids[i] for i in np.flatnonzero(out.regressed[0])),
        )

    runs = []
    for r in range(chain):
        out = fast_check(rules, t, seed, wv, r, base[None, :], hist.hs, hist.hn)
        runs.append(summary(out))
        hist.append(out.passes, out.samples)
    prs = {
        name: summary(fast_check(rules, t, seed, wv, chain, ph[None, :], hist.hs, hist.hn))
        for name, ph in heads.items()
    }
    return runs, prs


def engine_cold(
    seed: int, world: int, base: Floats, heads: dict[str, Floats]
) -> tuple[list[tuple[bool, int, frozenset[str]]], dict[str, tuple[bool, int, frozenset[str]]]]:
    """:func:`run_cold` through the engine modules on one project: the seeded base run and
    the refresh under one setup, each PR under its own (another model and endpoint for the
    configuration PRs: compared all the same)."""
    ids = [f"case-{i:02d}" for i in range(CASES)]
    initial = engine.EngineParams().sequential.initial

    def check(
        hist: history.BaseHistory | None, run: int, p: Floats, setup: str, base_run: bool
    ) -> tuple[engine.Evaluation, list[engine.HeadCase]]:
        def outcomes(case: int, start: int, k: int) -> list[engine.Sample]:
            u = uniforms(seed, world, run, case, np.arange(start, start + k))
            return [engine.Sample(bool(x < p[case])) for x in u]

        head = [
            engine.HeadCase(ids[i], "h", tuple(outcomes(i, 0, initial)), setup=setup)
            for i in range(CASES)
        ]
        taken = {h.case_id: len(h.samples) for h in head}

        def sampler(plan: Any) -> dict[str, list[engine.Sample]]:
            got = {}
            for cid, k in plan.items():
                got[cid] = outcomes(ids.index(cid), taken[cid], k)
                taken[cid] += k
            return got

        return engine.evaluate(hist, head, sampler, seed=base_run), head

    def summary(ev: engine.Evaluation) -> tuple[bool, int, frozenset[str]]:
        reg = frozenset(i for i, c in ev.cases.items() if c.outcome is CaseOutcome.REGRESSED)
        return ev.blocked, ev.spend.total, reg

    hist: history.BaseHistory | None = None
    runs = []
    for r in (0, 1):
        ev, head = check(hist, r, base, "model-a", True)
        runs.append(summary(ev))
        hist = history.extend(hist, engine.case_runs(head, ev))
    prs = {
        name: summary(
            check(hist, pr_run(name), ph, "model-b" if name in SETUP_CHANGED else "model-a", False)[
                0
            ]
        )
        for name, ph in heads.items()
    }
    return runs, prs


def fast_cold_record(
    rules: Rules, t: Tables, seed: int, world: int, base: Floats, heads: dict[str, Floats]
) -> tuple[list[tuple[bool, int, frozenset[str]]], dict[str, tuple[bool, int, frozenset[str]]]]:
    """The fast rules' cold start on the same single project, run by run."""
    ids = [f"case-{i:02d}" for i in range(CASES)]
    wv = np.array([world])
    hist = FastHistory(1, CASES, rules.window // rules.initial + 2, rules.window)

    def summary(out: FastRun) -> tuple[bool, int, frozenset[str]]:
        return (
            bool(out.block[0]),
            int(out.spent[0]),
            frozenset(ids[i] for i in np.flatnonzero(out.regressed[0])),
        )

    runs = []
    for r in (0, 1):
        out = fast_check(rules, t, seed, wv, r, base[None, :], hist.hs, hist.hn, base_run=True)
        runs.append(summary(out))
        hist.append(out.passes, out.samples)
    prs = {
        name: summary(fast_check(rules, t, seed, wv, pr_run(name), ph[None, :], hist.hs, hist.hn))
        for name, ph in heads.items()
    }
    return runs, prs


# ------------------------------------------- the real `toolgate check` on the same stream

_AGENT = """\
# The simulated agent of bench/stat_bench.py: case i passes sample k of run r when the
# bench's counter-based uniform for (seed, project, r, i, k) is below p[i] (plan.json).
import json
import pathlib

import stat_bench

PLAN = pathlib.Path(__file__).with_name("plan.json")


def run(messages, tools, call_tool, case_id, sample):
    plan = json.loads(PLAN.read_text())
    i = int(case_id.split("-")[1])
    u = stat_bench.uniforms(plan["seed"], plan["world"], plan["run"], i, [sample])[0]
    if u < plan["p"][i]:
        call_tool("ping", {"n": i})
        return "done"
    return "I cannot help with that."
"""


def real_project(root: Any) -> Any:
    """A folder with a 60-case dataset (case i expects ``ping(n=i)``), the simulated agent
    (a ``python`` agent) and a toolgate.yml that sets none of the policy keys."""
    import json
    import pathlib

    from gate.dataset import load_dataset

    root = pathlib.Path(root)
    root.mkdir(parents=True, exist_ok=True)
    tool = {
        "name": "ping",
        "description": "Ping case n.",
        "parameters": {
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
    }
    lines = [
        json.dumps(
            {
                "id": f"case-{i:02d}",
                "user_input": f"ping {i}",
                "available_tools": [tool],
                "expected_tool_calls": [{"name": "ping", "args": {"n": i}}],
                "expected_no_tool": False,
                "tool_responses": [{"name": "ping", "response": {"ok": True}}],
            }
        )
        for i in range(CASES)
    ]
    (root / "dataset.jsonl").write_text("\n".join(lines) + "\n")
    (root / "simagent.py").write_text(_AGENT)
    sha = load_dataset(root / "dataset.jsonl").sha256
    bench_dir = pathlib.Path(__file__).resolve().parent
    (root / "toolgate.yml").write_text(
        "name: stat-bench\n"
        f"dataset: {{path: dataset.jsonl, sha256: {sha}}}\n"
        "agent:\n  kind: python\n  callable: simagent:run\n"
        f"  path: [{json.dumps('.')}, {json.dumps(str(bench_dir))}]\n"
        "  timeout_s: 30\n"
        "concurrency: 4\n"
    )
    return root


def real_check(
    root: Any,
    out: Any,
    baseline: Any,
    *,
    plan: dict[str, Any] | None = None,
    base_run: bool = False,
    config: str = "toolgate.yml",
) -> tuple[bool, int, frozenset[str]]:
    """One `toolgate check` in a subprocess: (blocked, samples spent, regressed case ids)
    from the results.json it wrote. ``plan``: what the python agent draws from."""
    import json
    import os
    import subprocess
    import sys

    if plan is not None:
        (root / "plan.json").write_text(json.dumps(plan))
    cmd = [sys.executable, "-m", "gate", "check", "--config", str(root / config)]
    cmd += ["--out", str(out), "--baseline", str(baseline) if baseline else "none"]
    cmd += ["--no-progress"] + (["--base-run"] if base_run else [])
    env = {**os.environ, "STAT_BENCH_KEY": "sk-stat-bench"}
    got = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False, env=env)
    if got.returncode not in (0, 1):
        raise RuntimeError(f"toolgate check exited {got.returncode}: {got.stderr[-2000:]}")
    res = json.loads((out / "results.json").read_text())
    spend = res["policy"]["spend"]
    regressed = frozenset(
        c["id"] for c in res["cases"] if (c.get("test") or {}).get("outcome") == "regressed"
    )
    blocked = not res["verdict"]["passed"]
    if blocked != (got.returncode == 1):
        raise RuntimeError("the exit code and the verdict disagree")
    return blocked, spend["initial"] + spend["extra"] + spend.get("seed", 0), regressed


def _plan(seed: int, world: int, run: int, p: Floats) -> dict[str, Any]:
    return {"seed": seed, "world": world, "run": run, "p": [float(x) for x in p]}


def real_chain(
    root: Any, seed: int, world: int, base: Floats, heads: dict[str, Floats], chain: int
) -> tuple[list[tuple[bool, int, frozenset[str]]], dict[str, tuple[bool, int, frozenset[str]]]]:
    """:func:`engine_chain` through the real gate: each base run a `toolgate check` with
    the previous one's results.json as its baseline, then each PR against the last."""
    project = real_project(root / f"p{seed}-{world}")
    prev = None
    runs = []
    for r in range(chain):
        out = project / f"base-{r}"
        runs.append(real_check(project, out, prev, plan=_plan(seed, world, r, base)))
        prev = out / "results.json"
    prs = {
        name: real_check(project, project / f"pr-{name}", prev, plan=_plan(seed, world, chain, ph))
        for name, ph in heads.items()
    }
    return runs, prs


class SimEndpoint:
    """An OpenAI-compatible chat-completions endpoint on 127.0.0.1 that *is* the simulated
    model: the first request of a case-sample takes the case's next sample number and
    answers ``ping(n=i)`` when the bench's uniform for (seed, project, run, case, sample)
    is below p[i], else a final answer without a call; a request that carries the tool's
    result gets the final answer. Two paths, ``/a/v1`` and ``/b/v1``, are two endpoints
    (and, in the configs, two model names) with the same behaviour: a PR that moves from
    one to the other changes the configuration and nothing else."""

    def __init__(self) -> None:
        import http.server
        import json
        import threading

        endpoint = self
        self.plan: dict[str, Any] = {}
        self.taken: dict[int, int] = {}
        self.lock = threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                reply = json.dumps(endpoint.answer(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def start_run(self, *, seed: int, world: int, run: int, p: Floats) -> None:
        with self.lock:
            self.plan = {"seed": seed, "world": world, "run": run, "p": [float(x) for x in p]}
            self.taken = {}

    def answer(self, body: Any) -> dict[str, Any]:
        messages = body["messages"]
        model = body.get("model", "sim")
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}

        def final(text: str) -> dict[str, Any]:
            message = {"role": "assistant", "content": text}
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            return {"id": "sim", "object": "chat.completion", "created": 0, "model": model,
                    "choices": [choice], "usage": usage}  # fmt: skip

        if any(m.get("role") == "tool" for m in messages):
            return final("done")
        user = next(m["content"] for m in reversed(messages) if m.get("role") == "user")
        i = int(user.split()[-1])
        with self.lock:
            k = self.taken.get(i, 0)
            self.taken[i] = k + 1
            plan = self.plan
        u = uniforms(plan["seed"], plan["world"], plan["run"], i, [k])[0]
        if u >= plan["p"][i]:
            return final("I cannot help with that.")
        call = {"id": f"call_{i}_{k}", "type": "function",
                "function": {"name": "ping", "arguments": f'{{"n": {i}}}'}}  # fmt: skip
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
        return {"id": "sim", "object": "chat.completion", "created": 0, "model": model,
                "choices": [choice], "usage": usage}  # fmt: skip

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def real_endpoint_project(root: Any, url: str) -> Any:
    """:func:`real_project` with an ``openai`` agent on the simulated endpoint: the base
    branch's config (``toolgate.yml``: model ``sim-a`` at ``/a/v1``) and a PR's that
    changes the model and the endpoint (``toolgate.b.yml``: ``sim-b`` at ``/b/v1``)."""
    root = real_project(root)
    text = (root / "toolgate.yml").read_text()
    head, _, _ = text.partition("agent:")
    for name, model, path in (("toolgate.yml", "sim-a", "a"), ("toolgate.b.yml", "sim-b", "b")):
        (root / name).write_text(
            head
            + f"agent:\n  kind: openai\n  model: {model}\n  base_url: {url}/{path}/v1\n"
            + "  api_key_env: STAT_BENCH_KEY\n  timeout_s: 30\n"
            + "concurrency: 8\n"
        )
    return root


def real_cold(
    root: Any, endpoint: SimEndpoint, seed: int, world: int, base: Floats, heads: dict[str, Floats]
) -> tuple[list[tuple[bool, int, frozenset[str]]], dict[str, tuple[bool, int, frozenset[str]]]]:
    """:func:`engine_cold` through the real gate: `toolgate check --base-run` twice (the
    seeding run, then the refresh with the first as its baseline), then each PR against
    the refresh — the configuration PRs with the other model and endpoint."""
    project = real_endpoint_project(root / f"cold-{seed}-{world}", endpoint.url)
    prev = None
    runs = []
    for r in (0, 1):
        out = project / f"base-{r}"
        endpoint.start_run(seed=seed, world=world, run=r, p=base)
        runs.append(real_check(project, out, prev, base_run=True))
        prev = out / "results.json"
    prs = {}
    for name, ph in heads.items():
        endpoint.start_run(seed=seed, world=world, run=pr_run(name), p=ph)
        config = "toolgate.b.yml" if name in SETUP_CHANGED else "toolgate.yml"
        prs[name] = real_check(project, project / f"pr-{name}", prev, config=config)
    return runs, prs


# ------------------------------------------------------------------- today's policies


def binom_rate(rng: np.random.Generator, n: int, p: Floats) -> Floats:
    return rng.binomial(n, p) / n


def flips(rb: Floats, rh: Floats) -> Bools:
    return ((rb == 1.0) & (rh == 0.0)).any(axis=1)


def flaky_share(rh: Floats) -> Floats:
    return ((rh > 0) & (rh < 1)).mean(axis=1)


def confirm_extra(n_base: int, n_head: int, cap: int, alpha: float = 0.05) -> int:
    m = 1
    while m < cap and 1 / math.comb(n_base + n_head + m, n_base) > alpha:
        m += 1
    return m


def today_policy(
    name: str,
) -> Callable[[np.random.Generator, Floats, Floats], tuple[Bools, Floats]]:
    """(block per PR, samples per PR) for one of today's policies."""

    def samples_n(
        n: int, guard: bool
    ) -> Callable[[np.random.Generator, Floats, Floats], tuple[Bools, Floats]]:
        def f(rng: np.random.Generator, pb: Floats, ph: Floats) -> tuple[Bools, Floats]:
            rb, rh = binom_rate(rng, n, pb), binom_rate(rng, n, ph)
            block = flips(rb, rh)
            if guard:
                block = block | (flaky_share(rh) > 0.1 + 1e-9)
            return block, np.full(pb.shape[0], 2.0 * n * pb.shape[1])

        return f

    def confirm(rng: np.random.Generator, pb: Floats, ph: Floats) -> tuple[Bools, Floats]:
        n, k = 3, confirm_extra(3, 3, 5)
        rb, rh = binom_rate(rng, n, pb), binom_rate(rng, n, ph)
        reg = (rb == 1.0) & (rh == 0.0)
        fix = (rb == 0.0) & (rh == 1.0)
        extra_fail = rng.binomial(k, 1.0 - ph) == k
        confirmed = reg & extra_fail
        # the base refresh confirms its own apparent flips against the previous base run
        rb0 = binom_rate(rng, n, pb)
        base_flips = ((rb0 == 1.0) & (rb == 0.0)) | ((rb0 == 0.0) & (rb == 1.0))
        spent = 2.0 * n * pb.shape[1] + k * ((reg | fix).sum(axis=1) + base_flips.sum(axis=1))
        return confirmed.any(axis=1), spent

    def majority(rng: np.random.Generator, pb: Floats, ph: Floats) -> tuple[Bools, Floats]:
        b, h = rng.binomial(3, pb) >= 2, rng.binomial(3, ph) >= 2
        return (b & ~h).any(axis=1), np.full(pb.shape[0], 6.0 * pb.shape[1])

    def normal_ci(rng: np.random.Generator, pb: Floats, ph: Floats) -> tuple[Bools, Floats]:
        rb, rh = binom_rate(rng, 5, pb), binom_rate(rng, 5, ph)
        se = np.sqrt(rb * (1 - rb) / 5 + rh * (1 - rh) / 5)
        return ((rb - rh) - 1.959963984540054 * se > 0).any(axis=1), np.full(
            pb.shape[0], 10.0 * pb.shape[1]
        )

    table: dict[str, Callable[[np.random.Generator, Floats, Floats], tuple[Bools, Floats]]] = {
        "the defaults (`samples: 1`)": samples_n(1, False),
        "`samples: 3`": samples_n(3, False),
        "`samples: 5`": samples_n(5, False),
        "`samples: 3` + `confirm: {max_extra_samples: 5}`": confirm,
        "`samples: 3` + the variance guard (`max_flaky_share: 0.1`)": samples_n(3, True),
        "`samples: 5` + the variance guard": samples_n(5, True),
        "a single run, any pass → fail is a regression": samples_n(1, False),
        "repeat 3, a case passes on ≥ 2 of 3": majority,
        "5 runs, a normal-approximation 95 % interval per case": normal_ci,
    }
    return table[name]


TODAY = (
    "the defaults (`samples: 1`)",
    "`samples: 3`",
    "`samples: 5`",
    "`samples: 3` + `confirm: {max_extra_samples: 5}`",
    "`samples: 3` + the variance guard (`max_flaky_share: 0.1`)",
    "`samples: 5` + the variance guard",
    "a single run, any pass → fail is a regression",
    "repeat 3, a case passes on ≥ 2 of 3",
    "5 runs, a normal-approximation 95 % interval per case",
)


# ------------------------------------------------------------------------------ main


def young_table(
    rules: Rules, t: Tables, seed: int, pairs: dict[str, tuple[Floats, Floats]], chains: list[int]
) -> None:
    """The new policy when the base history is young: the same PRs after fewer base runs."""
    if not chains:
        return
    print()
    print("new policy by the length of the base history (same PRs, fewer chained base runs):")
    print()
    print(
        "| base runs | samples per case | "
        + " | ".join(TITLES[s] for s in SCENARIOS)
        + " | the base branch failing its own check |"
    )
    print("|--:|--:|" + "--:|" * (len(SCENARIOS) + 1))
    heads = {s: pairs[s][1] for s in SCENARIOS if s != "flaky"}
    for chain in chains:
        a, ba, ra, _, _, hn = run_new_policy(rules, t, seed, pairs["null"][0], heads, chain)
        b, bb, rb, _, _, _ = run_new_policy(
            rules, t, seed + 1, pairs["flaky"][0], {"flaky": pairs["flaky"][1]}, chain
        )
        prs = {**a, **b}
        cells = [cell(int(prs[s].block.sum()), prs[s].block.size) for s in SCENARIOS]
        print(
            f"| {chain} | {hn.mean():.0f} | " + " | ".join(cells) + f" | {cell(ba + bb, ra + rb)} |"
        )


DEPTH_SCENARIOS = ("broken", "three", "x085", "null")
DEPTH_TITLES = {
    "broken": "a case that breaks fully (one always-passing case → 0)",
    "three": "cases that break partly (three cases 1.0 → 0.5)",
    "x085": "a broad small drop (every case × 0.85)",
    "null": "PRs that changed nothing but failed the gate",
}


def first_pr(
    rules: Rules, t: Tables, seed: int, base: Floats, heads: dict[str, Floats], depth: int
) -> tuple[dict[str, FastRun], Ints, Ints]:
    """One base run that seeds every case's history up to ``depth`` samples (a cap of
    ``depth`` minus the initial samples per case; ``depth`` at or below the initial
    samples: a plain base run), then the pull request against it: what the first pull
    request after a team's first push can detect. Returns the PRs, the base run's agent
    runs per project and the history length at the PR."""
    worlds = np.arange(base.shape[0])
    slots = rules.window // rules.initial + 2
    hist = FastHistory(base.shape[0], base.shape[1], slots, rules.window)
    r = dataclasses.replace(rules, min_history=depth)
    seeding = fast_check(r, t, seed, worlds, 0, base, hist.hs, hist.hn, base_run=True)
    hist.append(seeding.passes, seeding.samples)
    prs = {
        name: fast_check(r, t, seed, worlds, 2, head, hist.hs, hist.hn)
        for name, head in heads.items()
    }
    return prs, seeding.spent, hist.hn.copy()


def depth_table(
    rules: Rules, t: Tables, seed: int, pairs: dict[str, tuple[Floats, Floats]], depths: list[int]
) -> None:
    """What the first pull request can detect by the depth of the history one base run
    seeded, and what that base run costs in agent runs (per case, and for 100 cases)."""
    if not depths:
        return
    heads = {s: pairs[s][1] for s in DEPTH_SCENARIOS}
    print()
    print(
        "the first pull request after one base run, by the history depth that run seeded "
        f"(initial samples {rules.initial}; agent runs of the base run, extra samples included):"
    )
    print()
    print(
        "| history depth | "
        + " | ".join(DEPTH_TITLES[s] for s in DEPTH_SCENARIOS)
        + " | agent runs per case | for 100 cases |"
    )
    print("|--:|" + "--:|" * (len(DEPTH_SCENARIOS) + 2))
    for depth in sorted(set(depths)):
        prs, spent, _ = first_pr(rules, t, seed, pairs["null"][0], heads, depth)
        cells = [cell(int(prs[s].block.sum()), prs[s].block.size) for s in DEPTH_SCENARIOS]
        per_case = float(spent.mean()) / CASES
        print(f"| {depth} | " + " | ".join(cells) + f" | {per_case:.1f} | {per_case * 100:,.0f} |")


def spend_range(values: Sequence[float]) -> str:
    lo, hi = min(values), max(values)
    return f"{lo:.0f}" if round(lo) == round(hi) else f"{lo:.0f}–{hi:.0f}"


def cell(k: int, n: int) -> str:
    p, lo, hi = wilson(k, n)
    return f"{p * 100:.1f} % ({lo * 100:.1f}–{hi * 100:.1f})"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prs", type=int, default=5000, help="simulated PRs per scenario")
    ap.add_argument("--chain", type=int, default=50, help="base runs chained before the PR")
    ap.add_argument("--check", type=int, default=20, help="projects also run through the engine")
    ap.add_argument(
        "--young",
        type=int,
        nargs="*",
        default=[5, 10, 20],
        help="shorter chains for the table by history length (none: skip it)",
    )
    ap.add_argument(
        "--real", type=int, default=2, help="projects also run through the real toolgate check"
    )
    ap.add_argument(
        "--real-chain", type=int, default=8, help="base runs chained for the real checks"
    )
    ap.add_argument(
        "--real-cold",
        type=int,
        default=2,
        help="projects whose cold start also goes through the real toolgate check",
    )
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="--prs 300 --chain 20 --check 8")
    ap.add_argument(
        "--min-histories",
        type=int,
        nargs="*",
        default=[24, 32, 34, 35, 38, 40],
        help="other policy.min_history values for the cold-start sweep (none: skip it)",
    )
    ap.add_argument(
        "--sweep-seeds",
        type=int,
        default=4,
        help="more seeds the min_history sweep draws projects with, beside the bench's own",
    )
    ap.add_argument(
        "--depths",
        type=int,
        nargs="*",
        default=[2, 3, 6, 9, 12, 18, 24, 36],
        help="history depths one base run seeds, for the first-pull-request table (none: skip)",
    )
    ap.add_argument(
        "--depth-only",
        action="store_true",
        help="only the first-pull-request table by history depth",
    )
    ap.add_argument(
        "--cold-only",
        action="store_true",
        help="only the cold start (its table, the engine and the real checks of it)",
    )
    args = ap.parse_args(argv)
    if args.quick:
        args.prs, args.chain, args.check, args.young = 300, 20, 8, [5, 10]
        args.min_histories, args.sweep_seeds, args.real_cold = [], 0, 1
    t0 = time.perf_counter()
    rules = Rules.defaults()
    tables = Tables(rules.window + rules.max_per_case + 64)
    rng = np.random.default_rng(args.seed)
    p = base_probabilities(rng, args.prs)
    pairs = {name: scenario(name, p) for name in SCENARIOS}

    if args.depth_only:
        print(f"{args.prs:,} simulated PRs per scenario, 60 cases; seed {args.seed}")
        depth_table(rules, tables, args.seed, pairs, args.depths)
        print(f"total {time.perf_counter() - t0:.1f} s")
        return 0
    if args.cold_only:
        return cold_main(args, rules, tables, pairs, t0)
    print(
        f"{args.prs:,} simulated PRs per scenario, 60 cases; seed {args.seed}; "
        f"new policy: history from {args.chain} chained base runs"
    )
    header = (
        "| policy | "
        + " | ".join(TITLES[s] for s in SCENARIOS)
        + " | the base branch failing its own check | samples per PR |"
    )
    print()
    print(header)
    print("|---|" + "--:|" * (len(SCENARIOS) + 2))

    for name in TODAY:
        policy = today_policy(name)
        cells, spent = [], []
        for s in SCENARIOS:
            pb, ph = pairs[s]
            block, sp = policy(rng, pb, ph)
            cells.append(cell(int(block.sum()), block.size))
            spent.append(float(sp.mean()))
        pb0 = pairs["null"][0]
        base_block, _ = policy(rng, pb0, pb0)
        print(
            f"| {name} | "
            + " | ".join(cells)
            + f" | {cell(int(base_block.sum()), base_block.size)} | "
            f"{spend_range(spent)} |"
        )

    # the new policy: one chain for the four scenarios with the same base, one for flaky
    base_shared = pairs["null"][0]
    heads_shared = {s: pairs[s][1] for s in SCENARIOS if s != "flaky"}
    res_a, blocks_a, runs_a, refresh_a, _hs_a, hn_a = run_new_policy(
        rules, tables, args.seed, base_shared, heads_shared, args.chain
    )
    res_b, blocks_b, runs_b, refresh_b, _, _ = run_new_policy(
        rules, tables, args.seed + 1, pairs["flaky"][0], {"flaky": pairs["flaky"][1]}, args.chain
    )
    prs = {**res_a, **res_b}
    cells = []
    spent = {}
    for s in SCENARIOS:
        out = prs[s]
        cells.append(cell(int(out.block.sum()), out.block.size))
        refresh = refresh_b if s == "flaky" else refresh_a
        spent[s] = float((out.spent + refresh).mean())
    base_cell = cell(blocks_a + blocks_b, runs_a + runs_b)
    print(
        "| **new: base history, per-case e-values + e-BH, sequential, suite tests** | "
        + " | ".join(cells)
        + f" | {base_cell} | {spend_range(list(spent.values()))} |"
    )
    print()
    print(
        "samples per PR (new policy, PR run + one base refresh), by scenario: "
        + ", ".join(f"{s} {v:.1f}" for s, v in spent.items())
    )
    for s in SCENARIOS:
        out = prs[s]
        reg = out.regressed.any(axis=1).mean() * 100
        suite, flakier = out.suite.mean() * 100, out.flaky.mean() * 100
        print(
            f"  {s:7s} failed by: regressed case {reg:5.1f} %, "
            f"suite pass rate {suite:5.1f} %, flakier {flakier:5.1f} %"
        )
    print(
        f"base history at the PR: mean {hn_a.mean():.1f} samples per case (window {rules.window})"
    )
    young_table(rules, tables, args.seed, pairs, [c for c in args.young if c < args.chain])

    # the engine on the same stream, chain included, verdict for verdict
    t1 = time.perf_counter()
    check_worlds = list(range(min(args.check, args.prs)))
    mismatches = 0
    compared = 0
    for wi in check_worlds:
        for seed, base, heads in (
            (args.seed, base_shared[wi], {s: h[wi] for s, h in heads_shared.items()}),
            (args.seed + 1, pairs["flaky"][0][wi], {"flaky": pairs["flaky"][1][wi]}),
        ):
            e_runs, e_prs = engine_chain(seed, wi, base, heads, args.chain)
            f_runs, f_prs = fast_chain_record(rules, tables, seed, wi, base, heads, args.chain)
            for a, b in zip(
                e_runs + list(e_prs.values()), f_runs + list(f_prs.values()), strict=True
            ):
                compared += 1
                if a != b:
                    mismatches += 1
            # the single-project fast run must also equal the vectorised one
            for s, rec in f_prs.items():
                out = prs[s]
                if (bool(out.block[wi]), int(out.spent[wi])) != rec[:2]:
                    mismatches += 1
    print(
        f"engine vs the fast rules: {compared:,} checks ({len(check_worlds)} projects × "
        f"({args.chain} chained base runs + the PRs)), {mismatches} disagreement(s) "
        f"[{time.perf_counter() - t1:.1f} s]"
    )

    # the real gate (`toolgate check` in a subprocess, a python agent drawing from the same
    # stream) against the engine and the fast rules, on a shorter chain
    import tempfile
    from pathlib import Path

    t2 = time.perf_counter()
    real_bad = real_compared = 0
    with tempfile.TemporaryDirectory(prefix="stat-bench-") as tmp:
        for wi in range(min(args.real, args.prs)):
            base, heads = base_shared[wi], {s: h[wi] for s, h in heads_shared.items()}
            r_runs, r_prs = real_chain(Path(tmp), args.seed, wi, base, heads, args.real_chain)
            e_runs, e_prs = engine_chain(args.seed, wi, base, heads, args.real_chain)
            f_runs, f_prs = fast_chain_record(
                rules, tables, args.seed, wi, base, heads, args.real_chain
            )
            for a, b, c in zip(
                r_runs + list(r_prs.values()),
                e_runs + list(e_prs.values()),
                f_runs + list(f_prs.values()),
                strict=True,
            ):
                real_compared += 1
                if not a == b == c:
                    real_bad += 1
                    print(f"  disagreement: real {a[:2]} engine {b[:2]} fast {c[:2]}")
    print(
        f"real `toolgate check` vs the engine vs the fast rules: {real_compared} checks "
        f"({min(args.real, args.prs)} projects × ({args.real_chain} chained base runs + "
        f"{len(heads_shared)} PRs)), {real_bad} disagreement(s) "
        f"[{time.perf_counter() - t2:.1f} s]"
    )
    cold_bad = cold_main(args, rules, tables, pairs, t0, header=False)
    return 1 if mismatches or real_bad or cold_bad else 0


def min_history_sweep(
    args: argparse.Namespace, rules: Rules, tables: Tables, pairs: dict[str, tuple[Floats, Floats]]
) -> None:
    """The cold start again for other ``policy.min_history`` values, on the PRs of the
    bench's seed and of ``--sweep-seeds`` more: the default is the smallest value whose
    every rate meets its target with the whole 95 % interval in every seed (a value that
    meets them in one draw of projects but not another is not the policy's)."""
    import contextlib
    import io

    values = sorted(set(args.min_histories) | {rules.min_history})
    if len(values) < 2:
        return
    worlds = [(args.seed, pairs)]
    for k in range(args.sweep_seeds):
        extra = args.seed + 1000 * (k + 1)
        p = base_probabilities(np.random.default_rng(extra), args.prs)
        worlds.append((extra, {name: scenario(name, p) for name in SCENARIOS}))
    seeds = ", ".join(str(sd) for sd, _ in worlds)
    print()
    print(f"cold start by policy.min_history ({args.prs:,} PRs per scenario for each of the seeds")
    print(f"{seeds}; the lowest and highest rate of the seeds; goals met with the whole")
    print("interval in every seed?):")
    print()
    print("| min_history | " + " | ".join(COLD_TITLES[s] for s in TARGETS) + " | goals met |")
    print("|--:|" + "--:|" * (len(TARGETS) + 1))
    for mh in values:
        rates: dict[str, list[float]] = {s: [] for s in TARGETS}
        ok = True
        for sd, prs_pairs in worlds:
            with contextlib.redirect_stdout(io.StringIO()):
                got = cold_table(dataclasses.replace(rules, min_history=mh), tables, sd, prs_pairs)
            ok &= got["per_pr"] <= MAX_PER_PR and got["seeding"] <= MAX_SEEDING
            for s, (op, bound) in TARGETS.items():
                k, n = int(got["prs"][s].block.sum()), got["prs"][s].block.size
                rate, lo, hi = wilson(k, n)
                rates[s].append(rate)
                ok &= hi <= bound if op == "≤" else lo >= bound
        cells = [
            f"{min(r) * 100:.1f} %"
            if len(r) == 1 or min(r) == max(r)
            else f"{min(r) * 100:.1f}–{max(r) * 100:.1f} %"
            for r in rates.values()
        ]
        mark = " (default)" if mh == rules.min_history else ""
        print(f"| {mh}{mark} | " + " | ".join(cells) + f" | {'yes' if ok else 'no'} |")


TARGETS = {
    "null": ("≤", 0.05),
    "broken": ("≥", 0.95),
    "three": ("≥", 0.80),
    "x085": ("≥", 0.80),
    "flaky": ("≥", 0.80),
    "config": ("≤", 0.05),
}
MAX_PER_PR = 360
MAX_SEEDING = 40


def cold_main(
    args: argparse.Namespace,
    rules: Rules,
    tables: Tables,
    pairs: dict[str, tuple[Floats, Floats]],
    t0: float,
    *,
    header: bool = True,
) -> int:
    """The cold start: its table and targets, the engine on the same stream, and the real
    `toolgate check` of an `openai` agent on a local endpoint (the configuration PRs with
    another model and endpoint). Returns the number of disagreements."""
    import tempfile
    from pathlib import Path

    if header:
        print(f"{args.prs:,} simulated PRs per scenario, 60 cases; seed {args.seed}")
    got = cold_table(rules, tables, args.seed, pairs)
    prs = got["prs"]
    print()
    for s, (op, bound) in TARGETS.items():
        rate = float(prs[s].block.mean())
        ok = rate <= bound if op == "≤" else rate >= bound
        print(
            f"target {s}: {rate * 100:.1f} % {op} {bound * 100:.0f} %: {'met' if ok else 'NOT met'}"
        )
    print(
        f"target samples per PR: at most {got['per_pr']:.0f} ≤ {MAX_PER_PR}: "
        f"{'met' if got['per_pr'] <= MAX_PER_PR else 'NOT met'}"
    )
    print(
        f"target seeding: at most {got['seeding']} samples of one case ≤ {MAX_SEEDING}: "
        f"{'met' if got['seeding'] <= MAX_SEEDING else 'NOT met'}"
    )
    min_history_sweep(args, rules, tables, pairs)
    heads = cold_heads(pairs)
    t1 = time.perf_counter()
    bad = compared = 0
    for wi in range(min(args.check, args.prs)):
        for seed, base, hs in (
            (args.seed, pairs["null"][0][wi], {s: h[wi] for s, h in heads.items()}),
            (args.seed + 1, pairs["flaky"][0][wi], {"flaky": pairs["flaky"][1][wi]}),
        ):
            e_runs, e_prs = engine_cold(seed, wi, base, hs)
            f_runs, f_prs = fast_cold_record(rules, tables, seed, wi, base, hs)
            for a, b in zip(
                e_runs + list(e_prs.values()), f_runs + list(f_prs.values()), strict=True
            ):
                compared += 1
                bad += a != b
            for s, rec in f_prs.items():
                if (bool(prs[s].block[wi]),) != rec[:1]:
                    bad += 1
    print(
        f"cold start, engine vs the fast rules: {compared:,} checks "
        f"({min(args.check, args.prs)} projects × (2 base runs + the PRs)), {bad} "
        f"disagreement(s) [{time.perf_counter() - t1:.1f} s]"
    )
    t2 = time.perf_counter()
    real_bad = real_compared = 0
    endpoint = SimEndpoint()
    try:
        with tempfile.TemporaryDirectory(prefix="stat-bench-cold-") as tmp:
            for wi in range(min(args.real_cold, args.prs)):
                base, hs = pairs["null"][0][wi], {s: h[wi] for s, h in heads.items()}
                r_runs, r_prs = real_cold(Path(tmp), endpoint, args.seed, wi, base, hs)
                e_runs, e_prs = engine_cold(args.seed, wi, base, hs)
                f_runs, f_prs = fast_cold_record(rules, tables, args.seed, wi, base, hs)
                for a, b, c in zip(
                    r_runs + list(r_prs.values()),
                    e_runs + list(e_prs.values()),
                    f_runs + list(f_prs.values()),
                    strict=True,
                ):
                    real_compared += 1
                    if not a == b == c:
                        real_bad += 1
                        print(f"  disagreement: real {a[:2]} engine {b[:2]} fast {c[:2]}")
    finally:
        endpoint.close()
    print(
        f"cold start, real `toolgate check` (an openai agent on a local endpoint) vs the "
        f"engine vs the fast rules: {real_compared} checks ({min(args.real_cold, args.prs)} "
        f"projects × (2 base runs + {len(heads)} PRs)), {real_bad} disagreement(s) "
        f"[{time.perf_counter() - t2:.1f} s]"
    )
    print(f"total {time.perf_counter() - t0:.1f} s")
    return bad + real_bad


if __name__ == "__main__":
    raise SystemExit(main())
