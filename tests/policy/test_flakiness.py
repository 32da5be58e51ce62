"""The variance guard: head flakier than its base history; the absolute level."""

from __future__ import annotations

import math

import pytest

from gate.policy.casetest import Counts
from gate.policy.flakiness import FlakinessCase, flakiness_test, spread


@pytest.mark.parametrize("p", [0.0, 0.3, 0.5, 0.95, 1.0])
@pytest.mark.parametrize("n", [2, 3, 7])
def test_spread__unbiased_for_p_times_one_minus_p(p, n):
    mean = sum(
        math.comb(n, s) * p**s * (1 - p) ** (n - s) * (spread(Counts(s, n)) or 0.0)
        for s in range(n + 1)
    )
    assert mean == pytest.approx(p * (1 - p), abs=1e-12)


def _case(cid, base, head, head_all=None):
    b = None if base is None else Counts(*base)
    return FlakinessCase(cid, b, Counts(*head), Counts(*(head_all or head)))


def test_noisier_model__stable_cases_flaky_both_ways__fails_the_guard():
    cases = [_case(f"p{i}", (100, 100), (1, 2)) for i in range(10)]
    cases += [_case(f"f{i}", (0, 100), (1, 2)) for i in range(10)]
    cases += [_case(f"s{i}", (100, 100), (2, 2)) for i in range(40)]
    r = flakiness_test(cases, alpha=0.0075)
    assert r.flakier and r.blocked
    assert len(r.newly_flaky) == 20 and r.already_flaky == ()


def test_flaky_as_before__warning_not_block__unless_a_ceiling():
    cases = [_case(f"k{i}", (60, 100), (1, 2)) for i in range(10)]
    cases += [_case(f"s{i}", (100, 100), (2, 2)) for i in range(50)]
    r = flakiness_test(cases, alpha=0.0075)
    assert not r.blocked and len(r.already_flaky) == 10 and r.newly_flaky == ()
    r = flakiness_test(cases, alpha=0.0075, ceiling=0.1)
    assert r.over_ceiling and r.blocked and r.head_share == pytest.approx(10 / 60)


def test_not_comparable_cases__left_out_of_the_test__listed_when_flaky():
    r = flakiness_test([_case("new", None, (1, 2))], alpha=0.0075)
    assert r.cases == 0 and not r.flakier and r.newly_flaky == ("new",)


def test_head_flaky_uses_every_head_sample():
    r = flakiness_test([_case("a", (100, 100), (2, 2), (5, 6))], alpha=0.0075)
    assert r.head_flaky == ("a",) and r.cases == 1
