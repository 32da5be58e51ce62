"""Suite-level tests: the exact stratified conditional test and the clustered t-test."""

from __future__ import annotations

import math

import pytest

from gate.policy.casetest import Counts
from gate.policy.history import MetricSums
from gate.policy.suite import (
    PSI_GRID,
    Better,
    log_lr_case,
    metric_test,
    pass_rate_test,
    student_t_sf,
)


@pytest.mark.parametrize(
    ("nb", "nh", "total_fail"), [(10, 2, 3), (100, 2, 1), (20, 5, 7), (5, 3, 8)]
)
def test_case_lr__mean_one_under_the_hypergeometric_law(nb, nh, total_fail):
    # given the margins, head failures are hypergeometric when nothing changed: E[LR(ψ)] = 1
    lo, hi = max(0, total_fail - nb), min(nh, total_fail)
    weights = {x: math.comb(nh, x) * math.comb(nb, total_fail - x) for x in range(lo, hi + 1)}
    z = sum(weights.values())
    for j in range(len(PSI_GRID)):
        mean = sum(
            w / z * math.exp(log_lr_case(Counts(nb - (total_fail - x), nb), Counts(nh - x, nh))[j])
            for x, w in weights.items()
        )
        assert mean == pytest.approx(1.0, rel=1e-9)


def test_case_lr__never_failed_anywhere__no_evidence():
    assert log_lr_case(Counts(100, 100), Counts(2, 2)) == [0.0] * len(PSI_GRID)


def test_case_lr__one_more_head_failure__more_evidence():
    a = log_lr_case(Counts(95, 100), Counts(2, 3))
    b = log_lr_case(Counts(95, 100), Counts(1, 3))
    assert all(y >= x for x, y in zip(a, b, strict=True))


def test_pass_rate_test__worked_example():
    pairs = [
        (Counts(100, 100), Counts(1, 2)),
        (Counts(95, 100), Counts(1, 2)),
        (Counts(70, 100), Counts(2, 2)),
    ]
    t = pass_rate_test(pairs, alpha=0.0125)
    assert 1 / t.p_value == pytest.approx(1.936, rel=1e-3)
    assert t.change == pytest.approx((0.5 - 1.0 + 0.5 - 0.95 + 1.0 - 0.7) / 3)
    assert not t.blocked


def test_pass_rate_test__broad_drop__blocks_no_case_alone_would():
    # 40 always-passing cases, each failing one head sample of two
    pairs = [(Counts(100, 100), Counts(1, 2))] * 40 + [(Counts(100, 100), Counts(2, 2))] * 20
    assert pass_rate_test(pairs, alpha=0.0125).blocked


def test_pass_rate_test__below_suite_min_effect__does_not_block():
    pairs = [(Counts(100, 100), Counts(1, 2))] * 2 + [(Counts(100, 100), Counts(2, 2))] * 58
    t = pass_rate_test(pairs, alpha=0.5)
    assert t.p_value < 0.5 and -t.change < 0.02 and not t.blocked


def test_pass_rate_test__no_history__no_data_not_blocked():
    t = pass_rate_test([], alpha=0.01)
    assert (t.cases, t.change, t.blocked) == (0, None, False)


def test_student_t_sf__known_values():
    assert student_t_sf(2.0, 10) == pytest.approx(0.036694017, rel=1e-7)
    assert student_t_sf(1.0, 1) == pytest.approx(0.25)
    assert student_t_sf(-1.0, 1) == pytest.approx(0.75)
    assert student_t_sf(0.0, 7) == pytest.approx(0.5)
    assert student_t_sf(1.959963984540054, 10**6) == pytest.approx(0.025, rel=1e-4)


def _pairs(base, head):
    return [(MetricSums.of([b] * 10), h) for b, h in zip(base, head, strict=True)]


def test_metric_test__consistent_drop__blocks_in_the_gate_direction():
    base = [0.9, 0.8, 1.0, 0.7, 0.95, 0.85]
    head = [[b - 0.1 + 0.01 * (i % 3), b - 0.1] for i, b in enumerate(base)]
    assert metric_test("f1", Better.HIGHER, _pairs(base, head), alpha=0.01).blocked
    # the same change on a lower-is-better metric is an improvement
    assert not metric_test("rate", Better.LOWER, _pairs(base, head), alpha=0.01).blocked


def test_metric_test__na_left_out__too_few_cases_no_block():
    t = metric_test(
        "f1",
        Better.HIGHER,
        [(MetricSums.of([1.0]), [None, None]), (MetricSums.of([1.0]), [0.0])],
        alpha=0.01,
    )
    assert t.cases == 1 and t.se is None and not t.blocked


def test_metric_test__identical_change_everywhere__zero_se():
    t = metric_test("f1", Better.HIGHER, _pairs([0.9] * 5, [[0.8]] * 5), alpha=0.01)
    assert t.se == 0.0 and t.p_value == 0.0 and t.blocked


def _clustered_t_p(drops):
    c = len(drops)
    m = sum(drops) / c
    s = math.sqrt(sum((d - m) ** 2 for d in drops) / (c - 1))
    return student_t_sf(m / (s / math.sqrt(c)), c - 1)


def test_pass_rate_test__one_more_failure_never_unblocks__where_a_clustered_t_would():
    # 11 always-passing cases, head 2 samples each: 5 fail once; then one of them twice.
    # A clustered t-test's p rises above its level (the one large drop widens the standard
    # error more than it moves the mean); the exact conditional test only gets stronger.
    before = [(Counts(30, 30), Counts(2, 2))] * 6 + [(Counts(30, 30), Counts(1, 2))] * 5
    after = [*before[:-1], (Counts(30, 30), Counts(0, 2))]
    assert (
        _clustered_t_p([0.0] * 6 + [0.5] * 5)
        <= 0.0125
        < _clustered_t_p([0.0] * 6 + [0.5] * 4 + [1.0])
    )
    a, b = pass_rate_test(before, alpha=0.0125), pass_rate_test(after, alpha=0.0125)
    assert a.blocked and b.blocked and b.p_value < a.p_value
