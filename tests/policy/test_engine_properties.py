"""Invariants of the statistics engine, property-based (hypothesis):

* identical base and head never regress (nor block at all);
* adding failures on head never turns a regression block into a pass;
* the stopping rule never samples a decided case, and respects both caps;
* the false-block rate under the null holds on a seeded simulation;
* a case whose hash changed is not comparable, never regressed or improved;
* results from the previous release (no history) start the history from their counts.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gate.policy import engine, history
from gate.policy.casetest import CaseOutcome, Counts, single_bound
from gate.policy.engine import EngineParams, HeadCase, Sample
from gate.policy.history import CaseRun, Comparability
from gate.policy.sequential import CaseStatus, PlanCase, SequentialParams, plan_round, status

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

NO_ROUNDS = EngineParams(sequential=SequentialParams(batches=()))
"""The decision on the samples given: no extra rounds."""


def _never(plan: object) -> dict[str, list[Sample]]:
    raise AssertionError(f"no extra samples expected, asked for {plan}")


def _history(counts: list[tuple[int, int]], hashes: list[str] | None = None) -> history.BaseHistory:
    return history.extend(
        None,
        [CaseRun(f"c{i}", hashes[i] if hashes else "h", s, n) for i, (s, n) in enumerate(counts)],
    )


def _head(outcomes: list[list[bool]], hashes: list[str] | None = None) -> list[HeadCase]:
    return [
        HeadCase(f"c{i}", hashes[i] if hashes else "h", tuple(Sample(x) for x in o))
        for i, o in enumerate(outcomes)
    ]


def _regression_block(ev: engine.Evaluation) -> bool:
    return any(c.outcome is CaseOutcome.REGRESSED for c in ev.cases.values()) or any(
        t.blocked for t in ev.suite
    )


# A base history per case (passes ≤ samples, 1..120 samples) …
base_counts = st.lists(
    st.integers(1, 120).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    min_size=1,
    max_size=12,
)


@st.composite
def history_and_head(draw: st.DrawFn) -> tuple[list[tuple[int, int]], list[list[bool]]]:
    """… and head outcomes per case (1..12 samples)."""
    counts = draw(base_counts)
    head = [draw(st.lists(st.booleans(), min_size=1, max_size=12)) for _ in counts]
    return counts, head


@SETTINGS
@given(counts=base_counts, data=st.data())
def test_identical_base_and_head__never_regress_nor_block(counts, data):
    # the head has exactly the base history's counts, in any order
    head = [
        data.draw(st.permutations([True] * s + [False] * (n - s)), label=f"order {i}")
        for i, (s, n) in enumerate(counts)
    ]
    ev = engine.evaluate(_history(counts), _head(head), _never, params=NO_ROUNDS)
    assert not ev.blocked, ev.reasons
    assert all(c.outcome is CaseOutcome.UNCHANGED for c in ev.cases.values())


@SETTINGS
@given(hh=history_and_head(), data=st.data())
def test_adding_failures_on_head__never_turns_a_regression_block_into_a_pass(hh, data):
    counts, head = hh
    before = engine.evaluate(_history(counts), _head(head), _never, params=NO_ROUNDS)
    worse = []
    for i, o in enumerate(head):
        flip = data.draw(st.lists(st.booleans(), min_size=len(o), max_size=len(o)), label=f"f{i}")
        extra = data.draw(st.integers(0, 3), label=f"x{i}")
        worse.append([x and not f for x, f in zip(o, flip, strict=True)] + [False] * extra)
    after = engine.evaluate(_history(counts), _head(worse), _never, params=NO_ROUNDS)
    if _regression_block(before):
        assert _regression_block(after)
    # and no case that regressed stops regressing (e-BH is monotone in the e-values)
    was = {i for i, c in before.cases.items() if c.outcome is CaseOutcome.REGRESSED}
    now = {i for i, c in after.cases.items() if c.outcome is CaseOutcome.REGRESSED}
    assert was <= now


@SETTINGS
@given(
    hh=history_and_head(),
    cap=st.integers(0, 30),
    max_per_case=st.integers(12, 20),
    round_=st.integers(0, 7),
    spent=st.integers(0, 30),
)
def test_plan_round__only_undecided_cases__within_both_caps(hh, cap, max_per_case, round_, spent):
    counts, head = hh
    params = SequentialParams(max_per_case=max_per_case)
    cases = [
        PlanCase(f"c{i}", Counts(s, n), Counts(sum(o), len(o)))
        for i, ((s, n), o) in enumerate(zip(counts, head, strict=True))
    ]
    bound = single_bound(len(cases), EngineParams().alpha_case)
    plan = plan_round(round_, cases, log_bound=bound, extra_spent=spent, cap=cap, params=params)
    by_id = {c.case_id: c for c in cases}
    for cid, k in plan.items():
        c = by_id[cid]
        assert status(c.base, c.head, log_bound=bound, params=params) is CaseStatus.SAMPLING
        assert 1 <= k <= params.batches[round_]
        assert c.head.samples + k <= max_per_case
    assert sum(plan.values()) <= max(0, cap - spent)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hh=history_and_head(), seed=st.integers(0, 2**32 - 1))
def test_engine__never_samples_a_decided_case(hh, seed):
    counts, head = hh
    rng = np.random.default_rng(seed)
    rates = {f"c{i}": rng.random() for i in range(len(counts))}
    hist = _history(counts)
    base = {f"c{i}": Counts(s, n) for i, (s, n) in enumerate(counts)}
    taken = {f"c{i}": list(o) for i, o in enumerate(head)}
    params = EngineParams()
    bound = single_bound(len(counts), params.alpha_case)

    def sampler(plan):
        got = {}
        for cid, k in plan.items():
            now = Counts(sum(taken[cid]), len(taken[cid]))
            assert (
                status(base[cid], now, log_bound=bound, params=params.sequential)
                is CaseStatus.SAMPLING
            )
            new = [bool(rng.random() < rates[cid]) for _ in range(k)]
            taken[cid].extend(new)
            got[cid] = [Sample(x) for x in new]
        return got

    ev = engine.evaluate(hist, _head(head), sampler, params=params)
    assert ev.spend.extra <= ev.spend.cap
    for i, c in ev.cases.items():
        assert c.head.samples <= max(len(head[int(i[1:])]), params.sequential.max_per_case)


def _null_block_rate(alpha: float, prs: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    params = EngineParams(alpha=alpha)
    blocked = 0
    for _ in range(prs):
        p = np.concatenate([np.ones(10), rng.uniform(0.5, 0.99, 8), np.zeros(2)])
        n_b = rng.integers(4, 60, size=p.size)
        hist = _history([(int(rng.binomial(n, q)), int(n)) for n, q in zip(n_b, p, strict=True)])
        head = [[bool(rng.random() < q) for _ in range(2)] for q in p]

        def sampler(plan, p=p):
            return {
                cid: [Sample(bool(rng.random() < p[int(cid[1:])])) for _ in range(k)]
                for cid, k in plan.items()
            }

        blocked += engine.evaluate(hist, _head(head), sampler, params=params).blocked
    return blocked / prs


def test_null__false_block_rate_stays_below_alpha__seeded_simulation():
    # nothing changed: the bound is α per run, for every α (the realised rate is far lower)
    assert _null_block_rate(0.05, 150, seed=11) <= 0.05
    assert _null_block_rate(0.5, 150, seed=12) <= 0.5


@SETTINGS
@given(hh=history_and_head(), changed=st.data())
def test_changed_hash__not_comparable__never_regressed_or_improved(hh, changed):
    counts, head = hh
    which = changed.draw(st.lists(st.booleans(), min_size=len(counts), max_size=len(counts)))
    hashes = ["h"] * len(counts)
    head_hashes = ["h2" if w else "h" for w in which]
    # the changed cases fail every sample: still never regressed
    head = [[False] * len(o) if w else o for o, w in zip(head, which, strict=True)]
    ev = engine.evaluate(
        _history(counts, hashes), _head(head, head_hashes), _never, params=NO_ROUNDS
    )
    for c, w in zip(ev.cases.values(), which, strict=True):
        if w:
            assert c.outcome is CaseOutcome.NOT_COMPARABLE
            assert c.comparability is Comparability.CHANGED
            assert c.extra_samples == 0
        else:
            assert c.outcome is not CaseOutcome.NOT_COMPARABLE


@SETTINGS
@given(counts=base_counts)
def test_previous_release_results__history_starts_from_their_counts(counts):
    hist = history.extend(None, [CaseRun(f"c{i}", "h", s, n) for i, (s, n) in enumerate(counts)])
    for i, (s, n) in enumerate(counts):
        how, got = history.lookup(hist, f"c{i}", "h")
        assert how is Comparability.COMPARABLE
        assert got is not None and (got.passes, got.samples) == (s, n)
        assert len(got.entries) == 1
    # and a head is then tested against exactly those counts
    head = [[False, False]] * len(counts)
    ev = engine.evaluate(hist, _head(head), _never, params=NO_ROUNDS)
    for c, (s, n) in zip(ev.cases.values(), counts, strict=True):
        assert c.base == Counts(s, n)
        assert math.isclose(c.change or 0.0, 0.0 - s / n)
