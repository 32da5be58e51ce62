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
