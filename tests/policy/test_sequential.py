"""The stopping rule and the round planner."""

from __future__ import annotations

import math

import pytest

from gate.policy.casetest import Counts
from gate.policy.sequential import (
    CaseStatus,
    PlanCase,
    SequentialParams,
    log_futility,
    plan_round,
    status,
)

P = SequentialParams()
BOUND = math.log(60 / 0.03)


@pytest.mark.parametrize(
    ("base", "head", "want"),
    [
        ((100, 100), (2, 2), CaseStatus.SETTLED),  # Λ = 2.80 ≥ 1.5
        ((100, 100), (0, 2), CaseStatus.SAMPLING),  # E = 1863 < 2000
        ((100, 100), (0, 3), CaseStatus.REGRESSED),  # E = 66,280
        ((100, 100), (1, 2), CaseStatus.SAMPLING),
        ((0, 100), (0, 2), CaseStatus.SETTLED),  # cannot drop by 0.4
        ((90, 100), (38, 60), CaseStatus.AT_LIMIT),
    ],
)
def test_status__examples(base, head, want):
    assert status(Counts(*base), Counts(*head), log_bound=BOUND, params=P) is want


def test_futility__worked_example():
    # p̃ = 100.5/101, Λ = (p̃/(p̃ − 0.4))² for two passes
    assert math.exp(log_futility(Counts(100, 100), Counts(2, 2), 0.4)) == pytest.approx(
        2.796, rel=1e-3
    )
    assert log_futility(Counts(10, 100), Counts(0, 2), 0.4) == math.inf


def test_plan_round__most_suspicious_first__cap_cuts_the_last_batch():
    cases = [
        PlanCase("mild", Counts(100, 100), Counts(1, 2)),
        PlanCase("bad", Counts(100, 100), Counts(0, 2)),
        PlanCase("fine", Counts(100, 100), Counts(2, 2)),
    ]
    assert plan_round(0, cases, log_bound=BOUND, extra_spent=0, cap=3, params=P) == {
        "bad": 2,
        "mild": 1,
    }
    assert plan_round(0, cases, log_bound=BOUND, extra_spent=3, cap=3, params=P) == {}
    assert plan_round(len(P.batches), cases, log_bound=BOUND, extra_spent=0, cap=60, params=P) == {}


def test_plan_round__per_case_limit_cuts_the_batch():
    p = SequentialParams(max_per_case=5)
    cases = [PlanCase("a", Counts(100, 100), Counts(3, 4))]
    assert plan_round(4, cases, log_bound=BOUND, extra_spent=0, cap=60, params=p) == {"a": 1}


def test_params__invalid__refused():
    with pytest.raises(ValueError):
        SequentialParams(initial=0)
    with pytest.raises(ValueError):
        SequentialParams(max_per_case=1)
    with pytest.raises(ValueError):
        SequentialParams(futility_ratio=0.5)
    # 1.5 extra samples per comparable case on a pull request, 0.5 on a base run
    assert SequentialParams().cap(60) == 90
    assert SequentialParams().cap(60, base_run=True) == 30
    assert SequentialParams(max_extra=7).cap(60) == 7
    assert SequentialParams(max_extra=7).cap(60, base_run=True) == 7


@pytest.mark.parametrize(
    ("history", "most", "decides"),
    [
        (1, 60, False),  # one base sample: not even 0/60 is significant
        (2, 60, False),
        (3, 60, True),
        (3, 10, False),  # … but only with enough head samples
        (36, 3, True),
        ((1, 10), 60, False),  # a case that passed 1 in 10 cannot drop by the minimum effect
    ],
)
def test_can_decide__a_total_failure_would_be_a_regression_only_against_enough_history(
    history, most, decides
):
    from gate.policy.sequential import can_decide

    base = Counts(*history) if isinstance(history, tuple) else Counts(history, history)
    assert can_decide(base, most=most, log_bound=BOUND, min_effect=0.10) is decides


def test_evaluate__one_sample_histories__no_extra_samples_and_says_none_could_decide():
    """Against a base history of 1 sample per case a broken case cannot be decided by any
    number of extra samples: none are spent, the cases are undecided, the sentences say
    so; against 36 samples the same broken cases do get them."""
    from gate.policy.engine import EngineParams, HeadCase, Sample, evaluate
    from gate.policy.history import BaseHistory, CaseHistory, HistoryEntry
    from gate.policy.power import detectability, sentences

    def history(n: int) -> BaseHistory:
        return BaseHistory(
            {f"c{i:02d}": CaseHistory("h", (HistoryEntry(n, n),)) for i in range(60)}
        )

    head = [
        HeadCase(f"c{i:02d}", "h", (Sample(i >= 5), Sample(i >= 5 and i % 2 == 0)))
        for i in range(60)
    ]
    asked: list[dict[str, int]] = []

    def sampler(plan):
        asked.append(dict(plan))
        return {cid: [Sample(False)] * k for cid, k in plan.items()}

    ev = evaluate(history(1), head, sampler)
    assert asked == [] and ev.spend.extra == 0
    assert ev.spend.undecidable == len(ev.undecidable) > 0
    assert {"c00", "c04"} <= ev.undecidable
    words = sentences(ev, detectability([Counts(1, 1)] * 60, params=EngineParams()))
    assert any("no extra samples" in w for w in words)
    assert any(
        "got no extra samples: none could decide them" in w
        and "From 3 base samples on it could be" in w
        for w in words
    )
    assert not any("stayed undecided when the sampling cap was reached" in w for w in words)

    deep = evaluate(history(36), head, sampler)
    assert deep.spend.extra > 0 and not deep.undecidable
