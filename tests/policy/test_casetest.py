"""The per-case test: its e-value is an e-value, its worked examples, e-BH, the outcome."""

from __future__ import annotations

import math

import pytest

from gate.policy.casetest import (
    CaseInput,
    CaseOutcome,
    Counts,
    Direction,
    classify,
    ebh,
    log_evalue,
    log_marginal,
    p_value,
)
from gate.policy.history import Comparability


def _binom(n: int, p: float) -> list[float]:
    return [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]


@pytest.mark.parametrize("p", [1.0, 0.99, 0.9, 0.6, 0.3, 0.0])
@pytest.mark.parametrize(("n_b", "n_h"), [(5, 2), (30, 3), (100, 8)])
def test_evalue__expectation_at_most_one_when_nothing_changed(p, n_b, n_h):
    # the defining property, computed exactly: E_p[E] ≤ 1 for base and head at the same p
    mean = sum(
        pb * ph * math.exp(log_evalue(Counts(sb, n_b), Counts(sh, n_h)))
        for sb, pb in enumerate(_binom(n_b, p))
        for sh, ph in enumerate(_binom(n_h, p))
    )
    assert mean <= 1.0 + 1e-12


def test_evalue__head_as_good_as_base__at_most_one_in_both_directions():
    assert log_evalue(Counts(27, 30), Counts(3, 3)) <= 0
    assert log_evalue(Counts(27, 30), Counts(0, 3), Direction.BETTER) <= 0
    assert log_evalue(Counts(5, 10), Counts(5, 10)) <= 0


def test_evalue__worked_example_from_the_docs():
    # an always-passing case with 100 base samples; head fails 2 of 2, then 3 of 3
    assert math.exp(log_evalue(Counts(100, 100), Counts(0, 2))) == pytest.approx(1863, rel=1e-3)
    assert math.exp(log_evalue(Counts(100, 100), Counts(0, 3))) == pytest.approx(66280, rel=1e-3)
    assert math.exp(log_evalue(Counts(100, 100), Counts(1, 2))) == pytest.approx(7.546, rel=1e-3)
    assert math.exp(log_marginal(Counts(0, 0))) == pytest.approx(1.0)


def test_evalue__long_mixed_history__no_underflow():
    assert math.isfinite(log_evalue(Counts(9800, 10000), Counts(930, 1000)))


def test_p_value__is_one_over_e_capped_at_one():
    assert p_value(math.log(20)) == pytest.approx(0.05)
    assert p_value(-3.0) == 1.0


def test_ebh__thresholds_m_over_alpha_k():
    m, alpha = 60, 0.03  # thresholds 2000, 1000, 667, …
    logs = [math.log(1500), math.log(1100), math.log(10)] + [0.0] * (m - 3)
    assert ebh(logs, alpha)[:3] == [True, True, False]  # 2 rejected: 1100 ≥ 1000
    logs[1] = math.log(900)
    assert not any(ebh(logs, alpha))  # 1500 < 2000 alone, 900 < 1000
    assert ebh([], alpha) == []


def _case(base, head, *, still=False, how=Comparability.COMPARABLE, cid="c"):
    return CaseInput(cid, how, None if base is None else Counts(*base), Counts(*head), 0, still)


def test_classify__significant_but_below_min_effect__unchanged_with_a_note():
    # 2 points lower on a long history is significant, but not a practical regression
    (v,) = classify([_case((9800, 10000), (930, 1000))], alpha=0.03).values()
    assert v.outcome is CaseOutcome.UNCHANGED and v.below_min_effect
    assert v.p_worse is not None and v.p_worse < 1e-6


def test_classify__outcomes():
    cases = [
        _case((100, 100), (0, 4), cid="a"),
        _case((0, 100), (4, 4), cid="b"),
        _case((50, 100), (1, 2), cid="c"),
        _case((50, 100), (0, 2), still=True, cid="d"),
        _case(None, (0, 2), how=Comparability.CHANGED, cid="e"),
    ]
    got = [v.outcome for v in classify(cases, alpha=0.03).values()]
    assert got == [
        CaseOutcome.REGRESSED,
        CaseOutcome.IMPROVED,
        CaseOutcome.UNCHANGED,
        CaseOutcome.UNDECIDED,
        CaseOutcome.NOT_COMPARABLE,
    ]


def test_classify__duplicate_ids__refused():
    with pytest.raises(ValueError, match="distinct"):
        classify([_case((1, 1), (1, 1)), _case((1, 1), (0, 1))], alpha=0.03)


def test_counts__impossible__refused():
    with pytest.raises(ValueError, match="passes"):
        Counts(3, 2)


@pytest.mark.parametrize("history", [1, 3, 36])
def test_flips__a_case_that_broke_a_hard_rule__at_least_a_likely_regression_in_the_same_words(
    history,
):
    """A case that passed its base history and now broke a hard rule on one of its two
    samples: a likely regression (or a regression), whatever the history's depth, with the
    same reason — never noise, never hidden."""
    from gate.policy.engine import HeadCase, Sample, evaluate
    from gate.policy.flips import HARD_BECAUSE, case_flips
    from gate.policy.history import BaseHistory, CaseHistory, HistoryEntry

    ids = [f"c{i:02d}" for i in range(60)]
    base = BaseHistory({i: CaseHistory("h", (HistoryEntry(history, history),)) for i in ids})
    head = [
        HeadCase(
            i, "h", (Sample(True), Sample(False, hard=True)) if i == "c07" else (Sample(True),) * 2
        )
        for i in ids
    ]
    ev = evaluate(base, head, lambda plan: {c: [Sample(True)] * k for c, k in plan.items()})
    flips = case_flips(ev.cases, held_back=ev.held_back)
    got = flips["c07"]
    assert got.kind.worse
    if got.kind.value == "likely_regression":
        assert got.because == HARD_BECAUSE
    assert set(flips) == {"c07"}
    # without the hard failure, one failed sample against one base sample cannot be told
    # apart: undecided, never noise
    soft = [HeadCase(h.case_id, "h", tuple(Sample(s.passed) for s in h.samples)) for h in head]
    ev = evaluate(base, soft, lambda plan: {c: [Sample(True)] * k for c, k in plan.items()})
    if history == 1:
        assert case_flips(ev.cases, held_back=ev.held_back)["c07"].kind.value == "undecided"
